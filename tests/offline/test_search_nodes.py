"""The offline scientist playing the nodes of a search stage: drafts, improvements and fixes
that write real files, run real scripts as jobs and leave real result files.

Layer 2's part (which node to start, reading its metric) is played here by hand: each test
builds the node's task header as layer 2 does (the usual worker header plus the node fields),
lets a real runtime run the offline worker, waits for its job and resumes the worker with the
job's end, as `supervisor.jobs` does.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.runtime import copy_skill, finish, stage_task
from support.waiting import wait_for

from lightscientist_jupyter.controller.provenance import numbers
from lightscientist_jupyter.offline.history import History
from lightscientist_jupyter.offline.study import nodes
from lightscientist_jupyter.offline.study.files import script_files, script_text
from lightscientist_jupyter.offline.supervisor import decide_supervisor
from lightscientist_jupyter.runtime.jobs.manager import ended_message
from lightscientist_jupyter.runtime.protocol import TASK_TITLE, parse_header, render_header
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor.prompts import worker_message
from lightscientist_jupyter.vocab import SchedulingKind

STAGE = "experiment.loop"


def node_spec(
    table: Any, ws: Any, node: str, kind: str, parent: dict[str, Any] | None
) -> WorkerSpec:
    """The spec layer 2 hands down for one node: the stage's worker header plus the node's
    fields (`parent` is the parent's record as tree.json holds it)."""
    task = stage_task(table, ws, STAGE)
    _, fields = parse_header(worker_message(task, skill=copy_skill(ws, task), digest=""))
    fields.update(
        label=f"node {node}",
        node=node,
        node_kind=kind,
        node_dir=f"experiment/tree/{node}",
        result_file=f"experiment/tree/{node}/result.json",
        metric="final_loss",
        metric_goal="min",
    )
    if parent is not None:
        fields.update(
            node_parent=parent["id"],
            parent_dir=f"experiment/tree/{parent['id']}",
            parent_summary=parent["summary"],
            parent_metric=parent["metric"],
        )
    message = render_header(TASK_TITLE, fields, "Write and run this node.")
    return WorkerSpec(message=message, stage=STAGE, task_id=task.task_id, goal=task.goal)


def play(runtime: Any, ws: Any, spec: WorkerSpec) -> dict[str, Any]:
    """Run one node worker to its end (its job waited for, the worker resumed with the job's
    end); returns the node's record as tree.json would hold it."""
    wid = runtime.start(spec)
    record = finish(runtime, wid, timeout=60)
    assert record["status"] == "background", record
    jobs = [j for j in runtime.jobs.all() if j.worker_id == wid]
    assert len(jobs) == 1
    wait_for(lambda: not runtime.jobs.get(jobs[0].id).running, "the node's job", within=60)
    job = runtime.jobs.get(jobs[0].id)
    runtime.resume(wid, message=ended_message([job], ws.root))
    record = finish(runtime, wid, timeout=60)
    assert record["status"] == "completed", record
    fields = parse_header(spec.message)[1]
    result = ws.root / fields["result_file"]
    metric = None
    if result.exists():
        value = json.loads(result.read_text())["final_loss"]
        metric = value if isinstance(value, float) and math.isfinite(value) else None
    return {
        "id": fields["node"],
        "parent": fields.get("node_parent"),
        "kind": fields["node_kind"],
        "status": "ok" if metric is not None else "failed",
        "metric": metric,
        "summary": record["result"]["summary"],
        "commands": record["commands"],
        "job": job,
    }


def write_tree(ws: Any, records: list[dict[str, Any]]) -> None:
    """experiment/tree.json as layer 1 keeps it (the fields the worker reads)."""
    keys = ("id", "parent", "kind", "status", "metric", "summary")
    tree = {
        "metric": "final_loss",
        "goal": "min",
        "nodes": [{k: r[k] for k in keys} for r in records],
    }
    (ws.root / "experiment").mkdir(exist_ok=True)
    (ws.root / "experiment" / "tree.json").write_text(json.dumps(tree, indent=2))


def test_drafts_improvements_and_a_fix_are_real_scripts_run_as_jobs(make_runtime, table, ws):
    runtime = make_runtime()
    first = play(runtime, ws, node_spec(table, ws, "n001", "draft", None))
    buggy = play(runtime, ws, node_spec(table, ws, "n002", "draft", None))

    # the first draft ran as a job and its script wrote the metric
    assert first["status"] == "ok" and 0 < first["metric"] < 1
    assert first["job"].name == "node-n001" and first["job"].status == "succeeded"
    assert (ws.root / "experiment/tree/n001/search_node.py").read_text().count("LR = 0.2") == 1
    # the second draft carries a bug: its job failed with a traceback, and wrote no result
    assert buggy["status"] == "failed" and buggy["job"].status == "failed"
    log = (ws.root / buggy["job"].log).read_text()
    assert "Traceback" in log and "NameError: name 'EPOCH' is not defined" in log
    assert not (ws.root / "experiment/tree/n002/result.json").exists()
    assert "jobs/node-n002.log" in buggy["summary"] and "NameError" in buggy["summary"]

    write_tree(ws, [first, buggy])
    fix = play(runtime, ws, node_spec(table, ws, "n003", "debug", buggy))
    assert fix["status"] == "ok", fix["summary"]
    old = (ws.root / "experiment/tree/n002/search_node.py").read_text().splitlines()
    new = (ws.root / "experiment/tree/n003/search_node.py").read_text().splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert changed == [(a, a.replace("EPOCH -", "EPOCHS -")) for a, _ in changed]
    assert len(changed) == 1 and "EPOCH - WARMUP" in changed[0][0]
    assert "EPOCH (meant EPOCHS)" in fix["summary"]

    # two improvements of the best node at once try different moves, and both beat it
    write_tree(ws, [first, buggy, fix])
    a_spec = node_spec(table, ws, "n004", "improve", first)
    b_spec = node_spec(table, ws, "n005", "improve", first)
    pending = {"id": "n004", "parent": "n001", "kind": "improve", "status": "running"}
    write_tree(ws, [first, buggy, fix, {**pending, "metric": None, "summary": ""}])
    a = play(runtime, ws, a_spec)
    pending5 = {"id": "n005", "parent": "n001", "kind": "improve", "status": "running"}
    write_tree(ws, [first, buggy, fix, a, {**pending5, "metric": None, "summary": ""}])
    b = play(runtime, ws, b_spec)
    assert "more epochs" in a["summary"] and "higher lr" in b["summary"]
    assert a["metric"] < first["metric"] and b["metric"] < first["metric"]
    for improved, setting in ((a, "EPOCHS"), (b, "LR")):
        old = (ws.root / "experiment/tree/n001/search_node.py").read_text().splitlines()
        new = (ws.root / f"experiment/tree/{improved['id']}/search_node.py").read_text()
        diff = [(x, y) for x, y in zip(old, new.splitlines(), strict=True) if x != y]
        assert len(diff) == 1 and diff[0][0].startswith(f"{setting} = ")


def run_node(folder: Path, text: str) -> subprocess.CompletedProcess[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / nodes.SCRIPT).write_text(text)
    (folder / "study_design.py").write_text(script_text("study_design.py"))
    return subprocess.run(
        [sys.executable, str(folder / nodes.SCRIPT), str(folder / "result.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_best_first_moves_from_the_first_draft_find_a_better_configuration(tmp_path: Path):
    settings, text = nodes.draft_text(1)
    assert run_node(tmp_path / "d", text).returncode == 0
    first = json.loads((tmp_path / "d" / "result.json").read_text())["final_loss"]
    # the chain a best-first search follows when each improvement is its parent's first
    best, i = first, 0
    while (chosen := nodes.choose_move(settings, 0))[0] is not nodes.LAST_RESORT:
        move, after = chosen
        line = nodes.setting_line(text, move.setting)
        text = text.replace(line, nodes.with_value(line, move.setting, after))
        assert nodes.settings_of(text) == after
        proc = run_node(tmp_path / f"i{i}", text)
        assert proc.returncode == 0, proc.stderr
        loss = json.loads((tmp_path / f"i{i}" / "result.json").read_text())["final_loss"]
        assert loss < best, (move, after, loss, best)
        best, settings, i = loss, after, i + 1
    assert i == 2 and best < 0.5 * first


def test_the_bug_is_one_line_and_a_log_without_a_known_error_gets_no_fix(tmp_path: Path):
    _, good = nodes.draft_text(3)
    _, buggy = nodes.draft_text(nodes.BUGGY_DRAFT)
    differ = [(a, b) for a, b in zip(good.splitlines(), buggy.splitlines(), strict=True) if a != b]
    assert [d for d in differ if not d[0].startswith(("LR =", "SCHEDULE ="))] == [
        (differ[-1][0], differ[-1][0].replace("EPOCHS -", "EPOCH -"))
    ]
    # lines a sandbox's shell prints before the file do not move the fix off its line
    log = run_node(tmp_path / "b", buggy).stderr
    noise = "ls-cgroups: 2: cannot create /sys/fs/cgroup/pids/x/cgroup.procs\n"
    assert nodes.fix_for(log, noise + buggy) == nodes.fix_for(log, buggy)
    old, new, _ = nodes.fix_for(log, noise + buggy) or pytest.fail("no fix")
    assert (old, new) == (differ[-1][1], differ[-1][0])
    assert nodes.fix_for("ZeroDivisionError: division by zero", buggy) is None
    assert nodes.fix_for("", buggy) is None


def test_the_supervisor_starts_the_stage_worker_when_the_search_is_over():
    fields = {
        "event": str(SchedulingKind.SEARCH_OVER),
        "stage": STAGE,
        "reason": "all 8 nodes have run",
        "best": {"id": "n006", "metric": 0.0065},
        "tree_file": "experiment/tree.json",
    }
    history = History(results={}, calls={}, n_ai=0, last_human="")
    step = decide_supervisor(fields, history)
    assert not isinstance(step, list) and hasattr(step, "args")
    assert "experiment/tree.json" in step.args["instructions"]
    assert "n006" in step.args["instructions"]


def test_the_search_stage_worker_reports_the_tree_and_the_paper_quotes_it(
    make_runtime, spec_for, table, ws
):
    runtime = make_runtime()
    assert finish(runtime, runtime.start(spec_for("experiment.setup")))["status"] == "completed"
    # a small finished tree: the first draft, a failed draft, an improvement of the first
    tree = ws.root / "experiment" / "tree"
    first, text = nodes.draft_text(1)
    run_node(tree / "n001", text)
    run_node(tree / "n002", nodes.draft_text(nodes.BUGGY_DRAFT)[1])
    move, after = nodes.choose_move(first, 0)
    line = nodes.setting_line(text, move.setting)
    run_node(tree / "n003", text.replace(line, nodes.with_value(line, move.setting, after)))
    metric = {
        n: json.loads((tree / n / "result.json").read_text())["final_loss"]
        for n in ("n001", "n003")
    }
    records = [
        {"id": "n001", "parent": None, "kind": "draft", "status": "ok", "metric": metric["n001"]},
        {"id": "n002", "parent": None, "kind": "draft", "status": "failed", "metric": None},
        {"id": "n003", "parent": "n001", "kind": "improve", "status": "ok",
         "metric": metric["n003"]},
    ]  # fmt: skip
    tree_json = {"metric": "final_loss", "goal": "min", "best": "n003", "nodes": records}
    (ws.root / "experiment" / "tree.json").write_text(json.dumps(tree_json))

    task = stage_task(table, ws, STAGE)
    over = decide_supervisor(
        {"event": "search_over", "reason": "all 3 nodes have run", "best": records[2],
         "tree_file": "experiment/tree.json"},
        History(results={}, calls={}, n_ai=0, last_human=""),
    )  # fmt: skip
    assert not isinstance(over, list) and hasattr(over, "args")
    message = worker_message(
        task, skill=copy_skill(ws, task), digest="", instructions=over.args["instructions"]
    )
    spec = WorkerSpec(message=message, stage=STAGE, task_id=task.task_id, goal=task.goal)
    record = finish(runtime, runtime.start(spec), timeout=120)
    assert record["status"] == "completed", record
    assert record["result"]["next_stage"] == "experiment.analyze"
    assert record["commands"] == [
        "python experiment/run_experiment.py",
        "python experiment/search_report.py",
    ]
    search = json.loads((ws.root / "experiment" / "search.json").read_text())
    assert search["nodes"] == 3 and search["best"]["node"] == "n003"
    assert search["first_draft"]["node"] == "n001"
    assert search["baseline"]["condition"] == "lr=0.2,warmup=0"
    assert search["best"]["metric"] < search["first_draft"]["metric"]

    analyze = finish(runtime, runtime.start(spec_for("experiment.analyze")), timeout=120)
    assert analyze["status"] == "completed", analyze
    analysis = (ws.root / "experiment" / "analysis.md").read_text()
    assert "## Search over configurations" in analysis
    assert "Best node: n003 (improve" in analysis and "First draft: n001" in analysis

    # the paper's build script quotes the same numbers, each traced to a result file
    for target in ("paper/build_paper.py",):
        for path, body in script_files(target).items():
            (ws.root / path).parent.mkdir(parents=True, exist_ok=True)
            (ws.root / path).write_text(body)
    proc = subprocess.run(
        [sys.executable, "paper/build_paper.py", "goal"],
        cwd=ws.root,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    paper = (ws.root / "paper" / "paper.tex").read_text()
    assert "Search tree: 3 nodes" in paper and "Best node: n003" in paper
    problems = [
        i for i in numbers(ws.root / "paper" / "paper.tex", ws.root, ["experiment"]) if not i.ok
    ]
    assert problems == []
