"""The tools a coding agent is offered over MCP, from the deepagents workers' declarations.

Each tool is declared once. The ones that do the same thing for either kind of worker are
the very tools a deepagents worker gets, bound to this worker: the literature tools
(`literature_tools`), the job tools (`jobs.tools`; the job runs in the stage's sandbox and its
id goes to the worker's record) and `recall` (`memory_tools`); the MCP server lists their
schemas and descriptions and calls them.

The two lifecycle tools keep their declarations (`session.lifecycle`: name, description,
arguments) but not their effect, which is the session's: a deepagents session reads a
`complete_stage` back from its checkpoint and pauses a `request_input` with LangGraph's
`interrupt()`, neither of which exists outside a graph. Here:

- `complete_stage(summary, outputs, next_stage)` is the worker's delivery
  (`ToolWorker.deliver`): a next stage the task does not allow is refused at once, in layer
  1's words (`values.task.next_stage_refusal`), so the agent can call it again in the same
  turn; an accepted one is the worker's result when its turn ends (layer 1 still checks it
  and the outputs when the supervisor finishes the stage, as for any worker);
- `request_input(question)` makes the worker `waiting` with the question (`ToolWorker.ask`)
  and answers the agent with the reply, in the words a deepagents worker reads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from lightscientist_jupyter.literature.service import Literature
from lightscientist_jupyter.runtime.acp.tool_server import McpTool, ToolAnswer
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.jobs.tools import for_worker, job_tools
from lightscientist_jupyter.runtime.literature_tools import bound_literature_tools, worker_hub
from lightscientist_jupyter.runtime.memory_tools import RecallScope, memory_tools
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.lifecycle import answered, lifecycle_tools
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.workspace import Workspace

AGENT_LIFECYCLE = ("complete_stage", "request_input")
"""The lifecycle tools an agent gets (it has no `suspend`; its cancel is `session/cancel`)."""
OVER = " Your work on this stage is over: end your turn now."


class ToolWorker(Protocol):
    """What the tools take of their worker (`acp.worker.AgentWorkerSession`)."""

    record: WorkerRecord

    def deliver(self, summary: str, outputs: list[str], next_stage: str) -> str | None:
        """Take the delivery; the reason it is refused, or None."""
        ...

    def ask(self, question: str) -> str | None:
        """Wait for the answer to `question`; None when the worker is cancelled first."""
        ...

    def job_submitted(self, job_id: str) -> None: ...


@dataclasses.dataclass(frozen=True)
class ToolContext:
    """What the shared tools need of the run: whose jobs, which literature, which memory."""

    workspace: Workspace
    jobs: JobManager
    policy: ShellPolicy
    """The stage's sandbox and limits (its jobs run under them)."""
    literature: tuple[Literature, str]
    """The literature hub and the stage task (`literature_tools.worker_hub`)."""
    recall: RecallScope

    @classmethod
    def of(
        cls,
        workspace: Workspace,
        jobs: JobManager,
        policy: ShellPolicy,
        record: WorkerRecord,
        model: Any,
    ) -> ToolContext:
        """The context of the worker `record`: its stage's sandbox and limits (`policy`, for its
        jobs, as for a deepagents worker's), its stage's literature and its memory."""
        root = workspace.root
        return cls(
            workspace,
            jobs,
            policy.for_stage(record.network, record.limits),
            worker_hub(root, record, model),
            RecallScope(root, record.memory),
        )


def agent_tools(worker: ToolWorker, context: ToolContext) -> list[McpTool]:
    """The tools one agent worker is offered, in the order it sees them."""
    declared = {tool.name: tool for tool in lifecycle_tools() if tool.name in AGENT_LIFECYCLE}
    jobs = for_worker(context.workspace, context.policy, worker.record, worker.job_submitted)
    shared = [
        *job_tools(context.jobs, lambda: jobs),
        *bound_literature_tools(lambda: context.literature),
        *memory_tools(lambda: context.recall),
    ]
    return [
        _declared(declared["complete_stage"], lambda args: _complete(worker, declared, args)),
        _declared(declared["request_input"], lambda args: _request(worker, args)),
        *(_declared(tool, _invoker(tool)) for tool in shared),
    ]


def _declared(tool: BaseTool, call: Callable[[dict[str, Any]], ToolAnswer]) -> McpTool:
    """`tool` as MCP lists it (its name, description and arguments, as a model sees them),
    doing `call`."""
    function = convert_to_openai_tool(tool)["function"]
    schema = function.get("parameters") or {"type": "object", "properties": {}}
    return McpTool(function["name"], function.get("description", ""), schema, call)


def _invoker(tool: BaseTool) -> Callable[[dict[str, Any]], ToolAnswer]:
    def call(args: dict[str, Any]) -> ToolAnswer:
        return ToolAnswer(str(tool.invoke(args)))

    return call


def _complete(
    worker: ToolWorker, declared: dict[str, BaseTool], args: dict[str, Any]
) -> ToolAnswer:
    said = str(declared["complete_stage"].invoke(args))  # its arguments checked, its answer
    refused = worker.deliver(
        str(args.get("summary") or ""),
        [str(o) for o in args.get("outputs") or []],
        str(args.get("next_stage") or ""),
    )
    if refused is not None:
        return ToolAnswer(f"Not delivered: {refused}. Call complete_stage again.", error=True)
    return ToolAnswer(said + OVER)


def _request(worker: ToolWorker, args: dict[str, Any]) -> ToolAnswer:
    question = str(args.get("question") or "").strip()
    if not question:
        return ToolAnswer("request_input needs a question.", error=True)
    answer = worker.ask(question)
    if answer is None:
        return ToolAnswer("No answer: this worker is being stopped. End your turn.", error=True)
    return ToolAnswer(answered(answer))
