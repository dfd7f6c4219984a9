"""Resource limits of one worker command: memory, CPU seconds, processes, file size.

They are written `mem=2G,cpu=600,procs=256,fsize=1G` (any subset; sizes take K, M, G or T,
`none` lifts one) on the command line (`--limits`) and as a stage table's `limits` table.
The shell applies them with `ulimit` in the command's own shell, before the command runs
(`mem` as each process's address space); `mem` and the process count also bind the command's
processes together, with a memory and a pids cgroup when they can be made (`cgroups`;
`RLIMIT_NPROC` does not bind root either). `explain` turns what a stopped command left behind
into a line naming the limit, so the model can adapt.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from lightscientist_jupyter.errors import BadInput

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)I?B?\s*$", re.IGNORECASE)
LIMIT_KEYS = ("mem", "cpu", "procs", "fsize")
_SIGXCPU, _SIGXFSZ = 24, 25


@dataclasses.dataclass(frozen=True)
class Limits:
    """Per-command limits; None lifts one."""

    mem: int | None = 4 << 30
    """Memory, bytes: each process's address space, and all of the command's memory."""
    cpu: int | None = 600
    """CPU seconds."""
    procs: int | None = 256
    """Processes (and threads) at once."""
    fsize: int | None = 1 << 30
    """Largest file a command may write, bytes."""

    def merged(self, changes: Mapping[str, Any]) -> Limits:
        """These limits with `changes` (parsed values, None = unlimited) applied."""
        return dataclasses.replace(self, **{k: v for k, v in changes.items() if k in LIMIT_KEYS})

    def shown(self, key: str) -> str:
        value = getattr(self, key)
        if value is None:
            return f"{key}=none"
        if key == "cpu":
            return f"cpu={value} s"
        return f"{key}={value if key == 'procs' else _size(value)}"

    def ulimit_script(self, *, procs: bool) -> str:
        """`ulimit` lines for bash (`procs`: also the per-user process limit)."""
        parts = []
        if self.mem is not None:
            parts.append(f"ulimit -v {max(1, self.mem // 1024)}")
        if self.cpu is not None:  # SIGXCPU at the soft limit, SIGKILL two seconds later
            parts.append(f"ulimit -t {self.cpu + 2} && ulimit -S -t {self.cpu}")
        if self.fsize is not None:
            parts.append(f"ulimit -f {max(1, self.fsize // 1024)}")
        if procs and self.procs is not None:
            parts.append(f"ulimit -u {self.procs}")
        return "; ".join(f"{{ {part}; }} 2>/dev/null" for part in parts)

    def explain(
        self, exit_code: int | None, output: str, *, procs_hit: bool = False, oom_kills: int = 0
    ) -> str | None:
        """The limit that most likely stopped a command, as a line for the model, or None.

        `procs_hit`: the command's pids cgroup refused a fork; `oom_kills`: how many of its
        processes its memory cgroup ended."""
        tail = output[-4000:]
        if oom_kills and self.mem is not None:
            ended = "one of its processes" if oom_kills == 1 else f"{oom_kills} of its processes"
            return self._line("mem", f"memory limit of the whole command, which ended {ended}")
        if exit_code == 128 + _SIGXCPU and self.cpu is not None:
            return self._line("cpu", "CPU-time limit")
        too_large = ("File too large", "File size limit exceeded")
        if self.fsize is not None and (
            exit_code == 128 + _SIGXFSZ or any(m in tail for m in too_large)
        ):
            return self._line("fsize", "file-size limit")
        if self.procs is not None and (
            procs_hit or "fork: retry" in tail or "fork: Resource temporarily" in tail
        ):
            return self._line("procs", "process limit")
        memory = ("MemoryError", "Cannot allocate memory", "bad_alloc", "out of memory")
        if self.mem is not None and exit_code not in (0, None) and any(m in tail for m in memory):
            return self._line("mem", "memory limit (address space)")
        return None

    def _line(self, key: str, name: str) -> str:
        return (
            f"[stopped by the {name}: {self.shown(key)}; use less of it, or ask for a "
            f"higher `limits` in the stage table or --limits]"
        )


def _size(value: int) -> str:
    for unit in ("T", "G", "M", "K"):
        if value % _UNITS[unit] == 0:
            return f"{value // _UNITS[unit]}{unit}"
    return str(value)


def parse_value(key: str, raw: Any) -> int | None:
    """One limit's value from text or a number; raises ValueError saying what is wrong."""
    if key not in LIMIT_KEYS:
        raise ValueError(f"unknown limit '{key}'; expected {', '.join(LIMIT_KEYS)}")
    if isinstance(raw, bool):
        raise ValueError(f"{key} must be a number, not a boolean")
    if isinstance(raw, str) and raw.strip().lower() in ("none", "unlimited"):
        return None
    if isinstance(raw, int):
        value = raw
    else:
        match = _SIZE.match(str(raw))
        if not match or (key in ("cpu", "procs") and match.group(2)):
            kind = "a whole number" if key in ("cpu", "procs") else "a size such as 2G or 512M"
            raise ValueError(f"{key}={raw!r} must be {kind} (or none)")
        value = int(float(match.group(1)) * _UNITS[match.group(2).upper()])
    if value < 1:
        raise ValueError(f"{key} must be at least 1")
    return value


def parse_table(raw: Mapping[str, Any]) -> dict[str, int | None]:
    """A `limits = {...}` table's values; raises ValueError naming the first bad key."""
    return {key: parse_value(key, value) for key, value in raw.items()}


def parse_spec(spec: str) -> dict[str, int | None]:
    """`mem=2G,cpu=600` → values; raises BadInput naming what to fix."""
    out: dict[str, int | None] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        key, sep, value = item.partition("=")
        try:
            if not sep:
                raise ValueError(f"'{item}' must be KEY=VALUE")
            out[key.strip()] = parse_value(key.strip(), value.strip())
        except ValueError as exc:
            example = "--limits mem=2G,cpu=600,procs=256"
            raise BadInput(f"--limits: {exc} (example: {example})") from None
    return out
