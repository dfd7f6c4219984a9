"""Time travel end to end (issue 12): the real `lightscientist` command on offline runs —
snapshots at every stage visit, history, diff, rewind, fork, --until and `paused`."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from support.slow import whole_project

from lightscientist_jupyter.controller.lock import WorkspaceLock
from lightscientist_jupyter.workspace import Workspace
from tests.test_research import cli, last_line


def run_auto(ws: Path, *extra: str) -> None:
    proc = cli(ws, "research", "Does warmup help a small MLP?", "--mode", "auto", *extra)
    assert proc.returncode == 0, proc.stderr


def history(ws: Path) -> list[dict]:
    proc = cli(ws, "history", "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def status(ws: Path) -> dict:
    return json.loads(cli(ws, "status", "--json").stdout)


def files(ws: Path) -> dict[str, bytes]:
    """Every file of a workspace outside .lightscientist/, and its state."""
    found = {
        str(p.relative_to(ws)): p.read_bytes()
        for p in ws.rglob("*")
        if p.is_file() and ".lightscientist" not in p.parts
    }
    return {**found, "state": (ws / ".lightscientist" / "state.json").read_bytes()}


def workers(ws: Path) -> dict[str, dict]:
    """The records in the workspace's workers folder, by worker id."""
    paths = (ws / ".lightscientist" / "workers").glob("*/worker.json")
    return {p.parent.name: json.loads(p.read_text()) for p in paths}


@pytest.fixture(scope="module")
@whole_project
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("tt") / "project"
    run_auto(ws)
    return ws


@pytest.mark.slow
def test_every_stage_visit_has_a_start_and_a_finish_snapshot(finished: Path):
    rows = history(finished)
    visits = {(stage, n) for stage, n in status(finished)["visits"].items()}
    for stage, count in visits:
        for visit in range(1, count + 1):
            events = {r["event"] for r in rows if (r["stage"], r["visit"]) == (stage, visit)}
            assert {"start", "finish"} <= events, (stage, visit, events)
    assert {"id", "stage", "visit", "event", "time", "added", "changed", "removed"} <= set(rows[0])
    assert "experiment/results.csv" in {f for r in rows for f in r["added"]}

    # the loop's visit made the search's tree: its file, each node's folder and job log
    proc = cli(finished, "diff", "experiment.setup#1", "experiment.loop#1", "--stat")
    assert proc.returncode == 0, proc.stderr
    assert "experiment/tree.json" in proc.stdout and "jobs/node-n001.log" in proc.stdout
    assert "experiment/tree/n003/search_node.py" in proc.stdout
    assert "state.json" not in proc.stdout
    only = subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", "diff", "-w", str(finished),
         "experiment.setup#1", "experiment.loop#1", "--", "experiment/tree.json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "+++ b/experiment/tree.json" in only.stdout and "diff --git a/jobs/" not in only.stdout


@pytest.mark.slow
def test_bad_refs_are_one_line_and_exit_2(finished: Path, tmp_path: Path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.md").write_text("mine\n")
    cases = {
        ("diff", "nosuch"): "names no snapshot and no stage",
        ("rewind", "experiment.loop#9"): "has no start snapshot",
        ("diff", "experiment.loop#x"): "must be a number",
        ("fork", "idea.gate", str(busy)): "not an empty folder",
        ("fork", "idea.gate", str(finished)): "inside the workspace it forks",
    }
    for args, words in cases.items():
        proc = cli(finished, *args)
        assert proc.returncode == 2 and words in proc.stderr, (args, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1
    older = tmp_path / "older"
    (older / ".lightscientist").mkdir(parents=True)
    state = (finished / ".lightscientist" / "state.json").read_text()
    (older / ".lightscientist" / "state.json").write_text(state)
    proc = cli(older, "history")
    assert proc.returncode == 2 and "made by an older version" in proc.stderr


@pytest.mark.slow
def test_rewind_then_resume_and_both_branches_stay(finished: Path, tmp_path: Path):
    ws = tmp_path / "project"
    shutil.copytree(finished, ws, symlinks=True)  # a finished project of its own to rewind
    rows = history(ws)
    setup = next(r for r in rows if r["stage"] == "experiment.setup" and r["event"] == "start")
    later = {f for r in rows if r["at"] > setup["at"] for f in r["added"]}
    process_before = (ws / "PROCESS.md").read_text().split("## experiment.setup")[0]

    with WorkspaceLock(Workspace.at(ws)).acquire("test"):
        refused = cli(ws, "rewind", "experiment.setup")
    assert refused.returncode == 2 and "pid" in refused.stderr and "being run" in refused.stderr

    before = workers(ws)
    proc = cli(ws, "rewind", "experiment.setup")
    assert proc.returncode == 0, proc.stderr
    assert later and not any((ws / f).exists() for f in later - {".lightscientist/state.json"})
    assert "experiment/tree.json" in later  # the search's tree is in the history, rewound too
    kept, supervisor = workers(ws), before.pop("supervisor")
    assert kept.pop("supervisor")["thread_id"] != supervisor["thread_id"]  # a fresh session
    archived = {wid: r for wid, r in before.items() if wid not in kept}
    assert archived and all(  # and the lessons worker of the project's end
        r["stage"].startswith(("experiment.", "paper.", "lessons")) for r in archived.values()
    )
    assert kept and all(r["stage"].startswith("idea.") for r in kept.values())
    text = (ws / "PROCESS.md").read_text()
    assert text.startswith(process_before) and "Rewound to the start of experiment.setup#1" in text
    assert (status(ws)["stage"], status(ws)["status"]) == ("experiment.setup", "interrupted")
    with (ws / ".lightscientist/events.jsonl").open() as log:
        rewound = [e for e in map(json.loads, log) if e["type"] == "stage.rewound"]
    assert len(rewound) == 1 and rewound[0]["data"]["to"] == "experiment.setup#1"

    proc = cli(ws, "resume")
    assert proc.returncode == 0 and last_line(proc) == "done", proc.stderr
    tree = json.loads((ws / "experiment" / "tree.json").read_text(encoding="utf-8"))
    assert len(tree["nodes"]) == 8  # searched anew, every node after the rewind
    assert min(n["started"] for n in tree["nodes"]) > rewound[0]["ts"]
    again = history(ws)
    # the paper's accepted review (its second round) on the rewound-over branch and the new one
    last = ("paper.review", "finish", 2)
    finishes = [r for r in again if (r["stage"], r["event"], r["visit"]) == last]
    assert len(finishes) == 2
    assert any(r["event"] == "rewound" for r in again)
    ids = {r["id"] for r in again}
    assert {r["id"] for r in rows} <= ids  # nothing lost
    # every session's checkpoints are still in the workspace's database: the earlier stages'
    # workers, and the rewound-over ones, whose archived records name their threads
    with sqlite3.connect(ws / ".lightscientist" / "checkpoints.sqlite") as db:
        threads = {row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert {r["thread_id"] for r in before.values()} <= threads
    assert not list((ws / ".lightscientist" / "archive").rglob("checkpoints.sqlite*"))


@pytest.mark.slow
def test_fork_runs_beside_the_original_which_stays_untouched(finished: Path, tmp_path: Path):
    before = files(finished)
    other = tmp_path / "other"
    proc = cli(finished, "fork", "idea.gate", str(other))
    assert proc.returncode == 0, proc.stderr
    assert status(other)["stage"] == "idea.gate"
    assert not (other / "experiment").exists()
    proc = cli(other, "resume")
    assert proc.returncode == 0 and last_line(proc) == "done", proc.stderr
    assert files(finished) == before
    forked = history(other)
    assert forked[-1]["stage"] == "paper.review" and any(r["event"] == "forked" for r in forked)
    assert len(history(finished)) < len(forked) + 20  # the fork holds the history up to there
    compared = cli(finished, "diff", "--against", str(other), "--stat")
    assert compared.returncode == 0 and "PROCESS.md" in compared.stdout


@pytest.mark.slow
def test_a_fork_into_its_own_workspace_is_refused_and_nothing_is_made(
    finished: Path, tmp_path: Path
):
    alias = tmp_path / "alias"
    alias.symlink_to(finished)  # another name of the same folder
    before = files(finished)
    listing = sorted(p.relative_to(finished) for p in finished.rglob("*"))
    for target in (
        finished / ".lightscientist" / "fork",
        finished / "forks" / "deeper" / "one",
        finished / "experiment" / "copy",
        alias / "fork",
    ):
        proc = cli(finished, "fork", "idea.gate", str(target))
        assert proc.returncode == 2, (target, proc.stdout, proc.stderr)
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert "is inside the workspace it forks" in proc.stderr, proc.stderr
        assert not target.exists()
    assert files(finished) == before
    assert sorted(p.relative_to(finished) for p in finished.rglob("*")) == listing


def shows_paused_on_both_screens(ws: Path) -> None:
    """The dashboard says `paused` and what resumes it, as a note (a warning rule), not as an
    error; the side panel's data carries the same."""
    from lightscientist_jupyter import api
    from lightscientist_jupyter.jupyter.dashboard.view import Dashboard
    from lightscientist_jupyter.jupyter.server.data import project_detail

    board = Dashboard(api.ProjectView(Workspace.at(ws)), None, start=False)
    try:
        line = board.status_html()
        assert '<span class="ls-chip" data-status="paused" title="status: paused">paused' in line
        assert '<div class="ls-warn">paused after idea.evaluate (--until)' in line
        assert "ls-err" not in line
        assert "reason: paused after idea.evaluate" in board.text()
    finally:
        board.close()
    detail = project_detail(ws.parent, ws.name)
    assert detail["status"] == "paused" and "resume" in detail["reason"]


@pytest.mark.slow
def test_until_pauses_after_the_stage_and_resume_goes_on(tmp_path: Path):
    ws = tmp_path / "project"
    proc = cli(ws, "research", "g", "--mode", "auto", "--until", "idea.evaluate")
    assert proc.returncode == 0 and last_line(proc) == "paused", proc.stderr
    info = status(ws)
    assert info["status"] == "paused" and info["visits"].get("idea.evaluate") == 1
    assert "idea.gate" not in info["visits"] or info["visits"]["idea.gate"] == 0
    shows_paused_on_both_screens(ws)
    proc = cli(ws, "resume")
    assert proc.returncode == 0 and last_line(proc) == "done", proc.stderr
    bad = cli(tmp_path / "p2", "research", "g", "--until", "nosuch")
    assert bad.returncode == 2 and "--until 'nosuch' is not a stage" in bad.stderr


@pytest.fixture(scope="module")
@whole_project
def at_first_gate(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A manual project waiting at its first gate (idea.gate), run once for the file; a test
    works on a copy of its own."""
    ws = tmp_path_factory.mktemp("gate") / "project"
    proc = cli(ws, "research", "g", "--mode", "manual")
    assert last_line(proc) == "waiting_user", proc.stderr
    return ws


@pytest.mark.slow
def test_at_a_manual_gate_diff_and_the_gate_card_show_the_new_files(
    at_first_gate: Path, tmp_path: Path
):
    from lightscientist_jupyter.controller import load_table
    from lightscientist_jupyter.controller.state import load_state
    from lightscientist_jupyter.jupyter.dashboard.gate import GatePanel
    from lightscientist_jupyter.jupyter.diff_card import gate_diff
    from lightscientist_jupyter.workspace import Workspace

    ws = tmp_path / "project"
    shutil.copytree(at_first_gate, ws, symlinks=True)
    proc = cli(ws, "reply", "y")
    assert last_line(proc) == "waiting_user", proc.stderr
    assert status(ws)["pending"]["stage"] == "experiment.gate"

    proc = cli(ws, "diff", "--stat")
    assert proc.returncode == 0, proc.stderr
    assert "experiment/analysis.md" in proc.stdout and "experiment/log.md" in proc.stdout
    full = cli(ws, "diff").stdout
    assert "new file mode" in full and "+++ b/experiment/analysis.md" in full
    lock = "experiment/.run_experiment.lock"  # the study script's own lock: removed
    assert lock not in proc.stdout and f"b/{lock}" not in full and not (ws / lock).exists()

    shown = {d["path"]: d["status"] for d in gate_diff(Workspace.at(ws), images=True)}
    assert shown["experiment/analysis.md"] == shown["experiment/log.md"] == "new"
    assert lock not in shown
    state = load_state(ws / ".lightscientist" / "state.json")
    panel = GatePanel(lambda *a: "ok", load_table(state.stages_file), ws)
    panel.show(state.pending)
    card = panel.actions.card["diff"]
    assert {d["path"]: d["status"] for d in card} == shown  # what the gate widget draws


@pytest.mark.slow
def test_the_side_panels_detail_carries_the_gate_diff(at_first_gate: Path, tmp_path: Path):
    from lightscientist_jupyter.jupyter.server.data import project_detail

    ws = tmp_path / "project"
    shutil.copytree(at_first_gate, ws, symlinks=True)
    detail = project_detail(tmp_path, "project")
    shown = {d["path"]: d for d in detail["gate_diff"]}
    brief = shown["idea/brief.md"]
    assert brief["status"] == "new" and any(line.startswith("+") for line in brief["lines"])
    # its folded line counts the whole diff's lines: a new file's are all added
    body = (ws / "idea" / "brief.md").read_text().splitlines()
    assert brief["summary"] == f"+{len(body)} −0"
    # a Markdown file is drawn as it reads too, all of it inserted (its source diff stays)
    assert brief["rendered"].count("<ins>") >= 1 and "<del>" not in brief["rendered"]
