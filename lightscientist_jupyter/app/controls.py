"""Run controls for the screens (dashboard and side panel): pause after a stage, re-run a
stage, resume in the background.

Each is one operation over the time-travel and run machinery, never a copy of it:

- `pause_after` asks the process that runs the project (through its inbox, command `until`)
  to pause once STAGE finishes — the `--until STAGE` of `resume`, set on a running run — or,
  when none does, keeps the request in the project's state for the next run (at a gate too);
- `rerun` stops the run that holds the project (inbox command `stop`: workers stay
  resumable), rewinds to the start of the stage's latest visit (`history.rewind`) and starts
  the project again in the background;
- `start_resume` starts `lightscientist resume --wait` as a detached process (it outlives the
  kernel and the server that started it), or says the exact command when it cannot; `go_on`
  does it after the server carried out a reply or a hand-over step on a project nobody ran.

`apply_command` is the running project's side of the inbox commands (these and the others:
a hand-over step, a cancel); the project hands itself in as a `RunningProject`.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lightscientist_jupyter.app import handoff, history
from lightscientist_jupyter.app import until as until_stage
from lightscientist_jupyter.app.commands import cancel_reason, project_locked, require_project
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.controller.inbox import write_command
from lightscientist_jupyter.controller.inbox_files import CancelArgs, Command, Refused
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.errors import BadInput, Conflict, WorkspaceLocked
from lightscientist_jupyter.vocab import (
    FINAL_PROJECT_STATUSES,
    InboxCommand,
    ProjectStatus,
    ReplySource,
)
from lightscientist_jupyter.workspace import Workspace

if TYPE_CHECKING:  # the screens' controls load no session machinery
    from lightscientist_jupyter.supervisor.loop import StageSupervisor

STOP_WAIT_S = 20.0
"""How long `rerun` waits for the running process to stop."""
START_WAIT_S = 8.0
"""How long `start_resume` waits for the new process to take the project."""
RESUME_LOG = "resume.log"
"""The background resume's output, in `.lightscientist/`."""


@dataclasses.dataclass(frozen=True)
class Done:
    """What a control did: a line for the user, and the new process's pid when one started."""

    message: str
    pid: int | None = None
    ok: bool = True
    """False when it did not do what was asked (an `app.ops.catalog.Outcome`)."""


def applicable(status: str, *, running: bool, pause_after: str | None) -> dict[str, bool]:
    """Which run controls apply to a project now — every screen offers only these (the
    dashboard's row, the side panel's, the palette's commands): Cancel until it ended, Pause
    while it runs or waits and no pause is asked yet, Re-run and Resume until it is done
    (Resume only while no process runs it). `pausing`: a pause asked for is still to come.
    None applies to a project still being created (`starting`)."""
    if status == ProjectStatus.STARTING:
        return dict.fromkeys(("cancel", "pause", "rerun", "resume", "pausing"), False)
    waits = status in (ProjectStatus.RUNNING, ProjectStatus.WAITING_USER)
    return {
        "cancel": status not in FINAL_PROJECT_STATUSES,
        "pause": waits and not pause_after,
        "rerun": status != ProjectStatus.DONE,
        "resume": status != ProjectStatus.DONE and not running,
        "pausing": waits and bool(pause_after),
    }


def resume_command(ws: Workspace, until: str | None = None) -> str:
    """The command line that continues the project in `ws` (waiting at its gates)."""
    words = ["lightscientist", "resume", "--workspace", str(ws.root), "--wait"]
    words += ["--until", until] if until else []
    return shlex.join(words)


def _runner(ws: Workspace) -> dict[str, Any] | None:
    return read_holder(ws)


def _pid(holder: dict[str, Any]) -> str:
    return str(holder.get("pid", "?"))


def pause_after(ws: Workspace, stage: str | None = None) -> Done:
    """Ask the running process to pause once `stage` (default: the current one) finishes."""
    state = require_project(ws)
    stage = until_stage.check(load_table(state.stages_file), stage) or state.stage
    if state.status not in (ProjectStatus.RUNNING, ProjectStatus.WAITING_USER):
        raise Conflict(f"the project is {state.status}, not running a stage; nothing to pause")
    holder = _runner(ws)
    if holder is None and _keep_request(ws, stage):
        return Done(
            f"the project pauses after {stage} finishes; no process runs it now: Resume "
            f"(or `{resume_command(ws)}`) runs it up to there"
        )
    write_command(ws, InboxCommand.UNTIL, stage=stage)  # (a run that took it meanwhile too)
    holder = holder or _runner(ws) or {}
    return Done(f"the run (pid {_pid(holder)}) pauses after {stage} finishes; Resume goes on")


def _keep_request(ws: Workspace, stage: str) -> bool:
    """Keep the pause request in the state of a project nobody runs; False when a run took
    the project meanwhile (it is then asked through its inbox)."""
    try:
        with project_locked(ws, "pause") as controller:
            until_stage.keep(controller, stage)
    except WorkspaceLocked:
        return False
    return True


class RunningProject(Protocol):
    """The project this process runs, as its inbox commands reach it (`app.project.Project`)."""

    controller: ResearchController
    supervisor: StageSupervisor
    until: str | None
    """The stage after which the run pauses (None: it does not)."""

    def stop(self) -> None: ...

    def cancel_soon(self, reason: str) -> None: ...


def apply_command(project: RunningProject, command: Command | Refused) -> bool:
    """Apply a command from the inbox (`inbox.take_commands`) to the running `project` —
    `until` and `stop` (the screens), a hand-over step, a `cancel` of one worker or of the
    whole run; whether it was one it applies. A refused one (a key of its file has the wrong
    type) is applied not at all: its line goes to stderr, and the run goes on."""
    if isinstance(command, Refused):
        print(f"lightscientist: warning: {command.why}", file=sys.stderr, flush=True)
        return False
    match command["command"]:
        case InboxCommand.UNTIL:
            try:
                stage = until_stage.check(project.controller.table, command["args"].get("stage"))
            except BadInput:  # not a stage of the table it runs: a stale request, ignored
                return True
            project.until = stage
            until_stage.keep(project.controller, stage)
        case InboxCommand.STOP:
            project.stop()
        case InboxCommand.HANDOFF:  # take / deliver / give-back from elsewhere
            handoff.apply_command(project.controller, command["args"])
        case InboxCommand.CANCEL:
            _cancel(project, command["args"])
        case _:  # a dict no reader checked, of a command this version does not know
            return False
    return True


def _cancel(project: RunningProject, args: CancelArgs) -> None:
    worker_id = args.get("worker_id")
    if not worker_id:
        project.cancel_soon(cancel_reason(args.get("source")))
        return
    try:
        project.supervisor.runtime.cancel(worker_id, timeout=10.0)
    except Exception:  # an unknown or finished worker: nothing to cancel
        pass


def _wait_released(ws: Workspace, timeout: float) -> dict[str, Any] | None:
    """Wait for the run lock to be free; the holder still there after `timeout`, or None."""
    deadline = time.monotonic() + timeout
    holder = _runner(ws)
    while holder is not None and time.monotonic() < deadline:
        time.sleep(0.1)
        holder = _runner(ws)
    return holder


def rerun(
    ws: Workspace, stage: str | None = None, *, source: ReplySource = ReplySource.PANEL
) -> Done:
    """Run `stage` (default: the current one) again from the start of its latest visit: stop
    the run, rewind, resume in the background."""
    state = require_project(ws)
    stage = stage or state.stage
    holder = _runner(ws)
    if holder is not None:
        write_command(ws, InboxCommand.STOP)
        still = _wait_released(ws, STOP_WAIT_S)
        if still is not None:
            raise Conflict(
                f"the run (pid {_pid(still)}) did not stop within {STOP_WAIT_S:.0f} s; "
                "Cancel it, then Re-run"
            )
    rewound = history.rewind(ws, stage, source=source)
    # the stopped run's process may still be letting go (its last steps on the way out):
    # the resume waits for the lock to be free rather than refusing at once
    _wait_released(ws, STOP_WAIT_S)
    started = start_resume(ws)
    return Done(f"{rewound.message.split(';')[0]}; {started.message}", started.pid)


def go_on(ws: Workspace) -> Done:
    """A reply or a hand-over step carried out on a project nobody runs set it running again:
    it goes on in the background, as Resume does (the policy of `app.ops.catalog` for a door
    that runs no project itself, the server). A project that cannot be resumed that way is
    said so, with the command to run; the step stays carried out."""
    try:
        return start_resume(ws)
    except Conflict as exc:
        return Done(f"it did not go on: {exc}", ok=False)


def start_resume(ws: Workspace, *, until: str | None = None) -> Done:
    """Start `lightscientist resume --wait` for `ws` in a detached process; `Conflict` (with
    the command to run by hand) when the project cannot be resumed that way."""
    state = require_project(ws)
    command = resume_command(ws, until)
    if state.status == ProjectStatus.DONE:
        raise Conflict(f"the project in {ws.root} is done; nothing to resume")
    holder = _runner(ws)
    if holder is not None:
        raise Conflict(f"the project is already run by pid {_pid(holder)}; nothing to resume")
    log = ws.state_dir / RESUME_LOG
    argv = [sys.executable, "-m", "lightscientist_jupyter", *shlex.split(command)[1:]]
    try:
        with open(log, "ab") as out:
            out.write(f"\n$ {command}  ({time.strftime('%Y-%m-%d %H:%M:%S')})\n".encode())
            out.flush()
            child = subprocess.Popen(
                argv,
                cwd=ws.root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # outlives the kernel or server that started it
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
    except OSError as exc:
        raise Conflict(f"cannot start the resume ({exc}); run `{command}`") from None
    threading.Thread(target=child.wait, daemon=True, name="ls-resume-reaper").start()
    return _started(ws, child, command, log)


def _started(ws: Workspace, child: subprocess.Popen[bytes], command: str, log: Path) -> Done:
    """Wait until `child` holds the project (or ended: then why, from its log)."""
    log = log.relative_to(ws.root)  # as the user sees it from the project folder
    deadline = time.monotonic() + START_WAIT_S
    while time.monotonic() < deadline:
        if child.poll() is not None:
            break
        holder = _runner(ws)
        if holder is not None and holder.get("pid") == child.pid:
            return Done(f"resumed in the background by pid {child.pid} (log: {log})", child.pid)
        time.sleep(0.1)
    code = child.poll()
    if code is None:  # still opening the project: it goes on by itself
        return Done(f"resuming in the background, pid {child.pid} (log: {log})", child.pid)
    if code == 0:  # it ran to where it stops (a gate without --wait, paused, done)
        return Done(f"resumed by pid {child.pid}, which ran and ended (log: {log})", child.pid)
    lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    why = lines[-1] if lines else f"exit {code}"
    raise Conflict(f"the resume ended at once ({why}); run `{command}` to see more")
