"""The project's exceptions: one root, one subclass per layer.

Every message is written for the person who has to fix the problem: it names the file, the
stage, the key or the worker involved. Shells (the command line, the magic) catch
`LightScientistError` and show its message without a traceback.
"""

from __future__ import annotations

NO_PROJECT_REMEDY = (
    'start one there with `research "<goal>"`, or name a project\'s folder with --workspace'
)
"""What a folder without a project needs, after "no LightScientist project in DIR; ": the words
of every shell (the command line's `lightscientist research`, the magic's `%lightscientist
research`, both with `--workspace`)."""


class LightScientistError(Exception):
    """Root of every error this package raises on purpose."""


class StageTableError(LightScientistError):
    """A stage table file is invalid; `problems` lists every problem found, not just the first."""

    def __init__(self, path: str, problems: list[str]):
        self.path = path
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"invalid stage table {path} ({len(self.problems)} problem(s)):\n{lines}")


class ControllerError(LightScientistError):
    """Layer 1 refused an operation (no project, nothing pending, a bad target stage…)."""


class WorkspaceLocked(ControllerError):
    """Another live process is running this workspace."""


class EventLogError(LightScientistError):
    """The event log cannot be read or written."""


class SupervisorError(LightScientistError):
    """Layer 2 refused an operation (unknown worker, bad scheduling request…)."""


class RuntimeLayerError(LightScientistError):
    """Layer 3 refused an operation (unknown worker, resuming a finished session…)."""


class AgentFailed(RuntimeLayerError):
    """A coding agent (a stage table's `[agents.NAME]`) could not be started, or stopped
    speaking the Agent Client Protocol: its command is missing, it exited, it wrote something
    else than JSON-RPC, or it did not answer in time. The message names the agent and what
    happened, in one line."""


class ModelConfigError(RuntimeLayerError):
    """A model specification cannot be used (unknown provider, missing key…)."""


class StorageFault(LightScientistError):
    """The storage of a project went away: a full or read-only disk, a checkpoint database
    unreachable, damaged or unwritable (`fault`, see `_faults`). A run that meets it stops
    (`stopped`), and `lightscientist resume` goes on once the storage is back; opening a
    project on it raises it too. The shells exit 1."""

    def __init__(self, fault: object, line: str | None = None):
        self.fault = fault
        super().__init__(line or str(fault))


class BadInput(LightScientistError):
    """A request that cannot be used as given (what to change is in the message)."""


class Conflict(BadInput):
    """A request the project's current state does not allow (nothing is pending, the project
    has ended); the server answers it with 409."""


class LiteratureError(LightScientistError):
    """A literature file, library or source that cannot be used; the message names it."""


class MemoryUnavailable(LightScientistError):
    """The user's memory store (`$LIGHTSCIENTIST_MEMORY`) cannot be opened, read or written;
    the message names where it is. A run goes on without memory; a memory command exits 1."""
