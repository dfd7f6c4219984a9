"""How one worker command is started: plain bash, or bash inside a bubblewrap sandbox, with
its resource limits.

Unsandboxed, the command's bash is the process group's leader and its exit is the command's.
Sandboxed, the group's leader is `bwrap`, and a small wrapper inside the sandbox runs the
command, writes its exit status to a pipe (that is when the command has returned) and then
stays until no other process is left in the sandbox's PID namespace, so a job started with `&`
lives on until the command's deadline, as it does unsandboxed; ending the group ends `bwrap`,
and with it (`--die-with-parent`, a PID namespace) everything inside. A sandbox with a network
of its own waits for `netstack.attach` before its command starts. Either way the command's
shell first joins its cgroups (`cgroups`), when they can be made.
"""

from __future__ import annotations

import dataclasses
import os
import select
import subprocess
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO

from lightscientist_jupyter.runtime.sandbox import bwrap, netstack
from lightscientist_jupyter.runtime.sandbox.cgroups import CommandCgroup, CommandCgroups
from lightscientist_jupyter.values.limits import Limits

# $1 the command, $2 the status pipe's fd; {wait}: with a network of its own, the wait for it
# (`netstack.Handshake`). The wait loop forks nothing (a full process table must not stop it):
# `read -t` on a pipe that never gets data is its sleep.
_WRAPPER = """{ulimits}
{wait}
exec 9<> <(:)
/bin/bash -c "$1" </dev/null
c=$?
echo "$c" >&"$2"
eval "exec $2>&-"
while :; do
  n=0; for p in /proc/[0-9]*; do n=$((n + 1)); done
  [ "$n" -le 2 ] && exit "$c"
  read -t 0.1 -u 9
done
"""
# $1 how many cgroups follow, then the cgroups' folders, then the command
_JOIN_CGROUPS = """n=$1; shift
while [ "$n" -gt 0 ]; do echo $$ > "$1/cgroup.procs" 2>/dev/null; shift; n=$((n - 1)); done
exec "$@"
"""
_SPAWNER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ls-spawner")
"""Starts every sandbox: `--die-with-parent` watches the *thread* that forked `bwrap`, so
they are forked from one thread that lives as long as the process, not from a worker's turn
thread (whose end would kill a job left running in the background)."""


@dataclasses.dataclass(frozen=True)
class Confinement:
    """Where and how a command runs: `prefix` is the sandbox's argv (empty: unsandboxed)."""

    prefix: tuple[str, ...] = ()
    limits: Limits | None = None
    cgroups: CommandCgroups | None = None
    network: bwrap.Network = "none"
    """With `"own"`, the sandbox waits for `netstack.attach` before its command starts."""


@dataclasses.dataclass(frozen=True)
class ShellPolicy:
    """A worker's shell: sandboxed or not, with network or not, and its limits."""

    sandbox: bool = False
    network: bool = False
    host_network: bool = False
    """A command with network shares the host's (`auto` where none of its own can be had)."""
    overrides: Mapping[str, int | None] = dataclasses.field(default_factory=dict)
    """The run's `--limits`: they win over the stage's."""
    stage_limits: Mapping[str, int | None] = dataclasses.field(default_factory=dict)
    """The stage's `limits`: they win over the defaults."""
    cgroups: CommandCgroups | None = None

    @property
    def limits(self) -> Limits:
        return Limits().merged(self.stage_limits).merged(self.overrides)

    def for_stage(self, network: bool, limits: Mapping[str, int | None]) -> ShellPolicy:
        """This run's policy for a worker of a stage with this `network` and `limits`."""
        return dataclasses.replace(self, network=self.network or network, stage_limits=limits)

    def confinement(self, root: Path, home: Path) -> Confinement:
        if not self.sandbox:
            return Confinement((), self.limits, self.cgroups)
        net: bwrap.Network = "none"
        if self.network:
            net = "host" if self.host_network else "own"
        prefix = tuple(bwrap.argv(root, home, network=net))
        return Confinement(prefix, self.limits, self.cgroups, net)


class Started:
    """A running command: `returned` says when the command itself has ended."""

    def __init__(
        self,
        proc: subprocess.Popen[bytes],
        status_fd: int | None,
        cgroup: CommandCgroup | None,
        conf: Confinement,
    ):
        self.proc = proc
        self._status_fd = status_fd
        self._cgroup = cgroup
        self._conf = conf
        self.exit_code: int | None = None
        self._done = False

    def returned(self, wait: float) -> bool:
        """Wait up to `wait` s for the command to end; True once it has."""
        if self._done:
            return True
        if self._status_fd is None:
            try:
                self.exit_code = self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                return False
            self._done = True
            return True
        ready, _, _ = select.select([self._status_fd], [], [], wait)
        if ready:
            text = os.read(self._status_fd, 64).decode(errors="replace").strip()
            if text.isdigit():
                self.exit_code = int(text)
            else:  # the sandbox never ran the command (a bwrap error is in the output)
                self.exit_code = self.proc.wait()
            self._done = True
        return self._done

    def settle(self) -> None:
        """After the command: let a sandbox with nothing left in it exit, close the pipe."""
        if self._status_fd is not None:
            try:
                self.proc.wait(timeout=0.3)
            except subprocess.TimeoutExpired:
                # a background job still runs: the group lives on to its deadline, and this
                # thread reaps `bwrap` when it ends
                threading.Thread(target=self.proc.wait, daemon=True, name="ls-bwrap").start()
            os.close(self._status_fd)
            self._status_fd = None
        if self.exit_code is None:
            self.exit_code = self.proc.returncode

    def limit_note(self, output: str) -> str | None:
        """A line naming the limit that stopped the command, if one did."""
        limits = self._conf.limits
        if limits is None:
            return None
        group = self._cgroup
        return limits.explain(
            self.exit_code,
            output,
            procs_hit=group is not None and group.procs_hit(),
            oom_kills=group.oom_kills() if group is not None else 0,
        )


def start(
    command: str, conf: Confinement | None, *, cwd: Path, env: dict[str, str], out: IO[bytes]
) -> Started:
    """Start `command` in its own process group with its output in `out`."""
    conf = conf or Confinement()
    limits = conf.limits
    sandboxed = bool(conf.prefix)
    # outside a sandbox RLIMIT_NPROC counts every process of the user, so it is left alone
    ulimits = limits.ulimit_script(procs=sandboxed) if limits else ""
    status_r = status_w = None
    handshake = None
    if sandboxed:
        status_r, status_w = os.pipe()
        prefix = list(conf.prefix)
        if conf.network == "own":  # the sandbox waits for its network (see `netstack`)
            handshake = netstack.Handshake.open()
            prefix = handshake.sandbox_argv(prefix)
        wait = handshake.wait_script() if handshake else ""
        script = _WRAPPER.format(ulimits=ulimits, wait=wait)
        args = [*prefix, "/bin/bash", "-c", script, "ls-command", command, str(status_w)]
    elif ulimits:
        args = ["/bin/bash", "-c", f'{ulimits}\nexec /bin/bash -c "$1"', "ls-command", command]
    else:
        args = ["/bin/bash", "-c", command]
    cgroup = None
    if limits is not None and conf.cgroups is not None:
        cgroup = conf.cgroups.make(limits)
        if cgroup is not None:
            paths = [str(p) for p in cgroup.paths]
            args = ["/bin/sh", "-c", _JOIN_CGROUPS, "ls-cgroups", str(len(paths)), *paths, *args]

    given: tuple[int, ...] = (status_w,) if status_w is not None else ()

    def launch() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            args,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            pass_fds=given + (handshake.sandbox_fds if handshake else ()),
        )

    try:
        proc = _SPAWNER.submit(launch).result() if sandboxed else launch()
    except BaseException:
        for fd in (status_r, status_w):
            if fd is not None:
                os.close(fd)
        if handshake is not None:
            handshake.close_all()
        raise
    for fd in given:
        os.close(fd)
    if handshake is not None:
        note = netstack.attach(proc.pid, handshake)
        if note:  # the sandbox was ended before its command ran: this is all its output
            out.write(f"[{note}]\n".encode())
            out.flush()
    return Started(proc, status_r, cgroup, conf)
