"""A paper's numbers traced to the notebook cells that printed them: the report of
`%lightscientist check` as links in a notebook, and what the gate card shows of them on both
screens (`gate_checks`, drawn by `labextension/src/checks.ts`), for a stage whose table entry
has `numbers:` checks.

A traced item (`controller.provenance.Item` with `notebook` and `cell`) gets a button that
runs the JupyterLab command `lightscientist:open-notebook-cell` through JupyterLab's command
linker (`data-commandlinker-command` / `-args`, run on a click anywhere in the page): the
notebook opens with that cell active and in view. The path passed is the notebook's absolute
path; the command makes it relative to the server root (the kernel does not know that root).
Outside JupyterLab the button does nothing and the text beside it still names the cell.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from lightscientist_jupyter.app.literature import by_cell, gate_sections
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import PendingDecision, StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.server.answers import CellNumbers, GateChecks
from lightscientist_jupyter.jupyter.server.paths import join

OPEN_CELL = "lightscientist:open-notebook-cell"
"""The extension's command (`labextension/src/cells.ts`)."""


def cell_button(root: Path, notebook: str, cell: str) -> str:
    """A button opening `notebook` (workspace path) at its cell `cell` in JupyterLab."""
    path = str(Beneath(root).path(notebook))
    args = html.escape(json.dumps({"path": path, "cell": cell}), quote=True)
    label = html.escape(f"open {notebook} at cell {cell}", quote=True)
    return (
        f'<button type="button" class="ls-cell-link" data-commandlinker-command="{OPEN_CELL}" '
        f'data-commandlinker-args="{args}" title="{label}" aria-label="{label}">'
        f"{html.escape(cell)}</button>"
    )


def items_html(root: Path, name: str, items: Sequence[Any]) -> str:
    """One check's items as a table: the number, where it traces to, and a button to the
    cell that printed it (items made before cells were traced have no such fields)."""
    rows = []
    for item in items:
        notebook, cell = getattr(item, "notebook", None), getattr(item, "cell", None)
        try:
            link = cell_button(root, notebook, cell) if notebook and cell else ""
        except OSError:  # a notebook path out of the workspace: named, not linked
            link = ""
        state = "ok" if item.ok else "no"
        rows.append(
            f'<tr data-ok="{state}"><td>{state}</td><td>{html.escape(item.what)}</td>'
            f"<td>{html.escape(item.trace)}</td><td>{link}</td></tr>"
        )
    unresolved = sum(not item.ok for item in items)
    caption = f"{name}: {len(items)} item(s), {unresolved} unresolved"
    return (
        f'<table class="ls-checks" aria-label="{html.escape(name, quote=True)}">'
        f"<caption>{html.escape(caption)}</caption>"
        "<tr><th></th><th>in the paper</th><th>traced to</th><th>cell</th></tr>"
        f"{''.join(rows)}</table>"
    )


def to_cells(sections: Iterable[tuple[str, Sequence[Any]]]) -> bool:
    """Whether any item traces to a notebook cell."""
    return any(getattr(item, "cell", None) for _, items in sections for item in items)


def report_html(root: Path, sections: Iterable[tuple[str, Sequence[Any]]]) -> str:
    """Every `numbers:` section of a check report (citations trace to no cell)."""
    return "".join(
        items_html(root, name, items) for name, items in sections if name.startswith("numbers:")
    )


def gate_checks(
    root: Path, table: StageTable, pending: PendingDecision | None, prefix: str
) -> GateChecks | None:
    """The numbers of the paper a pending gate approves, grouped by the notebook cell that
    printed each, for the gate card on both screens (None at no such gate). A notebook's
    path is `prefix` joined to its workspace path: the project's path under the server root
    for the side panel, the workspace's own for the kernel (the cell command makes it
    relative)."""
    try:
        sections = gate_sections(root, table, pending)
    except (LightScientistError, OSError) as exc:  # never hides the card's buttons
        return {"cells": [], "unresolved": [f"no check: {exc}"]}
    if not sections:
        return None
    cells, unresolved = by_cell(sections)
    shown: list[CellNumbers] = [
        {
            "path": join(prefix, c["notebook"]),
            "cell": c["cell"],
            "numbers": c["numbers"],
        }
        for c in cells
    ]
    return {"cells": shown, "unresolved": unresolved}
