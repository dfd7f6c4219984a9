"""The controller's hand-over calls: `take`, `deliver`, `give_back` (a mixin of
`ResearchController`).

Like `finish_stage`, each reads the clock and the disk under the controller's lock — which
required outputs are missing, which files the researcher wrote (and which the workers the
hand-over stopped wrote before they stopped, as the event log tells) — builds the action and lets
the pure `machine.step` decide (`controller.handoff`).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import Any

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import actions, handoff_notebook
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import read_tail
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.vocab import (
    DecisionKind,
    EventType,
    Layer,
    ProjectStatus,
    ReplySource,
)
from lightscientist_jupyter.workspace import Workspace

MAX_WRITTEN = 20
"""How many files a give-back names in the workers' task (of the researcher's, and of the
stopped workers')."""
MTIME_SLACK_S = 0.05
"""File times come from the kernel's coarse clock, up to a tick (a few ms) behind
`time.time()`: a file written just after the hand-over began may look a little older."""


@dataclasses.dataclass(frozen=True)
class Handed:
    """The answer to a take, a deliver or a give-back."""

    accepted: bool
    message: str
    """What happened, or every reason of a refusal."""
    status: ProjectStatus
    stage: str


class HandoffTools:
    """The hand-over calls of `ResearchController` (which provides these attributes)."""

    workspace: Workspace
    table: StageTable
    _state: ProjectState
    _lock: threading.RLock

    def _run(self, action: actions.Action) -> actions.Respond:
        raise NotImplementedError

    def _finish_action(
        self, summary: str, outputs: Sequence[str], next_stage: str | None, look: bool
    ) -> actions.Finish:
        raise NotImplementedError

    def _refused(self, line: str) -> None:
        raise NotImplementedError

    def _hand_over_notebook(self, stage: str) -> None:
        """Write the notebook of the stage just handed over (`handoff_notebook.write`); one
        that cannot be written is said as a refused path, and the hand-over stands."""
        try:
            handoff_notebook.write(self.workspace, self._state, self.table, stage)
        except OSError as exc:
            where = handoff_notebook.notebook_path(self.table[stage])
            self._refused(f"the notebook {where} for '{stage}' was not written: {exc}")

    def _handed(self, respond: actions.Respond) -> Handed:
        return Handed(respond.ok, respond.message, self._state.status, self._state.stage)

    def take(self, stage: str | None = None, *, source: ReplySource = ReplySource.API) -> Handed:
        """Hand the current stage (or, given `stage`, that stage when reached) to the
        researcher. Raises `ControllerError` for a stage the table lacks or a finished project."""
        with self._lock:
            return self._handed(self._run(actions.Take(stage, source, time.time())))

    def deliver(
        self,
        summary: str,
        next_stage: str | None = None,
        outputs: Sequence[str] = (),
        *,
        source: ReplySource = ReplySource.API,
    ) -> Handed:
        """Deliver the stage the researcher took: checked as a worker's finish (required
        outputs, allowed next stage); refused with the same reasons, the stage still theirs.
        The summary is redacted first, as a reply's comment is."""
        with self._lock:
            pending = self._state.pending
            handed = pending is not None and pending.kind == DecisionKind.HANDOFF
            finish = self._finish_action(redact(summary), outputs, next_stage, handed)
            return self._handed(self._run(actions.Deliver(finish, source)))

    def give_back(self, *, source: ReplySource = ReplySource.API) -> Handed:
        """Return the stage the researcher took to the workers; what they wrote meanwhile is
        named in the workers' task, apart from what the workers the hand-over stopped wrote
        before they stopped (and the take's notebook, when nobody touched it)."""
        with self._lock:
            pending = self._state.pending
            since = pending.requested_at if pending is not None else time.time()
            stopped = workers_stopped_at(self.workspace, pending) if pending else since
            changed = changed_since(self.workspace, since - MTIME_SLACK_S)
            if pending is not None and handoff_notebook.untouched(
                self.workspace, self._state, self.table, pending.stage
            ):  # the take wrote it; nobody did anything in it
                blank = handoff_notebook.notebook_path(self.table[pending.stage])
                changed = [(mtime, rel) for mtime, rel in changed if rel != blank]
            theirs = tuple(rel for mtime, rel in changed if mtime <= stopped)[:MAX_WRITTEN]
            mine = tuple(rel for mtime, rel in changed if mtime > stopped)[:MAX_WRITTEN]
            return self._handed(self._run(actions.GiveBack(mine, source, time.time(), theirs)))


def changed_since(workspace: Workspace, since: float) -> list[tuple[float, str]]:
    """Workspace files (not hidden, not the project's own) changed since `since`, as
    `(mtime, path)`, oldest first."""
    tree = Beneath(workspace.root)
    found: list[tuple[float, str]] = []
    for rel in tree.walk_files(skip_hidden=True):
        if rel == PurePosixPath("PROCESS.md"):
            continue
        try:
            st = tree.lstat(rel)
        except OSError:
            continue
        if st is not None and st.st_mtime >= since:
            found.append((st.st_mtime, rel.as_posix()))
    return sorted(found)


def workers_stopped_at(workspace: Workspace, pending: PendingDecision) -> float:
    """When the workers that ran as the researcher took the stage had stopped: the time of
    layer 2's event saying so (`supervisor.handoff.release_if_taken`, data `handoff: true`)
    when it came after the hand-over `pending` began, else its start (no worker ran)."""

    def released(raw: dict[str, Any]) -> bool:
        data = raw.get("data") or {}
        return (
            raw.get("layer") == Layer.SUPERVISOR
            and data.get("handoff") is True
            and raw.get("stage") == pending.stage
        )

    def keep(raw: dict[str, Any]) -> bool:
        if raw.get("type") == EventType.USER_DECISION_REQUESTED:  # the take: none stopped since
            return (raw.get("data") or {}).get("id") == pending.id
        return released(raw)

    last = read_tail(workspace.events_file, 1, keep)  # the newer of the two, read backwards
    if last and released(last[0]):
        return max(float(last[0].get("ts") or 0.0), pending.requested_at)
    return pending.requested_at


def handoff_stages(table: StageTable, named: Sequence[str]) -> list[str]:
    """The stages a new project hands to the researcher: `named` (`--handoff`, each checked
    against the table) and the table's `handoff = true` ones, in table order."""
    unknown = [s for s in named if s not in table]
    if unknown:
        raise ControllerError(
            f"--handoff: {', '.join(repr(s) for s in unknown)} not a stage of {table.path}; "
            f"choose among {', '.join(table.ids())}"
        )
    return [s.id for s in table if s.handoff or s.id in named]
