"""The workers' shell: each command in its own process group, never leaking processes.

The stock deepagents local shell kills only the shell on timeout and leaves its children
running. Here every command starts a new session (its own process group) with stdin from
/dev/null, an allow-listed environment and the workspace as working directory; output goes to
a file (kept whole under `.lightscientist/`) and the model sees a head and a tail. A command's
process group lives at most `timeout` seconds: members left behind when the shell exits (a job
started with `&`) keep running until that deadline or until the worker is cancelled, then the
whole group gets SIGTERM, a grace period, and SIGKILL.

Secrets a command prints (a `cat .env`) are redacted in what the model sees, and in the log
once nothing writes to it any more: when the command's group is gone, at its return or later
(`redact_log`). While it runs the log is raw, where no other command's sandbox can read it.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from collections.abc import Callable
from pathlib import Path

from lightscientist_jupyter._faults import report_storage_fault
from lightscientist_jupyter._fs import (
    NO_LINKS,
    list_dir,
    write_text_atomic,
)
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.redact import redact, redact_file
from lightscientist_jupyter.runtime.sandbox import spawn

DEFAULT_TIMEOUT_S = 120.0
GRACE_S = 1.0
HEAD_CHARS, TAIL_CHARS = 6000, 4000
MARGIN_CHARS = 512
"""Redacted beyond the head and the tail the model sees: a secret shorter than this that
overlaps what is shown is redacted whole, never cut in two first."""


@dataclasses.dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    output: str
    """Head and tail of the combined output, for the model."""
    log_path: Path
    """The whole output."""
    truncated: bool
    timed_out: bool = False
    cancelled: bool = False


def group_alive(pgid: int) -> bool:
    """Whether any live (non-zombie) process is in group `pgid`.

    `os.killpg(pgid, 0)` succeeds for zombies too (they linger under PID 1 here), so the
    process table is read instead.
    """
    with os.scandir("/proc") as entries:  # closed even when we return early
        for entry in entries:
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as fh:
                    stat = fh.read().decode(errors="replace")
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if len(fields) > 2 and fields[0] != "Z" and int(fields[2]) == pgid:
                return True
    return False


def kill_group(pgid: int, grace: float = GRACE_S) -> None:
    """SIGTERM the group, wait up to `grace`, then SIGKILL what is left."""
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return
        time.sleep(0.05)
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _start_time(pid: int) -> str | None:
    """Field 22 of /proc/PID/stat (when the process started), or None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read().decode(errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()
    return fields[19] if len(fields) > 19 else None


def mark_group(marker: Path, pgid: int) -> Path:
    """Record a command's process group in `marker` (`<pgid> <leader start time>`), so that a
    later process can end it when this one is killed before it could (see `end_recorded`).
    Written through no link, replacing whatever stood there."""
    write_text_atomic(marker, f"{pgid} {_start_time(pgid) or '-'}\n", durable=False)
    return marker


def redact_log(log: Path) -> None:
    """Redact a command's log at rest (see `redact.redact_file`), once nothing writes to it.
    A log gone is no error; one that cannot be rewritten stays as it was (a full disk is
    reported as the run's fault)."""
    try:
        redact_file(log)
    except FileNotFoundError:
        pass
    except OSError as exc:
        report_storage_fault(exc)


def end_recorded(folder: Path) -> list[int]:
    """End the process groups recorded by markers under `folder` (`*/commands/*.pgid`) whose
    members still run, remove the markers and redact the commands' logs (`<n>.log` beside
    `<n>.pgid`, raw when the run died during the command); returns the groups ended.

    Called before a run starts in a workspace whose last runner died (it holds the run lock,
    so no marker belongs to a live run). A group is ours while its leader is the process that
    was recorded (same start time), or while the leader is gone but members remain (the
    kernel does not reuse a pid that is still a group's id)."""
    ended = []
    for marker in _markers(folder):
        try:
            pgid_text, start = NO_LINKS.read_text(marker, errors="replace").split()[:2]
            pgid = int(pgid_text)
        except (OSError, ValueError):
            NO_LINKS.unlink(marker)
            continue
        now = _start_time(pgid)
        if (now is None or now == start) and group_alive(pgid):
            kill_group(pgid)
            ended.append(pgid)
        NO_LINKS.unlink(marker)
        redact_log(marker.with_suffix(".log"))
    return ended


def _markers(folder: Path) -> list[Path]:
    """The `*/commands/*.pgid` files under `folder`, each reached through no link."""
    found = []
    for worker in _entries(folder):
        if worker.is_dir(follow_symlinks=False):
            commands = folder / worker.name / "commands"
            found += [commands / e.name for e in _entries(commands) if e.name.endswith(".pgid")]
    return found


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        return list_dir(folder)
    except PathRefused:  # a link a command planted: no marker of ours is behind it
        return []


class ProcessGroups:
    """Process groups still alive after their command returned, each with a deadline.

    A reaper thread kills a group when its deadline passes; `kill_owner` kills every group a
    worker started (cancellation); `kill_all` at shutdown. A group's command log, if given, is
    redacted once the group is gone (see `redact_log`).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: dict[int, tuple[str, float]] = {}
        self._markers: dict[int, Path] = {}
        """Each group's marker file (see `end_recorded`), removed when the group is gone."""
        self._enders: dict[int, Callable[[int], None]] = {}
        self._logs: dict[int, Path] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(
        self,
        pgid: int,
        owner: str,
        deadline: float,
        marker: Path | None = None,
        end: Callable[[int], None] | None = None,
        log: Path | None = None,
    ) -> None:
        """Watch `pgid` until `deadline`; `end` ends it (default `kill_group`; a job's
        sandbox needs its whole tree ended: `proctree.end_tree`); `log`: the output its
        members still write, redacted when they are gone."""
        with self._lock:
            self._groups[pgid] = (owner, deadline)
            self._enders[pgid] = end or kill_group
            if marker is not None:
                self._markers[pgid] = marker
            if log is not None:
                self._logs[pgid] = log
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._reap, name="ls-reaper", daemon=True)
                self._thread.start()
        self._wake.set()

    def owned_by(self, owner: str) -> list[int]:
        with self._lock:
            return [g for g, (o, _) in self._groups.items() if o == owner]

    def kill_owner(self, owner: str) -> None:
        for pgid in self.owned_by(owner):
            self._end(pgid)
            with self._lock:
                self._groups.pop(pgid, None)
            self._forget(pgid)

    def kill_all(self) -> None:
        with self._lock:
            groups = list(self._groups)
            self._groups.clear()
        for pgid in groups:
            self._end(pgid)
            self._forget(pgid)

    def _end(self, pgid: int) -> None:
        with self._lock:
            end = self._enders.get(pgid, kill_group)
        end(pgid)

    def _forget(self, pgid: int) -> None:
        """Drop what is kept of a group that is gone (called without the lock: a log may be
        long to redact)."""
        with self._lock:
            self._enders.pop(pgid, None)
            marker = self._markers.pop(pgid, None)
            log = self._logs.pop(pgid, None)
        if marker is not None:
            NO_LINKS.unlink(marker)
        if log is not None:
            redact_log(log)

    def _reap(self) -> None:
        while True:
            with self._lock:
                if not self._groups:
                    self._thread = None
                    return
                now = time.monotonic()
                due = [g for g, (_, d) in self._groups.items() if d <= now]
                gone = [g for g in self._groups if g not in due and not group_alive(g)]
                later = [d for g, (_, d) in self._groups.items() if g not in due + gone]
                wait = min(later, default=now + 1) - now
            for pgid in due + gone:  # a group is watched until its log is settled
                if pgid in due:
                    self._end(pgid)
                self._forget(pgid)
                with self._lock:
                    self._groups.pop(pgid, None)
            self._wake.wait(max(0.05, min(wait, 1.0)))
            self._wake.clear()


def run_command(
    command: str,
    *,
    cwd: Path,
    env: dict[str, str],
    log_path: Path,
    timeout: float = DEFAULT_TIMEOUT_S,
    cancel: threading.Event | None = None,
    groups: ProcessGroups | None = None,
    owner: str = "",
    confinement: spawn.Confinement | None = None,
) -> CommandResult:
    """Run `command` with bash in its own process group; see the module docstring.
    `confinement`: the sandbox and limits (see `spawn`; None: plain bash, no limits).
    The log and its marker are written through no link (`beneath.PathRefused` otherwise)."""
    deadline = time.monotonic() + timeout
    with NO_LINKS.open_write(log_path) as out:
        started = spawn.start(command, confinement, cwd=cwd, env=env, out=out)
    proc = started.proc
    pgid = proc.pid
    try:
        marker: Path | None = mark_group(log_path.with_suffix(".pgid"), pgid)
    except OSError:  # its folder was swapped for a link since the log was opened
        kill_group(pgid)
        proc.wait()
        raise
    timed_out = cancelled = False
    while True:
        if started.returned(0.05):
            break
        if cancel is not None and cancel.is_set():
            cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        if timed_out or cancelled:
            kill_group(pgid)
            proc.wait()
            break
    started.settle()
    if not (timed_out or cancelled) and group_alive(pgid):
        if groups is not None:  # its log is redacted when the group is gone
            groups.add(pgid, owner, deadline, marker, log=log_path)
            marker = None
        else:
            kill_group(pgid)
    if marker is not None:  # nothing of the command runs: its log is final
        NO_LINKS.unlink(marker)
        redact_log(log_path)
    try:
        text = NO_LINKS.read_bytes(log_path).decode("utf-8", errors="replace")
    except OSError as exc:  # replaced while the command ran
        text = f"[the command's output cannot be read back: {exc}]"
    truncated = len(text) > HEAD_CHARS + TAIL_CHARS
    if truncated:
        cut = len(text) - HEAD_CHARS - TAIL_CHARS
        try:
            shown = log_path.relative_to(cwd)
        except ValueError:
            shown = log_path
        head = redact(text[: HEAD_CHARS + MARGIN_CHARS])[:HEAD_CHARS]
        tail = redact(text[-TAIL_CHARS - MARGIN_CHARS :])[-TAIL_CHARS:]
        text = f"{head}\n… [{cut} characters not shown; full output in {shown}] …\n{tail}"
    else:
        text = redact(text)
    if timed_out:
        text += f"\n[command timed out after {timeout:g} s; its processes were stopped]"
    if cancelled:
        text += "\n[command stopped: the worker is being cancelled]"
    note = started.limit_note(text)
    if note:
        text += f"\n{note}"
    return CommandResult(
        exit_code=started.exit_code,
        output=text,
        log_path=log_path,
        truncated=truncated,
        timed_out=timed_out,
        cancelled=cancelled,
    )
