"""The workers' shell: each command in its own process group, never leaking processes.

The stock deepagents local shell kills only the shell on timeout and leaves its children
running. Here every command starts a new session (its own process group) with stdin from
/dev/null, an allow-listed environment and the workspace as working directory; output goes to
a file (kept whole under `.lightscientist/`) and the model sees a head and a tail. A command's
process group lives at most `timeout` seconds: members left behind when the shell exits (a job
started with `&`) keep running until that deadline or until the worker is cancelled, then the
whole group gets SIGTERM, a grace period, and SIGKILL.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

DEFAULT_TIMEOUT_S = 120.0
GRACE_S = 1.0
HEAD_CHARS, TAIL_CHARS = 6000, 4000

_SAFE_ENV_KEYS = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "MPLBACKEND",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "OMP_NUM_THREADS",
    "PYTHONHASHSEED",
)


def worker_env(workspace: Path, home: Path) -> dict[str, str]:
    """The allow-listed environment of worker commands: no keys, no tokens, no proxies."""
    bindir = str(Path(sys.executable).parent)
    env = {k: os.environ[k] for k in _SAFE_ENV_KEYS if k in os.environ}
    env.update(
        {
            "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "PWD": str(workspace),
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
            "LIGHTSCIENTIST_WORKSPACE": str(workspace),
        }
    )
    env.setdefault("LANG", "C.UTF-8")
    return env


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


class ProcessGroups:
    """Process groups still alive after their command returned, each with a deadline.

    A reaper thread kills a group when its deadline passes; `kill_owner` kills every group a
    worker started (cancellation); `kill_all` at shutdown.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: dict[int, tuple[str, float]] = {}
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, pgid: int, owner: str, deadline: float) -> None:
        with self._lock:
            self._groups[pgid] = (owner, deadline)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._reap, name="ls-reaper", daemon=True)
                self._thread.start()
        self._wake.set()

    def owned_by(self, owner: str) -> list[int]:
        with self._lock:
            return [g for g, (o, _) in self._groups.items() if o == owner]

    def kill_owner(self, owner: str) -> None:
        for pgid in self.owned_by(owner):
            kill_group(pgid)
            with self._lock:
                self._groups.pop(pgid, None)

    def kill_all(self) -> None:
        with self._lock:
            groups = list(self._groups)
            self._groups.clear()
        for pgid in groups:
            kill_group(pgid)

    def _reap(self) -> None:
        while True:
            with self._lock:
                if not self._groups:
                    self._thread = None
                    return
                now = time.monotonic()
                due = [g for g, (_, d) in self._groups.items() if d <= now]
                gone = [g for g in self._groups if g not in due and not group_alive(g)]
                for g in due + gone:
                    self._groups.pop(g, None)
                wait = min((d for _, d in self._groups.values()), default=now + 1) - now
            for pgid in due:
                kill_group(pgid)
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
) -> CommandResult:
    """Run `command` with bash in its own process group; see the module docstring."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    with open(log_path, "wb") as out:
        proc = subprocess.Popen(
            ["/bin/bash", "-c", command],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    pgid = proc.pid
    timed_out = cancelled = False
    while True:
        try:
            proc.wait(timeout=0.05)
            break
        except subprocess.TimeoutExpired:
            pass
        if cancel is not None and cancel.is_set():
            cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        if timed_out or cancelled:
            kill_group(pgid)
            proc.wait()
            break
    if not (timed_out or cancelled) and group_alive(pgid):
        if groups is not None:
            groups.add(pgid, owner, deadline)
        else:
            kill_group(pgid)
    text = log_path.read_bytes().decode("utf-8", errors="replace")
    truncated = len(text) > HEAD_CHARS + TAIL_CHARS
    if truncated:
        cut = len(text) - HEAD_CHARS - TAIL_CHARS
        try:
            shown = log_path.relative_to(cwd)
        except ValueError:
            shown = log_path
        text = (
            f"{text[:HEAD_CHARS]}\n… [{cut} characters not shown; full output in "
            f"{shown}] …\n{text[-TAIL_CHARS:]}"
        )
    if timed_out:
        text += f"\n[command timed out after {timeout:g} s; its processes were stopped]"
    if cancelled:
        text += "\n[command stopped: the worker is being cancelled]"
    return CommandResult(
        exit_code=proc.returncode,
        output=text,
        log_path=log_path,
        truncated=truncated,
        timed_out=timed_out,
        cancelled=cancelled,
    )
