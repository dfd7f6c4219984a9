"""Crash recovery: how the supervisor loop picks a stage up after a restart.

The loop state in `supervisor.json` says what layer 2 knew; each worker's own `worker.json`
says where it really stands. Recovery finishes the decision a crash interrupted (from the
agent's checkpoint when its turn was cut short, else by deciding on that event again),
continues the workers' cut-short turns, and turns what happened unseen into scheduling
events (`decisions.reconcile`).
"""

from __future__ import annotations

import time

from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.supervisor import agent
from lightscientist_jupyter.supervisor.backends import WorkerControl
from lightscientist_jupyter.supervisor.decisions import reconcile
from lightscientist_jupyter.supervisor.loop_state import SupervisedStage


def recover(stage: SupervisedStage, runtime: ExecutionRuntime, control: WorkerControl) -> None:
    """Reconcile the saved stage with the workers' own records and continue what a crash cut
    short; the loop then goes on with the events this leaves queued."""
    state = stage.state
    if state.in_progress is not None:
        if not agent.finish_cut_turn(runtime, agent.agent_spec(control)):
            state.queue.insert(0, state.in_progress)
        state.in_progress = None
    for wid, before in list(state.records.items()):
        disk = runtime.find(wid)
        now = time.time()
        outcome = reconcile(before, disk, state.schedules, now)
        state.records[wid] = outcome.record
        if outcome.revive:
            # a turn the crash cut short: continue it from its last checkpoint
            state.schedules = [s for s in state.schedules if s["worker_id"] != wid]
            control.revive(wid)
            continue
        state.stalled.discard(wid)
        if outcome.event is not None:
            state.queue.append(outcome.event)
        if outcome.schedule is not None:
            state.schedules.append(outcome.schedule)
    stage.save()
