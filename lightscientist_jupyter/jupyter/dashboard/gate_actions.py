"""The gate card's front: what is approved and the buttons, drawn in the browser.

A click here never depends on the kernel's comm. The browser sends the reply through the
server extension's authenticated endpoint (`POST <base>/lightscientist/reply`, the path the
side panel uses), which works after a page reload, with the kernel busy, and with the
kernel gone — the comm from a reloaded page can be dropped by ipykernel 7 ("Cannot handle
comm_msg …: Unknown subshell_id", ipykernel #1557, jupyterlab #17363). Only where no server
extension answers (another front end, a project outside the server root) does the card
fall back to a custom message on the comm, which `GateActions` hands to its `on_reply`.
Either way the button shows "sending…" and then what happened: the decision and the stage
the project moved to, or why not.

The kernel draws nothing here on a click: it sets `card` (the decision shown) and `outcome`
(what the kernel side knows); the front end (`labextension/src/widgets/gate.ts`, which
draws the reviews and the recalled entries with the side panel's own code) draws them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anywidget
import traitlets

from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm

OnReply = Callable[[bool, str, "str | None", str], str]
"""`on_reply(approve, comment, to_stage, decision_id) -> message` (the comm fallback)."""


class GateActions(anywidget.AnyWidget):
    """The card: heading, summary, files, and one row of Approve / Reject / comment / target."""

    _esm = esm("gate")
    _css = THEME_CSS

    card = traitlets.Dict().tag(sync=True)
    """The pending decision as shown: `{id, kind, heading, summary, files, targets, …}`;
    `{}` hides the card."""
    root = traitlets.Unicode("").tag(sync=True)
    """The workspace, an absolute path (the browser makes it relative to the server root)."""
    outcome = traitlets.Dict().tag(sync=True)
    """`{"state": "sent" | "refused" | "settled", "text": …}` from the kernel side."""

    def __init__(self, on_reply: OnReply | None = None, **kwargs: Any):
        super().__init__(**kwargs)
        self.on_reply = on_reply
        self.on_msg(self._message)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("kind") != "reply":
            return
        if self.on_reply is None:
            return
        try:
            message = self.on_reply(
                bool(content.get("approve")),
                str(content.get("comment") or ""),
                content.get("to_stage") or None,
                str(content.get("decision_id") or ""),
            )
            self.send({"kind": "outcome", "ok": True, "text": message})
        except Exception as exc:  # the card must hear back, whatever went wrong
            self.send({"kind": "outcome", "ok": False, "text": f"not applied: {exc}"})
