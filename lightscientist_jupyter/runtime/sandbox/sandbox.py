"""The worker's view of the world: the project workspace and nothing else.

`WorkspaceBackend` gives a worker deepagents' file tools on the workspace (`workspace_files`:
every path opened beneath the root through no link, a link of any kind being a tool error that
names it) and a shell. `/` means the workspace root, as deepagents' prompts expect. Writes
into `.lightscientist/` (the controller's state) are refused. `execute` runs through
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
from pathlib import Path

from deepagents.backends.protocol import (
    DeleteResult,
    EditResult,
    ExecuteResponse,
    FileUploadResponse,
    SandboxBackendProtocol,
    WriteResult,
)

from lightscientist_jupyter._fs import mkdirs
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.runtime.sandbox import command_env, shell, spawn
from lightscientist_jupyter.runtime.session.workspace_files import WorkspaceFiles, confine
from lightscientist_jupyter.workspace import STATE_DIR

__all__ = ["PathRefused", "WorkerShell", "WorkspaceBackend", "confine"]


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
        mkdirs(home)
        confinement = (policy or spawn.ShellPolicy()).confinement(Path(root).resolve(), home)
        return cls(worker_id, cancel, home, folder / "commands", confinement)


class WorkspaceBackend(WorkspaceFiles, SandboxBackendProtocol):
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
        super().__init__(root)
        self.groups = groups
        self.timeout = timeout
        if shell_of is None:
            own = WorkerShell.of(root, worker_id, cancel or threading.Event(), policy)
            shell_of = lambda: own  # noqa: E731
        self.shell_of: Callable[[], WorkerShell] = shell_of
        self._id = f"ls-{uuid.uuid4().hex[:8]}"

    def _writable(self, key: str) -> str | None:
        try:
            rel = confine(self.root, key)
        except PathRefused as exc:
            return str(exc)
        if rel.parts[:1] == (STATE_DIR,):
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

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        allowed = [(path, data) for path, data in files if not self._writable(path)]
        done = {r.path: r for r in super().upload_files(allowed)}
        return [
            done.get(path) or FileUploadResponse(path, "permission_denied") for path, _ in files
        ]

    @property
    def id(self) -> str:
        return self._id

    def execute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        own = self.shell_of()
        log = own.log_dir / f"{next(own.counter):04d}.log"
        try:
            mkdirs(own.home)
            result = shell.run_command(
                command,
                cwd=self.root,
                env=command_env.worker_env(self.root, own.home),
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
