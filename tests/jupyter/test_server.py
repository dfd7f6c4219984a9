"""The side panel's server extension, served by a real Jupyter server (pytest-jupyter).

pytest-jupyter's fixtures are taken into this module rather than registered as a plugin
(`pytest_plugins`), because a plugin would apply its autouse fixtures — an event loop and a
ServerApp cleanup — to every test of the session. The tests are plain functions that run
the fetches on the fixtures' event loop.
"""

from __future__ import annotations

import collections
import importlib.util
import json
import os
import shlex
import signal
import threading
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SMALL_TABLE
from pytest_jupyter import jupyter_server as _pytest_jupyter
from support import acp_project, waiting_project
from support.background import stop_background_runs
from support.papers import EARLIER_CHANGES, write_paper, write_reviews
from support.planting import SECRET, need_bwrap, sandboxed
from support.waiting import wait_for
from tornado.httpclient import HTTPClientError

from lightscientist_jupyter import _jupyter_server_extension_points
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.controller.inbox import queued_replies
from lightscientist_jupyter.controller.lock import WorkspaceLock, read_holder
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.jupyter import server
from lightscientist_jupyter.jupyter.dashboard import graph
from lightscientist_jupyter.jupyter.graph_view import graph_view
from lightscientist_jupyter.jupyter.server import data as server_data
from lightscientist_jupyter.jupyter.server import paths as server_paths
from lightscientist_jupyter.values.review import META_FILE
from lightscientist_jupyter.workspace import Workspace

globals().update(
    {
        name: value
        for name, value in vars(_pytest_jupyter).items()
        if name.startswith(("jp_", "http_server", "io_loop", "echo_"))
    }
)

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def jp_server_config():
    return {"ServerApp": {"jpserver_extensions": {"lightscientist_jupyter": True}}}


@pytest.fixture
def fetch(jp_fetch, jp_asyncio_loop):
    """`jp_fetch`, waited for."""
    return lambda *parts, **kwargs: jp_asyncio_loop.run_until_complete(jp_fetch(*parts, **kwargs))


@pytest.fixture
def root(jp_root_dir: Path) -> Iterator[Path]:
    """A server root with projects: alpha (at idea.gate), nested/beta (running), broken."""
    waiting_project.make_waiting_project(str(jp_root_dir / "alpha"))
    beta = Workspace.at(jp_root_dir / "nested" / "beta")
    from lightscientist_jupyter.controller import ResearchController

    ResearchController.create(beta, "A second project", mode="manual")
    broken = jp_root_dir / "broken" / ".lightscientist"
    broken.mkdir(parents=True)
    (broken / "state.json").write_text("{not json", encoding="utf-8")
    waiting_project.make_waiting_project(str(jp_root_dir / ".hidden" / "gamma"))
    (jp_root_dir / "notes").mkdir()
    yield Path(os.path.realpath(jp_root_dir))
    stop_background_runs(jp_root_dir)  # a reply or a step that let a project go on


def get(fetch, endpoint: str, **params):
    response = fetch("lightscientist", endpoint, params=params)
    return json.loads(response.body)


def refused(
    fetch, endpoint: str, *, method: str = "GET", body=None, headers=None, **params
) -> tuple[int, dict]:
    kwargs = {"method": method}
    if body is not None:
        kwargs["body"] = body if isinstance(body, str) else json.dumps(body)
    with pytest.raises(HTTPClientError) as info:
        fetch("lightscientist", endpoint, params=params, headers=headers, **kwargs)
    raw = info.value.response.body
    return info.value.code, (json.loads(raw) if raw.strip().startswith(b"{") else {})


# ------------------------------------------------------------------------- reading


def test_projects_lists_every_project_under_the_root(root, fetch):
    projects = get(fetch, "projects")["projects"]
    by_path = {p["path"]: p for p in projects}
    assert list(by_path) == ["alpha", "broken", "nested/beta"]  # hidden folders skipped
    alpha = by_path["alpha"]
    assert (alpha["stage"], alpha["status"], alpha["mode"]) == (
        "idea.gate",
        "waiting_user",
        "manual",
    )
    assert alpha["pending"]["kind"] == "gate"
    assert alpha["pending"]["proposed_next"] == "experiment.setup"
    assert alpha["goal"].startswith("Does warmup")
    assert by_path["nested/beta"]["stage"] == "idea.survey"
    assert by_path["nested/beta"]["pending"] is None
    assert "not valid JSON" in by_path["broken"]["error"]


def test_project_gives_status_and_stage_table(root, fetch):
    detail = get(fetch, "project", path="alpha")
    assert detail["path"] == "alpha"
    assert detail["status"] == "waiting_user"
    assert detail["pending"]["outputs"] == ["idea/brief.md"]
    stages = {s["id"]: s for s in detail["table"]["stages"]}
    assert stages["idea.gate"]["approval"] is True
    assert stages["idea.gate"]["allowed"] == ["experiment.setup"]
    assert detail["table"]["start"] == "idea.survey"
    assert all(not os.path.isabs(s["skill"]) for s in stages.values())
    assert detail["visits"]["idea.gate"] == 1
    assert detail["process_md"] == {"path": "alpha/PROCESS.md", "exists": True}
    outputs = {o["name"]: o for o in detail["outputs"]}
    assert outputs["idea/brief.md"] == {
        "stage": "idea.gate",
        "name": "idea/brief.md",
        "path": "alpha/idea/brief.md",
        "exists": True,
    }
    assert outputs["experiment/plan.md"]["exists"] is False
    assert detail["last_seq"] > 5
    assert detail["runner"] is None


def test_project_sends_the_layout_the_dashboard_draws(root, fetch):
    detail = get(fetch, "project", path="alpha")
    state = load_state(root / "alpha" / ".lightscientist" / "state.json")
    table = load_table(state.stages_file)
    assert detail["graph"] == json.loads(json.dumps(graph_view(table, state)))
    layout = detail["graph"]["layouts"][0]
    svg = ET.fromstring(graph.render_state(table, state))  # what the dashboard shows
    ns = "{http://www.w3.org/2000/svg}"
    boxes = {
        g.get("data-stage"): g.find(f"{ns}rect") for g in svg.iter(f"{ns}g") if g.get("data-stage")
    }
    assert {stage: (int(r.get("x")), int(r.get("y"))) for stage, r in boxes.items()} == {
        n["id"]: (n["x"], n["y"]) for n in layout["nodes"]
    }
    assert {
        (p.get("data-from"), p.get("data-to")): p.get("d")
        for p in svg.iter(f"{ns}path")
        if p.get("data-from")
    } == {(e["source"], e["target"]): e["path"] for e in layout["edges"]}


def test_project_with_a_broken_table_sends_no_layout(root, fetch):
    broken = root / "notes" / "broken.toml"
    broken.write_text('start = "nowhere"\n', encoding="utf-8")
    state_file = root / "alpha" / ".lightscientist" / "state.json"
    raw = json.loads(state_file.read_text(encoding="utf-8"))
    state_file.write_text(json.dumps({**raw, "stages_file": str(broken)}), encoding="utf-8")
    detail = get(fetch, "project", path="alpha")
    assert detail["table"] is None and detail["graph"] is None
    assert detail["table_error"]


def test_project_at_the_server_root_has_an_empty_path(jp_root_dir, fetch):
    waiting_project.make_waiting_project(str(jp_root_dir))
    projects = get(fetch, "projects")["projects"]
    assert [p["path"] for p in projects] == [""]
    detail = get(fetch, "project", path="")
    assert detail["process_md"]["path"] == "PROCESS.md"


def test_events_are_read_incrementally_by_seq(root, fetch):
    last = get(fetch, "project", path="alpha")["last_seq"]
    tail = get(fetch, "events", path="alpha", limit="3")
    assert [e["seq"] for e in tail["events"]] == [last - 2, last - 1, last]
    assert tail["last_seq"] == last
    newer = get(fetch, "events", path="alpha", after=str(last - 2))
    assert [e["seq"] for e in newer["events"]] == [last - 1, last]
    assert newer["truncated"] is False
    nothing = get(fetch, "events", path="alpha", after=str(last))
    assert nothing["events"] == [] and nothing["last_seq"] == last
    gap = get(fetch, "events", path="alpha", after="0", limit="2")
    assert gap["truncated"] is True and [e["seq"] for e in gap["events"]] == [last - 1, last]
    reset = get(fetch, "events", path="alpha", after=str(last + 100), limit="1")
    assert reset["reset"] is True and reset["events"][0]["seq"] == last
    assert refused(fetch, "events", path="alpha", after="x")[0] == 400
    assert refused(fetch, "events", path="alpha", limit="0")[0] == 400


def test_events_on_a_large_log(jp_root_dir, fetch):
    state_dir = jp_root_dir / "big" / ".lightscientist"
    state_dir.mkdir(parents=True)
    waiting_project.make_waiting_project(str(jp_root_dir / "big"))
    count = 300_000
    line = (
        '{"v":1,"seq":%d,"ts":1.0,"layer":3,"type":"tool.call","message":"step %d",'
        '"task_id":"experiment.loop#1","worker_id":"w1","stage":"experiment.loop",'
        '"data":{"tool":"shell","args":"python run_experiment.py --epoch %d"}}\n'
    )
    with (state_dir / "events.jsonl").open("w", encoding="utf-8") as fh:
        fh.writelines(line % (i, i, i) for i in range(1, count + 1))
    assert (state_dir / "events.jsonl").stat().st_size > 40_000_000

    newest = get(fetch, "events", path="big", after=str(count - 5))
    assert [e["seq"] for e in newest["events"]] == list(range(count - 4, count + 1))
    assert newest["events"][-1]["message"] == f"step {count}"
    tail = get(fetch, "events", path="big", limit="50")
    assert [e["seq"] for e in tail["events"]] == list(range(count - 49, count + 1))
    assert get(fetch, "project", path="big")["last_seq"] == count
    capped = get(fetch, "events", path="big", after="0", limit="100000")
    assert len(capped["events"]) == server_data.EVENTS_MAX and capped["truncated"] is True


def test_file_returns_text_inside_the_project(root, fetch):
    process = get(fetch, "file", path="alpha", name="PROCESS.md")
    assert process["path"] == "alpha/PROCESS.md"
    assert "Does warmup help" in process["content"]
    assert process["truncated"] is False and process["binary"] is False
    brief = get(fetch, "file", path="alpha", name="idea/brief.md")
    assert brief["content"].startswith("# idea.gate")
    assert refused(fetch, "file", path="alpha", name="idea/nothing.md")[0] == 404
    assert refused(fetch, "file", path="alpha")[0] == 400


# ------------------------------------------------------------------------- confinement


@pytest.mark.parametrize(
    "params, status",
    [
        ({"path": ".."}, 403),
        ({"path": "alpha/../.."}, 403),
        ({"path": "/etc"}, 400),
        ({"path": "~"}, 400),
        ({"path": "notes"}, 404),
        ({"path": "missing"}, 404),
    ],
)
def test_project_paths_are_confined_to_the_root(root, fetch, params, status):
    for endpoint in ("project", "events", "file"):
        code, body = refused(fetch, endpoint, **params, name="PROCESS.md")
        assert code == status, (endpoint, params, body)
        assert body["message"]


def test_escapes_through_names_and_links_are_refused(root, fetch, tmp_path):
    outside = tmp_path / "outside"
    waiting_project.make_waiting_project(str(outside))
    (root / "link").symlink_to(outside, target_is_directory=True)
    (root / "alpha" / "leak.md").symlink_to(outside / "PROCESS.md")
    code, body = refused(fetch, "project", path="link")
    assert code == 403 and body["message"].startswith(f"link: is a symbolic link (to {outside})")
    assert [p["path"] for p in get(fetch, "projects")["projects"]] == [
        "alpha",
        "broken",
        "nested/beta",
    ]
    for name, status in (
        ("../nested/beta/PROCESS.md", 403),
        ("leak.md", 403),
        ("/etc/passwd", 400),
    ):
        code, body = refused(fetch, "file", path="alpha", name=name)
        assert code == status, (name, body)
    code, _ = refused(fetch, "reply", method="POST", body={"path": "link", "approve": True})
    assert code == 403
    assert queued_replies(Workspace.at(outside)) == []


def test_links_a_sandboxed_command_planted_are_never_served(root, fetch):
    """The server root is often the user's home: a key below it, reached through links a
    worker's command planted in a project, must not reach the panel (nor any file through a
    link, wherever it points)."""
    key = root / "dot-ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text(SECRET)
    sandboxed(
        root / "alpha",
        f"mv PROCESS.md PROCESS.real.md && ln -s {key} PROCESS.md"
        f" && mv idea/brief.md idea/brief.real.md && ln -s {key} idea/brief.md"
        f" && ln -s {key.parent} keys && ln -s ../nested paper",
    )
    never = "LightScientist does not follow links in a workspace"
    for name, message in (
        ("PROCESS.md", f"PROCESS.md: is a symbolic link (to {key}); {never}"),
        ("idea/brief.md", f"idea/brief.md: is a symbolic link (to {key}); {never}"),
        ("keys/id_rsa", f"keys: is a symbolic link (to {key.parent}); {never}"),
        (
            "paper/beta/PROCESS.md",
            f"paper/beta: goes through paper, which is a symbolic link (to ../nested); {never}",
        ),
    ):
        code, body = refused(fetch, "file", path="alpha", name=name)
        assert (code, body["message"]) == (403, message), name
        assert "PRIVATE KEY" not in json.dumps(body)
    detail = get(fetch, "project", path="alpha")
    assert detail["process_md"] == {"path": "alpha/PROCESS.md", "exists": False}
    assert {o["name"]: o["exists"] for o in detail["outputs"]}["idea/brief.md"] is False
    code, body = refused(fetch, "project", path="alpha/keys")
    assert code == 403 and body["message"].startswith("alpha/keys: is a symbolic link")


FLIP = """
import os, sys, time
key, end = sys.argv[1], time.monotonic() + 2
while time.monotonic() < end:
    os.symlink(key, "idea/.link")
    os.rename("idea/.link", "idea/brief.md")
    with open("idea/.file", "w") as fh:
        fh.write("# the brief\\n")
    os.rename("idea/.file", "idea/brief.md")
"""


@pytest.mark.slow
def test_a_file_swapped_for_a_link_mid_request_is_never_served(root):
    """A sandboxed command swaps an output between a file and a link to a key below the
    server root as fast as it can, while the panel asks for it: never the key."""
    key = root / "dot-ssh" / "id_rsa"
    key.parent.mkdir()
    key.write_text(SECRET)
    need_bwrap()
    flipping = threading.Thread(
        target=sandboxed, args=(root / "alpha", f"python3 -c {shlex.quote(FLIP)} {key}")
    )
    flipping.start()
    answers: collections.Counter[str] = collections.Counter()
    while flipping.is_alive():
        try:
            answers[server_data.project_file(root, "alpha", "idea/brief.md")["content"]] += 1
        except server_paths.Refused as exc:
            answers[f"{exc.status}: {exc.message.split(';')[0]}"] += 1
    flipping.join()
    assert SECRET not in answers
    assert (
        answers["# the brief\n"] and answers[f"403: idea/brief.md: is a symbolic link (to {key})"]
    )


# ------------------------------------------------------------------------- authentication


@pytest.mark.parametrize("endpoint", ["projects", "project", "events", "file"])
@pytest.mark.parametrize("auth", ["", "token wrong-token"])
def test_reading_needs_the_token(root, fetch, endpoint, auth):
    code, _ = refused(
        fetch, endpoint, headers={"Authorization": auth}, path="alpha", name="PROCESS.md"
    )
    assert code == 403


def test_post_without_token_or_xsrf_is_refused(root, fetch, jp_serverapp):
    body = {"path": "alpha", "approve": True}
    code, _ = refused(fetch, "reply", method="POST", body=body, headers={"Authorization": ""})
    assert code == 403
    # A browser session: the login cookie a token URL leaves behind, without the XSRF token.
    token = jp_serverapp.identity_provider.token
    first = fetch(
        "lightscientist", "projects", params={"token": token}, headers={"Authorization": ""}
    )
    cookies = [c.split(";", 1)[0] for c in first.headers.get_list("Set-Cookie")]
    login = "; ".join(c for c in cookies if not c.startswith("_xsrf="))
    assert login, "the server set no login cookie"
    code, _ = refused(
        fetch, "reply", method="POST", body=body, headers={"Authorization": "", "Cookie": login}
    )
    assert code == 403
    code, _ = refused(
        fetch,
        "reply",
        method="POST",
        body=body,
        headers={"Authorization": "", "Cookie": f"{login}; _xsrf=abc", "X-XSRFToken": "abd"},
    )
    assert code == 403
    ws = Workspace.at(root / "alpha")
    assert queued_replies(ws) == [] and load_state(ws.state_file).stage == "idea.gate"
    # The same cookie with a matching XSRF pair is accepted: the refusals above were XSRF.
    ok = fetch(
        "lightscientist",
        "reply",
        method="POST",
        body=json.dumps(body),
        headers={"Authorization": "", "Cookie": f"{login}; _xsrf=abc", "X-XSRFToken": "abc"},
    )
    assert json.loads(ok.body)["applied_by"] == "server"


# ------------------------------------------------------------------------- replies


def test_reply_without_a_runner_is_applied_by_the_server(root, fetch):
    ws = Workspace.at(root / "alpha")
    answer = get_post(
        fetch, {"path": "alpha", "approve": True, "comment": "go", "decision_id": "d1"}
    )
    assert answer["applied_by"] == "server" and answer["said"] == "Approved idea.gate"
    assert (answer["stage"], answer["status"]) == ("experiment.setup", "running")
    # nobody ran it: it goes on in the background, as after `lightscientist reply y` (the
    # answer comes once the process holds the project, or after 8 s of it opening)
    pid = answer["resumed_by"]
    assert pid and pid != os.getpid() and f"pid {pid}" in answer["messages"][-1]
    wait_for(lambda: (read_holder(ws) or {}).get("pid") == pid, "the background run", within=60)
    state = load_state(ws.state_file)
    assert state.stage.startswith("experiment.") and state.pending is None
    assert state.decisions[-1]["source"] == "panel" and state.decisions[-1]["comment"] == "go"
    assert queued_replies(ws) == []
    events = get(fetch, "events", path="alpha", limit="20")  # the newest, the stage's start
    assert "user.decision" in [e["type"] for e in events["events"]]  # and its memory's among
    assert [e["seq"] for e in events["events"]] == sorted({e["seq"] for e in events["events"]})


def test_reply_while_a_runner_holds_the_project_goes_to_its_inbox(root, fetch):
    ws = Workspace.at(root / "alpha")
    with WorkspaceLock(ws):
        answer = get_post(
            fetch,
            {
                "path": "alpha",
                "approve": False,
                "comment": "narrow it",
                "to_stage": "idea.generate",
            },
        )
    assert answer["applied_by"] == "runner" and answer["runner"]["pid"] == os.getpid()
    [(path, reply)] = queued_replies(ws)
    assert path.name == answer["queued"]
    assert {k: reply[k] for k in ("approve", "comment", "to_stage", "decision_id", "source")} == {
        "approve": False,
        "comment": "narrow it",
        "to_stage": "idea.generate",
        "decision_id": "d1",
        "source": "panel",
    }
    assert load_state(ws.state_file).stage == "idea.gate"


@pytest.mark.slow
def test_an_agents_permission_is_a_card_whose_option_the_reply_hands_the_agent(
    root, fetch, write_table
):
    """Under `ask` in manual mode the agent's request to edit out/a.md is the pending
    decision: the project's detail carries its card (the agent's options, the edit's diff),
    and a reply through the server naming an option reaches the agent, which writes."""
    stages = acp_project.project(
        root.parent / "agent-table",
        write_table,
        "ask",
        b="# b\n\nask\nwrite out/a.md: revised by the agent\nwrite out/b.md: the output\n",
    )
    ws = root / "agent"
    run = acp_project.start(ws, stages, "manual")
    try:
        acp_project.asked(ws, "fake asks to edit out/a.md")
        card = get(fetch, "project", path="agent")["permission"]
        assert card["heading"] == "fake asks to edit out/a.md"
        assert [(c["name"], c["approve"]) for c in card["choices"]] == [
            ("Allow once", True),
            ("Reject", False),
        ]
        assert (card["diff"]["path"], card["diff"]["status"]) == ("out/a.md", "changed")
        assert "+revised by the agent" in card["diff"]["lines"]
        answer = get_post(
            fetch,
            {"path": "agent", "approve": True, "comment": "Allow once", "decision_id": "d1"},
        )
        assert answer["applied_by"] == "runner"
        acp_project.asked(ws, "fake asks to edit out/b.md")  # its next write
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
    assert (ws / "out" / "a.md").read_text(encoding="utf-8") == "revised by the agent\n"
    assert [e["message"] for e in acp_project.of_type(ws, "agent.permission")] == [
        "Write out/a.md: Allow once (asked)"
    ]
    assert acp_project.state(ws)["decisions"][-1]["comment"] == "Allow once"


def test_a_reply_the_server_cannot_apply_is_refused_and_leaves_nothing(root, fetch, write_table):
    """The project cannot be opened to apply the reply (its stage table was edited and no
    longer has the pending gate): refused, and nothing is queued to decide it later."""
    ws = Workspace.at(root / "alpha")
    raw = json.loads(ws.state_file.read_text(encoding="utf-8"))
    raw["stages_file"] = str(write_table(root / "tables", SMALL_TABLE))
    ws.state_file.write_text(json.dumps(raw), encoding="utf-8")
    before = ws.state_file.read_text(encoding="utf-8")
    code, answer = refused(fetch, "reply", method="POST", body={"path": "alpha", "approve": True})
    assert code == 409, answer
    assert answer["message"].startswith("the reply was not applied: ")
    assert "is at stage 'idea.gate', which" in answer["message"]
    assert queued_replies(ws) == [] and ws.state_file.read_text(encoding="utf-8") == before


@pytest.mark.parametrize(
    "body, status, words",
    [
        ({"path": "nested/beta", "approve": True}, 409, "nothing is waiting"),
        ({"path": "alpha", "approve": True, "decision_id": "d9"}, 409, "no longer pending"),
        ({"path": "alpha", "approve": True, "to_stage": "idea.survey"}, 400, "rejection"),
        ({"path": "alpha", "approve": False, "to_stage": "nowhere"}, 400, "not a stage"),
        ({"path": "alpha", "approve": "yes"}, 400, "true or false"),
        ({"approve": True}, 400, "path"),
        ("[1, 2", 400, "JSON object"),
    ],
)
def test_bad_replies_are_refused(root, fetch, body, status, words):
    code, answer = refused(fetch, "reply", method="POST", body=body)
    assert code == status and words in answer["message"], answer
    assert queued_replies(Workspace.at(root / "alpha")) == []


def get_post(fetch, body: dict) -> dict:
    response = fetch("lightscientist", "reply", method="POST", body=json.dumps(body))
    return json.loads(response.body)


# ------------------------------------------------------------------------- wiring


def test_server_config_enables_the_extension():
    config = json.loads(
        (REPO / "jupyter-config" / "server-config" / "lightscientist_jupyter.json").read_text(
            encoding="utf-8"
        )
    )
    assert config == {"ServerApp": {"jpserver_extensions": {"lightscientist_jupyter": True}}}
    [point] = _jupyter_server_extension_points()
    module = importlib.import_module(point["module"])
    assert module is server and callable(server._load_jupyter_server_extension)


def test_resolve_inside_unit(tmp_path):
    base = Path(os.path.realpath(tmp_path))
    (base / "a").mkdir()
    assert server_paths.resolve_inside(base, "") == base
    assert server_paths.resolve_inside(base, "a/") == base / "a"
    for rel, status in (
        ("../x", 403),
        ("a/../../x", 403),
        ("/x", 400),
        ("C:x", 400),
        ("a\x00", 400),
    ):
        with pytest.raises(server_paths.Refused) as info:
            server_paths.resolve_inside(base, rel)
        assert info.value.status == status, rel


def test_find_projects_is_bounded(tmp_path):
    base = Path(os.path.realpath(tmp_path))
    for rel in ("a", "b/c", "d/e/f/g/h"):
        state = base / rel / ".lightscientist" / "state.json"
        state.parent.mkdir(parents=True)
        state.write_text("{}", encoding="utf-8")
    assert server_data.find_projects(base) == [base / "a", base / "b" / "c"]  # h is 5 levels down
    assert server_data.find_projects(base, depth=5) == [
        base / "a",
        base / "b" / "c",
        base / "d" / "e" / "f" / "g" / "h",
    ]
    assert server_data.find_projects(base, folders=2) == [base / "a"]


def test_project_links_the_pdf_and_sends_the_review_scores(root, fetch, tmp_path):
    detail = get(fetch, "project", path="alpha")
    assert detail["paper"] == {
        "pdf": None,
        "pages": None,
        "source": None,
        "note": "No PDF was built (paper/paper.pdf does not exist).",
    }
    assert detail["reviews"] is None
    write_paper(root / "alpha", tmp_path / "tex", pages=2)
    write_reviews(root / "alpha")
    detail = get(fetch, "project", path="alpha")
    assert detail["paper"] == {
        "pdf": "alpha/paper/paper.pdf",
        "pages": 2,
        "source": "alpha/paper/paper.tex",
        "note": None,
    }
    reviews = detail["reviews"]
    assert [(r["reviewer"], r["scores"]["overall"], r["decision"]) for r in reviews["reviews"]] == [
        (1, 7, "accept"),
        (2, 6, "accept"),
        (3, 5, "revise"),
    ]
    assert reviews["summary"] == "round 2: mean 6 against accept 6 — accept"
    assert reviews["earlier_changes"] == EARLIER_CHANGES
    (root / "alpha" / META_FILE).write_text("[]", encoding="utf-8")
    damaged = get(fetch, "project", path="alpha")["reviews"]
    assert damaged["problems"] == ["paper/reviews/meta.json is damaged: not a JSON object"]
