"""The gate panel: what is being approved, and the one card that approves it.

Shown while a decision is pending. The kernel computes the card once (`gate_card.card_of`:
the heading, the summary, the files with their diff, the checks, the targets a rejection
may go to) and the browser draws it (`GateActions`, the side panel's own drawing); below
it, folded, a preview of the stage's outputs.

A reply acts once. The first takes the panel's lock and marks the decision taken; a second
(or one for the other verdict) finds it taken and does nothing. The reply names the
decision it answers (`decision_id`), so a card that is late never answers a newer
decision. The reply itself is O(1) for the kernel: the controller's `reply` (a state
write) or a file in the inbox. Replies over the comm run on the kernel's main thread,
`show` and `settle` on the dashboard's flusher thread; all hold the lock the dashboard
hands in, so the card has one writer at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ipywidgets as w

from lightscientist_jupyter.app import recalled
from lightscientist_jupyter.controller import PendingDecision, ProjectState, StageTable
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.jupyter.dashboard.gate_actions import GateActions
from lightscientist_jupyter.jupyter.dashboard.gate_card import card_of, review_card, settled_text
from lightscientist_jupyter.jupyter.diff_card import gate_diff
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
        self.targets: list[tuple[str, str]] = []
        """Where a rejection of the pending gate may send the project, `(label, stage)`,
        its default first."""

        self.preview = w.Output()
        self.preview.add_class("ls-preview-box")
        # the card is drawn in the browser; its clicks go through the server extension, else
        # over the comm to `_from_browser`
        self.actions = GateActions(on_reply=self._from_browser, root=str(root))
        self.fold = w.Accordion(children=[self.preview], titles=("Preview of the files",))
        self.fold.selected_index = None  # folded: the action comes first
        self.widget = w.VBox([self.actions, self.fold], layout=w.Layout(display="none"))
        self.widget.add_class("ls-gate-panel")

    # ---------------------------------------------------------------- flusher side

    def show(self, pending: PendingDecision | None, state: ProjectState | None = None) -> None:
        """Show `pending` (a new decision), or nothing to answer when there is none;
        `state`, the project's now, says what the stage was given from memory."""
        with self._lock:
            if pending is not None and self.pending is not None and pending.id == self.pending.id:
                return
            self.pending = pending
            self.decided = None
            if pending is not None:
                self._draw(pending, state)

    def _draw(self, pending: PendingDecision, state: ProjectState | None) -> None:
        gate = pending.kind == "gate"
        outputs = []
        for rel in pending.outputs:
            for data in preview(self.root, rel):
                outputs.append({"output_type": "display_data", "data": data, "metadata": {}})
        self.preview.outputs = tuple(outputs)
        self.fold.layout.display = "" if outputs else "none"
        self.fold.selected_index = None
        self.targets = []
        if gate:
            stages = [pending.default_reject] if pending.default_reject else []
            stages += [s for s in self.table.ids() if s not in stages]
            self.targets = [
                (f"{t} (default)" if i == 0 and pending.default_reject else t, t)
                for i, t in enumerate(stages)
            ]
        self.actions.outcome = {}
        self.actions.card = dict(
            card_of(
                pending,
                self.targets,
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
        """The decision was answered (here or elsewhere): the card folds to how."""
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
        # settled: one line says how (the front end folds the card to it); what was under
        # review, the diff and the checks, are history now
        self.fold.layout.display = "none"
        answer = next((d for d in reversed(state.decisions) if d.get("id") == pending.id), None)
        if answer is None:
            text = f"decision {pending.id} is no longer pending (the project is {state.status})"
        else:
            text = settled_text(pending, answer, state)
        self.actions.outcome = {"state": "settled", "text": text}
        self.actions.card = {**self.actions.card, "settled": True}

    # ---------------------------------------------------------------- click side

    def decide(self, approve: bool, comment: str = "", to_stage: str | None = None) -> str | None:
        """Send the reply for the decision shown — once; a gate's rejection goes to
        `to_stage`, else to its default. Returns the outcome message (None: nothing sent)."""
        with self._lock:
            pending = self.pending
            if pending is None or self.decided is not None:
                return None
            self.decided = {"id": pending.id, "approve": approve, "message": ""}
            return self._send(pending, approve, comment.strip(), to_stage)

    def _send(
        self, pending: PendingDecision, approve: bool, comment: str, to_stage: str | None
    ) -> str:
        to = None
        if not approve and pending.kind == "gate":
            to = to_stage or next((stage for _label, stage in self.targets), None)
        try:
            self.replies += 1
            message = self._reply(approve, comment, to, pending.id)
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
        return message

    def _from_browser(self, approve: bool, comment: str, to: str | None, decision_id: str) -> str:
        """A click in the card that came over the comm (no server extension answered)."""
        with self._lock:
            pending = self.pending
            if pending is None or pending.id != decision_id or self.decided is not None:
                return f"decision {decision_id} is no longer waiting here; nothing changed"
            return self.decide(approve, comment, to) or ""
