"""The diff beside each file under review on the gate card: what changed since the last
approved state (`app.history.gate_changes`) — a new file, changed lines as a unified diff,
Markdown rendered with its insertions and deletions marked (`markdown_diff`, the source diff
a click away), a notebook cell by cell (`notebook_view`), images side by side, a small CSV as
a table of changed rows, a removed file."""

from __future__ import annotations

import base64
import difflib
import html
from pathlib import Path

import ipywidgets as w

from lightscientist_jupyter.app.history import FileChange, gate_changes
from lightscientist_jupyter.controller import PendingDecision
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.markdown_diff import rendered_diff
from lightscientist_jupyter.jupyter.notebook_view import MAX_LINES, change_html, diff_pre
from lightscientist_jupyter.jupyter.server.answers import FileDiff
from lightscientist_jupyter.values.notebook import is_notebook, summary_of
from lightscientist_jupyter.values.notebook_diff import changes_between, notebook_diff
from lightscientist_jupyter.workspace import Workspace

CSV_ROWS = 200
"""A CSV of at most this many rows is shown as a table of changed rows."""
IMAGES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".svg": "image/svg+xml"}
MARKDOWN = (".md", ".markdown")


def _rendered(change: FileChange) -> str | None:
    """A Markdown file's change rendered, insertions and deletions marked (None: not
    Markdown, or too long to draw)."""
    if not change.path.lower().endswith(MARKDOWN) or change.status not in ("new", "changed"):
        return None
    old = (change.old or b"").decode("utf-8", errors="replace")
    return rendered_diff(old, (change.new or b"").decode("utf-8", errors="replace"))


def _text(data: bytes | None) -> list[str]:
    return (data or b"").decode("utf-8", errors="replace").splitlines()


def _unified(change: FileChange) -> str:
    return diff_pre(change.unified(), f"diff of {change.path}")


def _image(change: FileChange, mime: str) -> str:
    def img(data: bytes | None, label: str) -> str:
        if data is None:
            return f"<figure><figcaption>{label}: none</figcaption></figure>"
        src = f"data:{mime};base64,{base64.b64encode(data).decode()}"
        caption = f"<figcaption>{label}</figcaption>"
        return f'<figure><img src="{src}" style="max-width:100%">{caption}</figure>'

    return (
        f'<div class="ls-diff-images">{img(change.old, "before")}{img(change.new, "after")}</div>'
    )


def _csv(change: FileChange) -> str | None:
    old, new = _text(change.old), _text(change.new)
    if max(len(old), len(new)) > CSV_ROWS or not new:
        return None
    header = new[0].split(",")
    body = []
    matcher = difflib.SequenceMatcher(a=old[1:], b=new[1:])
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        body += [("del", row) for row in old[1 + i1 : 1 + i2]]
        body += [("add", row) for row in new[1 + j1 : 1 + j2]]
    head = "".join(f"<th>{html.escape(h)}</th>" for h in ["", *header])
    cells = "".join(
        f'<tr class="ls-diff-{kind}"><td>{"+" if kind == "add" else "−"}</td>'
        + "".join(f"<td>{html.escape(c)}</td>" for c in row.split(","))
        + "</tr>"
        for kind, row in body
    )
    label = html.escape(f"changed rows of {change.path}", quote=True)
    return (
        f'<table class="ls-diff-csv" tabindex="0" aria-label="{label}">'
        f"<tr>{head}</tr>{cells}</table>"
    )


def _notebook(change: FileChange) -> str | None:
    """A notebook's change cell by cell, or None when a version is not a notebook."""
    changes = changes_between(change.path, change.old, change.new)
    if changes is None:
        return None
    summary = f'<div class="ls-diff-summary">{html.escape(summary_of(changes))}</div>'
    return summary + change_html(change.path, changes)


def _lines(change: FileChange) -> list[str]:
    """The side panel's text of a change: a notebook's cell by cell, else the unified diff."""
    by_cell = (
        notebook_diff(change.path, change.old, change.new) if is_notebook(change.path) else None
    )
    return (by_cell if by_cell is not None else change.unified())[:MAX_LINES]


def render(change: FileChange) -> str:
    """One file's change as HTML."""
    title = f"<b><code>{html.escape(change.path)}</code></b> — {change.status}"
    if change.status == "unchanged":
        body = ""
    elif change.status == "removed":
        body = "<div>the file was removed</div>"
    elif is_notebook(change.path) and (cells := _notebook(change)) is not None:
        body = cells
    elif (mime := IMAGES.get(Path(change.path).suffix.lower())) is not None:
        body = _image(change, mime)
    elif change.path.endswith(".csv") and (table := _csv(change)) is not None:
        body = table
    elif (markdown := _rendered(change)) is not None:
        body = (
            # it scrolls: reachable with the keyboard, and named
            f'<div class="ls-diff-rendered" tabindex="0" role="region" '
            f'aria-label="{html.escape(change.path)} as it reads">{markdown}</div>'
            f'<details class="ls-diff-source"><summary>Source diff</summary>{_unified(change)}'
            "</details>"
        )
    else:
        body = _unified(change)
    status = html.escape(change.status)
    return f'<div class="ls-diff-file" data-status="{status}">{title}{body}</div>'


def panel_changes(ws: Workspace) -> list[FileDiff]:
    """The side panel's `gate_diff`: each file under review, its status and, for text, the
    unified diff's lines (the panel draws them as text)."""
    shown: list[FileDiff] = []
    for change in gate_changes(ws):
        text = change.status in ("new", "changed") and Path(change.path).suffix not in IMAGES
        lines = _lines(change) if text else []
        diff: FileDiff = {"path": change.path, "status": change.status, "lines": lines}
        if text:
            diff["summary"] = counts(change)
        if (markdown := _rendered(change)) is not None:
            diff["rendered"] = markdown
        shown.append(diff)
    return shown


def counts(change: FileChange) -> str:
    """A change in a few words for its folded line: a notebook's by cell ("1 cell changed, 2
    added"), a text's by line ("+54 −3", of the whole diff, not only the lines shown)."""
    if is_notebook(change.path):
        cells = changes_between(change.path, change.old, change.new)
        if cells is not None:
            return summary_of(cells)
    body = change.unified()[2:]  # past the two file-name lines
    added = sum(1 for line in body if line.startswith("+"))
    removed = sum(1 for line in body if line.startswith("-"))
    return f"+{added} −{removed}"


def card_html(root: Path) -> str:
    """The card's HTML for the gate pending in `root` ("" when there is nothing to show)."""
    changes = gate_changes(Workspace.at(root))
    if not changes:
        return ""
    files = "".join(render(c) for c in changes)
    return f'<div class="ls-diff-card"><div>What changed since the last approval</div>{files}</div>'


class DiffCard:
    """The diff card of one project's gate panel."""

    def __init__(self, root: Path):
        self.root = root
        self.widget = w.HTML()
        self.widget.add_class("ls-diff")

    def show(self, pending: PendingDecision | None) -> None:
        try:
            text = card_html(self.root) if pending is not None and pending.kind == "gate" else ""
        except (
            LightScientistError,
            OSError,
        ) as exc:  # a diff that cannot be drawn never hides the buttons
            text = f"<div>(no diff: {html.escape(str(exc))})</div>"
        self.widget.value = text
