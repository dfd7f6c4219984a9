"""Run controls of the dashboard and the panel (issue 21): progress, cancel, pause after a
stage, re-run a stage, resume in the background — the server's `control` operations on real
projects and real `lightscientist` processes (the offline model)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest
from support import waiting_project
from support.waiting import wait_for

from lightscientist_jupyter.app import controls
from lightscientist_jupyter.app.controls import applicable
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.jupyter import progress
from lightscientist_jupyter.jupyter.dashboard.run_controls import RunControls, run_view
from lightscientist_jupyter.jupyter.server import control as server_control
from lightscientist_jupyter.jupyter.server import data as server_data
from lightscientist_jupyter.jupyter.server.paths import Refused
from lightscientist_jupyter.vocab import CancelSource
from lightscientist_jupyter.workspace import Workspace
from tests.test_research import cli


def _refused(ws: Workspace, action: str, stage: str | None = None) -> Refused:
    with pytest.raises(Refused) as caught:
        server_control.apply(ws, action, stage, source=CancelSource.PANEL)
    return caught.value


def test_progress_says_stage_n_of_m_and_the_time_of_each_stage(tmp_path: Path):
    ws = waiting_project.make_waiting_project(str(tmp_path / "p"))
    state = load_state(ws.state_file)
    table = load_table(state.stages_file)
    entered = state.history[-1]["at"]
    shown = progress.view(state, table, now=entered + 75)
    assert shown["position"] == [table.ids().index("idea.gate") + 1, len(table.ids())]
    assert shown["current_s"] == 75.0  # waiting at the gate counts: that is where time went
    assert [row["stage"] for row in shown["stages"]][-1] == "idea.gate"
    assert {row["stage"] for row in shown["stages"]} == {h["to"] for h in state.history}
    view = run_view(state, table, "none")
    assert view["position"] == shown["position"] and view["stage_time"].endswith("s")
    assert view["times"][-1][0] == "idea.gate"
    # waiting at a gate, nobody running it: every control applies, and no pause is to come
    every = {"cancel": True, "pause": True, "rerun": True, "resume": True, "pausing": False}
    assert view["actions"] == every
    assert run_view(state, table, "other")["actions"] == {**every, "resume": False}
    # the panel gets the same, from the server
    detail = server_data.project_detail(tmp_path, "p")
    assert detail["actions"] == view["actions"]
    assert detail["progress"]["position"] == shown["position"]
    assert [r["stage"] for r in detail["progress"]["stages"]] == [r[0] for r in view["times"]]


def test_controls_refuse_in_one_line_what_the_state_does_not_allow(tmp_path: Path):
    ws = waiting_project.make_waiting_project(str(tmp_path / "p"))
    bad = _refused(ws, "explode")
    assert bad.status == 400 and "action must be one of cancel, resume, pause, rerun" in bad.message
    nosuch = _refused(ws, "pause", "no.such")
    assert nosuch.status == 400 and "'no.such' is not a stage" in nosuch.message
    with pytest.raises(Refused) as caught:
        server_control.control(tmp_path, {"path": "../elsewhere", "action": "cancel"})
    assert caught.value.status == 403
    done = server_control.apply(ws, "cancel", None, source=CancelSource.PANEL)
    assert done["status"] == "cancelled" and done["message"] == "the project is cancelled"
    assert load_state(ws.state_file).reason == "cancelled from the panel"
    again = server_control.apply(ws, "cancel", None, source=CancelSource.PANEL)
    assert again["message"] == "the project is cancelled; nothing to cancel"
    ended = _refused(ws, "pause")
    assert ended.status == 409 and "cancelled, not running a stage" in ended.message


@pytest.mark.slow
def test_a_pause_asked_at_a_gate_nobody_runs_is_kept_and_the_next_run_pauses_there(
    tmp_path: Path,
):
    ws = waiting_project.make_waiting_project(str(tmp_path / "p"))  # at idea.gate, no process
    done = server_control.apply(ws, "pause", None, source=CancelSource.PANEL)
    assert done["message"] == (
        "the project pauses after idea.gate finishes; no process runs it now: Resume (or "
        f"`lightscientist resume --workspace {ws.root} --wait`) runs it up to there"
    )
    # what a reload of either screen shows
    state = load_state(ws.state_file)
    assert run_view(state, load_table(state.stages_file), "none")["pause_after"] == "idea.gate"
    assert server_data.project_detail(tmp_path, "p")["pause_after"] == "idea.gate"

    # the reply approves the gate and runs the project on: it pauses at once
    replied = cli(ws.root, "reply", "y")
    assert replied.returncode == 0 and replied.stdout.strip().splitlines()[-1] == "paused"
    state = load_state(ws.state_file)
    assert (state.stage, state.history[-1]["from"]) == ("experiment.setup", "idea.gate")
    assert state.reason.startswith("paused after idea.gate")
    assert "pause_after" not in state.settings  # served
    assert server_data.project_detail(tmp_path, "p")["pause_after"] is None
    resumed = cli(ws.root, "resume")  # goes on, to the next gate
    assert resumed.returncode == 0 and resumed.stdout.strip().splitlines()[-1] == "waiting_user"
    assert load_state(ws.state_file).stage == "experiment.gate"


def test_the_running_project_takes_until_and_stop_from_its_inbox(tmp_path: Path):
    ws = Workspace.at(tmp_path / "p")
    controller = ResearchController.create(ws, "A goal", mode="manual")
    stopped: list[bool] = []
    project = types.SimpleNamespace(
        controller=controller, until=None, stop=lambda: stopped.append(True)
    )
    assert controls.apply_command(project, {"command": "until", "args": {"stage": "idea.gate"}})
    assert project.until == "idea.gate"
    kept = load_state(ws.state_file).settings  # outlives the process, for the screens too
    assert (kept["pause_after"], kept["pause_since"]) == ("idea.gate", 1)
    assert controls.apply_command(project, {"command": "until", "args": {"stage": "nosuch"}})
    assert project.until == "idea.gate"  # a stale request changes nothing
    assert load_state(ws.state_file).settings["pause_after"] == "idea.gate"
    assert controls.apply_command(project, {"command": "stop", "args": {}}) and stopped
    assert not controls.apply_command(project, {"command": "bogus", "args": {}})


@pytest.mark.slow
def test_rerun_resume_and_cancel_on_a_real_run(tmp_path: Path):
    ws_path = tmp_path / "p"
    made = cli(ws_path, "research", "Does warmup help a small MLP?")
    assert made.returncode == 0, made.stderr  # stops at idea.gate, nobody runs it
    ws = Workspace.at(ws_path)
    before = load_state(ws.state_file)
    assert (before.status, before.stage) == ("waiting_user", "idea.gate")

    # Re-run this stage: rewound to its start, then run again in the background
    done = server_control.apply(ws, "rerun", None, source=CancelSource.PANEL)
    assert done["message"].startswith("rewound to the start of idea.gate#")
    assert done["pid"] and "resumed in the background by pid" in done["message"]
    wait_for(
        lambda: load_state(ws.state_file).pending is not None and read_holder(ws),
        "the re-run at its gate",
        within=60,
    )
    assert read_holder(ws)["pid"] == done["pid"]
    events = [json.loads(line) for line in ws.events_file.read_text().splitlines()]
    assert any(e["type"] == "stage.rewound" for e in events)
    busy = _refused(ws, "resume")
    assert busy.status == 409 and f"already run by pid {done['pid']}" in busy.message

    # Cancel reaches the background run through its inbox
    sent = server_control.apply(ws, "cancel", None, source=CancelSource.PANEL)
    assert f"pid {done['pid']}" in sent["message"]
    wait_for(lambda: read_holder(ws) is None, "the cancelled run to end", within=60)
    assert load_state(ws.state_file).status == "cancelled"

    # Resume of a project no process runs: a detached `lightscientist resume --wait`
    resumed = server_control.apply(ws, "resume", None, source=CancelSource.PANEL)
    assert "in the background" in resumed["message"] and resumed["pid"]
    wait_for(
        lambda: read_holder(ws) and load_state(ws.state_file).status == "waiting_user",
        "the resumed run at its gate",
        within=60,
    )
    log = (ws.state_dir / controls.RESUME_LOG).read_text()
    assert f"$ lightscientist resume --workspace {ws.root} --wait" in log
    server_control.apply(ws, "cancel", None, source=CancelSource.PANEL)
    wait_for(lambda: read_holder(ws) is None, "the resumed run to end", within=60)


@pytest.mark.slow
def test_pause_after_a_stage_reaches_the_running_process(tmp_path: Path):
    ws = Workspace.at(tmp_path / "p")
    env = {**os.environ, "LIGHTSCIENTIST_MODEL": ""}
    argv = [sys.executable, "-m", "lightscientist_jupyter", "research", "Does warmup help?"]
    argv += ["--mode", "auto", "--workspace", str(ws.root)]
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as run:
        wait_for(lambda: read_holder(ws) and ws.state_file.exists(), "the run", within=60)
        done = server_control.apply(ws, "pause", "experiment.setup", source=CancelSource.PANEL)
        assert done["message"] == (
            f"the run (pid {run.pid}) pauses after experiment.setup finishes; Resume goes on"
        )
        out, _ = run.communicate(timeout=240)
    state = load_state(ws.state_file)
    assert state.status == "paused", out.decode()
    assert state.history[-1]["from"] == "experiment.setup"
    assert state.reason.startswith("paused after experiment.setup (--until)")
    assert "pause_after" not in state.settings


def _cancel_by_magic(root: Path, ws: Workspace, shell) -> None:
    shell.run_line_magic("lightscientist", f'cancel -w "{ws.root}"')


def _cancel_by_comm(root: Path, ws: Workspace, shell) -> None:
    """The dashboard's comm fallback, as a click on its Cancel sends it to the kernel."""
    RunControls(ws)._message(None, {"kind": "control", "action": "cancel"}, [])


DOORS = {
    "command line": lambda root, ws, shell: cli(ws.root, "cancel"),
    "notebook": _cancel_by_magic,
    "panel": lambda root, ws, shell: server_control.control(
        root, {"path": "p", "action": "cancel"}
    ),
    "dashboard": lambda root, ws, shell: server_control.control(
        root, {"path": "p", "action": "cancel", "from": "dashboard"}
    ),
    "dashboard (comm)": _cancel_by_comm,
}


@pytest.mark.slow
@pytest.mark.parametrize("door", DOORS)
def test_a_cancel_the_running_process_applies_names_the_door_it_came_through(
    tmp_path: Path, magic_shell, door: str
):
    """The cancel reaches another process through the project's inbox; the reason it leaves
    says where the user pressed it, not "the command line" whatever the door."""
    ws = waiting_project.make_waiting_project(str(tmp_path / "p"))  # at idea.gate
    argv = [sys.executable, "-m", "lightscientist_jupyter", "resume", "--wait", "-w", str(ws.root)]
    env = {**os.environ, "LIGHTSCIENTIST_MODEL": ""}
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) as run:
        wait_for(lambda: (read_holder(ws) or {}).get("pid") == run.pid, "the run", within=60)
        DOORS[door](tmp_path, ws, magic_shell)
        out, _ = run.communicate(timeout=60)
    assert out.decode().strip().splitlines()[-1] == "cancelled", out.decode()
    said = door.removesuffix(" (comm)")
    assert load_state(ws.state_file).reason == f"cancelled from the {said}"


def test_the_controls_that_apply_are_one_rule_for_every_screen():
    """`applicable` is what the dashboard's row, the panel's and the palette's commands show:
    they only draw it."""
    done = applicable("done", running=False, pause_after=None)
    assert done == {"cancel": False, "pause": False, "rerun": False, "resume": False,
                    "pausing": False}  # fmt: skip
    failed = applicable("failed", running=False, pause_after=None)
    assert (failed["cancel"], failed["resume"], failed["rerun"]) == (False, True, True)
    asked = applicable("running", running=True, pause_after="idea.gate")
    assert (asked["pause"], asked["pausing"], asked["resume"], asked["cancel"]) == (
        False, True, False, True)  # fmt: skip
    paused = applicable("paused", running=False, pause_after=None)
    assert (paused["pause"], paused["resume"]) == (False, True)
