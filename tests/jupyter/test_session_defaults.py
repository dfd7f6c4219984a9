"""A notebook session's `%config` defaults reach every run the kernel starts or resumes, from
every door, by one policy (`app.ops.run_options`); the server, which runs no project itself,
lets a project it carried a reply out on go on in the background.

The doors here are the real ones on an in-process `InteractiveShell` with the extension
loaded: the magic, the Python API, the dashboard's comm fallback and the hand-over card, each
meeting a project waiting at `idea.gate` that no process runs (made through layer 1 in a
blink by `support.waiting_project`); what each run does is the offline model's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from IPython.utils.capture import capture_output
from support.waiting import wait_for
from support.waiting_project import make_waiting_project

from lightscientist_jupyter import api
from lightscientist_jupyter.app.commands import project_locked
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.jupyter.dashboard.display import dashboard_of
from lightscientist_jupyter.workspace import Workspace
from tests.jupyter.test_magic import fresh_defaults, ip, ls  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

SESSION_BUDGET = {"tokens": 123_456.0}


@pytest.fixture
def session(ip, fresh_defaults):  # noqa: F811
    """A session with a budget and recording set once, as a researcher does."""
    ip.run_line_magic("config", 'LightScientistMagics.budget = "tokens=123456"')
    ip.run_line_magic("config", "LightScientistMagics.record = True")
    yield ip
    api.stop_all()


def _magic_reply(shell: Any, ws: Workspace) -> None:
    ls(shell, f'reply y -w "{ws.root}"')


def _magic_resume(shell: Any, ws: Workspace) -> None:
    ls(shell, f'resume -w "{ws.root}"')


def _api_reply(_ip: Any, ws: Workspace) -> None:
    api.reply(ws.root, True, resume_if_idle=True)


def _api_resume(_ip: Any, ws: Workspace) -> None:
    api.resume(ws.root)


def _dashboard_comm(_ip: Any, ws: Workspace) -> None:
    """The gate card's click where no server extension answers: over the kernel's comm."""
    board = dashboard_of(api.open_project(ws.root))
    board.tick()
    sent: list[dict[str, Any]] = []
    board.gate.actions.send = sent.append
    board.gate.actions._message(
        None,
        {"kind": "reply", "approve": True, "comment": "", "to_stage": None, "decision_id": "d1"},
        [],
    )
    assert sent and sent[0]["ok"], sent


DOORS: dict[str, Callable[[Any, Workspace], None]] = {
    "magic reply": _magic_reply,
    "magic resume": _magic_resume,
    "api reply": _api_reply,
    "api resume": _api_resume,
    "dashboard comm": _dashboard_comm,
}


@pytest.mark.parametrize("door", DOORS)
def test_a_session_default_reaches_the_run_every_door_resumes(session, tmp_path, door):
    ws = make_waiting_project(str(tmp_path / "p"))
    with capture_output():
        DOORS[door](session, ws)
    run = wait_for(lambda: api.current(ws.root), f"a run of {ws.root} in this kernel")
    assert run.project.record, f"{door}: %config record did not reach the run"
    assert load_state(ws.state_file).budget["project"] == SESSION_BUDGET, door


def test_a_resume_keeps_the_budget_the_project_holds(session, tmp_path):
    """`--budget` sets the limits; a session budget on every resume would take back a raise
    made at a budget decision, so it fills in only for a project that holds none."""
    ws = make_waiting_project(str(tmp_path / "p"))
    with project_locked(ws, "test") as controller:
        controller.set_budget({"tokens": 999_999})
    with capture_output():
        ls(session, f'resume -w "{ws.root}"')
    run = wait_for(lambda: api.current(ws.root), "the resumed run")
    assert run.project.record  # the session's recording reaches it still
    assert load_state(ws.state_file).budget["project"] == {"tokens": 999_999}
    run.stop()
    with capture_output():  # said on the line, it is the user's word: it wins
        ls(session, f'resume -w "{ws.root}" --budget tokens=5000000')
    wait_for(lambda: api.current(ws.root), "the run resumed with --budget")
    assert load_state(ws.state_file).budget["project"] == {"tokens": 5_000_000}


def test_a_new_run_takes_every_session_default(session, tmp_path):
    session.run_line_magic("config", 'LightScientistMagics.price = "in=1,out=2"')
    session.run_line_magic("config", 'LightScientistMagics.job_time_limit = "30m"')
    run = api.start("Does warmup help?", tmp_path / "new", model="offline")  # the API's door
    run.wait(("waiting_user", "done", "failed"), timeout=120)
    state = load_state(Workspace.at(tmp_path / "new").state_file)
    assert state.budget["project"] == SESSION_BUDGET and run.project.record
    assert (state.settings["price"], state.settings["job_time_limit"]) == ("in=1,out=2", "30m")
