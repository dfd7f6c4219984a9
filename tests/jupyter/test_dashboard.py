"""The dashboard's widget models, driven by a real controller and a real event bus.

No front end is attached: the widgets talk to `comm.DummyComm`, and every message a widget
would send is counted by wrapping `Widget._send`. The source behind the dashboard is a real
`ResearchController` (no model, no runtime), so the tests are quick and exact.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from pathlib import Path

import ipywidgets
import pytest
from support.papers import DECISIONS, EARLIER_CHANGES, REVIEW_TABLE, SCORES, write_reviews
from support.planting import SECRET, sandboxed
from support.tables import search_table
from support.waiting import wait_for

from lightscientist_jupyter import api
from lightscientist_jupyter.api.views import ProjectView
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.events import EventBus, JsonlWriter
from lightscientist_jupyter.events.buffer import EventBuffer
from lightscientist_jupyter.jupyter.dashboard import status_line, workers
from lightscientist_jupyter.jupyter.dashboard.batching import Flusher
from lightscientist_jupyter.jupyter.dashboard.view import PROJECT_MIME, Dashboard, Source
from lightscientist_jupyter.jupyter.dashboard.widgets import EVENTS_MAX, SEND_MAX, TAIL_SYNC
from lightscientist_jupyter.jupyter.search_tree import search_card
from lightscientist_jupyter.jupyter.server import data as server_data
from lightscientist_jupyter.values.review import META_FILE
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace


class ControllerSource(ProjectView):
    """`api.Run` without its runtime: the real `ProjectView` (its `reply` and the rest) over
    an in-memory controller the test drives itself, standing for a run of this kernel. It
    overrides only what a live run answers from its controller; `test_the_stand_in_has_the_
    run_s_signatures` keeps those in step with `api.Run`."""

    live = True  # a property of `api.Run`; a plain attribute here, so a test can end the run

    def __init__(self, controller: ResearchController):
        super().__init__(controller.workspace)
        self.controller = controller
        self.is_running = True

    def state(self):
        return self.controller.state

    def table(self):
        return self.controller.table

    def model_spec(self):
        return "offline"

    def started_at(self):
        return time.time() - 5

    def running(self):
        return self.is_running

    def controller_here(self):
        return self.controller


def _shape(method) -> list[tuple[str, object, object]]:
    """A method's parameters as a caller sees them: names, kinds and defaults."""
    return [(p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values()]


def test_the_stand_in_has_the_run_s_signatures():
    """What the stand-in overrides is called as `api.Run` is, and covers what a dashboard
    needs from its source (`dashboard.Source`): a test cannot pass on a drifted stand-in."""
    own = {n: m for n, m in vars(ControllerSource).items() if inspect.isfunction(m)}
    for name, method in own.items():
        if name != "__init__":
            assert _shape(method) == _shape(getattr(api.Run, name)), name
    for name in (n for n in vars(Source) if not n.startswith("_")):
        run_side = getattr(api.Run, name)
        if isinstance(run_side, property):
            assert hasattr(ControllerSource, name), name
        else:
            assert _shape(getattr(ControllerSource, name)) == _shape(run_side), name


@pytest.fixture
def project(workspace, small_table):
    """A controller on the small table whose events go to a log and a dashboard buffer."""
    writer = JsonlWriter(workspace.events_file)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    buffer = EventBuffer()
    bus.subscribe(buffer)
    controller = ResearchController.create(
        workspace, "find x", mode="manual", table=small_table, bus=bus
    )
    yield controller, bus, buffer
    writer.close()


@pytest.fixture
def sends(monkeypatch):
    """Every message a widget sends: `(monotonic time, widget class, method)`."""
    sent: list[tuple[float, str, str]] = []
    lock = threading.Lock()
    original = ipywidgets.Widget._send

    def counting(self, msg, buffers=None):
        with lock:
            sent.append((time.monotonic(), type(self).__name__, msg.get("method", "")))
        return original(self, msg, buffers)

    monkeypatch.setattr(ipywidgets.Widget, "_send", counting)
    return sent


@pytest.fixture
def make_board():
    boards: list[Dashboard] = []

    def make(source, buffer=None, **options) -> Dashboard:
        board = Dashboard(source, buffer, **options)
        boards.append(board)
        return board

    yield make
    for board in boards:
        board.close()


def burst(bus: EventBus, n: int, worker: str = "w1") -> None:
    for i in range(n):
        if i % 2:
            bus.emit("model.call", f"call {i}", worker_id=worker, stage="a", data={"call": i})
        else:
            bus.emit("tool.call", f"tool {i}", worker_id=worker, stage="a")


def test_event_list_stays_bounded(project, make_board):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    burst(bus, 5000)
    board.tick()
    assert len(board.events.events) == EVENTS_MAX
    assert board.events.events[-1]["seq"] == bus.next_seq - 1
    assert board.events.received == bus.next_seq - 1
    board.tick()  # a quiet tick: the synced tail catches up, bounded too
    assert len(board.events.tail) == TAIL_SYNC
    assert board.events.tail[-1]["seq"] == bus.next_seq - 1
    assert board.events.total == bus.next_seq - 1
    burst(bus, 50)
    board.tick()
    assert len(board.events.events) == EVENTS_MAX


def test_a_5000_event_burst_is_sent_in_a_few_batched_messages(project, make_board, sends, capfd):
    """Messages are counted per flusher tick and per event, not per second of the clock: at
    most one batch message per tick, and every event accounted for in those batches."""
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer)
    batches: list[dict] = []
    send = board.events.send

    def recording(content, buffers=None):
        batches.append(content)
        return send(content, buffers)

    board.events.send = recording
    wait_for(lambda: board.flusher.ticks >= 3, "the first ticks, which draw the initial state")
    ticks_before = board.flusher.ticks  # read before clearing: a tick in between only adds one
    sends.clear()
    first_seq = bus.next_seq
    done = threading.Event()

    def emit() -> None:  # from a worker thread, as in a real run: 5,000 events over ~1 s
        for _ in range(50):
            burst(bus, 100)
            time.sleep(0.02)
        done.set()

    threading.Thread(target=emit).start()
    assert done.wait(30)
    emitted = bus.next_seq - first_seq
    assert emitted == 5000
    wait_for(lambda: board.events.received == bus.next_seq - 1, "every event to reach the stream")
    quiet_from = board.flusher.ticks
    wait_for(lambda: board.flusher.ticks >= quiet_from + 3, "three quiet ticks after the burst")
    ticks = board.flusher.ticks - ticks_before

    custom = [t for t, cls, method in sends if cls == "EventStream" and method == "custom"]
    assert len(custom) >= 5, "the batches should flow while the burst lasts"
    assert len(custom) == board.events.sends == len(batches)
    assert len(custom) <= ticks, (len(custom), ticks)  # one batch message per tick at most
    # each event is in exactly one batch: sent, or counted as skipped (kept kernel side)
    assert sum(len(b["events"]) + b["skipped"] for b in batches) == emitted
    assert [e["seq"] for b in batches for e in b["events"]][-1] == bus.next_seq - 1
    # every message of every widget: the batch and now and then a redraw per tick, so 5,000
    # events cost a few dozen messages, far from one per event
    assert len(sends) <= 2 * ticks, (len(sends), ticks, sends[-20:])
    assert len(sends) * 25 <= emitted, (len(sends), ticks)
    assert board.events.events[-1]["seq"] == bus.next_seq - 1
    rows = board._rows
    assert rows["w1"].model_calls == 2500 and rows["w1"].tool_calls == 2500
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing printed from the threads


def test_a_batch_message_carries_at_most_send_max_events(project, make_board, monkeypatch):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    messages = []
    monkeypatch.setattr(
        board.events, "send", lambda content, buffers=None: messages.append(content)
    )
    burst(bus, 1000)
    board.tick()
    assert len(messages) == 1
    assert len(messages[0]["events"]) == SEND_MAX
    assert messages[0]["skipped"] == 1000 - SEND_MAX  # kept kernel side, not sent
    assert len(board.events.events) == EVENTS_MAX
    assert messages[0]["events"][-1]["seq"] == bus.next_seq - 1


def test_the_filter_matches_layer_type_and_worker(project, make_board):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    burst(bus, 10, worker="w1")
    burst(bus, 4, worker="w2")
    board.tick()
    stream = board.events
    assert {e["layer"] for e in stream.visible()} == {1, 3}
    stream.layer = 1
    assert [e["type"] for e in stream.visible()] == ["stage.start"]
    stream.layer = 0
    stream.type_filter = "model."
    assert {e["type"] for e in stream.visible()} == {"model.call"}
    stream.type_filter = ""
    stream.worker = "w2"
    assert len(stream.visible()) == 4


@pytest.fixture
def over_budget(project, make_board):
    """A dashboard on a run of this kernel whose budget of 100 tokens one call of 120 spent:
    the project waits at decision d1; `(controller, board)`."""
    controller, _, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    controller.set_budget({"tokens": 100})
    call = {"worker": "w1", "stage": "a", "task_id": "a#1", "model_calls": 1, "wall_s": 0.5}
    controller.charge({**call, "input_tokens": 90, "output_tokens": 30, "cost_usd": 0.0})
    board.tick()
    return controller, board


def test_the_layer_1_filter_shows_the_budget_events(over_budget):
    _, board = over_budget
    stream = board.events
    stream.layer = 1
    shown = [e["type"] for e in stream.visible()]
    assert shown[-3:] == ["budget.warning", "budget.exceeded", "user.decision_requested"]


def test_the_budget_card_raises_the_budget_of_a_run_of_this_kernel(over_budget):
    controller, board = over_budget
    card = board.budget
    assert card.card["id"] == "d1"
    said = []
    card.send = lambda content, buffers=None: said.append(content)
    raise_it = {"kind": "reply", "approve": True, "decision_id": "d1", "budget": "tokens=1000"}
    card._message(card, raise_it, [])
    text = "budget raised to tokens=1000; the project is running"
    assert said == [{"kind": "outcome", "ok": True, "text": text}]
    assert controller.status == "running" and controller.state.budget["project"]["tokens"] == 1000


def drawn(board: Dashboard) -> dict[str, str]:
    """Each stage's state as the dashboard's graph draws it."""
    return dict(board.graph.view["states"])


def test_the_panel_is_sent_the_stage_states_the_dashboard_draws(over_budget, tmp_path):
    """One rule for both screens: at a budget stop and in a failed project, the states the
    server sends the side panel are the ones the dashboard draws."""
    controller, board = over_budget
    at_budget = server_data.project_detail(tmp_path, "ws")["graph"]["states"]
    assert at_budget == drawn(board) and at_budget["a"] == "waiting"
    controller.fail("the test failed it")
    board.tick()
    failed = server_data.project_detail(tmp_path, "ws")["graph"]["states"]
    assert failed == drawn(board) and failed["a"] == "failed"


def test_the_worker_table_counts_calls_and_follows_status(project, make_board):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    bus.emit("session.start", "started", worker_id="w1", stage="a", data={"role": "worker"})
    burst(bus, 6)
    bus.emit(
        "session.end",
        "turn ended: completed",
        worker_id="w1",
        stage="a",
        data={"status": "completed"},
    )
    board.tick()
    board.refresh()
    row = board._rows["w1"]
    assert (row.model_calls, row.tool_calls, row.status) == (3, 3, "completed")
    assert 'data-worker="w1"' in board.workers.value and "completed" in board.workers.value


def test_the_graph_and_status_line_follow_the_controller(project, make_board, produce):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    assert drawn(board)["a"] == "current"
    assert "running" in board.status_line.value and "find x" in board.status_line.value
    produce(controller)
    controller.finish_stage("a done", (), "gate")
    board.tick()
    assert (drawn(board)["a"], drawn(board)["gate"]) == ("visited", "current")


def _to_gate(controller, produce) -> None:
    produce(controller)
    controller.finish_stage("a done", (), "gate")
    produce(controller)
    assert controller.finish_stage("The brief says: go.", ()).accepted
    assert controller.status == "waiting_user"


def _answers(controller) -> list[tuple]:
    """The decisions the project took: `(id, approve, comment, to, source)`."""
    return [
        (d["id"], d["approve"], d["comment"], d.get("to"), d["source"])
        for d in controller.state.decisions
    ]


def reply_over_comm(board, approve, decision_id, comment="", to=None):
    """What the gate card's comm fallback delivers (no server extension answered), and what
    the card hears back."""
    sent = []
    board.gate.actions.send = sent.append
    board.gate.actions._message(
        None,
        {
            "kind": "reply",
            "approve": approve,
            "comment": comment,
            "to_stage": to,
            "decision_id": decision_id,
        },
        [],
    )
    return sent


def test_a_gate_click_replies_exactly_once(project, make_board, produce):
    controller, bus, buffer = project
    source = ControllerSource(controller)
    board = make_board(source, buffer, start=False)
    assert board.gate.widget.layout.display == "none"
    _to_gate(controller, produce)
    board.tick()
    gate = board.gate
    assert gate.widget.layout.display == ""
    assert gate.actions.card["id"] == "d1"
    assert gate.actions.card["heading"] == "◆ Approve gate and move on to b?"
    assert [o["data"].get("text/markdown") for o in gate.preview.outputs][0] == "**`out/brief.md`**"
    assert gate.actions.card["targets"][0] == ["a (default)", "a"]  # the default comes first

    [first] = reply_over_comm(board, True, "d1", "looks good")
    [second] = reply_over_comm(board, True, "d1")
    [other] = reply_over_comm(board, False, "d1", "no")
    assert gate.replies == 1
    assert _answers(controller) == [("d1", True, "looks good", "b", "widget")]
    assert first["ok"] and first["text"].startswith("gate approved")
    assert (
        second["text"]
        == other["text"]
        == ("decision d1 is no longer waiting here; nothing changed")
    )
    assert gate.actions.outcome == {"state": "sent", "text": first["text"]}
    board.tick()  # the card folds to how the decision went
    assert gate.actions.card["settled"]
    assert gate.actions.outcome["state"] == "settled"
    assert gate.actions.outcome["text"].startswith("✔ approved gate → b from the dashboard")
    assert controller.stage == "b"


def test_the_gate_preview_of_a_planted_link_shows_the_refusal(
    project, make_board, produce, tmp_path
):
    controller, _, buffer = project
    key = tmp_path / "id_rsa"
    key.write_text(SECRET)
    board = make_board(ControllerSource(controller), buffer, start=False)
    _to_gate(controller, produce)
    root = controller.workspace.root
    sandboxed(root, f"rm out/brief.md && ln -s {key} out/brief.md")
    board.tick()
    [head, body] = [o["data"] for o in board.gate.preview.outputs]
    assert head["text/plain"] == "out/brief.md"
    assert body == {
        "text/plain": f"{root}/out/brief.md: is a symbolic link (to {key}); "
        "LightScientist does not follow links in a workspace"
    }


def test_a_reject_goes_to_the_default_target_unless_told_otherwise(project, make_board, produce):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    _to_gate(controller, produce)
    board.tick()
    reply_over_comm(board, False, "d1", "needs more data")
    assert _answers(controller) == [("d1", False, "needs more data", "a", "widget")]
    assert controller.stage == "a" and "needs more data" in controller.state.feedback

    _to_gate(controller, produce)
    board.tick()
    [refused] = reply_over_comm(board, False, "d2", "", "nowhere")
    assert refused["text"].startswith("not applied") and "nowhere" in refused["text"]
    assert board.gate.actions.outcome["state"] == "refused"
    assert controller.status == "waiting_user" and controller.state.pending.id == "d2"


def test_a_late_panel_never_answers_a_newer_decision(project, make_board, produce):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    _to_gate(controller, produce)
    board.tick()
    controller.reply(False, "again", "a", source=ReplySource.CLI)  # answered elsewhere
    _to_gate(controller, produce)  # a new decision, d2
    assert board.gate.decide(True) == (  # the panel still shows d1
        "decision d1 was already answered (rejected via cli); nothing changed"
    )
    assert _answers(controller) == [("d1", False, "again", "a", "cli")]  # d1 stays answered
    assert controller.status == "waiting_user" and controller.state.pending.id == "d2"
    assert board.gate.actions.outcome == {
        "state": "refused",
        "text": "decision d1 was already answered (rejected via cli); nothing changed",
    }
    board.tick()
    assert board.gate.pending.id == "d2"
    board.gate.decide(True)
    assert controller.stage == "b"


def test_the_static_fallback_has_svg_and_text(project, make_board):
    controller, bus, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    burst(bus, 3)
    board.tick()
    bundle = board._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    # what the JupyterLab extension draws from once the widget is gone
    assert bundle[PROJECT_MIME] == {"root": str(controller.workspace.root)}
    page = bundle["text/html"]
    assert "<title>stage graph: a (running)</title>" in page
    assert 'data-stage="a" data-state="current"' in page and "find x" in page
    assert page.count(" L3 tool.call ") == 2 and page.count(" L3 model.call ") == 1
    text = bundle["text/plain"].splitlines()
    assert text[:2] == [
        "LightScientist · find x",
        f"running at a · mode manual · model offline · {controller.workspace.root}",
    ]
    assert [line.split()[2] for line in text[-3:]] == ["tool.call", "model.call", "tool.call"]


def test_the_flusher_ends_after_the_project_ends(project, make_board):
    controller, bus, buffer = project
    source = ControllerSource(controller)
    board = make_board(source, buffer, interval=0.02)
    controller.cancel("enough")
    source.is_running = False
    deadline = time.monotonic() + 5
    while board.flusher.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not board.flusher.alive and board.finished
    assert "cancelled" in board.status_line.value and "enough" in board.status_line.value


def test_a_run_that_ended_in_this_kernel_is_shown_as_not_running(project, make_board):
    """The status line names the runner; when the run's thread ends (and with it its lock),
    the line's last word must be 'not running', not the stale 'run by another process'."""
    controller, bus, buffer = project
    source = ControllerSource(controller)
    board = make_board(source, buffer, interval=0.02)
    assert "running in this kernel" in board.status_line.value
    controller.cancel("enough")
    source.live = source.is_running = False  # what `api.Run` reports once its thread ended
    deadline = time.monotonic() + 5
    while board.flusher.alive and time.monotonic() < deadline:
        time.sleep(0.02)
    assert board.finished
    assert "not running" in board.status_line.value, board.status_line.value


def test_a_dashboard_on_disk_follows_another_process(workspace, small_table, make_board, produce):
    """Nothing runs in this process: the dashboard polls `events.jsonl` and `state.json`."""
    writer = JsonlWriter(workspace.events_file)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    controller = ResearchController.create(
        workspace, "on disk", mode="manual", table=small_table, bus=bus
    )
    try:
        view = api.ProjectView(workspace)
        board = make_board(view, None, start=False)
        assert board.events.received == 1  # the log so far
        burst(bus, 7, worker="w9")
        produce(controller)
        controller.finish_stage("a done", (), "gate")
        board.tick()
        assert board.events.events[-1]["seq"] == bus.next_seq - 1
        assert board._rows["w9"].model_calls == 3
        assert drawn(board)["gate"] == "current"
    finally:
        writer.close()


def test_errors_in_a_tick_are_kept_not_printed(capfd):
    calls = []

    def tick() -> bool:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("boom")
        return len(calls) < 3

    flusher = Flusher(tick, interval=0.01).start()
    deadline = time.monotonic() + 5
    while flusher.alive and time.monotonic() < deadline:
        time.sleep(0.01)
    assert list(flusher.errors) == ["RuntimeError: boom"] and len(calls) == 3
    assert capfd.readouterr() == ("", "")


def test_worker_fold_reads_a_real_log(tmp_path: Path):
    rows = workers.fold_all(
        [
            {
                "seq": 1,
                "ts": 1.0,
                "type": "session.start",
                "worker_id": "supervisor",
                "stage": "a",
                "data": {"role": "supervisor"},
            },
            {"seq": 2, "ts": 2.0, "type": "worker.created", "worker_id": "w1", "stage": "a"},
            {
                "seq": 3,
                "ts": 3.0,
                "type": "worker.status",
                "worker_id": "w1",
                "stage": "a",
                "data": {"from": "running", "to": "waiting"},
            },
            {"seq": 4, "ts": 4.0, "type": "stage.start", "worker_id": None, "stage": "b"},
        ]
    )
    assert set(rows) == {"supervisor", "w1"}
    assert rows["supervisor"].role == "supervisor" and rows["w1"].status == "waiting"
    assert workers.render_html({}) == '<div class="ls-workers ls-muted">no workers yet</div>'
    # a status in a researcher's words, the code's word in its tooltip
    rows["supervisor"].status = "background"
    drawn = workers.render_html(rows)
    assert '<span class="ls-chip" title="background">idle</span>' in drawn
    assert 'data-status="waiting_user" title="waiting">waiting for input</span>' in drawn


def test_a_finished_projects_status_line_says_done_once():
    common = {"goal": "g", "visit": 1, "runner": "r", "mode": "m", "model": "o", "events": 9}
    line = functools.partial(status_line.render, elapsed="39s", root=Path("/ws"), **common)
    running = line(status="running", stage="paper.write")
    assert '<span class="ls-chip ls-code" title="current stage">paper.write</span>' in running
    done = line(status="done", stage="done")
    assert "current stage" not in done  # not "done · done"
    assert done.count(">done<") == 1


def test_the_search_card_draws_the_tree_as_its_nodes_change(tmp_path, write_table, make_board):
    table = load_table(write_table(tmp_path / "table", search_table()))
    workspace = Workspace.at(tmp_path / "ws")
    bus, buffer = EventBus(), EventBuffer()
    bus.subscribe(buffer)
    controller = ResearchController.create(workspace, "find x", table=table, bus=bus)
    board = make_board(ControllerSource(controller), buffer, start=False)
    card = board.tree.widget  # drawn by the panel's SearchBox (labextension/src/tree.ts)
    assert card.layout.display != "none"
    assert card.card["drawing"] is None and card.card["note"] == "no node has started yet"

    controller.search_next()
    controller.search_node_started("n001")
    board.tick()
    nodes = {n["id"]: n for n in card.card["drawing"]["nodes"]}
    assert set(nodes) == {"n001", "n002"} and not any(n["best"] for n in nodes.values())

    controller.search_node_ended("n001", metric=0.25, summary="lr 0.01")
    board.tick()
    drawing = card.card["drawing"]
    nodes = {n["id"]: n for n in drawing["nodes"]}
    assert drawing["best"] == "n001" and nodes["n001"]["best"] and not nodes["n002"]["best"]
    assert nodes["n001"]["summary"] == "lr 0.01"  # in its hover text
    assert drawing["words"].startswith("search tree of loss (min)")
    assert drawing == search_card(workspace, table)["drawing"]  # what the panel is sent

    # a node picked (no server here: the kernel is asked) is shown whole, and its card
    # follows it as it ends
    card.picked = "n002"
    assert card.node["id"] == "n002" and card.node["answer"]["node"]["status"] == "running"
    assert card.node["answer"]["log"] is None  # the node ran no job
    controller.search_node_ended("n002", metric=None, summary="NaN at step 3")
    board.tick()
    shown = card.node["answer"]["node"]
    assert (shown["status"], shown["summary"]) == ("failed", "NaN at step 3")
    card.picked = "n404"
    assert card.node["id"] == "n404" and "n404" in card.node["error"]
    card.picked = ""
    assert card.node == {}


def test_a_table_without_search_has_no_search_card(project, make_board):
    controller, _, buffer = project
    board = make_board(ControllerSource(controller), buffer, start=False)
    assert board.tree.widget.layout.display == "none" and board.tree.widget.card is None


@pytest.fixture
def at_review(workspace, write_table, tmp_path, produce):
    """A project of `REVIEW_TABLE` at its review gate, the reviews of round 2 written."""
    table = load_table(write_table(tmp_path / "review-table", REVIEW_TABLE))
    controller = ResearchController.create(workspace, "find x", mode="manual", table=table)
    produce(controller)
    assert controller.finish_stage("paper written", (), "review").accepted
    write_reviews(workspace.root)
    assert controller.finish_stage("Three reviews; the mean meets the bar.", ()).accepted
    assert controller.status == "waiting_user"
    return controller


def test_the_gate_card_at_the_review_shows_each_reviewer_s_scores(at_review, make_board):
    board = make_board(ControllerSource(at_review), EventBuffer(), start=False)
    board.tick()
    reviews = board.gate.actions.card["reviews"]
    assert reviews["columns"] == ["soundness", "presentation", "contribution", "overall"]
    assert [(r["reviewer"], r["scores"], r["decision"]) for r in reviews["reviews"]] == [
        (n, SCORES[n], DECISIONS[n]) for n in (1, 2, 3)
    ]
    assert reviews["summary"] == "round 2: mean 6 against accept 6 — accept"
    assert (reviews["round"], reviews["decision"], reviews["required_changes"]) == (
        2,
        "accept",
        [],
    )
    assert (reviews["earlier_round"], reviews["earlier_changes"]) == (1, EARLIER_CHANGES)


def test_the_gate_card_of_a_damaged_meta_says_so_in_one_line(at_review, make_board):
    (at_review.workspace.root / META_FILE).write_text("{", encoding="utf-8")
    board = make_board(ControllerSource(at_review), EventBuffer(), start=False)
    board.tick()
    reviews = board.gate.actions.card["reviews"]
    assert reviews["problems"] == [
        "paper/reviews/meta.json is damaged: not JSON (Expecting property name enclosed in "
        "double quotes at line 1)"
    ]
    assert len(reviews["reviews"]) == 3 and reviews["round"] is None


def test_a_gate_that_is_no_review_shows_no_reviews(project, make_board, produce):
    controller, bus, buffer = project
    write_reviews(controller.workspace.root)  # a review's files, at a gate that is not one
    board = make_board(ControllerSource(controller), buffer, start=False)
    _to_gate(controller, produce)
    board.tick()
    assert board.gate.actions.card["reviews"] is None
