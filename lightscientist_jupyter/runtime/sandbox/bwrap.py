"""The bubblewrap sandbox of a worker's shell command.

Each command runs in a new `bwrap` sandbox: the system (`/usr`, `/etc` without its secrets,
TeX's generated files in `/var/lib/texmf`, the Python environment) read-only; the workspace
read-write, but of `.lightscientist/` only the worker's own home folder and the project's tool
cache (the checkpoints, the other workers' homes, the recordings, the usage, the state and the
command logs are not there); a private `/tmp`; new user, PID, IPC and network namespaces, no
capabilities, `--die-with-parent` (a kernel that dies takes the sandbox with it) and
`--new-session`. A command that may use the network gets a network of its own (`netstack`), or
the host's where that cannot be had and `auto` allows it. `resolve` picks the mode a run uses:
`auto` takes bubblewrap when it works here, else none (and says why).
"""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from lightscientist_jupyter._fs import NO_LINKS, mkdirs
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.sandbox import netstack
from lightscientist_jupyter.vocab import EventType

SANDBOX_MODES = ("auto", "bwrap", "none")
_MASKED_ETC = ("shadow", "shadow-", "gshadow", "gshadow-", "sudoers", "security/opasswd")
_MASKED_ETC_DIRS = ("ssh", "sudoers.d", "ssl/private")
_SYSTEM_DATA = ("/var/lib/texmf",)
"""System folders outside `/usr` that programs of the system read, bound read-only where they
exist: Debian's TeX Live keeps its generated formats (`pdflatex.fmt`) and font maps there, and
`pdflatex` cannot start without them."""
Network = Literal["none", "own", "host"]
"""A command's network: none, one of its own (`netstack`), or the host's (`auto`'s fallback
where no network of its own can be made)."""


class SandboxUnavailable(LightScientistError):
    """`--sandbox bwrap` asked for a sandbox this machine cannot make."""


@dataclasses.dataclass(frozen=True)
class SandboxChoice:
    """What a run uses: `mode` as asked, `active` ('bwrap' or 'none'), and why not bwrap."""

    mode: str
    active: str
    reason: str = ""
    net: Network = "own"
    """The network a command allowed one gets."""
    net_reason: str = ""
    """Why that is the host's."""

    @property
    def warning(self) -> str | None:
        """The line `status` and the dashboard show when `auto` fell back to less."""
        if self.mode == "auto" and self.active == "none":
            return f"worker commands run unsandboxed: {self.reason}"
        if self.active == "bwrap" and self.net == "host":
            return (
                "worker commands with network share the host's network (its loopback "
                f"services and link-local addresses): {self.net_reason}"
            )
        return None

    def to_dict(self) -> dict[str, str | None]:
        return {**dataclasses.asdict(self), "warning": self.warning}


def _bwrap_path() -> str | None:
    return shutil.which("bwrap", path=os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=8)
def _probe(path: str) -> str | None:
    try:
        proc = subprocess.run(
            [path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-all", "--unshare-user"]
            + ["--die-with-parent", "--", "/bin/true"],
            capture_output=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{path} cannot run ({exc})"
    if proc.returncode != 0:
        err = proc.stderr.decode(errors="replace").strip().splitlines()
        return f"{path} cannot make a sandbox here ({err[-1] if err else proc.returncode})"
    return None


def problem() -> str | None:
    """Why bubblewrap cannot sandbox a command on this machine, or None when it can."""
    path = _bwrap_path()
    if path is None:
        return "bubblewrap (bwrap) is not on PATH; install the 'bubblewrap' package"
    return _probe(path)


def resolve(mode: str | None, *, network: bool = False) -> SandboxChoice:
    """The sandbox a run uses (`network`: whether any of its commands may use the network);
    raises SandboxUnavailable for 'bwrap' without bubblewrap, or without the network
    stack when `network`."""
    mode = mode or "auto"
    if mode not in SANDBOX_MODES:
        raise SandboxUnavailable(f"--sandbox {mode}: expected one of {', '.join(SANDBOX_MODES)}")
    if mode == "none":
        return SandboxChoice("none", "none", "--sandbox none", net="host")
    why = problem()
    if why is not None:
        if mode == "bwrap":
            raise SandboxUnavailable(f"--sandbox bwrap: {why} (or use --sandbox auto or none)")
        return SandboxChoice(mode, "none", why, net="host")
    why = netstack.problem(_bwrap_path() or "bwrap") if network else None
    if why is None:
        return SandboxChoice(mode, "bwrap")
    if mode == "bwrap":
        raise SandboxUnavailable(
            f"--sandbox bwrap: a command with network needs a network of its own, and {why} "
            "(or use --sandbox auto, which then shares the host's network)"
        )
    return SandboxChoice(mode, "bwrap", net="host", net_reason=why)


def announce(bus: EventBus, choice: SandboxChoice) -> None:
    """Emit `sandbox.unavailable` when `auto` fell back to running commands unsandboxed, or
    to giving commands with network the host's."""
    if choice.warning:
        bus.emit(
            EventType.SANDBOX_UNAVAILABLE,
            choice.warning,
            data={"mode": choice.mode, "reason": choice.reason or choice.net_reason},
        )


def _python_roots() -> list[Path]:
    """The Python environment the experiments use, outside the system folders."""
    roots = []
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix}:
        path = Path(prefix).resolve()
        if not any(path == p or p in path.parents for p in (Path("/usr"), Path("/etc"))):
            roots.append(path)
    return sorted(roots)


def argv(root: Path, home: Path, *, network: Network) -> list[str]:
    """The `bwrap` arguments (up to the command) for a command of the worker owning `home`;
    with `network="own"`, `netstack.Handshake.bwrap_options` go before the final `--`."""
    args = [_bwrap_path() or "bwrap", "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        top = Path("/", name)
        if top.is_symlink():
            args += ["--symlink", os.readlink(top), str(top)]
        elif top.is_dir():
            args += ["--ro-bind", str(top), str(top)]
    args += ["--ro-bind", "/etc", "/etc"]
    for name in _MASKED_ETC:
        if Path("/etc", name).is_file():
            args += ["--ro-bind", "/dev/null", f"/etc/{name}"]
    for name in _MASKED_ETC_DIRS:
        if Path("/etc", name).is_dir():
            args += ["--tmpfs", f"/etc/{name}"]
    for folder in _SYSTEM_DATA:
        if Path(folder).is_dir():
            args += ["--ro-bind", folder, folder]
    # the private /tmp and /run first: a Python environment or a workspace under one of them
    # (a virtual environment made in /tmp) is then mounted on top, not hidden
    args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"]
    for path in _python_roots():
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(root), str(root)]
    state = root / ".lightscientist"
    if NO_LINKS.is_dir(state):
        # an empty folder over the state folder, with the two folders a command uses bound
        # into it, then made read-only (not recursively: the two stay writable). bwrap
        # follows a link it is asked to bind, so both are checked to be folders reached
        # through no link (a command run with `--sandbox none` could have left one):
        # PathRefused, and the command does not start
        cache = state / "cache"  # the project's tool cache (`command_env.tool_cache`)
        mkdirs(cache)
        mkdirs(home)
        args += ["--tmpfs", str(state), "--bind", str(cache), str(cache)]
        args += ["--bind", str(home), str(home), "--remount-ro", str(state)]
    else:
        args += ["--bind", str(home), str(home)]
    args += ["--chdir", str(root)]
    args += ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if network != "host":
        args.append("--unshare-net")
    args += ["--cap-drop", "ALL", "--die-with-parent", "--new-session", "--"]
    return args


def program_binds(paths: Sequence[str], root: Path) -> list[str]:
    """`--ro-bind` options for the files a program's command line names (its program, a
    script) that `argv`'s sandbox does not already show: a coding agent installed outside
    the system folders and the Python environment runs, and nothing else of that folder is
    seen. A file inside a `node_modules` folder (an npm package, as `npm install` without
    `-g` leaves it: `node_modules/.bin/codex-acp`) brings that whole folder, read-only: its
    launcher finds the package and the package's dependencies there."""
    shown = [Path(p) for p in ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc")]
    shown += [*_python_roots(), root]
    binds: list[str] = []
    for raw in paths:
        if not os.path.isabs(raw) or not os.path.isfile(raw):
            continue
        path = Path(os.path.abspath(raw))
        if any(path == top or top in path.parents for top in shown):
            continue
        # the nearest `node_modules` above it, when it has one: the package's own folder
        path = next((p for p in path.parents if p.name == "node_modules"), path)
        if str(path) not in binds:
            binds += ["--ro-bind", str(path), str(path)]
    return binds
