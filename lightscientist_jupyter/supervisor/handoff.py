"""Layer 2's side of a hand-over: when the researcher takes a stage, its workers stop.

Layer 1 decides (a pending decision of kind `handoff`); the supervisor's loop sees it as the
end of its run of the stage (`decisions.stage_outcome`) and, before it returns, lets this
module cancel the stage's live workers cooperatively — each is asked to finalize and keeps
its artifacts (delivery record, workspace files). The stage's layer-2 memory is reset, so
that a give-back starts the stage afresh, with a task naming what the researcher wrote.
The loop hands itself in as a `Releasing`: what this module uses of it.
"""

from __future__ import annotations

from typing import Protocol

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.supervisor import agent
from lightscientist_jupyter.values.task import StageHost
from lightscientist_jupyter.vocab import DecisionKind, EventType

CANCEL_TIMEOUT_S = 10.0
"""How long a worker has to finalize before the runtime stops it with a fallback result."""


class Releasing(Protocol):
    """The supervisor's loop (`loop.StageSupervisor`), as a hand-over releases a stage."""

    host: StageHost
    runtime: ExecutionRuntime
    bus: EventBus

    def restart_stage(self, task_id: str) -> None: ...


def release_if_taken(supervisor: Releasing, task_id: str) -> list[str]:
    """When layer 1 handed `task_id`'s stage to the researcher: cancel its live workers
    (cooperatively) and forget layer 2's record of the stage. Returns the cancelled ids."""
    host = supervisor.host
    if host.pending_kind != DecisionKind.HANDOFF or host.task_id != task_id:
        return []
    cancelled = []
    for worker_id in supervisor.runtime.live_workers():
        if worker_id == agent.SUPERVISOR_ID:
            continue
        try:
            supervisor.runtime.cancel(worker_id, timeout=CANCEL_TIMEOUT_S)
        except RuntimeLayerError:
            continue  # it finished meanwhile
        cancelled.append(worker_id)
    stage = task_id.split("#", 1)[0]
    supervisor.bus.emit(
        EventType.SUPERVISOR_EVENT,
        "the researcher took the stage"
        + (f"; cancelled {', '.join(cancelled)} (their files are kept)" if cancelled else ""),
        stage=stage,
        task_id=task_id,
        data={"handoff": True, "cancelled": cancelled},
    )
    supervisor.restart_stage(task_id)
    return cancelled
