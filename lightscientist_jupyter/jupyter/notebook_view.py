"""A workspace notebook drawn in a notebook: the cells of `show experiment/analysis.ipynb`,
and a notebook's change cell by cell on the gate card.

`cells` gives the display objects of a notebook: each cell labelled with its id, Markdown
cells as Markdown, code cells as a Python code block (highlighted as `show` highlights any
source) and their outputs as the MIME bundles they saved — images as images, an error named
with its traceback. Only inert types are shown again (`SHOWN`): the output of a command
the researcher ran shows in their page as trusted, so a worker's HTML, SVG or JavaScript
(which could run code there) and widget views (their models died with the kernel that made
them) are left out; a table pandas saved as HTML shows as its plain text.

`diff_pre` draws unified diff lines as static HTML, every text escaped (`diff_card.render`,
a saved notebook's copy of what the live screens draw with `labextension/src/diff.ts`).
"""

from __future__ import annotations

import html
import re
from typing import Any

from IPython.display import Markdown

from lightscientist_jupyter.values.notebook import output_text

SHOWN = ("text/plain", "text/markdown", "text/latex", "image/png", "image/jpeg", "image/gif")
"""MIME types of saved outputs shown again (see the module's docstring)."""
MAX_LINES = 400
"""Diff lines shown per cell (the rest is counted)."""


def fenced(text: str, language: str) -> str:
    """`text` as a Markdown code block whose fence is longer than any run of backticks
    inside, so the text cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _joined(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


class SavedOutput:
    """One output a notebook saved, displayed again as the MIME bundle it was."""

    def __init__(self, data: dict[str, Any], metadata: dict[str, Any] | None = None):
        self.data = data
        self.metadata = metadata or {}

    def _repr_mimebundle_(
        self, include: Any = None, exclude: Any = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.data, self.metadata

    def __repr__(self) -> str:
        return str(self.data.get("text/plain", ""))


def _output(cell_id: str, output: Any) -> list[Any]:
    kind = output.get("output_type")
    if kind == "stream":
        return [SavedOutput({"text/plain": _joined(output.get("text"))})]
    if kind == "error":
        named = Markdown(f"**error** in cell `{cell_id}`: `{output_text(output)}`")
        trace = "\n".join(output.get("traceback") or [])
        return [named, SavedOutput({"text/plain": trace})] if trace else [named]
    data = {
        mime: _joined(value) if isinstance(value, list) else value
        for mime, value in (output.get("data") or {}).items()
        if mime in SHOWN
    }
    if not data:
        return []
    data.setdefault("text/plain", f"[{kind}]")
    return [SavedOutput(data, dict(output.get("metadata") or {}))]


def cells(nb: Any, where: str) -> list[Any]:
    """The display objects showing notebook `nb` (`where` names it in the heading)."""
    shown: list[Any] = [Markdown(f"**`{where}`** — {len(nb.cells)} cells")]
    for cell in nb.cells:
        cell_id, kind = str(cell.get("id")), cell.get("cell_type")
        count = cell.get("execution_count")
        ran = f" · [{count}]" if kind == "code" and count is not None else ""
        shown.append(Markdown(f"<small>cell `{cell_id}` · {kind}{ran}</small>"))
        source = _joined(cell.get("source"))
        if kind == "markdown":
            shown.append(Markdown(source))
        elif source.strip():
            shown.append(Markdown(fenced(source, "python" if kind == "code" else "")))
        for output in cell.get("outputs") or []:
            shown += _output(cell_id, output)
    return shown


# ------------------------------------------------------------------------- a change


def line_kind(line: str) -> str:
    """A unified diff line's class: `head` (file names, hunk ranges), `add`, `del`, `ctx`."""
    if line.startswith(("+++ ", "--- ", "@@")):
        return "head"
    return "add" if line.startswith("+") else "del" if line.startswith("-") else "ctx"


def diff_pre(lines: list[str], label: str) -> str:
    """Unified diff lines as a scrolling `<pre>`, each line classed by `line_kind`."""
    rows = [
        f'<div class="ls-diff-{line_kind(line)}">{html.escape(line)}</div>'
        for line in lines[:MAX_LINES]
    ]
    if len(lines) > MAX_LINES:
        rows.append(f"<div>… {len(lines) - MAX_LINES} more lines</div>")
    aria = html.escape(label, quote=True)
    # it scrolls: focusable, so that the keyboard scrolls it too
    return f'<pre class="ls-diff-text" tabindex="0" aria-label="{aria}">{"".join(rows)}</pre>'
