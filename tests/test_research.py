"""The full research run from the command line, offline: the three layers joined.

Each test runs the real `lightscientist` command in a subprocess on an empty folder with the
offline model, then reads what a user would: the exit code and last line, the files, PROCESS.md,
the worker records and the event log.
"""

from __future__ import annotations

import csv
import itertools
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from support.waiting import sigkill_in_experiment_loop

from lightscientist_jupyter.controller import default_table_path, load_table
from lightscientist_jupyter.memory import open_store
from lightscientist_jupyter.supervisor.prompts import PROCESS_DIGEST_CHARS

REPO = Path(__file__).resolve().parents[1]
HAPPY_PATH_TYPES = {
    "stage.start",
    "stage.finish",
    "stage.transition",
    "worker.created",
    "worker.status",
    "supervisor.event",
    "supervisor.decision",
    "resume.fired",  # the workers that waited for their jobs (the nodes), resumed by layer 2
    "job.submitted",
    "job.finished",
    "session.start",
    "session.end",
    "model.call",
    "model.output",
    "tool.call",
    "tool.result",
    "worker.waiting",
    "worker.background",
    "search.node",  # the experiment's search: its nodes created, started and finished
    "review.meta",  # the paper's review rounds aggregated by layer 1
    "memory.filed",  # each stage's finding, the project's lessons (its memory is empty at the
    # start: no `memory.recall`, see test_memory_projects)
}


def cli(ws: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )


def last_line(proc: subprocess.CompletedProcess) -> str:
    lines = proc.stdout.strip().splitlines()
    return lines[-1] if lines else ""


def events(ws: Path) -> list[dict]:
    lines = (ws / ".lightscientist" / "events.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]  # every line must parse


def state(ws: Path) -> dict:
    return json.loads((ws / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


def workers(ws: Path) -> list[dict]:
    folder = ws / ".lightscientist" / "workers"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*/worker.json"))]


def process_keys(ws: Path) -> list[str]:
    return re.findall(r"<!-- entry: (\S+) -->", (ws / "PROCESS.md").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_auto_run_reaches_done_with_every_layer_exercised(tmp_path):
    ws = tmp_path / "project"
    proc = cli(ws, "research", "Does learning-rate warmup help a small MLP?", "--mode", "auto")
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == "done"

    table = load_table()
    for stage in table:
        for output in stage.outputs:
            assert (ws / output).is_file() and (ws / output).stat().st_size > 0, output

    st = state(ws)
    finished = [h for h in st["history"] if h["by"] in ("finish", "auto", "revise")]
    keys = process_keys(ws)
    assert len(keys) == len(finished) == len(set(keys))
    # each stage once (the experiment loop is a search, its worker writes from the tree), but
    # the paper: the reviewers' first round sent it back to be revised, once
    twice = {"paper.write", "paper.review"}
    assert st["visits"] == {stage.id: 2 if stage.id in twice else 1 for stage in table}

    log = events(ws)
    # every kind of event of a clean run, and none of a troubled one (no rejection, stall,
    # cancellation or question to the user)
    assert {e["type"] for e in log} == HAPPY_PATH_TYPES
    seqs = [e["seq"] for e in log]
    assert seqs == list(range(1, len(seqs) + 1))

    # two probe workers ran at the same time
    probes = [
        w["id"] for w in workers(ws) if w.get("labels", {}).get("label", "").startswith("probe ")
    ]
    assert len(probes) == 2
    spans = {}
    for e in log:
        if e["worker_id"] in probes and e["type"] in ("session.start", "session.end"):
            spans.setdefault(e["worker_id"], []).append(e["seq"])
    (a0, a1), (b0, b1) = [(min(spans[p]), max(spans[p])) for p in probes[:2]]
    assert a0 < b1 and b0 < a1, "the probe workers' sessions did not overlap"

    # workers went to the background (a node waiting for its job) and layer 2 resumed each
    bg = [e["worker_id"] for e in log if e["type"] == "worker.background"]
    fired = [e["worker_id"] for e in log if e["type"] == "resume.fired"]
    assert bg and sorted(bg) == sorted(fired)
    assert all(w["status"] == "completed" for w in workers(ws) if w["id"] in bg)

    # the experiment was a best-first search: 8 nodes, drafts, a fix and improvements, two
    # at a time, and the best beats the first draft; the paper reports the best's metric
    tree = json.loads((ws / "experiment" / "tree.json").read_text(encoding="utf-8"))
    nodes = tree["nodes"]
    assert len(nodes) >= 8
    assert {"draft", "improve", "debug"} <= {n["kind"] for n in nodes}
    fixes = [n for n in nodes if n["kind"] == "debug"]
    assert any(n["status"] == "ok" for n in fixes)  # the failed draft's bug was fixed
    best = next(n for n in nodes if n["id"] == tree["best"])
    first = next(n for n in nodes if n["kind"] == "draft")
    assert best["metric"] < first["metric"]
    spans = sorted((n["started"], n["ended"]) for n in nodes)
    assert any(b0 < a1 for (_, a1), (b0, _) in itertools.pairwise(spans)), spans
    # the fix is one real edit of the failed node's script, its parent's log the traceback
    fix = next(n for n in fixes if n["status"] == "ok")
    shown = cli(ws, "tree", "--node", fix["id"], "--json")
    assert shown.returncode == 0, shown.stderr
    detail = json.loads(shown.stdout)
    edited = [c for c in detail["changes"] if c["status"] == "changed"]
    assert detail["against"] == fix["parent"] and len(edited) == 1, detail["changes"]
    removed = [line for line in edited[0]["lines"] if line.startswith("-") and line[1:2] != "-"]
    added = [line for line in edited[0]["lines"] if line.startswith("+") and line[1:2] != "+"]
    assert len(removed) == len(added) == 1 and "EPOCHS" in added[0], edited[0]["lines"]
    failed = json.loads(cli(ws, "tree", "--node", fix["parent"], "--json").stdout)
    assert any("NameError" in line for line in failed["log_tail"]), failed["log_tail"]
    paper = (ws / "paper" / "paper.tex").read_text(encoding="utf-8")
    assert f"Best node: {best['id']}" in paper and f"final\\_loss {best['metric']:.4g}" in paper

    # the paper's numbers were checked against the results by the review script
    review = (ws / "paper" / "review.md").read_text(encoding="utf-8")
    assert "all checks passed" in review
    assert (ws / "paper" / "figures" / "figure1.png").read_bytes()[:4] == b"\x89PNG"

    # the paper as a PDF a TeX engine made: pages, its figure, its references, its numbers
    pdf = ws / "paper" / "paper.pdf"
    info = subprocess.run(["pdfinfo", str(pdf)], capture_output=True, text=True, check=True)
    assert "pdfTeX" in info.stdout and int(re.search(r"Pages:\s+(\d+)", info.stdout)[1]) >= 2
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "References" in text and "Ablation over the search" in text
    images = subprocess.run(["pdfimages", "-list", str(pdf)], capture_output=True, text=True)
    assert len(images.stdout.splitlines()) >= 3, images.stdout  # a header, a rule, figure 1
    summary_text = (ws / "experiment" / "summary.csv").read_text(encoding="utf-8")
    summary = list(csv.DictReader(summary_text.splitlines()))
    finite = [r for r in summary if r["metric"] == "final_loss" and r["mean"] != "inf"]
    assert any(f"{float(r['mean']):.4g}" in text for r in finite)

    # the analysis is a notebook the worker wrote and ran: valid, every code cell run, no
    # error output; run again by a reader from a clean copy, it writes the same summary.csv;
    # the paper's numbers trace to its cells
    analysis = nbformat.read(ws / "experiment" / "analysis.ipynb", as_version=4)
    nbformat.validate(analysis)
    code = [c for c in analysis.cells if c.cell_type == "code"]
    assert code and all(c.execution_count for c in code)
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    copy = tmp_path / "copy"
    shutil.copytree(ws / "experiment", copy / "experiment")
    (copy / "experiment" / "summary.csv").unlink()
    rerun = nbformat.read(copy / "experiment" / "analysis.ipynb", as_version=4)
    NotebookClient(
        rerun, timeout=120, resources={"metadata": {"path": str(copy / "experiment")}}
    ).execute()
    assert (copy / "experiment" / "summary.csv").read_text(encoding="utf-8") == summary_text
    traced = cli(ws, "check", "paper/paper.tex")
    assert "experiment/analysis.ipynb cell table (output 1: " in traced.stdout, traced.stdout

    # three reviewers, each its own session: the first round sent the paper back with the
    # changes they asked for, the revision made them, the second round accepted
    meta = json.loads((ws / "paper" / "reviews" / "meta.json").read_text(encoding="utf-8"))
    assert (meta["round"], meta["decision"]) == (2, "accept") and meta["mean"] >= 6
    assert [(r["round"], r["decision"]) for r in meta["rounds"]] == [(1, "revise")]
    assert len(meta["rounds"][0]["required_changes"]) == 2
    assert sorted(r["reviewer"] for r in meta["reviews"]) == [1, 2, 3]
    assert all(isinstance(r["overall"], int) for r in meta["reviews"])
    reviewers = [
        w for w in workers(ws) if w.get("labels", {}).get("label", "").startswith("reviewer ")
    ]
    assert len(reviewers) == 6 and len({w["thread_id"] for w in reviewers}) == 6
    response = (ws / "paper" / "response.md").read_text(encoding="utf-8")
    assert response.count("**Done:** added") == 2
    assert "Round 1: mean overall 5.0 against 6.0 to accept: revise" in review


@pytest.mark.slow
def test_manual_mode_waits_at_each_gate_and_a_reject_goes_back(tmp_path):
    ws = tmp_path / "project"
    proc = cli(ws, "research", "Does warmup help?")
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == "waiting_user"
    st = state(ws)
    assert st["stage"] == "idea.gate" and st["pending"]["outputs"] == ["idea/brief.md"]

    proc = cli(ws, "reply", "n", "--comment", "be bolder", "--to", "idea.generate")
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == "waiting_user" and state(ws)["stage"] == "idea.gate"
    assert state(ws)["visits"]["idea.generate"] == 2
    second = [w for w in workers(ws) if w.get("task_id") == "idea.generate#2"]
    assert second, "no worker ran idea.generate a second time"
    task = (ws / ".lightscientist" / "workers" / second[0]["id"] / "task.md").read_text()
    assert "be bolder" in task
    # the rejection's lessons: in the researcher's words (layer 1) and drawn by a worker
    # before idea.generate ran again (the occasion `reject:d1`, once)
    with open_store() as store:
        lessons = {e.key: e.to_dict() for e in store.entries(kinds=["lesson"])}
    assert set(lessons) == {"lesson:idea.gate#1", "lesson:reject:d1#1"}
    assert "be bolder" in lessons["lesson:idea.gate#1"]["text"]
    drawn = lessons["lesson:reject:d1#1"]
    assert drawn["source"] == "worker" and drawn["stage"] == "idea.gate"
    assert (
        "rejected 'idea.gate' at its gate and sent the project back to 'idea.generate'"
        in (drawn["text"])
    )
    assert "“be bolder”" in drawn["text"]
    drew = [w for w in workers(ws) if w.get("stage") == "lessons"]
    assert len(drew) == 1 and drew[0]["created_at"] < second[0]["created_at"]

    for gate, after in (
        ("idea.gate", "experiment.gate"),
        ("experiment.gate", "paper.review"),
        ("paper.review", "done"),
    ):
        assert state(ws)["stage"] == gate
        proc = cli(ws, "reply", "y")
        assert proc.returncode == 0, proc.stderr
        assert state(ws)["stage"] == after
    assert last_line(proc) == "done"
    text = (ws / "PROCESS.md").read_text(encoding="utf-8")
    assert text.count("Decision: approved by the user") == 3
    assert "be bolder" in text
    assert len([w for w in workers(ws) if w.get("stage") == "lessons"]) == 2  # and at the end


@pytest.mark.slow
def test_sigkill_in_experiment_loop_then_resume_finishes_without_duplicates(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    command = [sys.executable, "-m", "lightscientist_jupyter", "research", "x", "--mode", "auto"]
    sigkill_in_experiment_loop(
        [*command, "--workspace", str(ws)],
        ws / ".lightscientist" / "events.jsonl",
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    assert (state(ws)["stage"], state(ws)["status"]) == ("experiment.loop", "running")
    shown = cli(ws, "status")  # the file says running, but no process runs it
    assert last_line(shown) == "interrupted", shown.stdout
    assert "reason:  no process runs it" in shown.stdout
    assert "`lightscientist resume` continues it" in shown.stdout
    info = json.loads(cli(ws, "status", "--json").stdout)
    assert (info["status"], info["runner"]) == ("interrupted", None)
    assert "`lightscientist resume` continues it" in info["reason"]

    proc = cli(ws, "resume")
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == "done"
    keys = process_keys(ws)
    assert len(keys) == len(set(keys))
    assert "experiment.loop#1" in keys and "paper.review#1" in keys
    # the search went on where it was: no node made twice, none left running, no job of a
    # node run twice (a node the kill cut short goes on in its revived worker)
    tree = json.loads((ws / "experiment" / "tree.json").read_text(encoding="utf-8"))
    ids = [n["id"] for n in tree["nodes"]]
    assert len(ids) == len(set(ids)) == 8
    assert {n["status"] for n in tree["nodes"]} <= {"ok", "failed", "cancelled"}
    names = [e["data"]["job"]["name"] for e in events(ws) if e["type"] == "job.submitted"]
    assert len(names) == len(set(names)), names


@pytest.mark.slow
def test_thirty_loops_keep_every_prompt_bounded(tmp_path):
    stages = tmp_path / "stages"
    shutil.copytree(default_table_path().parent, stages)
    toml = stages / "research.toml"
    # thirty batches of the plain loop: without the experiment's search, which visits it once
    text = re.sub(r"(?m)^search = .*\n", "", toml.read_text())
    toml.write_text(text.replace("max_visits = 20", "max_visits = 40"))
    ws = tmp_path / "project"
    proc = cli(
        ws,
        "research",
        "x",
        "--mode",
        "auto",
        "--stage",
        "experiment.setup",
        "--stages",
        str(toml),
        "--model",
        "offline:loops=30",
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr
    assert last_line(proc) == "done"
    assert state(ws)["visits"]["experiment.loop"] == 30

    log = events(ws)
    decisions, in_turn = [], False
    for e in log:  # the supervisor's input at each decision: its first model call per event
        if e["type"] == "supervisor.event":
            in_turn = True
        elif in_turn and e["type"] == "model.call" and e["worker_id"] == "supervisor":
            decisions.append(e["data"]["input_chars"])
            in_turn = False
    # every scheduling event got a decision, and 30 loops make at least two events each
    assert len(decisions) == [e["type"] for e in log].count("supervisor.event") >= 60
    assert max(decisions) <= 1.2 * statistics.median(decisions)

    first_prompts = [e["data"]["first_prompt_chars"] for e in log if e["type"] == "worker.created"]
    bound = PROCESS_DIGEST_CHARS + 2500
    assert len((ws / "PROCESS.md").read_text()) > PROCESS_DIGEST_CHARS  # the digest was needed
    assert max(first_prompts) <= bound
    newest = max(workers(ws), key=lambda w: w["created_at"])
    task = (ws / ".lightscientist" / "workers" / newest["id"] / "task.md").read_text()
    assert "## Earlier entries (one line each; PROCESS.md has them all)" in task  # and used


@pytest.mark.slow  # runs a project through the agent stack
def test_cancel_from_another_terminal_stops_the_run(tmp_path):
    ws = tmp_path / "project"
    ws.mkdir()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lightscientist_jupyter",
            "research",
            "x",
            "--mode",
            "auto",
            "--stage",
            "experiment.setup",
            "--model",
            "offline:loops=15",
            "--workspace",
            str(ws),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    log = ws / ".lightscientist" / "events.jsonl"
    try:
        deadline = time.monotonic() + 120
        while not (log.exists() and '"stage":"experiment.loop"' in log.read_text()):
            assert time.monotonic() < deadline, "the run never reached experiment.loop"
            time.sleep(0.05)
        proc = cli(ws, "cancel")
        assert proc.returncode == 0, proc.stderr
        assert "cancel request sent" in proc.stdout
        out, err = child.communicate(timeout=60)
    finally:
        child.kill()
    assert out.strip().splitlines()[-1] == "cancelled", err
    assert child.returncode == 1  # the README: 1 for failed and cancelled
    st = state(ws)
    assert st["status"] == "cancelled" and st["stage"] == "experiment.loop"
    assert st["visits"]["experiment.loop"] < 15
    left = {w["id"]: w["status"] for w in workers(ws) if w["role"] == "worker"}
    cancelled = {e["worker_id"] for e in events(ws) if e["type"] == "worker.cancelled"}
    # the worker the cancel caught (if one was running) says so; every other one finished
    assert left == {wid: "cancelled" if wid in cancelled else "completed" for wid in left}, left


@pytest.mark.slow  # runs a project through the agent stack
def test_a_supervisor_model_that_does_nothing_fails_the_stage_instead_of_hanging(tmp_path):
    from support.chat_server import ChatServer, answer

    server = ChatServer().play(answer("continue"))  # never starts a worker, never finishes
    try:
        ws = tmp_path / "project"
        proc = cli(
            ws,
            "research",
            "x",
            "--mode",
            "auto",
            "--model",
            "lazy-model",
            "--base-url",
            server.base_url,
            "--skip-model-check",  # the model check would refuse it: see test_model_check.py
            timeout=120,
        )
    finally:
        server.close()
    assert proc.returncode == 1, proc.stderr
    assert last_line(proc) == "failed"
    assert "no worker running 3 times in a row; its agents made no tool call" in proc.stdout
    st = state(ws)
    assert st["status"] == "failed" and st["stage"] == "idea.survey"
    kinds = [
        e["data"]["event"]["kind"]
        for e in events(ws)
        if e["type"] == "supervisor.event" and "event" in e["data"]
    ]
    assert kinds == ["stage_started", "stage_idle", "stage_idle", "stage_idle"]
    # the real client sent chat completions, not the Responses API, with our tools bound
    assert server.requests and all("messages" in r for r in server.requests)
    assert {t["function"]["name"] for t in server.requests[0]["tools"]} >= {
        "start_worker",
        "finish_stage",
        "schedule_resume",
    }
