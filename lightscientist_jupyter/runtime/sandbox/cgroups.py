"""Control groups for worker commands: limits on a command's processes *together* — how many
there are (`pids`) and how much memory they hold (`memory`) — that bind root too.

`ulimit` bounds each process alone: four processes of 300 MB each pass an address-space limit
of 400M, and `RLIMIT_NPROC` does not bind root. A cgroup holds the whole command, whatever it
starts. Each controller's hierarchy is found from `/proc/self/cgroup` and `/proc/self/mounts`:
cgroup v1 mounts one per controller (`/sys/fs/cgroup/memory`), v2 one for all
(`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` beside v1). This process makes a folder
`lightscientist-<pid>-<random>` under its own cgroup, so that its commands stay inside any
limit it is under itself, or, where that cannot hold them (v2 does not let a cgroup with
processes hand a controller down), under the hierarchy's root; each command gets a cgroup of
its own in that folder. All of it is best effort: where none can be made (no permission, no
such controller), commands run with the `ulimit` limits alone.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
import uuid
from pathlib import Path

from lightscientist_jupyter.values.limits import Limits

CONTROLLERS = ("pids", "memory")
PREFIX = "lightscientist-"
JOIN_GRACE_S = 60.0
"""A command's new cgroup is left alone by the sweeps this long: it is empty until the
command's shell joins it, and a sweep for another command must not remove it meanwhile."""


@dataclasses.dataclass(frozen=True)
class _Hierarchy:
    mount: Path
    own: str
    """This process's cgroup in it, e.g. `/` or `/user.slice/…`."""
    controllers: tuple[str, ...]
    """Those of `CONTROLLERS` it holds."""
    v2: bool


def _hierarchies() -> list[_Hierarchy]:
    """The mounted hierarchies holding a controller of `CONTROLLERS`."""
    try:
        own_lines = Path("/proc/self/cgroup").read_text().splitlines()
        mount_lines = Path("/proc/self/mounts").read_text().splitlines()
    except OSError:
        return []
    own_v1: dict[str, str] = {}
    own_v2 = "/"
    for line in own_lines:
        _, listed, path = line.split(":", 2)
        if listed:
            for name in listed.split(","):
                own_v1[name] = path
        else:
            own_v2 = path
    found = []
    for line in mount_lines:
        fields = line.split()
        if len(fields) < 4 or fields[2] not in ("cgroup", "cgroup2"):
            continue
        mount = Path(fields[1])
        if fields[2] == "cgroup":
            names = tuple(c for c in CONTROLLERS if c in fields[3].split(","))
            if names:
                found.append(_Hierarchy(mount, own_v1.get(names[0], "/"), names, False))
            continue
        try:
            enabled = (mount / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        names = tuple(c for c in CONTROLLERS if c in enabled)
        if names:
            found.append(_Hierarchy(mount, own_v2, names, True))
    return found


@dataclasses.dataclass(frozen=True)
class CommandCgroup:
    """The cgroups one command runs in (one per hierarchy), to join and to read back."""

    paths: tuple[Path, ...]

    def procs_hit(self) -> bool:
        """Whether a fork of the command was refused by its `pids.max`."""
        return self._count("pids.events", "max") > 0

    def oom_kills(self) -> int:
        """How many of the command's processes the memory limit's OOM killer ended."""
        return self._count("memory.events", "oom_kill") + self._count(
            "memory.oom_control", "oom_kill"
        )

    def _count(self, name: str, key: str) -> int:
        total = 0
        for path in self.paths:
            try:
                lines = (path / name).read_text().splitlines()
            except OSError:
                continue
            for line in lines:
                field, _, count = line.partition(" ")
                if field == key and count.strip().isdigit():
                    total += int(count)
        return total


class CommandCgroups:
    """This process's folder in each hierarchy, where every command gets its cgroups."""

    def __init__(self) -> None:
        self.parents: dict[Path, tuple[str, ...]] = {}
        """Each folder, with the controllers its commands' cgroups get."""
        self._made: dict[Path, float] = {}
        """The cgroups made lately, with when (monotonic): not swept before `JOIN_GRACE_S`."""
        self._lock = threading.Lock()
        for hierarchy in _hierarchies():
            parent = _make_parent(hierarchy)
            if parent is not None:
                self.parents[parent[0]] = parent[1]

    @property
    def controllers(self) -> set[str]:
        return {c for names in self.parents.values() for c in names}

    def make(self, limits: Limits) -> CommandCgroup | None:
        """New cgroups bounding a command by `limits.procs` and `limits.mem` (those set),
        or None when none can be made."""
        wanted = {"pids": limits.procs, "memory": limits.mem}
        self.sweep()
        paths: list[Path] = []
        for parent, names in self.parents.items():
            settings = [(name, wanted[name]) for name in names if wanted[name] is not None]
            if not settings:
                continue
            path = parent / uuid.uuid4().hex[:10]
            try:
                path.mkdir()
                for name, value in settings:
                    _set_limit(path, name, int(value or 0))
            except OSError:
                _remove(path)
                continue
            paths.append(path)
        with self._lock:
            self._made.update((path, time.monotonic()) for path in paths)
        return CommandCgroup(tuple(paths)) if paths else None

    def sweep(self, *, fresh_too: bool = False) -> None:
        """Remove the cgroups whose commands have ended (a busy one refuses rmdir), except
        those made in the last `JOIN_GRACE_S` (their command may not have joined yet)."""
        now = time.monotonic()
        for parent in self.parents:
            try:
                children = [c for c in parent.iterdir() if c.is_dir()]
            except OSError:
                continue
            for child in children:
                with self._lock:
                    made = self._made.get(child)
                    if not fresh_too and made is not None and now - made < JOIN_GRACE_S:
                        continue
                    _remove(child)
                    if not child.exists():
                        self._made.pop(child, None)

    def close(self) -> None:
        self.sweep(fresh_too=True)
        for parent in self.parents:
            _remove(parent)


def _set_limit(path: Path, controller: str, value: int) -> None:
    """Write one limit; raises OSError when the main setting cannot be written."""
    if controller == "pids":
        (path / "pids.max").write_text(str(value))
        return
    if (path / "memory.max").exists():  # v2: no swapping past the limit either
        (path / "memory.max").write_text(str(value))
        extras = [("memory.swap.max", "0")]
    else:  # v1: memsw (memory + swap) is written after the limit it may not be below
        (path / "memory.limit_in_bytes").write_text(str(value))
        extras = [("memory.memsw.limit_in_bytes", str(value))]
    for name, text in extras:
        try:  # absent without swap accounting
            (path / name).write_text(text)
        except OSError:
            pass


def _make_parent(hierarchy: _Hierarchy) -> tuple[Path, tuple[str, ...]] | None:
    """This process's folder in `hierarchy` (under its own cgroup when that can hold the
    controllers, else under the root), with the controllers its children get."""
    own = hierarchy.mount / hierarchy.own.lstrip("/")
    for base in dict.fromkeys((own, hierarchy.mount)):
        _sweep_stale(base)
        folder = base / f"{PREFIX}{os.getpid()}-{uuid.uuid4().hex[:6]}"
        try:
            folder.mkdir()
        except OSError:
            continue
        names = _usable(folder, hierarchy)
        if names:
            return folder, names
        _remove(folder)
    return None


def _usable(folder: Path, hierarchy: _Hierarchy) -> tuple[str, ...]:
    """The controllers a child of `folder` gets."""
    if not hierarchy.v2:
        return tuple(c for c in hierarchy.controllers if any(folder.glob(f"{c}.*")))
    try:
        available = (folder / "cgroup.controllers").read_text().split()
        names = tuple(c for c in hierarchy.controllers if c in available)
        if names:
            (folder / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in names))
        return tuple(
            c for c in names if c in (folder / "cgroup.subtree_control").read_text().split()
        )
    except OSError:
        return ()


def _remove(path: Path) -> None:
    try:
        path.rmdir()
    except OSError:
        pass


def _sweep_stale(base: Path) -> None:
    """Remove the folders a killed process left behind (its pid is in the folder's name)."""
    try:
        parents = [p for p in base.glob(f"{PREFIX}*") if p.is_dir()]
    except OSError:
        return
    for parent in parents:
        pid = parent.name[len(PREFIX) :].split("-")[0]
        if pid.isdigit() and Path("/proc", pid).exists():
            continue
        try:
            children = [c for c in parent.iterdir() if c.is_dir()]
        except OSError:
            continue
        for child in [*children, parent]:
            _remove(child)
