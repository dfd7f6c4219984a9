"""Notebooks as plain values: parse and check an nbformat 4.5 document, find a cell by id,
shorten it for a model to read, and name what it printed.

Workers create, edit, read and run notebooks with their notebook tools (layer 3); layer 1
checks a required notebook is valid and ran without an error output; the numbers check
traces a paper's numbers to the cell whose output shows them; the views draw a notebook's
change cell by cell. All of them read a notebook through this module (its file's JSON is
`notebook_json`'s, read and written without nbformat). It reads and writes no file: callers
pass the text and write what `dumps` returns through the guarded path.

A notebook a worker made carries `metadata.lightscientist.written_by` (`OWNER_KEY`): the
tools change only such notebooks, never one of the researcher's.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from lightscientist_jupyter.values.notebook_json import CELL_TYPES as CELL_TYPES
from lightscientist_jupyter.values.notebook_json import NotebookNode as NotebookNode
from lightscientist_jupyter.values.notebook_json import NotebookProblem as NotebookProblem
from lightscientist_jupyter.values.notebook_json import dumps as dumps
from lightscientist_jupyter.values.notebook_json import loads as loads

SUFFIX = ".ipynb"
OWNER_KEY = "lightscientist"
"""The notebook metadata key marking a notebook one of the workers made."""
CELL_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""nbformat 4.5's rule for a cell id."""
TEXT_LIMIT = 2000
"""Characters of one output a reader sees before `…[N more characters]`."""


def is_notebook(path: str) -> bool:
    return path.lower().endswith(SUFFIX)


def new_notebook(cells: Iterable[tuple[str, str, str]], written_by: str | None) -> Any:
    """A 4.5 notebook of `(id, cell_type, source)` cells, marked as made by the worker
    `written_by` (None: unmarked, a notebook made for the researcher)."""
    nb = NotebookNode(nbformat=4, nbformat_minor=5, metadata=NotebookNode(), cells=[])
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    if written_by is not None:
        nb.metadata[OWNER_KEY] = {"written_by": written_by}
    for cell_id, kind, source in cells:
        nb.cells.append(new_cell(nb, kind, source, cell_id))
    return nb


def written_by(nb: Any) -> str | None:
    """Who among the workers made the notebook, or None for a notebook of the researcher's."""
    mark = nb.get("metadata", {}).get(OWNER_KEY)
    return (
        str(mark.get("written_by")) if isinstance(mark, dict) and mark.get("written_by") else None
    )


def new_cell(nb: Any, kind: str, source: str, cell_id: str | None = None) -> Any:
    """A cell for `nb` (not added): `cell_id` when free and well-formed, else `cell-<n>`."""
    if kind not in CELL_TYPES:
        raise NotebookProblem(f"cell_type {kind!r} is not one of {', '.join(CELL_TYPES)}")
    taken = {cell.get("id") for cell in nb.cells}
    if cell_id:
        if not CELL_ID.match(cell_id):
            raise NotebookProblem(
                f"cell id {cell_id!r}: use 1-64 letters, digits, '-' or '_' (nbformat 4.5)"
            )
        if cell_id in taken:
            raise NotebookProblem(f"cell id {cell_id!r} is taken: give another or edit that cell")
    else:
        n = len(nb.cells) + 1
        while f"cell-{n}" in taken:
            n += 1
        cell_id = f"cell-{n}"
    cell = NotebookNode(id=cell_id, cell_type=kind, metadata=NotebookNode(), source=source)
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    return cell


def cell_index(nb: Any, cell_id: str, where: str) -> int:
    """The position of the cell `cell_id`; a NotebookProblem naming the ids there are."""
    for index, cell in enumerate(nb.cells):
        if cell.get("id") == cell_id:
            return index
    ids = ", ".join(str(c.get("id")) for c in nb.cells) or "none"
    raise NotebookProblem(f"{where} has no cell {cell_id!r} (its cells: {ids})")


def clear_outputs(cell: Any) -> None:
    if cell.get("cell_type") == "code":
        cell["outputs"] = []
        cell["execution_count"] = None


# ---------------------------------------------------------------------- what a cell printed


@dataclasses.dataclass(frozen=True)
class Printed:
    """One text a code cell's output shows."""

    cell_id: str
    output: int
    """The output's position in the cell, from 1."""
    text: str


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def output_text(output: Any) -> str | None:
    """What one output shows as text (stream, plain text or Markdown; an error's name and
    value), or None for an output with no text (an image alone)."""
    kind = output.get("output_type")
    if kind == "stream":
        return _text(output.get("text"))
    if kind == "error":
        return f"{output.get('ename')}: {output.get('evalue')}"
    data = output.get("data") or {}
    for mime in ("text/markdown", "text/plain"):
        if mime in data:
            return _text(data[mime])
    return None


def printed(nb: Any) -> Iterator[Printed]:
    """Every text the code cells' outputs show, in order."""
    for cell in nb.cells:
        if cell.get("cell_type") != "code":
            continue
        for index, output in enumerate(cell.get("outputs") or [], start=1):
            text = output_text(output)
            if text:
                yield Printed(str(cell.get("id")), index, text)


def errors(nb: Any) -> list[tuple[str, str]]:
    """(cell id, `ename: evalue`) of every error output."""
    return [
        (str(cell.get("id")), f"{out.get('ename')}: {out.get('evalue')}")
        for cell in nb.cells
        if cell.get("cell_type") == "code"
        for out in cell.get("outputs") or []
        if out.get("output_type") == "error"
    ]


def unexecuted(nb: Any) -> list[str]:
    """The ids of code cells with source that were never run (no execution count)."""
    return [
        str(cell.get("id"))
        for cell in nb.cells
        if cell.get("cell_type") == "code"
        and _text(cell.get("source")).strip()
        and cell.get("execution_count") is None
    ]


def run_problem(nb: Any) -> str | None:
    """Why a valid notebook did not run to the end without an error, or None."""
    failed = errors(nb)
    if failed:
        cell, what = failed[0]
        return f"cell {cell!r} has an error output ({what}): fix it and run the notebook again"
    never = unexecuted(nb)
    if never:
        return f"cell {never[0]!r} was never run: run the notebook to the end"
    return None


def executed_problem(text: str, where: str) -> str | None:
    """Why `text` is not a valid notebook that ran to the end without an error, or None."""
    try:
        nb = loads(text, where)
    except NotebookProblem as exc:
        return str(exc)
    problem = run_problem(nb)
    return f"{where}: {problem}" if problem else None


# ---------------------------------------------------------------------- reading


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}…[{len(text) - limit} more characters]"


ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
"""A terminal's colour or cursor code, as IPython writes into a traceback."""


def plain_text(text: str) -> str:
    """`text` without its terminal codes (a traceback's colours)."""
    return ANSI.sub("", text)


def _described(output: Any, limit: int) -> str:
    kind = output.get("output_type")
    if kind == "error":
        tail = [plain_text(line) for line in output.get("traceback") or []]
        last = "\n".join(tail[-3:])
        return f"{output.get('ename')}: {output.get('evalue')}\n{_shorten(last, limit)}"
    text = output_text(output)
    data = output.get("data") or {}
    images = [mime for mime in data if mime.startswith("image/")]
    parts = [_shorten(text, limit)] if text is not None else []
    for mime in images:
        size = len(_text(data[mime]))
        parts.append(f"[{mime}, {round(size * 3 / 4 / 1024)} KB]")
    return "\n".join(parts) or f"[{kind} with {', '.join(data) or 'nothing'}]"


def reading(nb: Any, where: str, limit: int = TEXT_LIMIT) -> str:
    """The notebook as a model reads it: each cell's id, type and source, and its outputs
    with long texts cut and images named by type and size."""
    lines = [f"{where}: {len(nb.cells)} cells"]
    for cell in nb.cells:
        kind = cell.get("cell_type")
        count = cell.get("execution_count")
        ran = f" [{count}]" if kind == "code" and count is not None else ""
        lines.append(f"--- cell {cell.get('id')} ({kind}){ran}")
        lines.append(_text(cell.get("source")).rstrip())
        for index, output in enumerate(cell.get("outputs") or [], start=1):
            lines.append(
                f"  >> output {index}: " + _described(output, limit).replace("\n", "\n     ")
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------- change, cell by cell


@dataclasses.dataclass(frozen=True)
class CellChange:
    """How one cell differs between two versions of a notebook."""

    cell_id: str
    kind: str
    """`added`, `removed`, `changed` (source), `outputs` (the outputs alone) or `same`."""
    cell_type: str
    before: str
    """The source before (empty when added)."""
    after: str
    """The source after (empty when removed)."""
    outputs_before: list[str]
    """The outputs' texts before (an image as `[image/png, N KB]`)."""
    outputs_after: list[str]
    images_before: list[str] = dataclasses.field(default_factory=list)
    """The base64 PNGs the cell showed before, for a picture side by side."""
    images_after: list[str] = dataclasses.field(default_factory=list)


def _outputs(cell: Any | None) -> tuple[list[str], list[str]]:
    if cell is None:
        return [], []
    texts, images = [], []
    for output in cell.get("outputs") or []:
        texts.append(_described(output, TEXT_LIMIT))
        png = (output.get("data") or {}).get("image/png")
        if png:
            images.append(_text(png).replace("\n", ""))
    return texts, images


def cell_changes(before: Any | None, after: Any | None) -> list[CellChange]:
    """Each cell of either version, in the order of the newer one (removed cells where they
    were), with how it changed."""
    old = {str(c.get("id")): c for c in (before.cells if before is not None else [])}
    new = {str(c.get("id")): c for c in (after.cells if after is not None else [])}
    order = list(new)
    for position, cell_id in enumerate(old):
        if cell_id not in new:
            order.insert(min(position, len(order)), cell_id)
    changes = []
    for cell_id in order:
        a, b = old.get(cell_id), new.get(cell_id)
        source_a = _text(a.get("source")) if a is not None else ""
        source_b = _text(b.get("source")) if b is not None else ""
        (texts_a, images_a), (texts_b, images_b) = _outputs(a), _outputs(b)
        if a is None:
            kind = "added"
        elif b is None:
            kind = "removed"
        elif source_a != source_b:
            kind = "changed"
        elif texts_a != texts_b or images_a != images_b:
            kind = "outputs"
        else:
            kind = "same"
        cell_type = str((b if b is not None else a or {}).get("cell_type", "code"))
        changes.append(
            CellChange(
                cell_id, kind, cell_type, source_a, source_b, texts_a, texts_b, images_a, images_b
            )
        )
    return changes


def summary_of(changes: list[CellChange]) -> str:
    """`2 cells changed, 1 added, 1 with new outputs` (or `no cell changed`)."""
    counts = {
        kind: sum(1 for c in changes if c.kind == kind)
        for kind in ("changed", "added", "removed", "outputs")
    }
    words = {
        "changed": "changed",
        "added": "added",
        "removed": "removed",
        "outputs": "with new outputs",
    }
    parts = [f"{n} {words[k]}" for k, n in counts.items() if n]
    if not parts:
        return "no cell changed"
    first = parts[0]
    n = int(first.split()[0])
    parts[0] = first.replace(" ", f" cell{'s' if n != 1 else ''} ", 1)
    return ", ".join(parts)


def as_json(nb: Any) -> dict[str, Any]:
    """The notebook as plain JSON values (for a view's payload)."""
    return dict(json.loads(dumps(nb)))
