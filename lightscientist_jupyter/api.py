"""The Python API under the `%lightscientist` magic (and, later, the command line).

Two kinds of handle:

- `ProjectView` reads a project from its workspace on disk: status, events and workers as
  DataFrames, files. It works whoever runs the project (this kernel, `lightscientist` in a
  terminal, nobody), and its replies go to the inbox exactly as `lightscientist reply`
  writes them.
- `Run` is a project run by *this* process: `Project.run(wait_for_replies=True)` on a
  daemon thread, so a gate waits for its reply in-process — from the dashboard's buttons,
  `run.reply(...)`, the command line or the side panel (both through the inbox, which the run
  polls). `start` and `resume` return one at once; `wait` blocks until a status is reached.

Runs are kept per workspace: asking again for a workspace that a live run of this kernel
holds returns that run (so `%lightscientist status` re-displays its live dashboard).

    >>> from lightscientist_jupyter import api
    >>> run = api.start("Does warmup help a small MLP?", workspace="study", mode="auto")
    >>> run.wait()
    'done'
    >>> api.events("study", tail=5, layer=1)       # a pandas DataFrame

Nothing here prints: a run's thread only talks to its event bus and its state.
"""

from __future__ import annotations

import atexit
import dataclasses
import json
import os
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.controller import ProjectState, StageTable, load_table
from lightscientist_jupyter.controller.inbox import write_command, write_reply
from lightscientist_jupyter.controller.lock import WorkspaceLock, read_holder
from lightscientist_jupyter.controller.state import FINAL_STATUSES, load_state
from lightscientist_jupyter.errors import ControllerError, LightScientistError
from lightscientist_jupyter.events import EventBus, JsonlWriter, Subscriber, make_filter, read_tail
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:
    import pandas as pd

    from lightscientist_jupyter.controller.project import Project
    from lightscientist_jupyter.jupyter.batching import EventBuffer
    from lightscientist_jupyter.jupyter.dashboard import Dashboard

FINAL = FINAL_STATUSES
STOP_WAIT_S = 30.0

_lock = threading.RLock()
_runs: dict[Path, Run] = {}
_views: dict[Path, ProjectView] = {}


class BadInput(LightScientistError):
    """A request that cannot be used as given (what to change is in the message)."""


@dataclasses.dataclass(frozen=True)
class ReplySent:
    """What became of a reply."""

    message: str
    applied: bool | None
    """True: it took effect; False: it changed nothing (see the message); None: queued in
    the inbox for the process running the project."""
    decision_id: str | None = None
    path: Path | None = None
    """The inbox file, for a queued reply."""


# ------------------------------------------------------------------------- reading from disk

def status_dict(ws: Workspace) -> dict[str, Any]:
    """What `lightscientist status --json` prints (at least status, stage, mode, goal, pending)."""
    state = load_state(ws.state_file)
    return {"status": state.status, "stage": state.stage, "mode": state.mode, "goal": state.goal,
            "pending": state.pending.to_dict() if state.pending else None,
            "visits": state.visits, "reason": state.reason, "workspace": str(ws.root),
            "stages_file": state.stages_file, "transitions": len(state.history),
            "decisions": state.decisions, "runner": read_holder(ws),
            "updated_at": state.updated_at}


def worker_records(ws: Workspace) -> list[dict[str, Any]]:
    """Every `workers/<id>/worker.json` of the workspace, oldest first."""
    folder = ws.workers_dir
    if not folder.is_dir():
        return []
    out = []
    for path in folder.glob("*/worker.json"):
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except ValueError:
            continue
    return sorted(out, key=lambda r: r.get("created_at", 0))


EVENT_COLUMNS = ["seq", "time", "layer", "type", "stage", "worker_id", "task_id", "message",
                 "data"]
WORKER_COLUMNS = ["id", "role", "stage", "task_id", "status", "model_calls", "tool_calls",
                  "steps", "label", "created", "updated"]


def events_frame(raws: Iterable[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    rows = [{"seq": r["seq"], "time": r.get("ts"), "layer": r.get("layer"),
             "type": r.get("type"), "stage": r.get("stage"), "worker_id": r.get("worker_id"),
             "task_id": r.get("task_id"), "message": r.get("message"), "data": r.get("data")}
            for r in raws]
    frame = pd.DataFrame(rows, columns=EVENT_COLUMNS)
    frame["time"] = pd.to_datetime(frame["time"], unit="s")
    return frame


def workers_frame(records: Iterable[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for r in records:
        p = r.get("progress") or {}
        rows.append({"id": r.get("id"), "role": r.get("role"), "stage": r.get("stage"),
                     "task_id": r.get("task_id"), "status": r.get("status"),
                     "model_calls": p.get("model_calls", 0), "tool_calls": p.get("tool_calls", 0),
                     "steps": p.get("steps", 0), "label": (r.get("labels") or {}).get("label", ""),
                     "created": r.get("created_at"), "updated": r.get("updated_at")})
    frame = pd.DataFrame(rows, columns=WORKER_COLUMNS)
    for column in ("created", "updated"):
        frame[column] = pd.to_datetime(frame[column], unit="s")
    return frame


class ProjectView:
    """A project read from its workspace; replies go to its inbox."""

    live = False

    def __init__(self, workspace: Workspace):
        self.workspace = workspace
        self._cached: tuple[int, ProjectState] | None = None
        self._table: StageTable | None = None
        self._dashboard: Dashboard | None = None

    # ---------------------------------------------------------------- state

    def state(self) -> ProjectState:
        """The project's state (re-read only when `state.json` changed)."""
        try:
            mtime = os.stat(self.workspace.state_file).st_mtime_ns
        except FileNotFoundError:
            mtime = -1
        cached = self._cached
        if cached is None or cached[0] != mtime:
            cached = self._cached = (mtime, load_state(self.workspace.state_file))
        return cached[1]

    def table(self) -> StageTable:
        if self._table is None:
            self._table = load_table(self.state().stages_file)
        return self._table

    def model_spec(self) -> str:
        return str(self.state().settings.get("model") or "offline")

    def started_at(self) -> float | None:
        return None

    def running(self) -> bool:
        """Whether some process holds the workspace's run lock."""
        return read_holder(self.workspace) is not None

    def status(self) -> dict[str, Any]:
        info = status_dict(self.workspace)
        info["running_here"] = False
        return info

    def events(self, tail: int = 20, layer: int | None = None, type: str | None = None,
               worker: str | None = None) -> pd.DataFrame:
        """The last `tail` events (oldest first), optionally only one layer, type (or prefix
        ending in '.'), or worker."""
        if tail < 0:
            raise BadInput("tail must be 0 or more")
        if layer is not None and layer not in (1, 2, 3):
            raise BadInput(f"layer must be 1, 2 or 3, not {layer}")
        keep = make_filter(layer=layer, type=type, worker_id=worker)
        return events_frame(read_tail(self.workspace.events_file, tail, keep))

    def workers(self) -> pd.DataFrame:
        return workers_frame(worker_records(self.workspace))

    def path(self, rel: str | os.PathLike[str]) -> Path:
        """A path of the workspace (`rel` is relative to its root)."""
        return self.workspace.root / rel

    # ---------------------------------------------------------------- replying

    def reply(self, approve: bool, comment: str = "", to: str | None = None, *,
              decision_id: str | None = None, source: str = "api",
              resume_if_idle: bool = False) -> ReplySent:
        """Queue a reply in the inbox, as `lightscientist reply` does.

        With `resume_if_idle`, a project nobody runs is resumed in this kernel (in the
        background; its run applies the reply), as the command line resumes it in its own
        process.
        """
        state = load_state(self.workspace.state_file)
        pending = state.pending
        if pending is None:
            raise BadInput(f"nothing is waiting for a reply in {self.workspace.root}: the "
                           f"project is {state.status} at stage '{state.stage}'")
        if decision_id and decision_id != pending.id:
            return ReplySent(f"this reply is for decision {decision_id}, but the pending one "
                             f"is {pending.id}; nothing changed", False, decision_id)
        _check_target(self.table(), approve, to)
        path = write_reply(self.workspace, approve=approve, comment=comment, to_stage=to,
                          decision_id=pending.id, source=source)
        holder = read_holder(self.workspace)
        if holder is not None:
            return ReplySent(f"reply queued; the run held by pid {holder.get('pid', '?')} will "
                             "apply it", None, pending.id, path)
        if resume_if_idle:  # on its own thread: opening a project is not O(1)
            threading.Thread(target=_quietly, args=(resume, self.workspace.root), daemon=True,
                             name="lightscientist-resume").start()
            return ReplySent("reply queued; the project resumes in this kernel", None,
                             pending.id, path)
        return ReplySent("reply queued; it is applied when the project is resumed "
                         "(`%lightscientist resume`)", None, pending.id, path)

    # ---------------------------------------------------------------- display

    @property
    def dashboard(self) -> Dashboard:
        """The project's dashboard (made on first use; remade when the last one has ended)."""
        with _lock:
            board = self._dashboard
            if board is None or (board.finished and self._stale(board)):
                from lightscientist_jupyter.jupyter.dashboard import Dashboard

                board = self._dashboard = Dashboard(self, self._buffer())
            return board

    def _buffer(self) -> EventBuffer | None:
        return None

    def _stale(self, board: Dashboard) -> bool:
        state = board.state
        return state is None or state.updated_at != self.state().updated_at

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        return self.dashboard._repr_mimebundle_(include, exclude)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.workspace.root}>"


def _check_target(table: StageTable, approve: bool, to: str | None) -> None:
    if not to:
        return
    if approve:
        raise BadInput("`to` names where a rejection sends the project; use it with a reject (n)")
    if to not in table:
        raise BadInput(f"'{to}' is not a stage of {table.path}; choose one of "
                       f"{', '.join(table.ids())}")


# ------------------------------------------------------------------------- a run in this kernel

class Run(ProjectView):
    """A project run by this process on a daemon thread; gates wait for replies in-process."""

    def __init__(self, project: Project, buffer: EventBuffer):
        super().__init__(project.workspace)
        self.project = project
        self.controller = project.controller
        self.buffer = buffer
        self.error: BaseException | None = None
        """What ended the run's thread with an exception, if anything did."""
        self._started = time.time()
        self._thread = threading.Thread(target=self._main, daemon=True,
                                        name=f"lightscientist-run:{self.workspace.root.name}")

    def _begin(self) -> Run:
        self._thread.start()
        return self

    def _main(self) -> None:
        try:
            self.project.run(wait_for_replies=True)
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
    def live(self) -> bool:  # type: ignore[override]
        """A dashboard takes events from the buffer while the run lives (then from disk)."""
        return self.alive

    def state(self) -> ProjectState:
        return self.controller.state if self.alive else super().state()

    def table(self) -> StageTable:
        return self.controller.table

    def model_spec(self) -> str:
        return self.project.model_spec

    def started_at(self) -> float | None:
        return self._started

    def running(self) -> bool:
        return self.alive or super().running()

    def status(self) -> dict[str, Any]:
        info = status_dict(self.workspace)
        info["running_here"] = self.alive
        info["elapsed_s"] = round(time.time() - self._started, 3)
        if self.error is not None:
            info["error"] = f"{type(self.error).__name__}: {self.error}"
        return info

    def reply(self, approve: bool, comment: str = "", to: str | None = None, *,
              decision_id: str | None = None, source: str = "api",
              resume_if_idle: bool = False) -> ReplySent:
        """Answer the pending decision now, through the controller (exactly one transition
        per decision; a second reply to the same `decision_id` changes nothing)."""
        if not self.alive:
            return super().reply(approve, comment, to, decision_id=decision_id, source=source,
                                 resume_if_idle=resume_if_idle)
        _check_target(self.table(), approve, to)
        outcome = self.controller.reply(approve, comment, to, decision_id=decision_id,
                                        source=source)
        return ReplySent(outcome.message, outcome.applied, outcome.decision_id)

    def wait(self, until: str | Iterable[str] = FINAL, timeout: float | None = None) -> str:
        """Block until the status is one of `until` (or the run's thread ends, or `timeout`
        seconds pass); returns the status. In a notebook this blocks the cell, and with it
        the dashboard's buttons: reply first, or wait for `waiting_user` too."""
        wanted = (until,) if isinstance(until, str) else tuple(until)
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self.controller.changed:  # under the controller's lock: saved, not half-set
                status = self.controller.status
            if status in wanted:
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
        if worker_id:
            target, args = self.project.supervisor.runtime.cancel, (worker_id,)
            message = f"cancelling worker {worker_id}"
        else:
            target, args = self.project.cancel, ("cancelled from the notebook",)
            message = "cancelling the run"
        thread = threading.Thread(target=_quietly, args=(target, *args), daemon=True,
                                  name="lightscientist-cancel")
        thread.start()
        if wait:
            thread.join()
            return self.state().status
        return message

    def _buffer(self) -> EventBuffer | None:
        return self.buffer

    def _stale(self, board: Dashboard) -> bool:
        return False


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:  # noqa: BLE001 - an unknown or finished worker: nothing to cancel
        pass


def _make_buffer(subscribers: tuple[Subscriber, ...]) -> tuple[EventBuffer,
                                                                tuple[Subscriber, ...]]:
    from lightscientist_jupyter.jupyter.batching import EventBuffer

    buffer = EventBuffer()
    return buffer, (*subscribers, buffer)


def _register(run: Run) -> Run:
    with _lock:
        _runs[run.workspace.root] = run
        _views.pop(run.workspace.root, None)
    return run._begin()


def _root(workspace: str | os.PathLike[str] | Workspace) -> Path:
    return workspace.root if isinstance(workspace, Workspace) else Workspace.at(workspace).root


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
            view = _views[root] = ProjectView(ws)
        return view


def start(goal: str, workspace: str | os.PathLike[str] = ".", *, mode: str = "manual",
          stage: str | None = None, stages: str | os.PathLike[str] | None = None,
          model: str | None = None, base_url: str | None = None,
          subscribers: tuple[Subscriber, ...] = (), **options: Any) -> Run:
    """Start a new project in `workspace` and run it on a daemon thread; returns at once.

    Bad input (an existing project, an unknown stage, an invalid table or model) raises
    here, before any thread starts. `options` go to `Project` (e.g. `stall_after_s`).
    """
    from lightscientist_jupyter.controller.project import Project

    root = _root(workspace)
    if current(root) is not None:
        raise BadInput(f"{root} is already being run in this kernel; see it with "
                       "`%lightscientist status`")
    buffer, subs = _make_buffer(tuple(subscribers))
    project = Project.create(root, goal, mode=mode, stage=stage, stages=stages, model=model,
                             base_url=base_url, subscribers=subs, **options)
    return _register(Run(project, buffer))


def resume(workspace: str | os.PathLike[str] = ".", *, model: str | None = None,
           base_url: str | None = None, subscribers: tuple[Subscriber, ...] = (),
           **options: Any) -> Run:
    """Continue the project in `workspace` on a daemon thread (its live run here, if any)."""
    from lightscientist_jupyter.controller.project import Project

    root = _root(workspace)
    with _lock:
        run = current(root)
        if run is not None:
            return run
        buffer, subs = _make_buffer(tuple(subscribers))
        project = Project.open(root, model=model, base_url=base_url, subscribers=subs, **options)
        return _register(Run(project, buffer))


def status(workspace: str | os.PathLike[str] = ".") -> dict[str, Any]:
    return open_project(workspace).status()


def events(workspace: str | os.PathLike[str] = ".", tail: int = 20, layer: int | None = None,
           type: str | None = None, worker: str | None = None) -> pd.DataFrame:
    return open_project(workspace).events(tail, layer=layer, type=type, worker=worker)


def workers(workspace: str | os.PathLike[str] = ".") -> pd.DataFrame:
    return open_project(workspace).workers()


def reply(workspace: str | os.PathLike[str] = ".", approve: bool = True, comment: str = "",
          to: str | None = None, *, source: str = "api", resume_if_idle: bool = False,
          ) -> ReplySent:
    """Answer the pending decision: directly when this kernel runs the project, else through
    the inbox (and, with `resume_if_idle`, resuming a project nobody runs)."""
    return open_project(workspace).reply(approve, comment, to, source=source,
                                         resume_if_idle=resume_if_idle)


def cancel(workspace: str | os.PathLike[str] = ".", worker_id: str | None = None) -> str:
    """Cancel one worker or the whole run, wherever it runs; returns what was done."""
    root = _root(workspace)
    ws = Workspace(root)
    state = load_state(ws.state_file)
    if worker_id and not (ws.workers_dir / worker_id / "worker.json").exists():
        raise BadInput(f"no worker '{worker_id}' in {ws.workers_dir}")
    if state.status in FINAL:
        if worker_id:
            raise BadInput(f"the project is {state.status}; worker {worker_id} is not running")
        return f"the project is {state.status}; nothing to cancel"
    run = current(root)
    if run is not None:
        return run.cancel(worker_id)
    holder = read_holder(ws)
    if holder is not None:
        write_command(ws, "cancel", worker_id=worker_id)
        return f"cancel request sent to the run held by pid {holder.get('pid', '?')}"
    if worker_id:
        raise BadInput(f"no run is alive in {ws.root}; worker {worker_id} is not running (it "
                       "stays resumable with `%lightscientist resume`)")
    from lightscientist_jupyter.controller import ResearchController

    with WorkspaceLock(ws).acquire("cancel"):
        writer = JsonlWriter(ws.events_file)
        try:
            bus = EventBus(next_seq=writer.next_seq)
            bus.subscribe(writer)
            controller = ResearchController.open(ws, bus=bus)
            controller.cancel("cancelled from the notebook")
            return f"the project is {controller.status}"
        finally:
            writer.close()


def stages(path: str | os.PathLike[str] | None = None) -> StageTable:
    """Load and validate a stage table (the shipped one by default)."""
    return load_table(path)


def stop_all(timeout: float = 5.0) -> None:
    """Stop every run of this kernel (at interpreter exit, and between tests)."""
    for run in list(runs()):
        try:
            run.stop(timeout)
        except ControllerError:
            pass
    with _lock:
        for view in [*_runs.values(), *_views.values()]:
            board = view._dashboard
            if board is not None:
                board.close()
        _runs.clear()
        _views.clear()


atexit.register(stop_all, 2.0)
