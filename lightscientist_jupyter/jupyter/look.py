"""The one status vocabulary of the dashboard and the side panel, in words a person uses.

The side panel spells the same table in `labextension/src/dom.ts` (`STATUS_WORDS`);
`tests/jupyter/test_look.py` keeps the two equal. Colours are not here: they are classes of
`dashboard/static/theme.css` (`ls-chip[data-status=…]`), from JupyterLab's theme variables.
"""

from __future__ import annotations

import html

STATUS_WORDS: dict[str, str] = {
    "running": "running",
    "waiting_user": "waiting for you",
    "done": "done",
    "failed": "failed",
    "cancelled": "cancelled",
    "stopped": "stopped",
    "paused": "paused",
    "interrupted": "interrupted",
}


def status_words(status: str | None) -> str:
    """`waiting_user` → "waiting for you"; an unknown status is shown as it is."""
    if not status:
        return "?"
    return STATUS_WORDS.get(str(status), str(status))


def chip(text: str, *, status: str | None = None, title: str = "", cls: str = "") -> str:
    """One `ls-chip` (with its status dot when `status` is given), text escaped."""
    attrs = f' data-status="{html.escape(str(status))}"' if status else ""
    attrs += f' title="{html.escape(title)}"' if title else ""
    classes = f"ls-chip {cls}".strip()
    return f'<span class="{classes}"{attrs}>{html.escape(text)}</span>'
