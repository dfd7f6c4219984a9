"""The side panel's hand-over: the card's data in the project detail (from disk, with no
kernel) and take / deliver / give-back on the reply endpoint of a real Jupyter server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest_jupyter import jupyter_server as _pytest_jupyter
from support.background import stop_background_runs
from tornado.httpclient import HTTPClientError

from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.workspace import Workspace

globals().update(
    {
        name: value
        for name, value in vars(_pytest_jupyter).items()
        if name.startswith(("jp_", "http_server", "io_loop", "echo_"))
    }
)


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"lightscientist_jupyter": True}}}


@pytest.fixture
def fetch(jp_fetch, jp_asyncio_loop):
    return lambda *parts, **kwargs: jp_asyncio_loop.run_until_complete(jp_fetch(*parts, **kwargs))


@pytest.fixture
def root(jp_root_dir: Path) -> Iterator[Path]:
    """One project handed to the researcher at experiment.loop (nobody runs it)."""
    ws = Workspace.at(jp_root_dir / "mine")
    ResearchController.create(
        ws,
        "Does warmup help?",
        mode="auto",
        start_stage="experiment.loop",
        handoffs=["experiment.loop"],
    )
    yield Path(os.path.realpath(jp_root_dir))
    stop_background_runs(jp_root_dir)  # a reply or a step that let a project go on


def detail(fetch) -> dict:
    return json.loads(fetch("lightscientist", "project", params={"path": "mine"}).body)


def post(fetch, body: dict) -> tuple[int, dict]:
    try:
        response = fetch("lightscientist", "reply", method="POST", body=json.dumps(body))
    except HTTPClientError as exc:
        return exc.code, json.loads(exc.response.body)
    return response.code, json.loads(response.body)


def test_the_card_comes_from_disk_and_its_checklist_ticks(root, fetch):
    card = detail(fetch)["handoff"]
    assert card["stage"] == "experiment.loop" and card["goal"] == "Does warmup help?"
    assert card["skill"].strip() and card["allowed_next"] == [
        "experiment.loop",
        "experiment.analyze",
        "experiment.setup",
    ]
    assert [o["ready"] for o in card["outputs"]] == [False, False]
    assert "results_path = root / 'experiment/results.csv'" in card["skeleton"]
    assert "open it in JupyterLab: experiment/experiment.loop.ipynb" in card["skeleton"]
    (root / "mine" / "experiment").mkdir(exist_ok=True)  # the take wrote its notebook there
    (root / "mine" / "experiment" / "results.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    assert [o["ready"] for o in detail(fetch)["handoff"]["outputs"]] == [True, False]


def test_deliver_from_the_panel_refused_then_accepted(root, fetch):
    card = detail(fetch)["handoff"]
    code, answer = post(
        fetch,
        {
            "path": "mine",
            "handoff": "deliver",
            "summary": "by hand",
            "next_stage": "paper.plan",
            "decision_id": card["decision_id"],
        },
    )
    assert code == 409
    assert "'paper.plan' is not an allowed next stage" in answer["message"]
    assert "experiment/results.csv (missing)" in answer["message"]
    out = root / "mine" / "experiment"
    out.mkdir(exist_ok=True)  # the take wrote its notebook there
    (out / "results.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (out / "log.md").write_text("by hand\n", encoding="utf-8")
    code, answer = post(
        fetch,
        {
            "path": "mine",
            "handoff": "deliver",
            "summary": "Ran it by hand.",
            "decision_id": card["decision_id"],
        },
    )
    assert code == 200, answer
    assert (answer["stage"], answer["status"]) == ("experiment.analyze", "running")
    # nobody ran it: it goes on in the background, as after `lightscientist deliver`
    assert f"in the background by pid {answer['resumed_by']}" in answer["message"]
    assert detail(fetch)["handoff"] is None
    code, answer = post(fetch, {"path": "mine", "handoff": "give-back", "decision_id": "d1"})
    assert code == 409 and "no longer pending" in answer["message"]


def test_give_back_and_take_from_the_panel(root, fetch):
    code, answer = post(fetch, {"path": "mine", "handoff": "give-back"})
    assert code == 200 and "the workers' again" in answer["message"]
    assert load_state(Workspace.at(root / "mine").state_file).handoffs == []
    assert answer["resumed_by"] in stop_background_runs(root)  # it went on with workers
    code, answer = post(fetch, {"path": "mine", "handoff": "take"})
    assert code == 200 and answer["status"] == "waiting_user"
    code, answer = post(fetch, {"path": "mine", "handoff": "nope"})
    assert code == 400 and "handoff must be one of take, deliver, give-back" in answer["message"]


def test_an_approve_while_the_researcher_holds_the_stage_is_refused(root, fetch):
    code, answer = post(fetch, {"path": "mine", "approve": True})
    assert (
        code == 409
        and "handed to the researcher, so there is nothing to approve" in (answer["message"])
    )
