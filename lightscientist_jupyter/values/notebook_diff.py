"""A notebook's change as text, cell by cell: what `lightscientist diff` and the side panel
show for an `.ipynb` in place of git's diff of its JSON, which buries a one-line edit under
execution counts, output ids and base64 images.

Each cell that differs gets a heading (its id, its type and how it changed), a unified diff of
its source, a unified diff of what its outputs print, and one line naming an image change
(a terminal cannot draw the pictures; the gate card draws them side by side). Pure: callers
hand in both versions' bytes, read from the history or the workspace.
"""

from __future__ import annotations

import difflib

from lightscientist_jupyter.values.notebook import (
    CellChange,
    NotebookProblem,
    cell_changes,
    loads,
    summary_of,
)

HOW = {
    "added": "added",
    "removed": "removed",
    "changed": "source changed",
    "outputs": "outputs changed",
    "same": "unchanged",
}
"""How each kind of `CellChange` is named in a heading."""


def changes_between(path: str, old: bytes | None, new: bytes | None) -> list[CellChange] | None:
    """The cells of `path`'s two versions (None: no file) with how each changed, or None
    when either version is not a notebook (its change is then shown as plain text)."""
    try:
        before = None if old is None else loads(old.decode("utf-8", "replace"), f"a/{path}")
        after = None if new is None else loads(new.decode("utf-8", "replace"), f"b/{path}")
    except NotebookProblem:
        return None
    return cell_changes(before, after)


def output_lines(texts: list[str]) -> list[str]:
    """The outputs' texts as lines, each output's first line marked with its number."""
    lines = []
    for number, text in enumerate(texts, start=1):
        first, *rest = text.splitlines() or [""]
        lines.append(f"[{number}] {first}")
        lines += [f"    {line}" for line in rest]
    return lines


def source_diff(path: str, change: CellChange) -> list[str]:
    """The unified diff of one cell's source (`a/<path>#<id>`, `b/<path>#<id>`)."""
    return list(
        difflib.unified_diff(
            change.before.splitlines(),
            change.after.splitlines(),
            f"a/{path}#{change.cell_id}",
            f"b/{path}#{change.cell_id}",
            lineterm="",
        )
    )


def outputs_diff(path: str, change: CellChange) -> list[str]:
    """The unified diff of what one cell's outputs print (empty when they print the same)."""
    if change.outputs_before == change.outputs_after:
        return []
    return list(
        difflib.unified_diff(
            output_lines(change.outputs_before),
            output_lines(change.outputs_after),
            f"a/{path}#{change.cell_id} outputs",
            f"b/{path}#{change.cell_id} outputs",
            lineterm="",
        )
    )


def image_line(change: CellChange) -> str | None:
    """One line naming a change of the cell's PNG images, or None when they are the same."""
    before, after = len(change.images_before), len(change.images_after)
    if change.images_before == change.images_after:
        return None
    if before == after:
        return f"image: {after} PNG image{'s' if after != 1 else ''} changed"
    return f"image: {before} PNG image{'s' if before != 1 else ''} before, {after} after"


def heading(change: CellChange) -> str:
    return f"## cell {change.cell_id} ({change.cell_type}): {HOW[change.kind]}"


def notebook_diff(path: str, old: bytes | None, new: bytes | None) -> list[str] | None:
    """`path`'s change cell by cell as lines (unchanged cells left out), or None when either
    version is not a notebook."""
    changes = changes_between(path, old, new)
    return None if changes is None else change_lines(path, changes)


def change_lines(path: str, changes: list[CellChange]) -> list[str]:
    """A notebook's cells, as `changes_between` compared them, as lines (`notebook_diff`)."""
    shown = [c for c in changes if c.kind != "same"]
    lines = [f"notebook {path}: {summary_of(changes)}"]
    for change in shown:
        lines.append(heading(change))
        lines += source_diff(path, change)
        lines += outputs_diff(path, change)
        image = image_line(change)
        if image is not None:
            lines.append(image)
    return lines
