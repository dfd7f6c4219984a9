"""The supervisor agent: a persistent layer-3 session, run one turn per scheduling event.

It is a worker of the runtime like any other, with the id `supervisor`, the supervisor prompt,
the scheduling tools instead of the file tools, and only the current turn in its input. Its
session carries over from stage to stage; each turn is pointed at the current stage.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor import prompts
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.tools import supervisor_tools
from lightscientist_jupyter.vocab import Role, WorkerStatus

SUPERVISOR_ID = "supervisor"
"""The supervisor agent's worker id (its updates are not a worker's: the loop skips them)."""


def agent_spec(control: WorkerControl, message: str = "") -> WorkerSpec:
    """The supervisor agent's session on the current stage, with `message` as its input."""
    task = control.task
    return WorkerSpec(
        message=message,
        role=Role.SUPERVISOR,
        worker_id=SUPERVISOR_ID,
        system_prompt=prompts.SUPERVISOR_PROMPT,
        extra_tools=_tools_of(control),
        file_tools=False,
        max_input_messages=True,
        stage=task.stage,
        task_id=task.task_id,
    )


def _tools_of(control: WorkerControl) -> list[Any]:
    """The agent's tools (they read the current stage through `control`), built once per
    control: nine tools' schemas took ~25 ms at every decision."""
    if control.agent_tools is None:
        control.agent_tools = supervisor_tools(control)
    return control.agent_tools


def run_turn(runtime: ExecutionRuntime, spec: WorkerSpec) -> None:
    """Run one turn of the agent on `spec.message` and wait for it to end."""
    record = runtime.find(SUPERVISOR_ID)
    stale = (
        record is not None
        and record.status == WorkerStatus.RUNNING
        and not runtime.is_active(SUPERVISOR_ID)
    )
    if record is None or (stale and runtime.has_unfinished_turn(SUPERVISOR_ID, spec)):
        # first decision, or a turn a crash cut short half-way in another stage: a new
        # thread, so no half-done tool call of that stage is replayed into this one. A cut
        # turn that left nothing in the thread (it is written at the turn's end) goes on in
        # the same thread: a start_worker decided again there sits at the place the cut one
        # did and gets its worker (`tools.call_position`)
        runtime.start(spec)
    else:
        session = runtime.attach(SUPERVISOR_ID, spec)
        changes: dict[str, Any] = {"stage": spec.stage, "task_id": spec.task_id}
        if session.status == WorkerStatus.FAILED:
            changes["status"] = WorkerStatus.BACKGROUND  # a new decision, a new chance
        session.amend(**changes)
        runtime.resume(SUPERVISOR_ID, message=spec.message, spec=spec)
    runtime.wait(SUPERVISOR_ID)


def finish_cut_turn(runtime: ExecutionRuntime, spec: WorkerSpec) -> bool:
    """After a restart: let the agent finish, from its checkpoint, a turn a crash cut short.
    Returns False when there is no such turn (the decision must be taken again)."""
    record = runtime.find(SUPERVISOR_ID)
    if not (
        record
        and record.status == WorkerStatus.RUNNING
        and runtime.has_unfinished_turn(SUPERVISOR_ID, spec)
    ):
        return False
    runtime.resume(SUPERVISOR_ID, spec=spec)
    runtime.wait(SUPERVISOR_ID)
    return True
