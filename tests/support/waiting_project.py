"""Server-test fixture: a project waiting at `idea.gate`, made in a blink through layer 1.

`make_waiting_project` drives the controller through its Python API (it writes each stage's
required outputs and calls `finish_stage`), so the server tests get a realistic workspace
without running any worker. The browser tests run the real `lightscientist research --wait`.
"""

from __future__ import annotations

from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.lock import WorkspaceLock
from lightscientist_jupyter.events import EventBus, JsonlWriter
from lightscientist_jupyter.workspace import Workspace

POLL_S = 0.2


def advance_to_gate(controller: ResearchController) -> None:
    """Finish stages (writing their outputs) until the project stops running."""
    while controller.status == "running":
        stage = controller.table[controller.stage]
        for rel in stage.outputs:
            path = controller.workspace.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                f"# {stage.id}\n\nOutput of {stage.id} for the test.\n", encoding="utf-8"
            )
        outcome = controller.finish_stage(f"{stage.id} done by the test helper.")
        if not outcome.accepted:
            raise SystemExit(f"finish of {stage.id} refused: {outcome.message}")


def make_waiting_project(root: str, goal: str = "Does warmup help a small MLP?") -> Workspace:
    """Create a project in `root` waiting at its first gate (no lock kept)."""
    ws = Workspace.at(root)
    writer = JsonlWriter(ws.events_file)
    try:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        with WorkspaceLock(ws):
            advance_to_gate(ResearchController.create(ws, goal, mode="manual", bus=bus))
    finally:
        writer.close()
    return ws
