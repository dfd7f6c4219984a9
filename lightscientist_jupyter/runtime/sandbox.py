"""The worker's view of the world: the project workspace and nothing else.

`WorkspaceBackend` is a deepagents file backend whose paths are resolved and compared as real
paths: `..`, absolute paths outside the workspace, and symlinks that resolve outside (even
ones the worker made with the shell) are refused with a tool error that says why, while names
such as `report..final.md` work. `/` means the workspace root, as deepagents' prompts expect.
Writes into `.lightscientist/` (the controller's state) are refused. `execute` runs through
`shell.run_command`: own process group, allow-listed environment, bounded lifetime, and, with
a sandboxed `ShellPolicy`, inside bubblewrap with the policy's network and resource limits
(see `bwrap` and `spawn`; unsandboxed, a command can read what the kernel's user can read).
"""

from __future__ import annotations

import dataclasses
import errno
import itertools
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath

from deepagents.backends import FilesystemBackend
from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    ExecuteResponse,
    SandboxBackendProtocol,
    WriteResult,
)

from lightscientist_jupyter.runtime import shell, spawn
from lightscientist_jupyter.workspace import STATE_DIR


class PathRefused(PermissionError):
    """A path that would leave the workspace."""


def confine(root: Path, key: str) -> Path:
    """Resolve `key` (virtual absolute, real absolute or relative) inside `root` or refuse."""
    try:
        return _confine(root, key)
    except PathRefused:
        raise
    except (OSError, RuntimeError) as exc:
        # a name too long, a symlink loop (RuntimeError on Python 3.11): a tool error for the
        # model, never an exception that fails the worker
        reason = getattr(exc, "strerror", None) or exc
        raise PathRefused(f"'{key}' cannot be used: {reason}") from None


def _confine(root: Path, key: str) -> Path:
    raw = (key or "").strip()
    if not raw:
        raise PathRefused("empty path")
    if "\x00" in raw:
        raise PathRefused(f"{key!r} contains a NUL byte")
    if raw.startswith("~"):
        raise PathRefused(f"'{key}' points to a home folder; paths are relative to the workspace")
    pure = PurePosixPath(raw)
    if ".." in pure.parts:
        raise PathRefused(f"'{key}' uses '..'; paths must stay inside the workspace")
    root_text = str(root)
    if pure.is_absolute():
        if raw == root_text or raw.startswith(root_text + "/"):
            rel = PurePosixPath(raw[len(root_text) :].lstrip("/"))
        else:
            rel = pure.relative_to("/")
            top = rel.parts[0] if rel.parts else None
            if top and not (root / top).exists() and Path("/", top).exists():
                raise PathRefused(
                    f"'{key}' is outside the workspace; '/' is the workspace root, "
                    f"so use a path like '/{rel.parts[-1]}'"
                )
    else:
        rel = pure
    full = (root / rel).resolve()
    if full != root and root not in full.parents:
        raise PathRefused(
            f"'{key}' resolves to {full}, outside the workspace (a symbolic link pointing out?)"
        )
    return full


@dataclasses.dataclass(eq=False)
class WorkerShell:
    """One worker's side of the shell: its id (the owner of its commands), cancel flag,
    `$HOME`, command logs and sandbox."""

    worker_id: str
    cancel: threading.Event
    home: Path
    log_dir: Path
    confinement: spawn.Confinement
    counter: Iterator[int] = dataclasses.field(default_factory=lambda: itertools.count(1))

    @classmethod
    def of(
        cls,
        root: Path,
        worker_id: str,
        cancel: threading.Event,
        policy: spawn.ShellPolicy | None = None,
    ) -> WorkerShell:
        folder = Path(root).resolve() / STATE_DIR / "workers" / worker_id
        home = folder / "home"
        home.mkdir(parents=True, exist_ok=True)
        confinement = (policy or spawn.ShellPolicy()).confinement(Path(root).resolve(), home)
        return cls(worker_id, cancel, home, folder / "commands", confinement)


class WorkspaceBackend(FilesystemBackend, SandboxBackendProtocol):
    """File tools and a shell confined to one project workspace: one worker's, or (with
    `shell_of`) that of whichever worker's turn is running, for a graph every worker of a
    runtime shares."""

    def __init__(
        self,
        root: Path,
        *,
        worker_id: str = "",
        cancel: threading.Event | None = None,
        groups: shell.ProcessGroups,
        timeout: float = shell.DEFAULT_TIMEOUT_S,
        policy: spawn.ShellPolicy | None = None,
        shell_of: Callable[[], WorkerShell] | None = None,
    ):
        root = Path(root).resolve()
        super().__init__(root_dir=root, virtual_mode=True)
        self.root = root
        self.groups = groups
        self.timeout = timeout
        if shell_of is None:
            own = WorkerShell.of(root, worker_id, cancel or threading.Event(), policy)
            shell_of = lambda: own  # noqa: E731
        self.shell_of = shell_of
        self._id = f"ls-{uuid.uuid4().hex[:8]}"

    def _resolve_path(self, key: str) -> Path:
        return confine(self.root, key)

    def _writable(self, key: str) -> str | None:
        try:
            path = confine(self.root, key)
        except PathRefused as exc:
            return str(exc)
        state = self.root / STATE_DIR
        if path == state or state in path.parents:
            return (
                f"'{key}' is inside {STATE_DIR}/, which belongs to LightScientist; write elsewhere"
            )
        return None

    def write(self, file_path: str, content: str) -> WriteResult:
        problem = self._writable(file_path)
        if problem:
            return WriteResult(error=f"Error writing file '{file_path}': {problem}")
        return super().write(file_path, content)

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        problem = self._writable(file_path)
        if problem:
            return EditResult(error=f"Error editing file '{file_path}': {problem}")
        return super().edit(file_path, old_string, new_string, replace_all)

    def delete(self, file_path: str) -> DeleteResult:
        problem = self._writable(file_path)
        if problem:
            return DeleteResult(error=f"Error deleting '{file_path}': {problem}")
        return super().delete(file_path)

    @property
    def id(self) -> str:
        return self._id

    def execute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        own = self.shell_of()
        own.home.mkdir(parents=True, exist_ok=True)
        log = own.log_dir / f"{next(own.counter):04d}.log"
        try:
            result = shell.run_command(
                command,
                cwd=self.root,
                env=shell.worker_env(self.root, own.home),
                log_path=log,
                timeout=float(timeout) if timeout else self.timeout,
                cancel=own.cancel,
                groups=self.groups,
                owner=own.worker_id,
                confinement=own.confinement,
            )
        except (OSError, ValueError) as exc:  # a NUL byte, an argument list too long …
            hint = (
                " Write long content with write_file and run a short command."
                if getattr(exc, "errno", None) == errno.E2BIG
                else ""
            )
            return ExecuteResponse(
                output=f"Error: the command could not be started "
                f"({len(command)} characters): {exc}.{hint}",
                exit_code=126,
            )
        return ExecuteResponse(
            output=result.output, exit_code=result.exit_code, truncated=result.truncated
        )
