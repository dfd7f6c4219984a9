"""The agent graphs of a runtime's sessions, and what a turn binds them to.

Every worker of a runtime runs one deepagents graph, built once: its tools' schemas, its
middleware and the general-purpose subagent took about 40 ms to build for each worker, on
the supervisor's path. What differs from one worker to the next — its stop flags, its shell
(id, cancel flag, `$HOME`, sandbox), its stage's literature hub, whose jobs it submits — is
its `Binding` (`binding`), which the session's turn sets in `BOUND` before it runs the graph;
LangGraph carries the context into the threads that run the tools. The supervisor agent's
graph (its own tools, no files) is built for its session, as is a worker's with tools of its
own.

The runtime hands itself in as a `GraphHost` and each session as a `BoundSession`: what the
graphs need of them, so that neither module is imported here.
"""

from __future__ import annotations

import builtins
import threading
from typing import Any, Protocol

from langchain_core.language_models import BaseChatModel
from langgraph.checkpoint.base import BaseCheckpointSaver

from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.checkpoints.redacting import RedactionMiddleware
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.jobs.tools import for_worker as job_context
from lightscientist_jupyter.runtime.jobs.tools import job_tools
from lightscientist_jupyter.runtime.latex_tools import latex_tools
from lightscientist_jupyter.runtime.literature_tools import bound_literature_tools, worker_hub
from lightscientist_jupyter.runtime.memory_tools import RecallScope, memory_tools
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.metering.usage_callback import BudgetMiddleware
from lightscientist_jupyter.runtime.models.resolver import retry_middleware
from lightscientist_jupyter.runtime.notebook_tools import notebook_tools
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell, WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.binding import Binding, bound
from lightscientist_jupyter.runtime.session.lifecycle import (
    LifecycleMiddleware,
    TurnFlags,
    lifecycle_tools,
)
from lightscientist_jupyter.runtime.session.worker_prompt import WORKER_SYSTEM_PROMPT
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.workspace import Workspace


class GraphHost(Protocol):
    """What the graphs take of their runtime (`runtime.ExecutionRuntime`)."""

    workspace: Workspace
    model: BaseChatModel
    saver: BaseCheckpointSaver[Any]
    shell_policy: ShellPolicy
    groups: ProcessGroups
    jobs: JobManager
    meter: UsageMeter
    command_timeout: float
    retries: int
    retry_initial_delay: float
    bus: EventBus


class BoundSession(Protocol):
    """What the graphs take of a worker's session (`session.WorkerSession`)."""

    record: WorkerRecord
    cancel: threading.Event
    hard_stop: threading.Event
    binding: Binding | None

    def amend(self, **changes: Any) -> None: ...


def bind(runtime: GraphHost, record: WorkerRecord, session: BoundSession) -> Binding:
    """The binding of a worker's session (its stage's sandbox and limits)."""
    root = runtime.workspace.root
    policy = runtime.shell_policy.for_stage(record.network, record.limits)

    def remember(job_id: str) -> None:  # into its record, saved with its next change
        session.amend(jobs=(*session.record.jobs, job_id))

    return Binding(
        flags=TurnFlags(session.cancel, session.hard_stop),
        shell=WorkerShell.of(root, record.id, session.cancel, policy),
        literature=worker_hub(root, record, runtime.model),
        jobs=job_context(runtime.workspace, policy, record, remember),
        recall=RecallScope(root, record.memory),
    )


def session_graph(
    runtime: GraphHost,
    record: WorkerRecord,
    session: BoundSession,
    extra: builtins.list[Any],
    cache: dict[str, Any],
) -> Any:
    """The graph `session` runs: for a worker with file tools and no tools of its own, the
    runtime's shared one (in `cache`, by system prompt), with the session bound to it."""
    if not record.file_tools:
        flags = TurnFlags(session.cancel, session.hard_stop)
        return _agent(runtime, record, extra, lambda: flags)
    session.binding = bind(runtime, record, session)
    prompt = record.system_prompt or WORKER_SYSTEM_PROMPT
    if extra:
        return _worker_agent(runtime, prompt, extra)
    if prompt not in cache:
        cache[prompt] = _worker_agent(runtime, prompt, [])
    return cache[prompt]


def _middleware(runtime: GraphHost, flags: Any, current_turn_only: bool) -> list[Any]:
    """A session's own middleware, outermost first: redaction (outside the retries, which
    must see a failure's own kind), the lifecycle, the retries, and the budget innermost, so
    that every attempt is asked for."""
    middleware: list[Any] = [
        RedactionMiddleware(),
        LifecycleMiddleware(flags=flags, current_turn_only=current_turn_only),
    ]
    if runtime.retries:
        middleware.append(retry_middleware(runtime.retries, runtime.retry_initial_delay))
    middleware.append(BudgetMiddleware(runtime.meter))
    return middleware


def _worker_agent(runtime: GraphHost, prompt: str, extra: builtins.list[Any]) -> Any:
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    backend = WorkspaceBackend(
        runtime.workspace.root,
        groups=runtime.groups,
        timeout=runtime.command_timeout,
        shell_of=lambda: bound().shell,
    )
    return create_deep_agent(
        runtime.model,
        [
            *lifecycle_tools(),
            *bound_literature_tools(lambda: bound().literature),
            *job_tools(runtime.jobs, lambda: bound().jobs),
            *latex_tools(runtime.workspace.root, runtime.groups, lambda: bound().shell),
            *notebook_tools(runtime.workspace.root, runtime.groups, lambda: bound().shell),
            *memory_tools(lambda: bound().recall),
            *extra,
        ],
        system_prompt=prompt,
        middleware=[TodoListMiddleware(), *_middleware(runtime, lambda: bound().flags, False)],
        subagents=[_general_purpose(runtime.meter)],
        backend=backend,
        checkpointer=runtime.saver,
        name="worker",
    )


def _general_purpose(meter: UsageMeter) -> Any:
    """deepagents' general-purpose subagent (the `task` tool's), as it would add it, with
    redaction (its steps are checkpointed too, in the worker's thread) and the budget."""
    from deepagents.middleware.subagents import GENERAL_PURPOSE_SUBAGENT

    return {
        **GENERAL_PURPOSE_SUBAGENT,
        "middleware": [RedactionMiddleware(), BudgetMiddleware(meter)],
    }


def _agent(runtime: GraphHost, record: WorkerRecord, extra: builtins.list[Any], flags: Any) -> Any:
    from langchain.agents import create_agent

    return create_agent(
        runtime.model,
        extra,
        system_prompt=record.system_prompt,
        middleware=_middleware(runtime, flags, record.current_turn_only),
        checkpointer=runtime.saver,
        name=record.id,
    )
