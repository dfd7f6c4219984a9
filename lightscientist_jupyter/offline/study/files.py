"""The study's scripts as the offline worker writes them: real files shipped with the package.

The scripts live in `scripts/` next to this module (package data, read with
`importlib.resources`). Each one imports the study's design (`study_design.py`) and shared
helpers (`study_common.py`), so wherever a script goes in the workspace those two go beside it.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path, PurePosixPath

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.values import notebook

SHARED = ("study_design.py", "study_common.py")
"""The modules every script imports, copied next to it."""

COMPANIONS = {"build_paper.py": ("paper_revision.py",), "analysis.py": ("analysis_report.py",)}
"""The modules a script imports besides the shared ones, copied next to it too."""

PROBE = "probe.py"
"""The probe script, copied once per candidate as `idea/probes/<candidate>.py`."""

_CANDIDATE_ID = re.compile(r"[a-z0-9][a-z0-9-]*")


def script_text(name: str) -> str:
    """The text of `scripts/<name>` as shipped."""
    return (resources.files("lightscientist_jupyter.offline.study") / "scripts" / name).read_text(
        encoding="utf-8"
    )


def shared_files(folder: str) -> dict[str, str]:
    """Workspace path -> text of the shared modules, for a script in `folder`."""
    return {str(PurePosixPath(folder) / name): script_text(name) for name in SHARED}


def script_files(target: str, source: str | None = None) -> dict[str, str]:
    """Workspace path -> text: the script `source` (default: `target`'s file name) at `target`,
    and the shared modules and its companions (`COMPANIONS`) beside it."""
    path = PurePosixPath(target)
    name = source or path.name
    companions = {
        str(path.parent / module): script_text(module) for module in COMPANIONS.get(name, ())
    }
    return {target: script_text(name), **companions, **shared_files(str(path.parent))}


_CELL_MARK = re.compile(r"^# %%(?: \[(?P<kind>markdown)\])? (?P<id>[A-Za-z0-9_-]+)$")


def notebook_cells(name: str) -> list[dict[str, str]]:
    """The cells of `scripts/<name>`, a notebook kept as a Python file in the percent format
    (`# %% ID` opens a code cell, `# %% [markdown] ID` a Markdown one written as comments), as
    the notebook tools take them: `{"id", "cell_type", "source"}`."""
    cells: list[dict[str, str]] = []
    lines: list[str] = []

    def close() -> None:
        if cells:
            text = "\n".join(lines).strip("\n")
            if cells[-1]["cell_type"] == "markdown":
                text = "\n".join(
                    line.removeprefix("#").removeprefix(" ") for line in text.splitlines()
                )
            cells[-1]["source"] = text
        lines.clear()

    for line in script_text(name).splitlines():
        mark = _CELL_MARK.match(line)
        if mark is None:
            lines.append(line)
            continue
        close()
        kind = "markdown" if mark.group("kind") else "code"
        cells.append({"id": mark.group("id"), "cell_type": kind, "source": ""})
    close()
    return cells


ANALYSIS = "experiment/analysis.ipynb"
"""The analysis notebook of the study (`scripts/analysis.py` as a notebook)."""


def analysis_files() -> dict[str, str]:
    """Workspace path -> text: the analysis notebook, not yet run, as the offline worker
    writes it with its notebook tools, and the modules beside it (for the scripts' tests and
    benchmarks, which run it with `jupyter execute`)."""
    cells = [(c["id"], c["cell_type"], c["source"]) for c in notebook_cells("analysis.py")]
    files = script_files(ANALYSIS.replace(".ipynb", ".py"))
    del files[ANALYSIS.replace(".ipynb", ".py")]
    return {ANALYSIS: notebook.dumps(notebook.new_notebook(cells, "offline worker")), **files}


def probe_path(candidate: str) -> str:
    """`idea/probes/<candidate>.py`; raises ValueError for an id that is not a safe file name."""
    if not _CANDIDATE_ID.fullmatch(candidate):
        raise ValueError(
            f"candidate id {candidate!r} must use lowercase letters, digits and "
            "hyphens (it becomes a file name)"
        )
    return f"idea/probes/{candidate}.py"


def write_into(root: Path, files: dict[str, str]) -> list[Path]:
    """Write `files` (workspace path -> text) under `root`, as the worker's write_file would:
    through no link."""
    workspace = Beneath(root)
    for rel, text in files.items():
        workspace.write_text_atomic(rel, text, durable=False)
    return [workspace.path(rel) for rel in files]
