"""`memory.recall` events as layer 1 emits them for a stage's task header (`"for": "task"`)
and a worker's `recall` tool (`"for": "tool"`), with the data the design gives them: for the
tests of what the dashboard and the side panel show of them."""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.events import EventBus, JsonlWriter
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace

HITS: list[dict[str, Any]] = [
    {
        "id": 7,
        "kind": "lesson",
        "project": "/home/me/studies/warmup-study",
        "stage": "experiment.loop",
        "visit": 2,
        "text": "Warmup over 500 steps kept lr 0.1 from diverging.",
    },
    {
        "id": 3,
        "kind": "paper",
        "project": "",
        "stage": "",
        "visit": 0,
        "text": "Goyal et al. 2017: linear warmup for large minibatches.",
    },
]
"""Two entries recalled: a lesson of another project, a paper the researcher filed."""
SHOWN = [
    {
        "id": 7,
        "kind": "lesson",
        "project": "warmup-study",
        "text": "Warmup over 500 steps kept lr 0.1 from diverging.",
    },
    {
        "id": 3,
        "kind": "paper",
        "project": "-",
        "text": "Goyal et al. 2017: linear warmup for large minibatches.",
    },
]
"""`HITS` as the gate card and the panel list them: kind, the project's name, the text."""


def emit_recall(
    bus: EventBus, task_id: str, hits: list[dict[str, Any]] = HITS, *, for_: str = "task"
) -> None:
    stage = task_id.rpartition("#")[0]
    bus.emit(
        EventType.MEMORY_RECALL,
        f"{len(hits)} entries recalled for {task_id}",
        task_id=task_id,
        stage=stage,
        data={"for": for_, "stage": stage, "task_id": task_id, "query": "warmup", "hits": hits},
    )


def log_recall(
    ws: Workspace, task_id: str, hits: list[dict[str, Any]] = HITS, *, for_: str = "task"
) -> None:
    """`emit_recall` into the project's log, for a project no bus of the test is open on."""
    with JsonlWriter(ws.events_file) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        emit_recall(bus, task_id, hits, for_=for_)
