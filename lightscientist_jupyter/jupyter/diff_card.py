"""The diff beside each file under review on the gate card: what changed since the last
approved state (`app.history.gate_changes`), computed once as a `FileDiff` for every screen.

A new or changed text file comes as unified diff lines with its counts (+54 −3); Markdown
also rendered with its insertions and deletions marked (`markdown_diff`, the source diff a
click away); a notebook cell by cell (each changed cell's source and printed outputs as
diffs, its images before and after); a small CSV as its changed rows; an image as both
versions. The live screens draw it with one function (`labextension/src/diff.ts`: the
dashboard's gate widget and the side panel); `render` draws the same view as static HTML for
a notebook's output that must read without JavaScript (a search node's card).
"""

from __future__ import annotations

import base64
import binascii
import difflib
import html
from pathlib import Path

from lightscientist_jupyter.app.history import FileChange, gate_changes
from lightscientist_jupyter.jupyter.markdown_diff import rendered_diff
from lightscientist_jupyter.jupyter.notebook_view import MAX_LINES, diff_pre
from lightscientist_jupyter.jupyter.server.answers import CellDiff, CsvDiff, DiffImages, FileDiff
from lightscientist_jupyter.values.notebook import CellChange, is_notebook, summary_of
from lightscientist_jupyter.values.notebook_diff import (
    HOW,
    change_lines,
    changes_between,
    image_line,
    outputs_diff,
    source_diff,
)
from lightscientist_jupyter.workspace import Workspace

CSV_ROWS = 200
"""A CSV of at most this many rows is shown as a table of changed rows."""
IMAGES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}
MARKDOWN = (".md", ".markdown")


def gate_diff(ws: Workspace, *, images: bool) -> list[FileDiff]:
    """Each file under review at the gate pending in `ws`, with what changed (`images`:
    with pictures, which the dashboard's widget is sent once and the side panel, which asks
    every few seconds, is not)."""
    return [file_diff(change, images=images) for change in gate_changes(ws)]


def file_diff(change: FileChange, *, images: bool) -> FileDiff:
    """One file's change as the screens draw it."""
    text = change.status in ("new", "changed") and Path(change.path).suffix not in IMAGES
    # a notebook's two versions, read and compared once for its lines, counts and cells
    cells = changes_between(change.path, change.old, change.new) if _notebook(change) else None
    diff: FileDiff = {
        "path": change.path,
        "status": change.status,
        "lines": _lines(change, cells) if text else [],
    }
    if text:
        diff["summary"] = summary_of(cells) if cells is not None else _line_counts(change)
    if (markdown := _rendered(change)) is not None:
        diff["rendered"] = markdown
    if change.status == "removed":
        return diff
    if cells is not None:
        diff["cells"] = [_cell(change.path, c, images) for c in cells if c.kind != "same"]
    elif change.path.endswith(".csv") and (table := _csv(change)) is not None:
        diff["table"] = table
    elif images and (mime := IMAGES.get(Path(change.path).suffix.lower())) is not None:
        diff["images"] = {
            "before": [_url(mime, change.old)] if change.old is not None else [],
            "after": [_url(mime, change.new)] if change.new is not None else [],
        }
    return diff


def _notebook(change: FileChange) -> bool:
    return is_notebook(change.path) and change.status != "removed"


def _line_counts(change: FileChange) -> str:
    """A text's change in a few words for its folded line: "+54 −3", of the whole diff, not
    only the lines shown (a notebook's is by cell: `summary_of`)."""
    body = change.unified()[2:]  # past the two file-name lines
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    return f"+{added} −{removed}"


def _rendered(change: FileChange) -> str | None:
    """A Markdown file's change rendered, insertions and deletions marked (None: not
    Markdown, or too long to draw)."""
    if not change.path.lower().endswith(MARKDOWN) or change.status not in ("new", "changed"):
        return None
    old = (change.old or b"").decode("utf-8", errors="replace")
    return rendered_diff(old, (change.new or b"").decode("utf-8", errors="replace"))


def _lines(change: FileChange, cells: list[CellChange] | None) -> list[str]:
    """A change as text: a notebook's cell by cell, else the unified diff."""
    by_cell = change_lines(change.path, cells) if cells is not None else change.unified()
    return by_cell[:MAX_LINES]


def _cell(path: str, change: CellChange, images: bool) -> CellDiff:
    cell: CellDiff = {
        "id": change.cell_id,
        "type": change.cell_type,
        "kind": change.kind,
        "how": HOW[change.kind],
        "source": source_diff(path, change)[:MAX_LINES],
        "outputs": outputs_diff(path, change)[:MAX_LINES],
    }
    if images and image_line(change) is not None:
        cell["images"] = {
            "before": [u for u in map(_png, change.images_before) if u],
            "after": [u for u in map(_png, change.images_after) if u],
        }
    return cell


def _url(mime: str, data: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def _png(data: str) -> str | None:
    """A `data:` URL of a base64 PNG a notebook saved, or None for anything that is not one."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return None
    return f"data:image/png;base64,{data}" if raw.startswith(b"\x89PNG") else None


def _text(data: bytes | None) -> list[str]:
    return (data or b"").decode("utf-8", errors="replace").splitlines()


def _csv(change: FileChange) -> CsvDiff | None:
    old, new = _text(change.old), _text(change.new)
    if max(len(old), len(new)) > CSV_ROWS or not new:
        return None
    rows: list[list[str]] = []
    matcher = difflib.SequenceMatcher(a=old[1:], b=new[1:])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        rows += [["del", *row.split(",")] for row in old[1 + i1 : 1 + i2]]
        rows += [["add", *row.split(",")] for row in new[1 + j1 : 1 + j2]]
    return {"header": new[0].split(","), "rows": rows}


# ------------------------------------------------------------------------- static HTML


def render(diff: FileDiff) -> str:
    """One file's change as static HTML, drawn as the live screens draw it."""
    path = html.escape(diff["path"])
    counted = f" · {html.escape(diff['summary'])}" if diff.get("summary") else ""
    title = f"<b><code>{path}</code></b> — {diff['status']}{counted}"
    if diff["status"] == "removed":
        body = "<div>the file was removed</div>"
    elif "cells" in diff:
        body = "".join(_cell_html(cell) for cell in diff["cells"])
    elif "images" in diff:
        body = _images_html(diff["images"])
    elif "table" in diff:
        body = _csv_html(diff["path"], diff["table"])
    elif "rendered" in diff:
        source = diff_pre(diff["lines"], f"diff of {diff['path']}")
        body = (
            # it scrolls: reachable with the keyboard, and named
            f'<div class="ls-diff-rendered" tabindex="0" role="region" '
            f'aria-label="{path} as it reads">{diff["rendered"]}</div>'
            '<details class="ls-diff-source"><summary>Source diff</summary>'
            f"{source}</details>"
        )
    elif diff["lines"]:
        body = diff_pre(diff["lines"], f"diff of {diff['path']}")
    else:
        body = ""
    status = html.escape(diff["status"])
    return f'<div class="ls-diff-file" data-status="{status}">{title}{body}</div>'


def _cell_html(cell: CellDiff) -> str:
    title = (
        f"<b>cell <code>{html.escape(cell['id'])}</code></b> "
        f"({html.escape(cell['type'])}) — {html.escape(cell['how'])}"
    )
    parts = [title]
    if cell["source"]:
        parts.append(diff_pre(cell["source"], f"source of cell {cell['id']}"))
    if cell["outputs"]:
        parts.append(diff_pre(cell["outputs"], f"outputs of cell {cell['id']}"))
    if "images" in cell:
        parts.append(_images_html(cell["images"]))
    cell_id, kind = html.escape(cell["id"], quote=True), html.escape(cell["kind"], quote=True)
    return (
        f'<div class="ls-diff-cell" data-cell="{cell_id}" data-kind="{kind}">{"".join(parts)}</div>'
    )


def _images_html(images: DiffImages) -> str:
    def figure(urls: list[str], label: str) -> str:
        pictures = "".join(f'<img src="{src}" alt="{label}">' for src in urls)
        caption = f"<figcaption>{label}{'' if urls else ': none'}</figcaption>"
        return f"<figure>{pictures}{caption}</figure>"

    before, after = figure(images["before"], "before"), figure(images["after"], "after")
    return f'<div class="ls-diff-images">{before}{after}</div>'


def _csv_html(path: str, table: CsvDiff) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["", *table["header"]])
    cells = "".join(
        f'<tr class="ls-diff-{kind}"><td>{"+" if kind == "add" else "−"}</td>'
        + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        + "</tr>"
        for kind, *cells in table["rows"]
    )
    label = html.escape(f"changed rows of {path}", quote=True)
    return (
        f'<table class="ls-diff-csv" tabindex="0" aria-label="{label}">'
        f"<tr>{head}</tr>{cells}</table>"
    )
