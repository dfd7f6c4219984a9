"""Test helper: start a project, carry it to `idea.gate`, then apply replies as they come.

It stands in for `lightscientist research GOAL --mode manual` run in the background, which
does not exist yet: replace it with that command when it lands. Until then it drives layer 1
through its Python API — it writes each stage's required outputs and calls `finish_stage` —
and, like a real runner, holds the workspace lock and polls the inbox.

    python run_project.py WORKSPACE [--serve SECONDS] [--goal TEXT]

Prints `waiting at <stage>` once the project waits for a reply, and `moved to <stage>`
when one was applied; exits when a reply was applied or after SECONDS (default 60).
"""

from __future__ import annotations

import argparse
import sys
import time

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
            path.write_text(f"# {stage.id}\n\nOutput of {stage.id} for the test.\n",
                            encoding="utf-8")
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workspace")
    parser.add_argument("--serve", type=float, default=60.0)
    parser.add_argument("--goal", default="Does learning-rate warmup help a small MLP?")
    args = parser.parse_args(argv)
    ws = Workspace.at(args.workspace)
    writer = JsonlWriter(ws.events_file)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    lock = WorkspaceLock(ws).acquire("test runner")
    try:
        controller = ResearchController.create(ws, args.goal, mode="manual", bus=bus)
        advance_to_gate(controller)
        print(f"waiting at {controller.stage}", flush=True)
        deadline = time.monotonic() + args.serve
        while time.monotonic() < deadline:
            if any(o.applied for o in controller.poll_inbox()):
                print(f"moved to {controller.stage}", flush=True)
                return 0
            time.sleep(POLL_S)
        return 1
    finally:
        lock.release()
        writer.close()


if __name__ == "__main__":
    sys.exit(main())
