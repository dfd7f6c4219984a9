"""A search stage end to end through the real `ChatOpenAI` client against the scripted chat
server: layer 2 runs the nodes layer 1 asks for, two at a time, reads each metric from the
result file the node's command wrote, fixes a failed draft, improves the best node, and only
then wakes the supervisor agent, once (`search_over`); the stage's worker writes the report
and the project ends done. The agent's input never names a node."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import _write_table
from support.chat_server import ChatServer, answer, tool_call
from support.real_run import (
    GOAL,
    answers_given,
    cli,
    events,
    field,
    is_model_check,
    research_auto,
    supervisor_turn,
    worker_task,
)
from support.tables import search_table
from support.waiting import wait_for

pytestmark = pytest.mark.slow

TABLE = search_table(nodes=5, parallel=2, debug_depth=1)

PAUSE_S = {"value": 0.5}
"""How long a node's script runs: long enough for two nodes to overlap (the kill test
makes it longer, to kill the run while a node runs)."""

SCRIPT = """\
import json, sys, time
loss = float(sys.argv[1])
time.sleep({pause})
if loss < 0:
    raise SystemExit("the variant diverged")
json.dump({{"loss": loss}}, open("{result}", "w"))
"""


def node_loss(task: str) -> float:
    """The scripted node's loss: the second draft fails, a fix gets 0.45, an improvement
    takes 0.1 off its parent's."""
    kind, node = field(task, "node_kind"), field(task, "node")
    if kind == "draft":
        return -1.0 if node == "n002" else 0.5
    if kind == "debug":
        return 0.45
    return round(float(field(task, "parent_metric")) - 0.1, 4)


def searching_scientist(body: dict[str, Any]) -> dict[str, Any]:
    if is_model_check(body):
        return tool_call("report_word", word="ready")
    turn = supervisor_turn(body)
    if turn is not None:
        event, since = turn
        if since:
            return answer("done" if "event: worker_finished" in event else "continue")
        if "event: search_over" in event:
            return tool_call("start_worker")
        if "event: worker_finished" in event:
            return tool_call(
                "finish_stage",
                summary="The search ran.",
                outputs=["out/a.md"],
                next_stage="done",
            )
        return answer("continue")
    task = worker_task(body)
    node = field(task, "node")
    if node:
        folder, result = field(task, "node_dir"), field(task, "result_file")
        plan = [
            tool_call(
                "write_file",
                file_path=f"/{folder}/run.py",
                content=SCRIPT.format(result=result, pause=PAUSE_S["value"]),
            ),
            tool_call("execute", command=f"python3 {folder}/run.py {node_loss(task)}"),
            tool_call(
                "complete_stage",
                summary=f"{node}: loss {node_loss(task)}",
                outputs=[f"{folder}/run.py"],
                next_stage="done",
            ),
        ]
    else:
        plan = [
            tool_call("read_file", file_path="/experiment/tree.json"),
            tool_call("write_file", file_path="/out/a.md", content="# Report\n\nBest node.\n"),
            tool_call(
                "complete_stage", summary="Reported.", outputs=["out/a.md"], next_stage="done"
            ),
        ]
    return plan[min(answers_given(body), len(plan) - 1)]


@pytest.fixture
def server():
    server = ChatServer().answer_with(searching_scientist)
    yield server
    server.close()


def test_a_search_stage_runs_its_nodes_then_its_worker(tmp_path: Path, server: ChatServer):
    table = _write_table(tmp_path / "table", TABLE)
    ws = tmp_path / "ws"
    proc = research_auto(ws, table, "some-model", "--base-url", server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr

    tree = json.loads((ws / "experiment" / "tree.json").read_text())
    nodes = {n["id"]: n for n in tree["nodes"]}
    assert len(nodes) == 5
    assert nodes["n002"]["status"] == "failed" and "the variant diverged" not in json.dumps(
        tree["metric"]
    )
    kinds = [n["kind"] for n in tree["nodes"]]
    assert kinds[:2] == ["draft", "draft"] and "debug" in kinds and "improve" in kinds
    fix = next(n for n in tree["nodes"] if n["kind"] == "debug")
    assert (fix["parent"], fix["status"], fix["metric"]) == ("n002", "ok", 0.45)
    best = nodes[tree["best"]]
    assert best["metric"] < nodes["n001"]["metric"] == 0.5
    assert best["files"] == [
        f"experiment/tree/{best['id']}/result.json",
        f"experiment/tree/{best['id']}/run.py",
    ]
    # two nodes ran at the same time
    spans = sorted((n["started"], n["ended"]) for n in tree["nodes"])
    assert any(a[1] > b[0] for a, b in itertools.pairwise(spans))

    told = [r for r in server.requests if supervisor_turn(r) is not None]
    heard = {field(supervisor_turn(r)[0], "event") for r in told}
    assert heard <= {"search_over", "worker_finished"}, heard
    assert not any("node: n0" in supervisor_turn(r)[0] for r in told)
    node_events = [e for e in events(ws) if e["type"] == "search.node"]
    assert [e["data"]["event"] for e in node_events].count("finished") == 5
    assert (ws / "out" / "a.md").is_file()


def test_a_run_killed_during_the_search_resumes_without_rerunning_a_finished_node(
    tmp_path: Path, server: ChatServer, monkeypatch
):
    monkeypatch.setitem(PAUSE_S, "value", 3.0)
    table = _write_table(tmp_path / "table", TABLE)
    ws = tmp_path / "ws"
    args = ["research", GOAL, "--mode", "auto", "--stages", str(table), "--model", "some-model"]
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lightscientist_jupyter",
            *args,
            "--base-url",
            server.base_url,
            "--workspace",
            str(ws),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    tree_file = ws / "experiment" / "tree.json"

    def midway() -> bool:
        """A node finished ok and another started, as the event log says. (Not the tree
        file: a kill the moment it shows a new node may fall before the node's `created`
        event is written — the tree is saved first — and the test would then measure that
        moment instead of a kill during the search.)"""
        try:
            said = [e["data"] for e in events(ws) if e["type"] == "search.node"]
        except (FileNotFoundError, ValueError):  # not yet, or a line being written
            return False
        ended = {d["id"] for d in said if d["event"] == "finished"}
        ok = any(d["event"] == "finished" and d["status"] == "ok" for d in said)
        return ok and any(d["event"] == "started" and d["id"] not in ended for d in said)

    try:
        wait_for(midway, "a finished node and a running one", within=120)
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.wait()
    before = {n["id"]: n for n in json.loads(tree_file.read_text())["nodes"]}
    finished = {k: n for k, n in before.items() if n["status"] != "running"}

    proc = cli(ws, "resume", "--base-url", server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    after = {n["id"]: n for n in json.loads(tree_file.read_text())["nodes"]}
    assert len(after) == 5
    for node_id, node in finished.items():  # a finished node is kept as it ended
        assert after[node_id] == node
    created = [
        e["data"]["id"]
        for e in events(ws)
        if e["type"] == "search.node" and e["data"]["event"] == "created"
    ]
    assert len(created) == len(set(created)) == 5  # no node created (run) twice
    left = [after[k] for k in before if before[k]["status"] == "running"]
    assert all(n["status"] in ("ok", "failed", "cancelled") for n in left)
