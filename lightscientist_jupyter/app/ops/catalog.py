"""Every operation of LightScientist, declared once: its name, what it does, its arguments.

The command line (`lightscientist NAME …`), the magic (`%lightscientist NAME …`) and the API
(`api.perform(NAME, …)`) are built from `OPERATIONS`: a shell keeps only how it shows an
operation's outcome (an exit code and a line, a DataFrame, a dashboard), and an operation it
has no renderer for is shown the plain way — its outcome's `message`, and whether it is `ok`.
Adding an operation touches its declaration here, its handler in `app/`, and the renderers
that show it better than a line.

An operation with a `request` (a frozen dataclass whose fields are the argparse destinations
of its `arguments`, and the API's keywords) and a `perform` is carried out the same way from
every door; `Door` says which door asked (for the record: "cancelled from the panel") and
with which session defaults (`%config` in a notebook; none elsewhere).

What an operation does to a project no process runs is one policy for every door. A reply or
a hand-over step is carried out in the project, under its lock — never only queued, and
nothing is left behind when the project cannot be opened — and the project then goes on
where the door runs projects: the command line in its own process, a notebook's doors (the
magic, the API, the dashboard over its comm, the cards) in a run of the kernel that takes the
session's defaults (`run_options`), the server, which runs none itself, in a background
`lightscientist resume --wait` (`app.controls.go_on`). A cancel is applied under the lock;
reading needs no run at all.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from lightscientist_jupyter.app import agents, commands, memory
from lightscientist_jupyter.app.ops import arguments as args_of
from lightscientist_jupyter.app.ops.run_options import SessionDefaults
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.vocab import CancelSource
from lightscientist_jupyter.workspace import Workspace

Arguments = Callable[[argparse.ArgumentParser], None]
"""Adds an operation's arguments to a parser (see `arguments`)."""


class Outcome(Protocol):
    """What every operation's outcome tells, whatever else it holds."""

    @property
    def ok(self) -> bool:
        """False: it did not do what was asked (a shell exits 1, a notebook says so)."""
        ...

    @property
    def message(self) -> str:
        """One line for the user."""
        ...


@dataclasses.dataclass(frozen=True)
class Door:
    """Who asks for an operation: the door (named in the record) and its session defaults."""

    source: CancelSource
    defaults: SessionDefaults = SessionDefaults()
    runs_here: Callable[[Path], commands.LocalCancel | None] = lambda root: None
    """The cancel of the run this process has of the project at `root` (a kernel's), which
    takes a cancel at once rather than through the inbox; None where it runs none."""


R = TypeVar("R")


@dataclasses.dataclass(frozen=True)
class Operation(Generic[R]):
    """One operation, as every shell offers it."""

    name: str
    help: str
    """One line: what it does (the command line's and the magic's help)."""
    arguments: Arguments
    runs: bool = False
    """It may run the project in the door's process (the command line adds `--wait`)."""
    request: type[R] | None = None
    """Its typed request; with `perform`, the shells need no handler of their own."""
    perform: Callable[[R, Door], Outcome] | None = None

    def request_from(self, parsed: argparse.Namespace | dict[str, Any]) -> R:
        """The request a parser's namespace (or the API's keywords) holds."""
        assert self.request is not None, f"{self.name} declares no request"
        given = vars(parsed) if isinstance(parsed, argparse.Namespace) else parsed
        names = [f.name for f in dataclasses.fields(self.request)]  # type: ignore[arg-type]
        unknown = sorted(set(given) - set(names)) if isinstance(parsed, dict) else []
        if unknown:
            raise BadInput(f"{self.name} takes no {', '.join(unknown)}")
        return self.request(**{n: given[n] for n in names if n in given})


# ------------------------------------------------------------------------- requests


@dataclasses.dataclass(frozen=True)
class CancelRequest:
    workspace: str | None = None
    worker_id: str | None = None
    """One worker; None: the whole run."""


def _cancel(request: CancelRequest, door: Door) -> commands.Sent:
    """Cancel one worker, or the run, wherever it runs; a project nobody runs is cancelled
    under its lock (`commands.cancel`)."""
    ws = Workspace.at(request.workspace or door.defaults.workspace)
    local = door.runs_here(ws.root)
    return commands.cancel(ws, request.worker_id, source=door.source, local=local)


@dataclasses.dataclass(frozen=True)
class CheckModelRequest:
    model: str | None = None
    base_url: str | None = None


def _check_model(request: CheckModelRequest, door: Door) -> commands.ModelCheck:
    """One short call: can the model (the session's, by default) call tools?"""
    return commands.check_model(
        request.model or door.defaults.model, request.base_url or door.defaults.base_url
    )


def _agents(request: agents.AgentsRequest, door: Door) -> agents.AgentCheck:
    """Start a coding agent of the stage table and initialize it (`app.agents`)."""
    workspace = request.workspace or door.defaults.workspace
    return agents.check(
        request.agent, stages=request.stages, workspace=workspace, sandbox=request.sandbox
    )


def _memory(request: memory.MemoryRequest, door: Door) -> memory.MemoryOutcome:
    """List, search, add to, forget from or export the user's memory (`app.memory`)."""
    return memory.perform(request, door.defaults.workspace)


def _remember(request: memory.RememberRequest, door: Door) -> memory.MemoryOutcome:
    """File a lesson (`memory add`, the magic's way of saying it)."""
    return memory.remember(request, door.defaults.workspace)


# ------------------------------------------------------------------------- the table


def _declare(*operations: Operation[Any]) -> dict[str, Operation[Any]]:
    return {op.name: op for op in operations}


OPERATIONS: dict[str, Operation[Any]] = _declare(
    Operation("research", "start a research project and run it", args_of.research, runs=True),
    Operation(
        "resume", "continue a project that stopped (crash, restart)", args_of.resume, runs=True
    ),
    Operation("reply", "approve or reject the pending gate or question", args_of.reply, runs=True),
    Operation("status", "show the project's stage, status and pending decision", args_of.status),
    Operation("events", "print the event stream", args_of.events),
    Operation("workers", "list the workers and their state", args_of.workers),
    Operation(
        "cancel",
        "cancel one worker, or the whole run",
        args_of.cancel,
        request=CancelRequest,
        perform=_cancel,
    ),
    Operation("stages", "validate and print a stage table", args_of.stages),
    Operation(
        "check-model",
        "can this model call tools?",
        args_of.check_model,
        request=CheckModelRequest,
        perform=_check_model,
    ),
    Operation(
        "agents",
        "the stage table's coding agents: check that one starts and speaks ACP",
        args_of.agents,
        request=agents.AgentsRequest,
        perform=_agents,
    ),
    Operation("history", "the workspace's snapshots, one per stage event", args_of.history),
    Operation("diff", "what changed between snapshots (or at the pending gate)", args_of.diff),
    Operation("rewind", "set files, PROCESS.md and state back to a stage", args_of.rewind),
    Operation("fork", "a new workspace at a stage visit's start", args_of.fork),
    Operation("usage", "tokens, time and cost of the model calls so far", args_of.usage),
    Operation("estimate", "what a run of the stage table may cost", args_of.estimate),
    Operation("jobs", "the jobs workers submitted, their state and logs", args_of.jobs),
    Operation(
        "tree", "a search stage's tree of experiment variants, the best marked", args_of.tree
    ),
    Operation(
        "show",
        "show the paper (--pdf: its PDF's path), its reviews, PROCESS.md, a stage's outputs "
        "or a file",
        args_of.show,
    ),
    Operation("check", "trace each citation and number of a paper", args_of.check),
    Operation("take", "do the current stage (or STAGE) yourself", args_of.take),
    Operation("deliver", "deliver the stage you took", args_of.deliver, runs=True),
    Operation(
        "give-back", "return the stage you took to the workers", args_of.give_back, runs=True
    ),
    Operation(
        "memory",
        "your memory across projects: list it, or search, add, forget, export",
        args_of.memory,
        request=memory.MemoryRequest,
        perform=_memory,
    ),
    Operation(
        "remember",
        "file a lesson in your memory (memory add)",
        args_of.remember,
        request=memory.RememberRequest,
        perform=_remember,
    ),
)
"""Every operation, in the order the shells' help lists them."""
