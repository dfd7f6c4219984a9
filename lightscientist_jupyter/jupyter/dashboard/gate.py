"""The gate panel: what is being approved, and the buttons that approve it.

Shown while a decision is pending. It previews the stage's outputs and its summary, names
the proposed next stage, and offers Approve / Reject with a comment box and, for a gate, the
stage a rejection sends the project back to.

A click acts once. The first click takes the panel's lock, marks the decision taken and
disables both buttons; a second click (or a click on the other button) finds it taken and
does nothing. The reply names the decision it answers (`decision_id`), so a panel that is
late never answers a newer decision. The reply itself is O(1) for the kernel: the
controller's `reply` (a state write) or a file in the inbox. Button callbacks run on the
kernel's main thread, `show` and `settle` on the dashboard's flusher thread; all three hold
the lock the dashboard hands in, so the panel's widgets have one writer at a time.
"""

from __future__ import annotations

import html
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from lightscientist_jupyter.app import recalled
from lightscientist_jupyter.controller import DONE, PendingDecision, ProjectState, StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.gate_actions import GateActions
from lightscientist_jupyter.jupyter.dashboard.gate_card import card_of, review_card, settled_text
from lightscientist_jupyter.jupyter.diff_card import gate_diff
from lightscientist_jupyter.jupyter.look import door_words, verdict_words
from lightscientist_jupyter.jupyter.provenance_links import gate_checks
from lightscientist_jupyter.jupyter.server.answers import FileDiff, GateChecks
from lightscientist_jupyter.jupyter.show import preview
from lightscientist_jupyter.workspace import Workspace

Reply = Callable[[bool, str, "str | None", str], str]
"""`reply(approve, comment, to_stage, decision_id) -> message`."""


class GatePanel:
    """Approve / Reject for the pending decision of one project."""

    def __init__(
        self, reply: Reply, table: StageTable, root: Path, lock: threading.RLock | None = None
    ):
        self._reply = reply
        self.table = table
        self.root = root
        self._lock = lock or threading.RLock()
        self.pending: PendingDecision | None = None
        self.decided: dict[str, Any] | None = None
        """What this panel sent for the pending decision: `{"id", "approve", "message"}`."""
        self.replies = 0
        """Replies sent through this panel (one per decision at most)."""

        self.title = w.HTML()
        self.summary = w.HTML()
        self.preview = w.Output()
        self.preview.add_class("ls-preview-box")
        self.comment = w.Textarea(
            placeholder="comment (kept in PROCESS.md; on reject, handed to the next worker)",
            layout=w.Layout(width="100%", height="56px"),
        )
        self.reject_to = w.Dropdown(
            description="reject to",
            options=[("", "")],
            style={"description_width": "initial"},
            layout=w.Layout(width="auto"),
        )
        self.approve_button = w.Button(
            description="Approve",
            button_style="success",
            icon="check",
            tooltip="approve and move on",
        )
        self.reject_button = w.Button(
            description="Reject", button_style="danger", icon="times", tooltip="reject and go back"
        )
        self.result = w.HTML()
        self.approve_button.on_click(lambda _b: self.decide(True))
        self.reject_button.on_click(lambda _b: self.decide(False))
        self.buttons = w.HBox([self.approve_button, self.reject_button, self.reject_to])
        # shown: the card drawn in the browser (its clicks go through the server extension);
        # the ipywidgets above stay the kernel-side controls (`approve_button.click()`)
        self.actions = GateActions(on_reply=self._from_browser, root=str(root))
        self.fold = w.Accordion(children=[self.preview], titles=("Preview of the files",))
        self.fold.selected_index = None  # folded: the action comes first
        self.widget = w.VBox([self.actions, self.fold], layout=w.Layout(display="none"))
        self.widget.add_class("ls-gate-panel")

    # ---------------------------------------------------------------- flusher side

    def show(self, pending: PendingDecision | None, state: ProjectState | None = None) -> None:
        """Show `pending` (a new decision), or hide the buttons when there is none; `state`,
        the project's now, says what the stage was given from memory."""
        with self._lock:
            if pending is not None and self.pending is not None and pending.id == self.pending.id:
                return
            self.pending = pending
            self.decided = None
            self._draw(pending, state)

    def _draw(self, pending: PendingDecision | None, state: ProjectState | None) -> None:
        if pending is None:
            self._set_buttons(False)
            return
        gate = pending.kind == "gate"
        verb = (
            f"Approve <b>{html.escape(pending.stage)}</b> and move on to "
            f"<b>{html.escape(pending.proposed_next or '?')}</b>?"
            if gate
            else f"Question from <b>{html.escape(pending.stage)}</b>"
        )
        self.title.value = (
            f'<div style="font-size:14px">Decision '
            f"<code>{html.escape(pending.id)}</code>: {verb}</div>"
            f"<div>{html.escape(pending.question)}</div>"
        )
        summary = html.escape(pending.summary).replace("\n", "<br>")
        options = (
            f"<div>options: {', '.join(html.escape(o) for o in pending.options)}</div>"
            if pending.options
            else ""
        )
        self.summary.value = (
            f'<div style="color:#3b4550">{summary}</div>{options}' if summary or options else ""
        )
        outputs = []
        for rel in pending.outputs:
            for data in preview(self.root, rel):
                outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        self.preview.outputs = tuple(outputs)
        self.fold.layout.display = "" if outputs else "none"
        self.fold.selected_index = None
        if gate:
            targets = [pending.default_reject] if pending.default_reject else []
            targets += [s for s in self.table.ids() if s not in targets]
            self.reject_to.options = [
                (f"{t} (default)" if i == 0 and pending.default_reject else t, t)
                for i, t in enumerate(targets)
            ]
            self.reject_to.value = targets[0] if targets else None
        self.reject_to.layout.display = "" if gate else "none"
        self.approve_button.description = "Approve" if gate else "Yes"
        self.reject_button.description = "Reject" if gate else "No"
        self.comment.value = ""
        self.result.value = ""
        self._set_buttons(True)
        self.actions.outcome = {}
        self.actions.card = dict(
            card_of(
                pending,
                list(self.reject_to.options) if gate else [],
                review_card(self.table, self.root, pending.stage),
                recalled.at_decision(Workspace(self.root), state) if state is not None else [],
                *self._under_review(pending),
            )
        )
        self.widget.layout.display = ""

    def _under_review(
        self, pending: PendingDecision
    ) -> tuple[list[FileDiff], str, GateChecks | None]:
        """At a gate: what changed in each file (or why that cannot be shown: it never hides
        the card's buttons), and where the paper's numbers come from."""
        if pending.kind != "gate":
            return [], "", None
        checks = gate_checks(self.root, self.table, pending, str(self.root))
        try:
            return gate_diff(Workspace(self.root), images=True), "", checks
        except (LightScientistError, OSError) as exc:
            return [], f"no diff: {exc}", checks

    def settle(self, state: Any) -> None:
        """The decision was answered (here or elsewhere): show how, and hide the buttons."""
        with self._lock:
            pending, self.pending = self.pending, None
            if pending is not None:
                self._settle(pending, state)

    def close(self) -> None:
        """Hide the card: the project ended, and its decisions are the timeline's."""
        with self._lock:
            self.pending = None
            self.actions.card = {}
            self.widget.layout.display = "none"

    def _settle(self, pending: PendingDecision, state: Any) -> None:
        self._set_buttons(False)
        # settled: one line says how (the front end folds the card to it); what was under
        # review, the diff and the checks, are history now
        self.fold.layout.display = "none"
        self.summary.value = ""
        answer = next((d for d in reversed(state.decisions) if d.get("id") == pending.id), None)
        if answer is None:
            self.result.value = (
                f"<div>decision <code>{html.escape(pending.id)}</code> is no "
                f"longer pending (the project is {html.escape(state.status)})"
                "</div>"
            )
            text = f"decision {pending.id} is no longer pending (the project is {state.status})"
        else:
            self.result.value = _verdict_html(answer)
            text = settled_text(pending, answer, state)
        self.actions.outcome = {"state": "settled", "text": text}
        self.actions.card = {**self.actions.card, "settled": True}

    # ---------------------------------------------------------------- click side

    def decide(self, approve: bool) -> str | None:
        """Send the reply for the decision shown — once. Returns the outcome message."""
        with self._lock:
            pending = self.pending
            if pending is None or self.decided is not None:
                return None
            self.decided = {"id": pending.id, "approve": approve, "message": ""}
            return self._send(pending, approve)

    def _send(self, pending: PendingDecision, approve: bool) -> str:
        self._set_buttons(False)
        to_stage = None
        if not approve and pending.kind == "gate":
            to_stage = self.reject_to.value or None
        try:
            self.replies += 1
            message = self._reply(approve, self.comment.value.strip(), to_stage, pending.id)
        except LightScientistError as exc:
            message = f"not applied: {exc}"
        self.decided = {"id": pending.id, "approve": approve, "message": message}
        verdict = "approved" if approve else "rejected"
        if pending.kind != "gate":
            verdict = "answered yes" if approve else "answered no"
        refused = message.startswith("not applied") or "nothing changed" in message
        # the controller's answer names the stage and the verdict itself ("idea.gate
        # approved; the project is now at …"), a refusal says why; a queued reply's does not
        plain = refused or message.startswith(pending.stage)
        said = message if plain else f"{verdict} {pending.stage}: {message}"
        self.actions.outcome = {"state": "refused" if refused else "sent", "text": said}
        self.result.value = f"<div>{html.escape(said)}</div>"
        return message

    def _from_browser(self, approve: bool, comment: str, to: str | None, decision_id: str) -> str:
        """A click in the card that came over the comm (no server extension answered)."""
        with self._lock:
            pending = self.pending
            if pending is None or pending.id != decision_id or self.decided is not None:
                return f"decision {decision_id} is no longer waiting here; nothing changed"
            self.comment.value = comment
            if to and to in [value for _label, value in self.reject_to.options]:
                self.reject_to.value = to
            return self.decide(approve) or ""

    def _set_buttons(self, enabled: bool) -> None:
        for widget in (self.approve_button, self.reject_button, self.comment, self.reject_to):
            widget.disabled = not enabled
        self.buttons.layout.display = "" if enabled else "none"
        self.comment.layout.display = "" if enabled else "none"


def _verdict_html(answer: dict[str, Any]) -> str:
    verdict = verdict_words(answer)
    target = answer.get("to")
    where = (
        f" → <b>{html.escape(target)}</b>"
        if target and target != DONE
        else (" → <b>done</b>" if target == DONE else "")
    )
    comment = f" — “{html.escape(answer['comment'])}”" if answer.get("comment") else ""
    door = html.escape(door_words(answer.get("source", "?")))
    return (
        f"<div>✔ <b>{verdict}</b> at <code>{html.escape(answer.get('stage', ''))}</code>"
        f"{where} {door}{comment}</div>"
    )
