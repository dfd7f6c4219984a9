"""A research project wired end to end: controller, event sinks, run lock, supervisor.

`Project` is what the shells use (the command line, the notebook API). It owns the event
bus and the JSONL writer, holds the workspace's run lock while it runs, resolves the model
before any work starts, and drives the stage loop: hand the controller's `StageTask` to the
supervisor, let it finish the stage through the controller's tools, repeat — until the
project is done, waits at a gate, fails, or is stopped. Replies written to the inbox by any
process are applied while it runs.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightscientist_jupyter._faults import report_storage_fault
from lightscientist_jupyter.app import (
    commands,
    literature,
    outage,
    repair,
    sandboxing,
    usage,
)
from lightscientist_jupyter.app import controls as run_controls
from lightscientist_jupyter.app import until as until_stage
from lightscientist_jupyter.app.kept_settings import keep_given
from lightscientist_jupyter.app.replies import check as check_replies
from lightscientist_jupyter.app.replies import next_reply, recorded_replies, recorder_hook
from lightscientist_jupyter.app.starting import check_new, usable
from lightscientist_jupyter.controller import inbox
from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.goal import prompt_goal
from lightscientist_jupyter.controller.lock import WorkspaceLock
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.events import EventLog, Subscriber
from lightscientist_jupyter.runtime.checkpoints import url as checkpoint_url
from lightscientist_jupyter.runtime.jobs import limit as job_limit
from lightscientist_jupyter.runtime.jobs import ray as ray_jobs
from lightscientist_jupyter.runtime.models.resolver import default_spec, resolve_model
from lightscientist_jupyter.runtime.recording.recorder import recording_requested
from lightscientist_jupyter.supervisor.loop import StageSupervisor
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    DecisionKind,
    ProjectStatus,
    ReplySource,
    StageOutcome,
)
from lightscientist_jupyter.workspace import Workspace

INBOX_POLL_S = 0.25


class Project:
    """One workspace's project, opened for running (holds the run lock until `close`)."""

    def __init__(
        self,
        workspace: Workspace,
        controller: ResearchController,
        log: EventLog,
        lock: WorkspaceLock,
        *,
        model: str | None = None,
        base_url: str | None = None,
        checkpointer: Any = "sqlite",
        checkpoints: str | None = None,
        stall_after_s: float = 300.0,
        retries: int | None = None,
        retry_initial_delay: float = 1.0,
        record: bool = False,
        sandbox: str | None = None,
        allow_network: bool | None = None,
        limits: str | None = None,
        replies: str | None = None,
        until: str | None = None,
        budget: str | None = None,
        price: str | None = None,
        library: list[str] | None = None,
        ray: str | None = None,
        job_time_limit: str | None = None,
        no_memory: bool | None = None,
    ):
        self.workspace = workspace
        self.controller = controller
        controller.memory_on = not no_memory  # `--no-memory`: this run recalls and files nothing
        literature.configure(workspace.root, controller.table, library)  # and --library
        self.until = until_stage.for_run(controller, until)
        """`--until STAGE`, or a request kept from before: the run pauses once STAGE ends."""
        self.log = log
        self.bus = bus = log.bus
        self.lock = lock
        settings = controller.state.settings
        self.model_spec = model or settings.get("model") or default_spec()
        self.base_url = base_url or settings.get("base_url")
        self.model = resolve_model(self.model_spec, base_url=self.base_url)
        price = price or settings.get("price")  # `--price`, kept from `research`
        meter = usage.open_meter(workspace, controller, self.model_spec, self.base_url, price)
        if budget:
            controller.set_budget(usage.parse_budget(budget))
        self.record = recording_requested(record or settings.get("record"))
        """Whether this run records its model calls (`--record`, kept in the settings)."""
        check_replies(replies, self.model_spec)
        self.recorded_replies = recorded_replies(self.model) if replies else []
        """`--replies recorded`: the recording's replies, given again at the gates."""
        policy, self.sandbox = sandboxing.open_policy(
            workspace, bus, controller, sandbox=sandbox, allow_network=allow_network, limits=limits
        )
        keep_given(  # `resume --checkpoints/--ray/--job-time-limit`: kept
            controller, checkpoints=checkpoints, ray=ray, job_time_limit=job_time_limit
        )
        checkpointer = checkpoint_url.choose(checkpointer, checkpoints, settings)
        self.supervisor = StageSupervisor(
            workspace,
            self.model,
            controller,
            bus=bus,
            checkpointer=checkpointer,
            stall_after_s=stall_after_s,
            retries=retries,
            retry_initial_delay=retry_initial_delay,
            record=self.record,
            shell_policy=policy,
            meter=meter,
        )
        controller.on_answer(self.supervisor.on_user_answer)
        self.supervisor.runtime.jobs.ray_address = ray_jobs.choose(ray, settings)  # `--ray`
        self.supervisor.runtime.jobs.wall_limit_s = job_limit.choose(job_time_limit, settings)
        if self.supervisor.runtime.recorder is not None:
            bus.subscribe(recorder_hook(self.supervisor.runtime.recorder))
        self.stop_event = threading.Event()
        self._cancelling: threading.Thread | None = None
        self._closed = False
        self._poll_stop = True
        self.retried: str | None = None
        """What failed before, when this run retries a failed stage (see `reopen`)."""
        self.storage = outage.StorageWatch(
            workspace, self.stop_event, checkpoint_url.label(workspace, checkpointer)
        )
        """Stops the run when its disk or checkpoint database goes away (see `outage`)."""
        self.notes: list[str] = []
        """What opening the project put right (a killed run's processes, fresh sessions)."""

    # ------------------------------------------------------------------ opening

    @classmethod
    @outage.opening
    def create(
        cls,
        root: str | Path,
        goal: str,
        *,
        mode: str = "manual",
        stage: str | None = None,
        stages: str | os.PathLike[str] | None = None,
        model: str | None = None,
        base_url: str | None = None,
        subscribers: tuple[Subscriber, ...] = (),
        max_goal_chars: int | None = None,
        record: bool = False,
        skip_model_check: bool = False,
        handoffs: tuple[str, ...] = (),
        **options: Any,
    ) -> Project:
        """Start a new project in `root` (created if missing), once every option passed its
        check (`starting.check_new`: bad input leaves the folder as it was) and the model the
        model check (`commands.check_model`) unless `skip_model_check`."""
        table = check_new(
            root,
            goal,
            mode=mode,
            stage=stage,
            stages=stages,
            model=model,
            base_url=base_url,
            options={**options, "handoffs": handoffs, "max_goal_chars": max_goal_chars},
        )
        resolve_model(model or default_spec(), base_url=base_url)  # its provider too
        if not skip_model_check:  # one short call: can this model call tools at all?
            commands.require_tool_calling(model, base_url)
        run_settings = sandboxing.settings(
            table, options.get("sandbox"), options.get("allow_network"), options.get("limits")
        ) | checkpoint_url.settings(options.get("checkpoints"))  # a PostgreSQL server is tried
        run_settings |= ray_jobs.settings(options.get("ray"))
        run_settings |= job_limit.settings(options.get("job_time_limit"))
        workspace = usable(root, create=True)  # every check passed: the folder is made now
        lock = WorkspaceLock(workspace).acquire("research")
        try:
            log = EventLog(workspace.events_file, subscribers)
            controller = ResearchController.create(
                workspace,
                goal,
                mode=mode,
                table=table,
                start_stage=stage,
                bus=log.bus,
                settings={
                    "model": model or default_spec(),
                    "base_url": base_url,
                    "record": recording_requested(record),
                    "price": options.get("price"),
                    **run_settings,
                },
                max_goal_chars=max_goal_chars,
                handoffs=handoffs,
            )
            return cls(workspace, controller, log, lock, model=model, base_url=base_url, **options)
        except BaseException:
            lock.release()
            raise

    @classmethod
    @outage.opening
    def open(
        cls,
        root: str | Path,
        *,
        model: str | None = None,
        base_url: str | None = None,
        subscribers: tuple[Subscriber, ...] = (),
        fresh_sessions: bool = False,
        check_model: bool = False,
        **options: Any,
    ) -> Project:
        """Open the project in `root` to run it (resume, reply, continue); with
        `fresh_sessions` the current stage starts again with new sessions (see `repair`);
        with `check_model` the model must pass the model check first."""
        workspace = usable(root)
        job_limit.settings(options.get("job_time_limit"))  # a bad one fails before any work
        lock = WorkspaceLock(workspace).acquire("run")
        try:
            log = EventLog(workspace.events_file, subscribers)
            controller = ResearchController.open(workspace, bus=log.bus)
            if check_model:  # `resume`: the project's model, checked before anything runs
                settings = controller.state.settings
                commands.require_tool_calling(
                    model or settings.get("model"), base_url or settings.get("base_url")
                )
            notes = repair.after_crash(workspace)  # before the runtime opens anything
            if fresh_sessions:
                notes += repair.fresh_sessions(workspace, controller.state.settings, options)
            project = cls(
                workspace, controller, log, lock, model=model, base_url=base_url, **options
            )
            project.notes = notes
            return project
        except BaseException:
            lock.release()
            raise

    # ------------------------------------------------------------------ running

    def run(
        self, *, wait_for_replies: bool = False, on_idle: Callable[[], None] | None = None
    ) -> str:
        """Run until done, failed, cancelled, stopped — or waiting at a gate, unless
        `wait_for_replies`, in which case a gate waits for its reply and the run goes on."""
        controller = self.controller
        self.reopen()
        self._poll_stop = False
        poller = threading.Thread(target=self._poll_inbox, daemon=True, name="ls-inbox")
        self.storage.start()
        seen = until_stage.since(controller)  # a kept request: from when it was made
        try:
            controller.poll_inbox()  # replies queued while nobody ran it: before the first look
            poller.start()
            while not self.stop_event.is_set():
                status = controller.status
                if status in FINAL_PROJECT_STATUSES or status == ProjectStatus.PAUSED:
                    if status == ProjectStatus.DONE:
                        self._draw_lessons()
                    break
                if until_stage.pause_if_finished(controller, self.until, seen):
                    continue  # the stage ended meanwhile (its gate was approved)
                if status == ProjectStatus.RUNNING:
                    self._draw_lessons()  # a gate rejected since: before its stage runs again
                seen = len(controller.state.history)
                if status == ProjectStatus.WAITING_USER and controller.pending_kind in (
                    DecisionKind.GATE,
                    DecisionKind.HANDOFF,  # the researcher's turn: no worker runs the stage
                    DecisionKind.BUDGET,  # spent: no model call starts until it is raised
                ):
                    if controller.pending_kind == DecisionKind.GATE and self._recorded_reply():
                        continue
                    if not wait_for_replies:
                        break
                    if on_idle:
                        on_idle()
                    controller.wait_change(INBOX_POLL_S)
                    continue
                result = self.supervisor.run_stage(controller.task(), self.stop_event)
                if controller.pending_kind == DecisionKind.BUDGET:
                    usage.settle(self)  # the running turns end, held at their next call
                until_stage.pause_if_finished(controller, self.until, seen)
                if result.status == StageOutcome.FAILED and self.storage.fault is None:
                    controller.fail(result.summary)
        except Exception as exc:
            if not self.storage.absorb(exc):
                raise
        finally:
            self._poll_stop = True
            self.storage.end()
        if self.storage.fault is not None:  # the disk or the checkpoint database went away
            raise self.storage.stop(controller)
        return controller.status

    def _draw_lessons(self) -> None:
        """After a rejected gate and at the project's end, a worker draws the lessons and
        layer 1 files them in the user's memory (each occasion once; not with
        `--no-memory`)."""
        controller = self.controller
        for why, stage, reason in controller.lessons_owed():
            drawn = self.supervisor.draw_lessons(
                prompt_goal(controller.state.goal),  # as every task carries it: cut when long
                why,
                self.stop_event,
                memory_on=controller.memory_on,
                reason=reason,
            )
            if self.stop_event.is_set():
                return
            controller.file_lessons(drawn.lessons, why=why, stage=stage, missing=drawn.missing)

    def reopen(self) -> str | None:
        """Set a failed or cancelled project running again. A failed stage starts again from
        its start with fresh workers (the history stays); the line saying what failed before
        is returned (and kept in `retried`), else None. `run` does this first."""
        notice = self.controller.reopen()
        if notice is not None:
            self.supervisor.restart_stage(self.controller.task_id)
            self.retried = notice
        return notice

    def _recorded_reply(self) -> bool:
        """`--replies recorded`: answer the pending gate or question with the next recorded
        reply (questions are answered from the inbox poller, as the stage's run waits). The
        reply keeps its recorded source; one outside the vocabulary (a recording of another
        version) is recorded as from the API (`ReplySource.read`)."""
        reply = next_reply(self.recorded_replies, len(self.controller.state.decisions))
        if reply is None:
            return False
        comment, to = str(reply.get("comment") or ""), reply.get("to")
        source = ReplySource.read(reply.get("source"))
        self.controller.reply(bool(reply["approve"]), comment, to, source=source)
        return True

    def stop(self) -> None:
        """Ask the run to stop at the next step boundary (workers stay resumable)."""
        self.stop_event.set()

    def cancel(self, reason: str = "cancelled by the user") -> None:
        """Cancel the project, then every worker alive in this process.

        The project goes first, so that no new worker starts while the others are cancelled
        (the supervisor refuses to start one for a project that is not running)."""
        self.controller.cancel(reason)
        self.stop_event.set()
        self.supervisor.cancel_all()

    def cancel_soon(self, reason: str) -> None:
        """`cancel` on a thread of its own (the inbox poller goes on meanwhile); `close`
        waits for it, so that the workers finalize before the process ends."""
        self._cancelling = threading.Thread(target=self.cancel, daemon=True, args=(reason,))
        self._cancelling.start()

    def _poll_inbox(self) -> None:
        while not self._poll_stop:
            try:
                self.controller.poll_inbox()
                for command in inbox.take_commands(self.workspace):
                    run_controls.apply_command(self, command)
                if self.recorded_replies and self.controller.pending_kind == DecisionKind.QUESTION:
                    with contextlib.suppress(ControllerError):  # answered meanwhile by a person
                        self._recorded_reply()  # (the stage's run waits for the answer)
            except Exception as exc:
                if report_storage_fault(exc) is None:
                    raise
                return
            self.stop_event.wait(INBOX_POLL_S)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._poll_stop = True
        if self._cancelling is not None:  # let the workers finalize before the process ends
            self._cancelling.join(timeout=30)
        try:  # after a storage fault, each step may meet it again (see `outage`)
            self.storage.absorbing(self.supervisor.close)
            self.storage.absorbing(self.controller.flush)  # the last model calls' usage totals
            self.storage.absorbing(self.log.close)  # late events of stopping threads: not logged
        finally:
            self.lock.release()

    def __enter__(self) -> Project:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
