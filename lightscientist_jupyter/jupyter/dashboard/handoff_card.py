"""The dashboard's hand-over card: "Do it myself", then the stage's task, checklist, deliver.

While the project runs a stage (or waits at a gate) the card is one button, *Do it myself*,
which takes the current stage (at a gate: the stage its approval moves to). While the
researcher holds a stage the card shows what a worker would get — the goal, the skill
rendered, the PROCESS.md digest — the required outputs as a checklist that ticks as the
files appear, a deliver form (summary, next stage among the allowed ones) and *Give back*,
and a button that inserts a ready-to-edit skeleton cell below the dashboard's. A widget's
click arrives as a comm message, where `set_next_input` has no effect, so the button shows a
`CELL_MIME` bundle, which the JupyterLab extension's renderer (`labextension/src/skeleton.ts`)
turns into the new cell; without it the bundle's `text/plain`, the code, shows to copy.

The data is `app.handoff_card.card`, the same the side panel draws. `update` runs on the
dashboard's flusher thread, the buttons on the kernel's main thread; both hold the lock the
dashboard hands in.
"""

from __future__ import annotations

import html
import threading
import time
import uuid
from typing import Any

import ipywidgets as w

from lightscientist_jupyter import api
from lightscientist_jupyter.app.handoff_card import card as handoff_card
from lightscientist_jupyter.controller import ProjectState, StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.vocab import DecisionKind, ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace

CELL_MIME = "application/vnd.lightscientist.cell+json"
"""The skeleton as data (`code`, `id`, `at`), beside its `text/plain`: the extension's
renderer inserts `code` as a cell once per `id`, and only while `at` is recent (a notebook
opened again inserts nothing)."""
CHECK_EVERY_S = 1.0
"""How often the checklist looks at the disk."""


class HandoffCard:
    """The hand-over card of one project's dashboard."""

    def __init__(self, workspace: Workspace, table: StageTable, lock: threading.RLock):
        self.workspace = workspace
        self.table = table
        self._lock = lock
        self.card: dict[str, Any] | None = None
        self._shown: Any = None
        self._checked_at = 0.0

        self.take_button = w.Button(
            description="Do it myself", icon="user", tooltip="take this stage: no worker runs it"
        )
        self.take_button.add_class("ls-handoff-take")
        self.take_button.on_click(lambda _b: self.take())
        self.title = w.HTML()
        self.task = w.HTML()
        self.skill = w.Output(layout=w.Layout(max_height="260px", overflow="auto"))
        self.checklist = w.HTML()
        self.summary = w.Textarea(
            placeholder="what you did and found (kept in PROCESS.md)",
            layout=w.Layout(width="100%", height="56px"),
        )
        self.next_stage = w.Dropdown(description="next", layout=w.Layout(width="auto"))
        self.deliver_button = w.Button(description="Deliver", button_style="success", icon="check")
        self.give_back_button = w.Button(description="Give back", icon="undo")
        self.insert_button = w.Button(
            description="Insert a skeleton cell below", icon="plus", layout=w.Layout(width="auto")
        )
        self.deliver_button.on_click(lambda _b: self.deliver())
        self.give_back_button.on_click(lambda _b: self.give_back())
        self.insert_button.on_click(lambda _b: self.insert())
        self.inserted = w.Output()
        self.result = w.HTML()
        self.form = w.VBox(
            [
                self.title,
                self.task,
                self.skill,
                self.checklist,
                self.insert_button,
                self.inserted,
                self.summary,
                w.HBox([self.deliver_button, self.next_stage, self.give_back_button]),
            ]
        )
        self.form.add_class("ls-handoff")
        self.widget = w.VBox([self.take_button, self.form, self.result])  # style: theme.css
        self.widget.add_class("ls-handoff-card")
        self.form.layout.display = "none"
        self.take_button.layout.display = "none"

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
            target = (pending.proposed_next if gate and pending else None) or (
                state.stage if state else ""
            )
            self.take_button.description = f"Do {target} myself" if gate else "Do it myself"
            self.take_button.layout.display = "" if can_take and not handed else "none"
            if not handed or state is None or pending is None:
                self.form.layout.display = "none"
                self.card, self._shown = None, None
                return
            now = time.monotonic()
            if self._shown != pending.id or now - self._checked_at >= CHECK_EVERY_S:
                self._checked_at = now
                self.card = handoff_card(self.workspace, state, self.table)
                self._draw(self.card, fresh=self._shown != pending.id)
                self._shown = pending.id

    def _draw(self, card: dict[str, Any] | None, *, fresh: bool) -> None:
        if card is None:
            return
        self.checklist.value = checklist_html(card)
        if not fresh:
            return
        e = html.escape
        self.title.value = (
            f"<div style='font-size:14px'><b>{e(card['stage'])}</b> is yours "
            f"(visit {card['visit']}): no worker runs it until you deliver or give it back</div>"
        )
        feedback = f"<div><b>Note:</b> {e(card['feedback'])}</div>" if card.get("feedback") else ""
        self.task.value = (
            f"<div><b>Goal:</b> {e(card['goal'])}</div>{feedback}"
            "<details><summary>PROCESS.md — the project so far</summary>"
            f"<pre style='white-space:pre-wrap'>{e(card['digest'])}</pre></details>"
            f"<div class='ls-handoff-muted'>skill: <code>{e(card['skill_path'])}</code></div>"
        )
        self.skill.outputs = (
            {
                "output_type": "display_data",
                "data": {"text/markdown": card["skill"]},
                "metadata": {},
            },
        )
        self.next_stage.options = card["allowed_next"]
        self.next_stage.value = card["default_next"]
        self.summary.value = ""
        self.result.value = ""
        self.inserted.outputs = ()
        self.form.layout.display = ""

    # ---------------------------------------------------------------- click side

    def _say(self, action: Any) -> str:
        try:
            done = action()
        except LightScientistError as exc:
            message, ok = str(exc), False
        else:
            message, ok = done.message, done.accepted is not False
        said = html.escape(message, quote=False)
        self.result.value = f"<div class='{'ls-ok' if ok else 'ls-err'}'>{said}</div>"
        return message

    def take(self) -> str:
        root = self.workspace.root
        return self._say(lambda: api.take(root, source=ReplySource.WIDGET))

    def deliver(self) -> str:
        root, summary, target = self.workspace.root, self.summary.value, self.next_stage.value
        return self._say(
            lambda: api.deliver(
                root, summary, target, source=ReplySource.WIDGET, resume_if_idle=True
            )
        )

    def give_back(self) -> str:
        root = self.workspace.root
        return self._say(
            lambda: api.give_back(root, source=ReplySource.WIDGET, resume_if_idle=True)
        )

    def insert(self) -> None:
        """Insert the skeleton as a new cell below (the extension's `CELL_MIME` renderer)."""
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


def checklist_html(card: dict[str, Any]) -> str:
    """The required outputs, each ticked once it exists and is non-empty."""
    items = []
    for out in card["outputs"]:
        cls, mark = ("ls-ready", "☑") if out["ready"] else ("ls-missing", "☐")
        items.append(
            f"<li class='{cls}' data-ready='{str(out['ready']).lower()}'>{mark} "
            f"<code>{html.escape(out['path'])}</code></li>"
        )
    nexts = ", ".join(html.escape(s) for s in card["allowed_next"])
    return (
        "<div><b>Required outputs</b></div>"
        f"<ul class='ls-handoff-check'>{''.join(items)}</ul>"
        f"<div class='ls-handoff-muted'>allowed next stages: {nexts} "
        f"(default {html.escape(card['default_next'])})</div>"
    )
