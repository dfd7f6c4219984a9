"""Hand a stage to the researcher, end to end: real runs of the offline model, real files.

The command line in real subprocesses (research --handoff, deliver refused then accepted,
take and give-back from another terminal), and a run of this process where `take` during a
running stage cancels its workers cooperatively.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lightscientist_jupyter import api
from lightscientist_jupyter.vocab import EventType
from lightscientist_jupyter.workspace import Workspace
from tests.test_research import cli, events

pytestmark = pytest.mark.slow


def do_the_loop_by_hand(ws: Path) -> None:
    """What a researcher's cell does: run the experiment script, keep a log."""
    subprocess.run(
        [sys.executable, "experiment/run_experiment.py"], cwd=ws, check=True, capture_output=True
    )
    (ws / "experiment" / "log.md").write_text("Ran every run by hand.\n", encoding="utf-8")


def test_research_handoff_waits_then_deliver_refused_then_accepted_goes_to_done(tmp_path):
    ws = tmp_path / "p"
    first = cli(
        ws,
        "research",
        "x",
        "--mode",
        "auto",
        "--stage",
        "experiment.setup",
        "--handoff",
        "experiment.loop",
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.strip().splitlines()[-1] == "waiting_user"
    status = json.loads(cli(ws, "status", "--json").stdout)
    assert (status["stage"], status["pending"]["kind"]) == ("experiment.loop", "handoff")

    refused = cli(ws, "deliver", "--summary", "done by hand", "--next", "paper.write")
    assert refused.returncode == 2, refused.stdout
    assert "'paper.write' is not an allowed next stage of 'experiment.loop'" in refused.stdout
    assert "experiment/results.csv (missing)" in refused.stdout
    assert "experiment/log.md (missing)" in refused.stdout
    assert "then run `lightscientist deliver` again" in refused.stdout  # not finish_stage
    assert "finish_stage" not in refused.stdout
    assert json.loads(cli(ws, "status", "--json").stdout)["status"] == "waiting_user"

    do_the_loop_by_hand(ws)
    done = cli(ws, "deliver", "--summary", "Ran all 12 runs on my own machine.")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "done"
    process = (ws / "PROCESS.md").read_text(encoding="utf-8")
    assert "done by the researcher" in process
    assert "Ran all 12 runs on my own machine." in process
    log = events(ws)
    finishes = {e["stage"]: e["data"]["by"] for e in log if e["type"] == "stage.finish"}
    assert finishes["experiment.loop"] == "researcher"
    assert finishes["experiment.analyze"] == "supervisor"
    assert not [e for e in log if e["type"] == "worker.created" and e["stage"] == "experiment.loop"]


def test_take_during_a_running_stage_cancels_its_workers_and_waits(tmp_path):
    ws = tmp_path / "p"
    taken: list[object] = []

    def on_event(event) -> None:  # the moment a worker of the loop starts, take the stage
        if (
            event.type == EventType.WORKER_CREATED
            and event.stage == "experiment.loop"
            and not taken
        ):
            taken.append(None)
            threading.Thread(target=lambda: taken.append(api.take(ws))).start()

    run = api.start(
        "x",
        ws,
        mode="auto",
        stage="experiment.setup",
        model="offline:loops=3",
        subscribers=(on_event,),
    )
    try:
        assert run.wait("waiting_user", timeout=120) == "waiting_user"
        deadline = time.monotonic() + 60
        while len(taken) < 2:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert taken[1].accepted, taken[1].message
        state = run.state()
        assert (state.stage, state.pending.kind) == ("experiment.loop", "handoff")
        deadline = time.monotonic() + 60
        # the supervisor cancels the loop's workers cooperatively, then says so (an event
        # written after the last worker finalized: wait for it too, not only the records)
        while True:
            records = [
                r
                for r in api.worker_records(Workspace.at(ws))
                if r.get("stage") == "experiment.loop" and r.get("role") == "worker"
            ]
            deliveries = [
                ws / ".lightscientist" / "workers" / r["id"] / "agent-run.md" for r in records
            ]
            if (
                records
                and all(r["status"] == "cancelled" for r in records)
                # each finalized: its delivery record is kept, and says so (written just after)
                and all(
                    d.exists() and "cancelled" in d.read_text(encoding="utf-8").lower()
                    for d in deliveries
                )
                and any(
                    e["type"] == "supervisor.event" and e["data"].get("handoff") for e in events(ws)
                )
            ):
                break
            assert time.monotonic() < deadline, records
            time.sleep(0.1)
        back = api.give_back(ws)
        assert back.accepted and "the workers' again" in back.message
        assert run.wait(timeout=240) == "done"
    finally:
        run.stop()


def test_give_back_names_what_the_researcher_wrote_apart_from_what_stopped_workers_wrote(
    tmp_path,
):
    ws = tmp_path / "p"
    taken: list[object] = []

    def on_event(event) -> None:  # take the stage as its worker starts writing its files
        if (
            event.type == EventType.TOOL_CALL
            and event.stage == "experiment.setup"
            and event.message.startswith("write_file")
            and not taken
        ):
            taken.append(None)
            threading.Thread(target=lambda: taken.append(api.take(ws))).start()

    run = api.start("x", ws, mode="auto", stage="experiment.setup", subscribers=(on_event,))
    try:
        assert run.wait("waiting_user", timeout=120) == "waiting_user"
        deadline = time.monotonic() + 60
        while not any(  # the supervisor says the workers stopped
            e["type"] == "supervisor.event" and e["data"].get("handoff") for e in events(ws)
        ):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        (ws / "experiment" / "by_hand.md").write_text("What I changed.\n", encoding="utf-8")
        back = api.give_back(ws)
        assert back.accepted, back.message
        mine, _, theirs = back.message.partition(" (and what the workers stopped by the")
        assert mine.endswith("they see what you wrote: experiment/by_hand.md"), back.message
        given = next(e for e in events(ws) if e["data"].get("handoff") == "give-back")
        assert given["data"]["written"] == ["experiment/by_hand.md"]
        workers_files = {
            "experiment/run_experiment.py",
            "experiment/study_design.py",
            "experiment/study_common.py",
            "experiment/plan.md",
        }
        assert set(given["data"]["workers_wrote"]) <= workers_files
        assert "by_hand.md" not in theirs
        feedback = run.state().decisions[-1]["comment"]
        assert "they wrote experiment/by_hand.md." in feedback
    finally:
        run.stop()
