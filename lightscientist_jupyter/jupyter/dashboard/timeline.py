"""The decisions a project has had, as a compact timeline: none vanishes from the dashboard.

Each row: the time, the stage, approved / rejected (or answered), where the project went,
the comment, and from where the reply came (widget, dashboard, panel, cli, auto).
"""

from __future__ import annotations

import html
import time
from collections.abc import Iterable, Mapping
from typing import Any

from lightscientist_jupyter.controller import DONE
from lightscientist_jupyter.jupyter.look import door_words, verdict_words


def render(decisions: Iterable[Mapping[str, Any]], *, limit: int = 30) -> str:
    """The timeline's HTML, newest last ('' when there was no decision yet)."""
    rows = list(decisions)
    if not rows:
        return ""
    shown = rows[-limit:]
    items = []
    for d in shown:
        yes = bool(d.get("approve"))
        verdict = verdict_words(d)
        ts = d.get("ts") or d.get("time") or d.get("at")
        clock = (
            time.strftime("%H:%M:%S", time.localtime(ts)) if isinstance(ts, (int, float)) else ""
        )
        target = d.get("to")
        where = f" → {'done' if target == DONE else target}" if target else ""
        comment = f" — “{d['comment']}”" if d.get("comment") else ""
        items.append(
            f'<li class="{"ls-ok" if yes else "ls-err"}" data-decision="'
            f'{html.escape(str(d.get("id", "")))}">'
            f'<span class="ls-muted">{clock}</span> '
            f"<b>{verdict}</b> at <code>{html.escape(str(d.get('stage', '')))}</code>"
            f"{html.escape(where)} "
            f'<span class="ls-muted">{html.escape(door_words(d.get("source", "?")))}</span>'
            f"{html.escape(comment)}</li>"
        )
    more = len(rows) - len(shown)
    head = f"Decisions ({len(rows)})" + (f", newest {len(shown)}" if more else "")
    return (
        f'<div class="ls-timeline-box"><b>{head}</b>'
        f'<ol class="ls-timeline" aria-label="decisions">{"".join(items)}</ol></div>'
    )
