"""Two versions of an executed `experiment/analysis.ipynb` for the notebook views' tests.

`analysis(1)` has cells `load` (code, prints the mean), `summary` (Markdown) and `plot` (code
showing a red PNG); `analysis(2)` changes `load`'s source and what it prints, draws `plot` in
blue and adds `table` (code, prints a table) and `broken` (code with an error output).
"""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat

from lightscientist_jupyter.values.notebook import dumps, new_notebook

RED, BLUE = (220, 40, 40), (40, 40, 220)
PATH = "experiment/analysis.ipynb"


def png(rgb: tuple[int, int, int], size: int = 8) -> bytes:
    """A `size`×`size` PNG of one colour."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * size
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(row * size))
        + chunk(b"IEND", b"")
    )


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _ran(cell: Any, count: int, *outputs: Any) -> None:
    cell.execution_count = count
    cell.outputs = list(outputs)


def analysis(version: int) -> Any:
    """The executed notebook of `version` 1 or 2 (see the module's docstring)."""
    load = "import pandas as pd\nmean = 0.91\nprint(f'mean accuracy {mean}')"
    cells = [("load", "code", load), ("summary", "markdown", "## Summary\nThe *mean* is shown.")]
    cells.append(("plot", "code", "show_plot(mean)"))
    if version == 2:
        cells[0] = ("load", "code", load.replace("0.91", "0.93"))
        cells += [("table", "code", "print(table)"), ("broken", "code", "1 / 0")]
    nb = new_notebook(cells, "worker-1")
    stream = nbformat.v4.new_output(
        "stream", text=f"mean accuracy {0.91 if version == 1 else 0.93}\n"
    )
    _ran(nb.cells[0], 1, stream)
    picture = nbformat.v4.new_output(
        "display_data",
        data={"image/png": b64(png(RED if version == 1 else BLUE)), "text/plain": "<Figure>"},
    )
    _ran(nb.cells[2], 2, picture)
    if version == 2:
        _ran(nb.cells[3], 3, nbformat.v4.new_output("stream", text="seed  acc\n0     0.93\n"))
        error = nbformat.v4.new_output(
            "error",
            ename="ZeroDivisionError",
            evalue="division by zero",
            traceback=["\x1b[31mZeroDivisionError\x1b[0m: division by zero"],
        )
        _ran(nb.cells[4], 4, error)
    return nb


def write(root: Path, version: int, rel: str = PATH) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(analysis(version)), encoding="utf-8")
    return path
