"""The `lightscientist` command line, run as a real subprocess: output and exit codes."""

from __future__ import annotations

import importlib.metadata
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from support.papers import REVIEW_TABLE, write_paper, write_reviews
from support.tables import DEFAULT_STAGE_IDS

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.events import EventBus, JsonlWriter

GOAL = "Does learning-rate warmup help a small MLP?"
REPO = Path(__file__).resolve().parents[1]


def cli(*args: str, cwd, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def assert_clean_error(result: subprocess.CompletedProcess, *fragments: str) -> None:
    """Exit 2, the message on stderr naming what to fix, and no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    for fragment in fragments:
        assert fragment in result.stderr, (fragment, result.stderr)


def stdout_lines(result: subprocess.CompletedProcess) -> list[str]:
    return result.stdout.rstrip("\n").splitlines()


def make_project(
    workspace, table, advance, *, until: str | None = None, wait: bool = False
) -> None:
    """A manual-mode project on disk with its event log, walked to `until` (and its gate)."""
    with JsonlWriter(workspace.events_file) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        c = ResearchController.create(workspace, GOAL, mode="manual", table=table, bus=bus)
        while until is not None and c.stage != until:
            advance(c)
        if wait:
            advance(c)
            assert c.status == "waiting_user"


@pytest.fixture
def waiting(workspace, default_table, advance):
    """A project waiting at idea.gate (entered from idea.evaluate)."""
    make_project(workspace, default_table, advance, until="idea.gate", wait=True)
    return workspace


@pytest.fixture
def final_gate(workspace, default_table, advance):
    """A project waiting at paper.review, whose approval ends the project."""
    with JsonlWriter(workspace.events_file) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        c = ResearchController.create(
            workspace, GOAL, mode="manual", table=default_table, bus=bus, start_stage="paper.review"
        )
        paper = workspace.root / "paper" / "paper.tex"  # what paper.review's checks read
        paper.parent.mkdir(parents=True)
        paper.write_text(
            "\\begin{document}\nNo citations and no measured numbers.\n\\end{document}\n",
            encoding="utf-8",
        )
        advance(c)
        assert c.status == "waiting_user"
    return workspace


def read_events(workspace) -> list[dict]:
    return [
        json.loads(line) for line in workspace.events_file.read_text(encoding="utf-8").splitlines()
    ]


def state_of(workspace) -> dict:
    return json.loads(workspace.state_file.read_text(encoding="utf-8"))


# ------------------------------------------------------------------ stages


def test_stages_lists_the_default_table(tmp_path):
    result = cli("stages", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = stdout_lines(result)
    drawn = REPO / "stages" / "research.toml"  # the file to copy, named from any folder
    assert lines[0] == f"stage table {drawn} · 14 stages + done · start: idea.survey"
    header, *rows = lines[2:]
    assert header.split() == ["stage", "gate", "next", "allowed", "outputs"]
    assert [row.split()[0] for row in rows] == [*DEFAULT_STAGE_IDS, "done"]
    gates = [row.split()[0] for row in rows if row.split()[1:2] == ["gate"]]
    assert gates == ["idea.gate", "experiment.gate", "paper.review"]
    loop = next(row for row in rows if row.startswith("experiment.loop "))
    assert "experiment.loop, experiment.analyze" in loop and "experiment/results.csv" in loop


def test_stages_shows_which_stages_an_agent_works(tmp_path, write_table):
    path = write_table(
        tmp_path,
        """\
start = "a"

[agents.codex]
command = ["codex-acp", "--model", "o4 mini"]
env = ["OPENAI_API_KEY"]
network = true

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "b"
allowed = ["b"]

[stages.b]
skill = "skills/b.md"
outputs = ["out/b.md"]
next = "done"
allowed = ["done"]
agent = "codex"
""",
    )
    result = cli("stages", "--stages", str(path), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stdout_lines(result)[2:] == [
        "stage  gate  agent  next  allowed  outputs",
        "a                   b     b        out/a.md",
        "b            codex  done  done     out/b.md",
        "done                               (end of the project)",
        "",
        "agents:",
        "  codex: codex-acp --model 'o4 mini' · env OPENAI_API_KEY · permissions ask · "
        "network on · works b",
    ]


def test_stages_on_a_broken_table_lists_every_problem(tmp_path, write_table):
    path = write_table(
        tmp_path,
        """\
start = "a"
extra = 1

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "b"
allowed = ["done"]
approval = "yes"

[stages.b]
skill = "skills/missing.md"
outputs = ["out/b.md"]
next = "done"
allowed = ["done", "ghost"]
""",
        {"skills/a.md": "brief"},
    )
    result = cli("stages", "--stages", str(path), cwd=tmp_path)
    assert_clean_error(
        result,
        str(path),
        "5 problem(s)",
        "unknown top-level key 'extra' (line 2)",
        "stage 'a', key 'approval' (line 9): must be true or false",
        "stage 'a', key 'next' (line 7): 'b' is not in 'allowed'",
        "stage 'b', key 'skill' (line 12)",
        "stage 'b', key 'allowed' (line 15): 'ghost' is not a stage of this table",
    )
    assert result.stdout == ""


def test_stages_with_a_missing_file(tmp_path):
    result = cli("stages", "--stages", "nope.toml", cwd=tmp_path)
    assert_clean_error(result, str(tmp_path / "nope.toml"), "file not found")


# ------------------------------------------------------------------ status


def test_status_json(waiting):
    result = cli("status", "--json", "--workspace", str(waiting.root), cwd=waiting.root.parent)
    assert result.returncode == 0, result.stderr
    lines = stdout_lines(result)
    assert len(lines) == 1
    info = json.loads(lines[0])
    assert {"status", "stage", "mode", "goal", "pending"} <= set(info)
    assert (info["status"], info["stage"], info["mode"]) == ("waiting_user", "idea.gate", "manual")
    assert info["goal"] == GOAL
    assert info["pending"]["id"] == "d1" and info["pending"]["outputs"] == ["idea/brief.md"]
    assert info["pending"]["proposed_next"] == "experiment.setup"
    assert info["runner"] is None


def test_status_of_a_running_project_no_process_runs_is_interrupted(
    workspace, small_table, advance
):
    make_project(workspace, small_table, advance)  # running on disk, and nobody runs it
    info = json.loads(cli("status", "--json", cwd=workspace.root).stdout)
    assert (info["status"], info["stage"], info["pending"]) == ("interrupted", "a", None)
    assert info["runner"] is None and "`lightscientist resume` continues it" in info["reason"]
    assert json.loads(workspace.state_file.read_text())["status"] == "running"  # unchanged


def test_status_text_ends_with_the_status(waiting):
    result = cli("status", cwd=waiting.root)
    assert result.returncode == 0, result.stderr
    lines = stdout_lines(result)
    assert lines[-1] == "waiting_user"
    assert f"goal:    {GOAL}" in lines
    assert any(line.startswith("pending: d1") for line in lines)
    assert any("idea/brief.md" in line for line in lines)


def test_status_in_an_empty_folder(tmp_path):
    result = cli("status", cwd=tmp_path)
    assert_clean_error(
        result,
        "lightscientist status: error:",
        f"no LightScientist project in {tmp_path}",
        'start one there with `research "<goal>"`, or name a project\'s folder with --workspace',
    )
    assert result.stdout == ""


# ------------------------------------------------------------------ reply


def test_reply_with_nothing_pending(workspace, small_table, advance):
    make_project(workspace, small_table, advance)
    result = cli("reply", "y", cwd=workspace.root)
    assert_clean_error(result, "nothing is waiting for a reply", "running at stage 'a'")
    assert not workspace.inbox_dir.exists()  # refused before anything was queued


def test_reply_in_an_empty_folder(tmp_path):
    assert_clean_error(cli("reply", "y", cwd=tmp_path), "no LightScientist project")


def test_reply_to_an_unknown_stage(waiting):
    before = state_of(waiting)
    result = cli("reply", "n", "--to", "nosuchstage", cwd=waiting.root)
    assert_clean_error(result, "--to 'nosuchstage' is not a stage", "idea.survey, idea.generate")
    assert state_of(waiting) == before
    assert not waiting.inbox_dir.exists()  # refused before anything was queued


@pytest.fixture
def spent(workspace, small_table):
    """An auto-mode project whose budget of 1,000 tokens one call of 2,345 spent: it waits at
    a `budget` decision."""
    with JsonlWriter(workspace.events_file) as writer:
        bus = EventBus(next_seq=writer.next_seq)
        bus.subscribe(writer)
        c = ResearchController.create(workspace, GOAL, mode="auto", table=small_table, bus=bus)
        c.set_budget({"tokens": 1000})
        c.charge(
            {
                "worker": "w1",
                "stage": "a",
                "task_id": "a#1",
                "input_tokens": 1500,
                "output_tokens": 845,
                "model_calls": 1,
                "wall_s": 0.5,
                "cost_usd": None,
                "unpriced_calls": 1,
                "run": "r1",
                "run_s": 10.0,
            }
        )
        c.flush()
        assert c.pending_kind == "budget"
    return workspace


def test_reply_y_with_a_budget_below_what_was_spent_is_refused_before_anything_is_written(
    spent,
):
    workspace = spent
    before = workspace.state_file.read_bytes()
    low = cli("reply", "y", "--budget", "tokens=2000", cwd=workspace.root)
    assert_clean_error(low, "--budget tokens=2000 is not above", "spent (2,345 tokens)")
    assert len(low.stderr.strip().splitlines()) == 1 and low.stdout == ""
    bare = cli("reply", "y", cwd=workspace.root)
    assert_clean_error(bare, "the project budget of 1,000 tokens is spent (2,345 tokens)")
    other = cli("reply", "y", "--budget", "usd=5", cwd=workspace.root)
    assert_clean_error(other, "--budget usd=5 leaves the project budget of 1,000 tokens spent")
    assert workspace.state_file.read_bytes() == before
    assert not workspace.inbox_dir.exists() or not list(workspace.inbox_dir.iterdir())


def test_reply_yes_with_a_target_is_a_usage_error(waiting):
    assert_clean_error(
        cli("reply", "y", "--to", "idea.generate", cwd=waiting.root),
        "--to names where a rejection sends the project",
    )


def test_reply_without_a_runner_applies_it_itself(final_gate):
    ws = final_gate
    last_seq = read_events(ws)[-1]["seq"]
    result = cli(
        "reply", "y", "--comment", "Go ahead.", "--workspace", str(ws.root), cwd=ws.root.parent
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert stdout_lines(result)[-1] == "done"
    assert "paper.review approved; the project is now at 'done'" in result.stdout
    state = state_of(ws)
    assert (state["stage"], state["status"], state["pending"]) == ("done", "done", None)
    assert state["decisions"][-1]["source"] == "cli"
    assert state["decisions"][-1]["comment"] == "Go ahead."
    assert not ws.inbox_dir.exists()  # carried out here: nothing was queued
    new = [e for e in read_events(ws) if e["seq"] > last_seq]
    assert [e["seq"] for e in new] == list(range(last_seq + 1, last_seq + 1 + len(new)))
    assert [e["type"] for e in new][:3] == ["user.decision", "stage.transition", "memory.filed"]
    assert new[1]["data"]["to"] == "done"
    # the project ended here: a lessons worker drew its lessons, and layer 1 filed them
    assert {e["stage"] for e in new[3:-1]} == {"lessons"}
    assert new[-1]["type"] == "memory.filed" and new[-1]["data"]["task_id"] == "done"


def test_reply_twice(final_gate):
    assert cli("reply", "y", cwd=final_gate.root).returncode == 0
    assert_clean_error(
        cli("reply", "y", cwd=final_gate.root),
        "nothing is waiting for a reply",
        "done at stage 'done'",
    )
    assert len(state_of(final_gate)["decisions"]) == 1


RUNNER = textwrap.dedent("""\
    import sys, time
    from lightscientist_jupyter.controller import ResearchController
    from lightscientist_jupyter.controller.lock import WorkspaceLock
    from lightscientist_jupyter.workspace import Workspace
    ws = Workspace.at(sys.argv[1])
    controller = ResearchController.open(ws)
    with WorkspaceLock(ws).acquire("notebook"):
        print("ready", flush=True)
        deadline = time.monotonic() + 30
        while controller.status == "waiting_user" and time.monotonic() < deadline:
            controller.poll_inbox()
            time.sleep(0.05)
        print(controller.status, controller.stage, flush=True)
        sys.stdin.readline()  # a real runner goes on running: hold the lock until told
""")


def test_reply_while_another_process_runs_the_project(waiting):
    runner = subprocess.Popen(
        [sys.executable, "-c", RUNNER, str(waiting.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert runner.stdout.readline().strip() == "ready"
        status = json.loads(cli("status", "--json", cwd=waiting.root).stdout)
        assert status["runner"]["pid"] == runner.pid and status["runner"]["purpose"] == "notebook"
        result = cli("reply", "y", cwd=waiting.root)
        out, _ = runner.communicate("\n", timeout=30)
    finally:
        if runner.poll() is None:
            runner.kill()
            runner.wait()
    assert result.returncode == 0, result.stderr
    lines = stdout_lines(result)
    assert lines == [f"reply taken by the run held by pid {runner.pid}", "running"]
    assert out.split() == ["running", "experiment.setup"]
    assert state_of(waiting)["decisions"][-1]["source"] == "cli"
    assert list(waiting.inbox_dir.iterdir()) == []


ONE_POLL_RUNNER = textwrap.dedent("""\
    import sys
    from lightscientist_jupyter.controller import ResearchController
    from lightscientist_jupyter.controller.lock import WorkspaceLock
    from lightscientist_jupyter.workspace import Workspace
    ws = Workspace.at(sys.argv[1])
    controller = ResearchController.open(ws)
    with WorkspaceLock(ws).acquire("notebook"):
        print("ready", flush=True)
        sys.stdin.readline()  # both replies are queued: take them in one poll
        controller.poll_inbox()
        print(controller.status, flush=True)
        sys.stdin.readline()
""")


def test_a_duplicate_reply_is_told_it_was_dropped_not_taken(waiting):
    """Two `reply y` for one gate, both queued before the run polls: the run applies the
    later and drops the earlier; each sender is told what really happened to its reply."""
    runner = subprocess.Popen(
        [sys.executable, "-c", ONE_POLL_RUNNER, str(waiting.root)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    senders = []
    try:
        assert runner.stdout.readline().strip() == "ready"
        command = [sys.executable, "-m", "lightscientist_jupyter", "reply", "y"]
        for _ in range(2):
            senders.append(
                subprocess.Popen(command, cwd=waiting.root, stdout=subprocess.PIPE, text=True)
            )
        deadline = time.monotonic() + 20
        while len(list(waiting.inbox_dir.glob("*.json"))) < 2:
            assert time.monotonic() < deadline, "the replies were never queued"
            time.sleep(0.05)
        runner.stdin.write("\n")
        runner.stdin.flush()
        assert runner.stdout.readline().strip() == "running"
        said = sorted(p.communicate(timeout=30)[0].splitlines()[0] for p in senders)
        runner.communicate("\n", timeout=30)
    finally:
        for proc in [runner, *senders]:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    decision = state_of(waiting)["decisions"][-1]["id"]
    assert said == [
        f"reply not applied by the run held by pid {runner.pid}: replaced by a later reply to "
        f"decision {decision}; nothing changed",
        f"reply taken by the run held by pid {runner.pid}",
    ]
    assert list(waiting.inbox_dir.iterdir()) == []  # each receipt was read and removed


# ------------------------------------------------------------------ events


def test_events_tail_with_filters(waiting):
    result = cli("events", "--tail", "2", "--layer", "1", "--type", "stage.start", cwd=waiting.root)
    assert result.returncode == 0, result.stderr
    lines = stdout_lines(result)
    assert len(lines) == 2
    assert all(" L1 stage.start " in line for line in lines)
    assert "idea.evaluate" in lines[0] and "idea.gate" in lines[1]

    as_json = cli("events", "--tail", "3", "--type", "stage.", "--json", cwd=waiting.root)
    records = [json.loads(line) for line in stdout_lines(as_json)]
    assert [r["type"] for r in records] == ["stage.transition", "stage.start", "stage.finish"]
    assert [r["seq"] for r in records] == sorted(r["seq"] for r in records)
    everything = cli("events", "--tail", "1000", "--json", cwd=waiting.root)
    seqs = [json.loads(line)["seq"] for line in stdout_lines(everything)]
    assert seqs == list(range(1, len(seqs) + 1))
    assert json.loads(stdout_lines(everything)[-1])["type"] == "user.decision_requested"


def test_the_budget_events_are_the_controller_s_and_layer_1_shows_them(spent):
    """Layer 1 keeps the budgets: `events --layer 1` shows the warning and the stop."""
    result = cli("events", "--layer", "1", "--type", "budget.", "--json", cwd=spent.root)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in stdout_lines(result)]
    assert [(r["type"], r["layer"]) for r in records] == [
        ("budget.warning", 1),
        ("budget.exceeded", 1),
    ]
    assert records[-1]["message"].startswith("The project budget of 1,000 tokens is spent")


def test_events_follow_prints_new_events(waiting):
    follower = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lightscientist_jupyter",
            "events",
            "--follow",
            "--tail",
            "1",
            "--json",
        ],
        cwd=waiting.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in follower.stdout], daemon=True
    )
    reader.start()
    try:
        first = json.loads(lines.get(timeout=30))  # the tail arrives before any new event
        assert first["type"] == "user.decision_requested"
        with JsonlWriter(waiting.events_file) as writer:
            bus = EventBus(next_seq=writer.next_seq)
            bus.subscribe(writer)
            bus.emit("worker.created", "w-1 created", worker_id="w-1")
        second = json.loads(lines.get(timeout=30))
        assert second["type"] == "worker.created" and second["seq"] == first["seq"] + 1
    finally:
        follower.send_signal(signal.SIGINT)
        try:
            follower.wait(timeout=30)
        finally:
            if follower.poll() is None:
                follower.kill()
                follower.wait()
    reader.join(timeout=10)
    stderr = follower.stderr.read()
    follower.stdout.close()
    follower.stderr.close()
    assert follower.returncode == 0, stderr
    assert "Traceback" not in stderr


def test_a_reader_that_stops_early_ends_the_command_quietly(waiting):
    """`lightscientist events | head -1`, with a reader gone before the first line: the
    command ends with 141 (as a program killed by SIGPIPE) and no traceback."""
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader went away
    try:
        result = subprocess.run(
            [sys.executable, "-m", "lightscientist_jupyter", "events", "--tail", "1000"],
            cwd=waiting.root,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write_end)
    assert (result.returncode, result.stderr) == (141, "")


def test_events_in_an_empty_folder(tmp_path):
    assert_clean_error(cli("events", cwd=tmp_path), f"no LightScientist project in {tmp_path}")


def test_events_negative_tail(waiting):
    assert_clean_error(cli("events", "--tail", "-1", cwd=waiting.root), "--tail must be 0 or more")


# ------------------------------------------------------------------ usage


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ([], "lightscientist: error: the following arguments are required: COMMAND"),
        (["bogus"], "lightscientist: error: argument COMMAND: invalid choice: 'bogus'"),
        (["reply"], "lightscientist reply: error: the following arguments are required: answer"),
        (
            ["reply", "maybe"],
            "lightscientist reply: error: argument answer: invalid choice: 'maybe'",
        ),
        (
            ["events", "--tail", "many"],
            "lightscientist events: error: argument --tail/-n: invalid int value: 'many'",
        ),
        (
            ["events", "--layer", "4"],
            "lightscientist events: error: argument --layer: invalid choice: 4 "
            "(choose from 1, 2, 3)",
        ),
        (["status", "--nope"], "lightscientist: error: unrecognized arguments: --nope"),
    ],
)
def test_usage_errors_exit_2(tmp_path, args, error):
    result = cli(*args, cwd=tmp_path)
    assert_clean_error(result, "usage: lightscientist", error)
    assert result.stdout == ""


def test_version(tmp_path):
    result = cli("--version", cwd=tmp_path)
    version = importlib.metadata.version("lightscientist-jupyter")
    assert (result.returncode, result.stdout) == (0, f"lightscientist {version}\n")


READERS_STAY_LIGHT = """
import contextlib, io, sys
from lightscientist_jupyter.cli import main
for argv in (["status"], ["history"], ["workers"], ["usage"], ["diff"], ["tree"]):
    with contextlib.redirect_stdout(io.StringIO()):
        main([*argv, "--workspace", sys.argv[1]])
heavy = sorted({m.split(".")[0] for m in sys.modules} & {"langchain", "langchain_core",
               "langgraph", "deepagents", "langchain_openai", "openai"})
print(",".join(heavy))
"""


@pytest.mark.slow  # runs a project through the agent stack
def test_commands_that_read_a_project_do_not_load_the_agent_stack(tmp_path):
    """`status`, `history`, `workers`, `usage`, `diff` and `tree` read files: they answer in a
    third of a second, without importing LangChain, LangGraph or deepagents (about a second
    here)."""
    ws = tmp_path / "project"
    made = cli("research", GOAL, "--until", "idea.survey", "--workspace", str(ws), cwd=tmp_path,
               timeout=120)  # fmt: skip
    assert made.returncode == 0, made.stderr
    proc = subprocess.run(
        [sys.executable, "-c", READERS_STAY_LIGHT, str(ws)],
        capture_output=True,
        text=True,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", proc.stdout


# ------------------------------------------------------------------------- show


@pytest.fixture
def reviewed(workspace, write_table, tmp_path):
    """A project of `REVIEW_TABLE` with its LaTeX source and reviews (no PDF yet)."""
    table = load_table(write_table(tmp_path / "table", REVIEW_TABLE))
    ResearchController.create(workspace, GOAL, mode="manual", table=table)
    (workspace.root / "paper").mkdir()
    (workspace.root / "paper" / "paper.tex").write_text("\\section{Warmup}\n", encoding="utf-8")
    write_reviews(workspace.root)
    return workspace.root


def test_show_paper_pdf_prints_the_pdf_s_absolute_path(reviewed, tmp_path):
    none = cli("show", "paper", "--pdf", "-w", str(reviewed), cwd=tmp_path)
    assert none.returncode == 1 and none.stdout == ""
    assert none.stderr == (
        f"lightscientist show: no PDF was built ({reviewed}/paper/paper.pdf does not exist)\n"
    )
    write_paper(reviewed, tmp_path / "tex")
    found = cli("show", "paper", "--pdf", "-w", str(reviewed), cwd=tmp_path)
    assert (found.returncode, found.stdout, found.stderr) == (
        0,
        f"{reviewed}/paper/paper.pdf\n",
        "",
    )


def test_show_paper_without_a_pdf_prints_the_line_and_the_source(reviewed, tmp_path):
    shown = cli("show", "paper", "-w", str(reviewed), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert stdout_lines(shown) == [
        "No PDF was built (paper/paper.pdf does not exist); its source is paper/paper.tex.",
        "\\section{Warmup}",
    ]


def test_show_reviews_prints_the_scores_and_the_decision(reviewed, tmp_path):
    shown = cli("show", "reviews", "-w", str(reviewed), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert stdout_lines(shown)[1:5] == [
        "1         2      3          3             3             7        accept",
        "2         2      3          2             3             6        accept",
        "3         2      2          3             2             5        revise",
        "round 2: mean 6 against accept 6 — accept",
    ]


def test_show_pdf_with_another_target_is_a_usage_error(reviewed, tmp_path):
    assert_clean_error(
        cli("show", "reviews", "--pdf", "-w", str(reviewed), cwd=tmp_path),
        "lightscientist show: error: --pdf goes with `show paper`, not `show reviews`",
    )
