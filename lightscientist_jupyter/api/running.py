"""`Run`: a project run by *this* process, and the kernel's registry of runs.

`Project.run(wait_for_replies=True)` goes on a daemon thread, so a gate waits for its reply
in-process — from the dashboard's buttons, `run.reply(...)`, the command line or the side
panel (both through the inbox, which the run polls). `start` and `resume` return a run at
once; `wait` blocks until a status is reached.

Runs are kept per workspace: asking again for a workspace that a live run of this kernel
holds returns that run (so `%lightscientist status` re-displays its live dashboard).
Nothing here prints: a run's thread only talks to its event bus and its state.
"""

from __future__ import annotations

import atexit
import functools
import os
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.api.views import ProjectView
from lightscientist_jupyter.app import commands
from lightscientist_jupyter.app.ops.run_options import (
    FIELDS,
    RunOptions,
    SessionDefaults,
    kept_settings,
)
from lightscientist_jupyter.app.starting import check_new
from lightscientist_jupyter.app.starting_mark import mark_starting
from lightscientist_jupyter.controller import ProjectState, ResearchController, StageTable
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import BadInput, ControllerError, StorageFault
from lightscientist_jupyter.events import EventBuffer, Subscriber
from lightscientist_jupyter.vocab import FINAL_PROJECT_STATUSES, CancelSource
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:  # imported when a run starts: reading a project needs no model libraries
    from lightscientist_jupyter.app.project import Project

STOP_WAIT_S = 30.0

_lock = threading.RLock()
_runs: dict[Path, Run] = {}
_views: dict[Path, ProjectView] = {}
_stop_hooks: list[Callable[[], None]] = []
_defaults: Callable[[], SessionDefaults] = SessionDefaults


class Run(ProjectView):
    """A project run by this process on a daemon thread; gates wait for replies in-process.

    A run given an `opener` instead of a project opens it on its own thread (`start`: the
    heavy imports of a run happen there, so the cell returns at once); until then it is
    `starting`, and whatever needs the project waits for it (and raises what opening it
    raised)."""

    def __init__(
        self,
        project: Project | None,
        buffer: EventBuffer,
        *,
        opener: Callable[[], Project] | None = None,
        root: Path | None = None,
        table: StageTable | None = None,
        goal: str = "",
    ):
        super().__init__(project.workspace if project is not None else Workspace.at(root or "."))
        self._project = project
        self._opener = opener
        self._table = table
        self.goal = goal
        """The goal of a run being started (its state has it once it is open)."""
        self._opened = threading.Event()
        if project is not None:
            self._opened.set()
        self.buffer = buffer
        """The run's events as they happen, for a dashboard of this kernel."""
        self.error: BaseException | None = None
        """What ended the run's thread with an exception, if anything did."""
        self._started = time.time()
        self._thread = threading.Thread(
            target=self._main, daemon=True, name=f"lightscientist-run:{self.workspace.root.name}"
        )

    @property
    def starting(self) -> bool:
        """True while the run's thread is still opening the project (a dashboard shows
        'starting')."""
        return not self._opened.is_set()

    @property
    def project(self) -> Project:
        self._opened.wait()
        if self._project is None:
            raise self.error or ControllerError("the run could not start")
        return self._project

    @property
    def controller(self) -> ResearchController:
        return self.project.controller

    def _begin(self) -> Run:
        self._thread.start()
        return self

    def _open(self) -> bool:
        """Open the project on the run's thread (a run given one has it already)."""
        try:
            if self._project is None and self._opener is not None:
                project = self._opener()
                project.reopen()
                self._project = project
        except BaseException as exc:  # noqa: BLE001 - kept on the handle, raised to its readers
            self.error = exc
        finally:
            self._opened.set()
        return self._project is not None

    def _main(self) -> None:
        if not self._open():
            return
        try:
            self.project.run(wait_for_replies=True)
        except StorageFault as exc:  # the project is `stopped`; resume continues it
            self.error = exc
        except BaseException as exc:  # noqa: BLE001 - kept on the handle; a thread must not print
            self.error = exc
            try:
                self.controller.fail(f"the run stopped on an error: {type(exc).__name__}: {exc}")
            except Exception:  # noqa: BLE001
                pass
        finally:
            try:
                self.project.close()
            finally:
                with self.controller.changed:
                    self.controller.changed.notify_all()

    @property
    def alive(self) -> bool:
        """Whether the run's thread is still going."""
        return self._thread.is_alive()

    @property
    def live(self) -> bool:
        """A dashboard takes events from the buffer while the run lives (then from disk)."""
        return self.alive

    def state(self) -> ProjectState:
        if self._project is None:  # wait for the opening (and raise what it raised)
            return self.controller.state
        return self.controller.state if self.alive else super().state()

    def table(self) -> StageTable:
        return self._table if self._table is not None else self.controller.table

    def model_spec(self) -> str:
        return self.project.model_spec

    def started_at(self) -> float | None:
        return self._started

    def running(self) -> bool:
        return self.alive or super().running()

    def status(self) -> dict[str, Any]:
        self._opened.wait()
        info = commands.status(self.workspace)
        info["running_here"] = self.alive
        info["elapsed_s"] = round(time.time() - self._started, 3)
        if self.error is not None:
            info["error"] = f"{type(self.error).__name__}: {self.error}"
        return info

    def controller_here(self) -> ResearchController | None:
        return self.controller if self.alive else None

    def wait(
        self, until: str | Iterable[str] = FINAL_PROJECT_STATUSES, timeout: float | None = None
    ) -> str:
        """Block until the status is one of `until` (or the run's thread ends, or `timeout`
        seconds pass); returns the status. In a notebook this blocks the cell, and with it
        the dashboard's buttons: reply first, or wait for `waiting_user` too."""
        wanted = (until,) if isinstance(until, str) else tuple(until)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.controller.changed:  # under the controller's lock: saved, not half-set
                status = self.controller.status
            if status in wanted:
                if (
                    status in FINAL_PROJECT_STATUSES
                    and self._thread is not threading.current_thread()
                ):
                    # the run's thread writes its last events as it closes: wait for that,
                    # so a tail read at once sees them
                    left = None if deadline is None else max(0.0, deadline - time.monotonic())
                    self._thread.join(left)
                return status
            if not self.alive:
                return self.state().status
            remaining = 0.25 if deadline is None else deadline - time.monotonic()
            if remaining <= 0:
                return status
            self.controller.wait_change(min(0.25, remaining))

    def stop(self, timeout: float | None = STOP_WAIT_S) -> str:
        """Stop at the next step boundary (workers stay resumable); returns the status."""
        self.project.stop()
        with self.controller.changed:
            self.controller.changed.notify_all()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return self.state().status

    def cancel(self, worker_id: str | None = None, *, wait: bool = False) -> str:
        """Cancel one worker, or every worker and then the project (cooperatively: each
        worker is asked to finish; this can take seconds, so it runs on its own thread)."""
        project = self.project
        step: Callable[[], object]
        if worker_id:
            step = functools.partial(project.supervisor.runtime.cancel, worker_id)
            message = f"cancelling worker {worker_id}"
        else:
            step = functools.partial(project.cancel, commands.cancel_reason(CancelSource.NOTEBOOK))
            message = "cancelling the run"
        thread = threading.Thread(
            target=_quietly, args=(step,), daemon=True, name="lightscientist-cancel"
        )
        thread.start()
        if wait:
            thread.join()
            return self.state().status
        return message


def _root(workspace: str | os.PathLike[str] | Workspace) -> Path:
    return workspace.root if isinstance(workspace, Workspace) else Workspace.at(workspace).root


def _launch(
    open_project: Callable[[tuple[Subscriber, ...]], Project],
    subscribers: Iterable[Subscriber],
    *,
    root: Path | None = None,
    table: StageTable | None = None,
    goal: str = "",
) -> Run:
    """A run of the project `open_project` opens: here, or, given `root`, on the run's own
    thread (its input checked before; see `starting.check_new`)."""
    buffer = EventBuffer()
    subs: tuple[Subscriber, ...] = (*subscribers, buffer)
    if root is not None:
        opener = lambda: open_project(subs)  # noqa: E731
        run = Run(None, buffer, opener=opener, root=root, table=table, goal=goal)
    else:
        project = open_project(subs)
        project.reopen()  # a failed stage starts again; `project.retried` says what failed
        run = Run(project, buffer)
    with _lock:
        _runs[run.workspace.root] = run
        _views.pop(run.workspace.root, None)
    return run._begin()


# ------------------------------------------------------------------------- module functions


def current(workspace: str | os.PathLike[str] = ".") -> Run | None:
    """The live run of `workspace` in this kernel, or None."""
    with _lock:
        run = _runs.get(_root(workspace))
        return run if run is not None and run.alive else None


def runs() -> list[Run]:
    """The runs of this kernel that are still going."""
    with _lock:
        return [r for r in _runs.values() if r.alive]


def open_project(workspace: str | os.PathLike[str] = ".") -> ProjectView:
    """The project in `workspace`, for reading: its live run here if there is one."""
    root = _root(workspace)
    run = current(root)
    if run is not None:
        return run
    ws = Workspace(root)
    load_state(ws.state_file)  # a clear error when there is no project
    with _lock:
        view = _views.get(root)
        if view is None:
            view = _views[root] = ProjectView(ws, resumer=_resume_controller)
        return view


def use_session_defaults(provider: Callable[[], SessionDefaults] | None) -> None:
    """Where this kernel's session defaults come from (the magic hands in its `%config`
    values); None: there are none. Every run `start` and `resume` make, whichever door asked
    for it, takes them by the policy of `app.ops.run_options`."""
    global _defaults
    _defaults = provider or SessionDefaults


def session_defaults() -> SessionDefaults:
    """This kernel's session defaults now."""
    return _defaults()


def _run_options(given: dict[str, Any]) -> tuple[RunOptions, dict[str, Any]]:
    """The run options among `given` keywords, and the rest (for `Project` alone)."""
    names = {f.name for f in FIELDS}
    run = RunOptions.from_args({k: v for k, v in given.items() if k in names})
    return run, {k: v for k, v in given.items() if k not in names}


def start(
    goal: str,
    workspace: str | os.PathLike[str] | None = None,
    *,
    mode: str | None = None,
    stage: str | None = None,
    stages: str | os.PathLike[str] | None = None,
    subscribers: tuple[Subscriber, ...] = (),
    **options: Any,
) -> Run:
    """Start a new project in `workspace` and run it on a daemon thread; returns at once.

    `options` are the run options of `RunOptions` (`model`, `base_url`, `record`, `budget`,
    `price`, `library`, `until`…) and keywords of `Project` (`handoffs`, `stall_after_s`…);
    the session's defaults (`%config` in a notebook) fill in those not given, and `mode` and
    `workspace` too. Bad input (an existing project, an unknown stage, an invalid table or
    model) raises here, before any thread starts; the project is then created on the run's
    thread, where LangGraph, deepagents and the model provider are imported and the model is
    checked (what fails there, the run raises to its readers: `wait`, `state`, `status`).
    `record` appends every model call to `.lightscientist/recordings/` (and keeps doing so
    when the project is resumed).
    """
    defaults = session_defaults()
    root = _root(workspace if workspace is not None else defaults.workspace)
    if current(root) is not None:
        raise BadInput(
            f"{root} is already being run in this kernel; see it with `%lightscientist status`"
        )
    run, rest = _run_options(options)
    run = run.with_defaults(defaults)
    given: dict[str, Any] = {
        "mode": mode or defaults.mode,
        "stage": stage,
        "stages": stages,
        "model": run.model,
        "base_url": run.base_url,
    }  # checked here, then given to the project the run's thread creates
    keywords = {**run.project_keywords(), **rest, "skip_model_check": run.skip_model_check}
    table = check_new(root, goal, **given, options=keywords)

    unmark = mark_starting(Workspace(root), goal, str(given["mode"]))

    def create(subs: tuple[Subscriber, ...]) -> Project:
        from lightscientist_jupyter.app.project import Project

        try:
            return Project.create(
                root,
                goal,
                mode=given["mode"],
                stage=stage,
                stages=stages,
                subscribers=subs,
                **keywords,
            )
        finally:
            unmark()

    return _launch(create, subscribers, root=root, table=table, goal=goal)


def resume(
    workspace: str | os.PathLike[str] | None = None,
    *,
    subscribers: tuple[Subscriber, ...] = (),
    **options: Any,
) -> Run:
    """Continue the project in `workspace` on a daemon thread (its live run here, if any).

    `options` are run options (`model`, `record`, `budget`…, see `start`) and keywords of
    `Project.open` (`fresh_sessions`, `check_model`…). The session's defaults fill in those
    not given, by the one policy of `app.ops.run_options`: the model, its server and
    `record` always, the settings a project keeps (budget, price, checkpoints, ray, library,
    job time limit) only when it keeps none of its own."""
    from lightscientist_jupyter.app.project import Project

    defaults = session_defaults()
    root = _root(workspace if workspace is not None else defaults.workspace)
    with _lock:
        run = current(root)
        if run is not None:
            return run
        given, rest = _run_options(options)
        kept = kept_settings(Workspace(root))  # a clear error when there is no project
        keywords = {
            **given.with_defaults(defaults, kept).project_keywords(),
            **rest,
        }
        return _launch(lambda subs: Project.open(root, subscribers=subs, **keywords), subscribers)


def _resume_controller(root: Path) -> ResearchController:
    """A view's `Resumer`: the project resumed in this kernel, as its controller."""
    return resume(root).controller


def on_stop_all(hook: Callable[[], None]) -> None:
    """Call `hook` after `stop_all` stopped the runs (the notebook closes its dashboards)."""
    with _lock:
        if hook not in _stop_hooks:
            _stop_hooks.append(hook)


def stop_all(timeout: float = 5.0) -> None:
    """Stop every run of this kernel (at interpreter exit, and between tests)."""
    for run in list(runs()):
        try:
            run.stop(timeout)
        except ControllerError:
            pass
    with _lock:
        _runs.clear()
        _views.clear()
        hooks = list(_stop_hooks)
    for hook in hooks:
        _quietly(hook)


def _quietly(fn: Callable[[], object]) -> None:
    """Run `fn` on a background thread where an error has nowhere to go (a finished worker,
    a project that someone else resumed first)."""
    try:
        fn()
    except Exception:  # noqa: BLE001
        pass


atexit.register(stop_all, 2.0)
