"""ResearchController: layer 1, the deterministic stage state machine.

It never calls a model. Layer 2 reaches it through exactly two tools, `finish_stage` and
`request_user_decision`; humans reach it through `reply` (directly, or via inbox files). Every
change is written to `state.json` by atomic replace before anyone is told, and every finished
stage leaves one entry in `PROCESS.md`.

The transitions themselves are the pure `machine.step`; this class is the loop around it: it
holds the lock, reads the clock and the disk (which required outputs are missing), builds the
action, and carries out the effects the step returns.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from lightscientist_jupyter._fs import missing_files
from lightscientist_jupyter.controller import (
    actions,
    checks,
    inbox,
    inbox_files,
    machine,
    process_log,
    rules,
)
from lightscientist_jupyter.controller.budget import catch_up
from lightscientist_jupyter.controller.budget_calls import BudgetCalls
from lightscientist_jupyter.controller.goal import check_goal, prompt_goal
from lightscientist_jupyter.controller.handoff_tools import HandoffTools, handoff_stages
from lightscientist_jupyter.controller.loader import load_table
from lightscientist_jupyter.controller.memory_calls import MemoryCalls
from lightscientist_jupyter.controller.review_calls import ReviewCalls
from lightscientist_jupyter.controller.search_calls import SearchCalls
from lightscientist_jupyter.controller.state import ProjectState, load_state, save_state
from lightscientist_jupyter.controller.table import DONE, StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.history.snapshots import History
from lightscientist_jupyter.redact import redact
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.values.usage import LEDGER, read_ledger
from lightscientist_jupyter.vocab import DecisionKind, EventType, Mode, ProjectStatus, ReplySource
from lightscientist_jupyter.workspace import Workspace


@dataclasses.dataclass(frozen=True)
class FinishOutcome:
    """The answer to `finish_stage`: accepted or refused, with a message a model can act on."""

    accepted: bool
    message: str
    status: ProjectStatus
    stage: str


@dataclasses.dataclass(frozen=True)
class ReplyOutcome:
    """The answer to a reply: whether it changed anything, and what."""

    applied: bool
    message: str
    decision_id: str | None = None
    answer: dict[str, Any] | None = None


class ResearchController(HandoffTools, BudgetCalls, SearchCalls, ReviewCalls, MemoryCalls):
    """Runs one project's stage machine over a workspace. Thread-safe. The hand-over calls
    (`take`, `deliver`, `give_back`) come from `HandoffTools`."""

    def __init__(
        self,
        workspace: Workspace,
        table: StageTable,
        state: ProjectState,
        bus: EventBus | None = None,
    ):
        self.workspace = workspace
        self.table = table
        self._state = state
        self.bus = bus or EventBus()
        self._lock = threading.RLock()
        self.changed = threading.Condition(self._lock)
        """Notified after every change of state."""
        self._answer_listeners: list[Callable[[dict[str, Any]], None]] = []
        self.history = History(workspace)

    # ---------------------------------------------------------------- construction

    @classmethod
    def create(
        cls,
        workspace: Workspace,
        goal: str,
        *,
        mode: str = Mode.MANUAL,
        table: StageTable | None = None,
        start_stage: str | None = None,
        bus: EventBus | None = None,
        settings: dict[str, Any] | None = None,
        max_goal_chars: int | None = None,
        handoffs: Sequence[str] = (),
    ) -> ResearchController:
        """Start a new project in `workspace` (which must not hold one yet); `handoffs` are
        stages for the researcher (`--handoff`), beside the table's `handoff = true` ones."""
        goal, run_mode, table, start = cls.check_new(
            workspace,
            goal,
            mode=mode,
            table=table,
            start_stage=start_stage,
            max_goal_chars=max_goal_chars,
            handoffs=handoffs,
        )
        state = ProjectState(
            goal=goal,
            mode=run_mode,
            stage=start,
            stages_file=str(table.path),
            settings={k: v for k, v in (settings or {}).items() if v},
            handoffs=handoff_stages(table, handoffs),
        )
        controller = cls(workspace, table, state, bus)
        workspace.state_dir.mkdir(parents=True, exist_ok=True)
        process_log.ensure_header(
            workspace, goal, str(table.path), run_mode, state.created_at, controller._refused
        )
        with controller._lock:
            controller._run(actions.Start(time.time()))
        return controller

    @staticmethod
    def check_new(
        workspace: Workspace,
        goal: str,
        *,
        mode: str = Mode.MANUAL,
        table: StageTable | None = None,
        start_stage: str | None = None,
        max_goal_chars: int | None = None,
        handoffs: Sequence[str] = (),
    ) -> tuple[str, Mode, StageTable, str]:
        """What `create` checks before it writes anything (`ControllerError` naming what to
        fix): the goal, the mode, the start stage and the `handoffs`, and that no project is
        there yet. Returns the goal, mode, table and start stage."""
        goal = check_goal(goal, max_goal_chars)
        try:
            run_mode = Mode(mode)
        except ValueError:
            raise ControllerError(f"mode '{mode}' is not one of {', '.join(Mode)}") from None
        if workspace.exists():
            load_state(workspace.state_file)  # a damaged state: its message says how to repair
            raise ControllerError(
                f"{workspace.root} already holds a project "
                f"({workspace.state_file}); continue it with "
                "`lightscientist resume`, or pick another --workspace"
            )
        table = table or load_table()
        start = start_stage or table.start
        if start not in table:
            raise ControllerError(
                f"--stage '{start}' is not a stage of {table.path}; choose one "
                f"of {', '.join(table.ids())}"
            )
        handoff_stages(table, handoffs)
        return goal, run_mode, table, start

    @classmethod
    def open(
        cls, workspace: Workspace, *, table: StageTable | None = None, bus: EventBus | None = None
    ) -> ResearchController:
        """Reload a project from its `state.json` (and the stage table it names)."""
        state = load_state(workspace.state_file)
        catch_up(state, read_ledger(workspace.state_dir / LEDGER))  # in memory only
        table = table or load_table(state.stages_file)
        if state.stage != DONE and state.stage not in table:
            raise ControllerError(
                f"{workspace.state_file} is at stage '{state.stage}', which "
                f"{table.path} no longer defines"
            )
        return cls(workspace, table, state, bus)

    # ---------------------------------------------------------------- reading

    @property
    def state(self) -> ProjectState:
        """A copy of the current state."""
        with self._lock:
            return ProjectState.from_dict(self._state.to_dict())

    @property
    def status(self) -> ProjectStatus:
        return self._state.status

    @property
    def stage(self) -> str:
        return self._state.stage

    @property
    def task_id(self) -> str:
        """`<stage>#<visit>` of the stage being run now."""
        return self._state.task_id

    def settled_status(self) -> ProjectStatus:
        """`status`, read once a step in progress (on another thread) has carried out all its
        effects: a reply flips the status before its answer reaches the listeners, so a
        reader in between would see a running project with nothing to do."""
        with self._lock:
            return self._state.status

    @property
    def pending_kind(self) -> DecisionKind | None:
        pending = self._state.pending
        return pending.kind if pending else None

    @property
    def mode(self) -> str:
        with self._lock:
            return self._state.mode

    @property
    def pending_question(self) -> str | None:
        pending = self._state.pending
        return pending.question if pending else None

    def task(self) -> StageTask:
        """The `StageTask` for the current stage, to hand down to layer 2."""
        with self._lock:
            s = self._state
            if s.stage == DONE:
                raise ControllerError("the project is done; there is no stage to run")
            stage = self.table[s.stage]
            return StageTask(
                goal=prompt_goal(s.goal),
                stage=stage.id,
                skill_path=str(stage.skill),
                outputs=stage.outputs,
                default_next=stage.next,
                allowed_next=stage.allowed,
                workspace=str(self.workspace.root),
                process_md=str(self.workspace.process_md),
                visit=s.visit,
                feedback=s.feedback,
                task_id=s.task_id,
                network=stage.network,
                limits=dict(stage.limits),
                search=stage.search,
                review=stage.review,
                recalled=self.recalled(stage.id),
                memory=self.memory_for(stage.id),
                agent=self.table.agent_of(stage.id),
            )

    def on_answer(self, listener: Callable[[dict[str, Any]], None]) -> None:
        """Call `listener(decision)` when a project-level question is answered."""
        self._answer_listeners.append(listener)

    # ---------------------------------------------------------------- layer-2 tools

    def finish_stage(
        self, summary: str, outputs: Sequence[str] = (), next_stage: str | None = None
    ) -> FinishOutcome:
        """Finish the current stage and move on, or refuse with a reason to act on."""
        with self._lock:
            ready = self._state.status == ProjectStatus.RUNNING
            respond = self._run(self._finish_action(summary, outputs, next_stage, ready))
            return FinishOutcome(respond.ok, respond.message, self._state.status, self._state.stage)

    def _finish_action(
        self, summary: str, outputs: Sequence[str], next_stage: str | None, look: bool
    ) -> actions.Finish:
        """A finish of the current stage with what the disk says (when `look`): required
        outputs missing or not ready (a notebook not run to the end cleanly), listed ones
        alike, the stage's checks failing (also `deliver`'s)."""
        s = self._state
        missing: tuple[str, ...] = ()
        listed: tuple[str, ...] = ()
        failed: tuple[str, ...] = ()
        if look:
            stage = self.table[s.stage]
            root = self.workspace.root
            missing = tuple(rules.missing_outputs(stage, root))
            others = [o for o in outputs if o not in stage.outputs]
            listed = tuple(missing_files(others, root, dirs_ok=True))
            failed = tuple(checks.problems(stage.checks, root))
        finish = actions.Finish(summary, tuple(outputs), next_stage, missing, 0.0, listed)
        return dataclasses.replace(finish, at=time.time(), failed_checks=failed)

    def request_user_decision(
        self,
        question: str,
        options: Sequence[str] = (),
        permission: PermissionRequest | None = None,
    ) -> str:
        """Ask the human a project-level question (`permission`: a coding agent's permission
        request, whose options answer it); returns the decision id."""
        with self._lock:
            respond = self._run(actions.Ask(question, tuple(options), time.time(), permission))
            assert respond.decision_id is not None
            return respond.decision_id

    # ---------------------------------------------------------------- human replies

    def reply(
        self,
        approve: bool,
        comment: str = "",
        to_stage: str | None = None,
        *,
        decision_id: str | None = None,
        source: ReplySource = ReplySource.API,
        budget: dict[str, float] | None = None,
    ) -> ReplyOutcome:
        """Answer the pending decision: exactly one transition per decision.

        The comment is redacted here, once, as every event is: whatever it reaches (events,
        `state.json`, PROCESS.md, the snapshots, the next workers' task) holds no key typed
        into it. Raises `ControllerError` when nothing is pending or `to_stage` is not a
        stage; a reply to a decision already answered changes nothing and says so.
        """
        comment = redact(comment)
        with self._lock:
            respond = self._run(
                actions.Reply(approve, comment, to_stage, decision_id, source, time.time(), budget)
            )
            return ReplyOutcome(respond.ok, respond.message, respond.decision_id, respond.answer)

    def poll_inbox(self) -> list[ReplyOutcome]:
        """Apply the replies queued in `.lightscientist/inbox/`, oldest first; of several to
        one decision, the latest (the earlier ones are dropped as replaced). A reply whose
        `source` is not a `ReplySource` (another version wrote it, or a hand) is applied all
        the same, recorded as from the API (`ReplySource.read`); one with a key of the wrong
        type (`approve` not true or false…) is refused, its outcome naming the file and the
        key (`inbox_files.read_reply`)."""
        outcomes = []
        for queued in inbox.take_replies(self.workspace):
            if isinstance(queued, inbox_files.Refused):
                outcomes.append(ReplyOutcome(False, queued.why))
                continue
            reply = queued.reply
            decision_id = reply.get("decision_id")
            if queued.replaced is not None:
                outcome = ReplyOutcome(False, queued.replaced, decision_id)
            else:
                try:
                    outcome = self.reply(
                        reply["approve"],
                        reply.get("comment", ""),
                        reply.get("to_stage"),
                        decision_id=decision_id,
                        source=reply.get("source", ReplySource.API),
                        budget=reply.get("budget"),
                    )
                except ControllerError as exc:
                    outcome = ReplyOutcome(False, str(exc), decision_id)
            inbox.settle(queued.path, reply, outcome.applied, outcome.message)
            outcomes.append(outcome)
        return outcomes

    # ---------------------------------------------------------------- run control

    def fail(self, reason: str) -> None:
        with self._lock:
            self._run(actions.End(ProjectStatus.FAILED, reason))

    def stop(self, reason: str) -> None:
        """Mark the project `stopped` (a fault outside it, such as a full disk); a resume
        continues it where it was."""
        with self._lock:
            self._run(actions.End(ProjectStatus.STOPPED, reason))

    def pause(self, reason: str) -> None:
        """Mark the project `paused` (after `--until STAGE`); a resume goes on from there."""
        with self._lock:
            self._run(actions.End(ProjectStatus.PAUSED, reason))

    def cancel(self, reason: str = "cancelled by the user") -> None:
        with self._lock:
            self._run(actions.End(ProjectStatus.CANCELLED, reason))

    def reopen(self) -> str | None:
        """Set a failed or cancelled project running again at its current stage. For a
        failed one, returns the line that says what failed before (the stage is retried
        from its start); else None."""
        with self._lock:
            respond = self._run(actions.Reopen())
            return None if respond.message == "ok" else respond.message

    def keep_settings(self, values: dict[str, Any]) -> None:
        """Keep run settings given to `resume` for the runs after it (e.g. `--checkpoints`)."""
        with self._lock:
            self._run(actions.KeepSettings(dict(values)))

    def wait_change(self, timeout: float | None = None) -> None:
        with self.changed:
            self.changed.wait(timeout)

    # ---------------------------------------------------------------- the effects

    def _run(self, action: actions.Action) -> actions.Respond:
        """Step the machine (under the lock) and carry out its effects in order.

        Returns what the caller is told; actions that tell nothing get a plain "ok".
        """
        self._state, effects = machine.step(self._state, self.table, action)
        respond = actions.Respond(True, "ok")
        due = [e for e in effects if isinstance(e, actions.TakeSnapshot)]
        filings = [e for e in effects if isinstance(e, actions.FileMemory)]
        for effect in effects:
            match effect:
                case actions.SaveState(soon=soon):
                    if not (soon and self._hold_usage_save()):
                        self._save()
                case actions.Emit():
                    self.bus.emit(
                        effect.type,
                        effect.message,
                        stage=effect.stage,
                        task_id=effect.task_id,
                        data=effect.data,
                    )
                case actions.AppendProcess():
                    process_log.append_entry(self.workspace, effect.entry, self._refused)
                case actions.NotifyAnswer():
                    for listener in self._answer_listeners:
                        listener(dict(effect.answer))
                case actions.Respond():
                    respond = effect
                case actions.HandOverNotebook():
                    self._hand_over_notebook(effect.stage)
        taken: dict[tuple[str, int], str] = {}
        if due:  # after the saves and PROCESS.md entries they are to hold
            ids = self.history.record([(snap.stage, snap.visit, snap.event) for snap in due])
            taken = {(snap.stage, snap.visit): id_ for snap, id_ in zip(due, ids, strict=False)}
        if filings:  # naming the snapshot of the visit they come from
            self._file_memory(filings, taken)
        return respond

    def _refused(self, line: str) -> None:
        """Say that a workspace path a command left was refused and the run went on."""
        self.bus.emit(EventType.PATH_REFUSED, line, stage=self._state.stage)

    def _save(self) -> None:
        save_state(self.workspace.state_file, self._state)
        self._saved_at, self._unsaved = time.monotonic(), False
        self.changed.notify_all()
