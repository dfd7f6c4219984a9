"""The dashboard's hand-over card: "Do it myself", then the stage's task, checklist, deliver.

While the project runs a stage (or waits at a gate) the card is one button, *Do it myself*,
which takes the current stage (at a gate: the stage its approval moves to). While the
researcher holds a stage the card shows what a worker would get — the goal, the skill, the
PROCESS.md digest — the required outputs as a checklist that ticks as the files appear, a
deliver form (summary, next stage among the allowed ones) and *Give back*, and a button that
inserts a ready-to-edit skeleton cell below the dashboard's.

The kernel computes what is shown (`app.handoff_card.card`, the data the side panel gets too,
and the take button's label); the front end is the panel's own drawing of the card
(`labextension/src/widgets/handoff.ts` with `handoffcard.ts`). A step goes from the browser
through the server extension's reply endpoint, so it works after a reload and with the
kernel gone; only without a server extension does it come here over the comm (`_message`),
to the same `api` steps the methods below take. A widget's click arrives as a comm message,
where `set_next_input` has no effect, so *Insert a skeleton cell below* asks the kernel to
show a `CELL_MIME` bundle under the card, which the JupyterLab extension's renderer
(`labextension/src/skeleton.ts`) turns into the new cell; without it the bundle's
`text/plain`, the code, shows to copy.

`update` runs on the dashboard's flusher thread, the steps on the kernel's main thread; both
hold the lock the dashboard hands in.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, TypedDict

import anywidget
import ipywidgets as w
import traitlets

from lightscientist_jupyter import api
from lightscientist_jupyter.app.handoff_card import card as handoff_card
from lightscientist_jupyter.controller import ProjectState, StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace

CELL_MIME = "application/vnd.lightscientist.cell+json"
"""The skeleton as data (`code`, `id`, `at`), beside its `text/plain`: the extension's
renderer inserts `code` as a cell once per `id`, and only while `at` is recent (a notebook
opened again inserts nothing)."""
CHECK_EVERY_S = 1.0
"""How often the checklist looks at the disk."""


class TakeView(TypedDict):
    """The take button (`ITakeView` in `labextension/src/widgets/views.ts`)."""

    label: str
    """'Do it myself', at a gate 'Do NEXT myself'; '' when no stage can be taken now."""


class HandoffActions(anywidget.AnyWidget):
    """The card in the browser: the take button, and the card of a stage the researcher
    holds."""

    _esm = esm("handoff")
    _css = THEME_CSS

    card = traitlets.Dict().tag(sync=True)
    """`app.handoff_card.card` of the stage held (`HandoffCard` of the server's answers);
    `{}` while none is."""
    take = traitlets.Dict().tag(sync=True)
    """A `TakeView`."""
    root = traitlets.Unicode("").tag(sync=True)
    """The workspace, an absolute path (the browser makes it relative to the server root)."""
    outcome = traitlets.Dict().tag(sync=True)
    """`{"state": "sent" | "refused", "text": …}`: what the last step here said."""


class HandoffCard:
    """The hand-over card of one project's dashboard."""

    def __init__(self, workspace: Workspace, table: StageTable, lock: threading.RLock):
        self.workspace = workspace
        self.table = table
        self._lock = lock
        self.card: dict[str, Any] | None = None
        self._shown: Any = None
        self._checked_at = 0.0
        self.view = HandoffActions(root=str(workspace.root))
        self.view.on_msg(self._message)
        self.inserted = w.Output()
        """Where the skeleton's bundle shows (the extension inserts it as a cell)."""
        self.widget = w.VBox([self.view, self.inserted])  # its style: style/theme.css
        self.widget.add_class("ls-handoff-card")

    # ---------------------------------------------------------------- flusher side

    def update(self, state: ProjectState | None) -> None:
        """Show the take button, the card of a handed stage, or nothing."""
        with self._lock:
            pending = state.pending if state else None
            handed = pending is not None and pending.kind == DecisionKind.HANDOFF
            gate = pending is not None and pending.kind == DecisionKind.GATE
            can_take = state is not None and (
                gate or (state.status == ProjectStatus.RUNNING and pending is None)
            )
            target = (pending.proposed_next if gate and pending else None) or ""
            label = f"Do {target} myself" if gate else "Do it myself"
            take: TakeView = {"label": label if can_take and not handed else ""}
            if self.view.take != take:
                self.view.take = dict(take)
            if not handed or state is None or pending is None:
                if self.card is not None:
                    self.view.card = {}
                self.card, self._shown = None, None
                return
            now = time.monotonic()
            if self._shown != pending.id or now - self._checked_at >= CHECK_EVERY_S:
                self._checked_at = now
                fresh = self._shown != pending.id
                self.card = handoff_card(self.workspace, state, self.table)
                self._shown = pending.id
                if fresh:  # a new hand-over: nothing said or inserted yet
                    self.view.outcome = {}
                    self.inserted.outputs = ()
                if self.card is not None and self.view.card != self.card:
                    self.view.card = dict(self.card)

    # ---------------------------------------------------------------- the steps

    def _say(self, action: Callable[[], Any]) -> str:
        try:
            done = action()
        except LightScientistError as exc:
            message, ok = str(exc), False
        else:
            message, ok = done.message, done.accepted is not False
        self.view.outcome = {"state": "sent" if ok else "refused", "text": message}
        return str(message)

    def take(self) -> str:
        root = self.workspace.root
        return self._say(lambda: api.take(root, source=ReplySource.WIDGET))

    def deliver(self, summary: str = "", next_stage: str | None = None) -> str:
        root = self.workspace.root
        return self._say(
            lambda: api.deliver(
                root, summary, next_stage, source=ReplySource.WIDGET, resume_if_idle=True
            )
        )

    def give_back(self) -> str:
        root = self.workspace.root
        return self._say(
            lambda: api.give_back(root, source=ReplySource.WIDGET, resume_if_idle=True)
        )

    def insert(self) -> None:
        """Show the skeleton as a `CELL_MIME` bundle below the card: the extension's renderer
        inserts it as a new cell below the dashboard's."""
        card = self.card
        if card is None:
            return
        code = card["skeleton"]
        bundle = {CELL_MIME: {"code": code, "id": uuid.uuid4().hex, "at": time.time()}}
        self.inserted.outputs = (
            {
                "output_type": "display_data",
                "data": {**bundle, "text/plain": code},
                "metadata": {},
            },
        )

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        """The comm fallback of a step (no server extension answered), and the insert."""
        if not isinstance(content, dict):
            return
        try:
            if content.get("kind") == "insert":
                self.insert()
                self.view.send({"kind": "outcome", "ok": True, "text": ""})
                return
            if content.get("kind") != "handoff":
                return
            given = content.get("fields")
            fields: dict[str, Any] = given if isinstance(given, dict) else {}
            steps: dict[str, Callable[[], str]] = {
                "take": self.take,
                "deliver": lambda: self.deliver(
                    str(fields.get("summary") or ""), fields.get("next_stage") or None
                ),
                "give-back": self.give_back,
            }
            step = steps.get(str(content.get("step")))
            if step is None:
                raise LightScientistError(f"unknown hand-over step {content.get('step')!r}")
            with self._lock:
                said = step()
            ok = self.view.outcome.get("state") != "refused"
            self.view.send({"kind": "outcome", "ok": ok, "text": said})
        except Exception as exc:  # the card must hear back, whatever went wrong
            self.view.send({"kind": "outcome", "ok": False, "text": f"not done: {exc}"})
