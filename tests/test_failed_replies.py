"""A reply that failed decides nothing later (issue 30, point 3).

A reply takes effect only once it is accepted: when nobody runs the project, the front door
opens it first, and a reply that cannot be carried out (a damaged checkpoint database, a
PostgreSQL server that is down) reports the failure and leaves nothing queued, so the next
`resume` decides nothing on the user's behalf and a corrected reply is the one that counts.
Replies queued for the next run (the API's plain `reply`) are carried out by `resume` before
it runs — the latest to each decision — and the run goes on.

The command line runs as a real subprocess, the magic on an in-process shell; the checkpoint
database is a real SQLite file damaged in its pages, the PostgreSQL server a real one stopped
and started again; the model is the offline one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output
from support.postgres import PASSWORD, server_in_tmp
from support.slow import whole_project

from lightscientist_jupyter import api
from lightscientist_jupyter.app.commands import Route
from lightscientist_jupyter.controller.inbox import queued_replies
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace
from tests.test_bad_files import GOAL, _page_damage
from tests.test_checkpoint_urls import clean_env, cli
from tests.test_research import last_line


@pytest.fixture(scope="module")
@whole_project
def at_gate(tmp_path_factory) -> Path:
    """A project `research` left waiting at idea.gate, its sessions in the workspace's SQLite
    checkpoint database (each test works on a copy)."""
    ws = tmp_path_factory.mktemp("gate") / "project"
    proc = cli(ws, "research", GOAL, "--mode", "manual")
    assert proc.returncode == 0 and last_line(proc) == "waiting_user", proc.stderr
    return ws


def copy_of(project: Path, tmp_path: Path) -> Path:
    ws = tmp_path / "project"
    subprocess.run(["cp", "-a", str(project), str(ws)], check=True)
    return ws


def state(ws: Path) -> dict:
    return load_state(Workspace.at(ws).state_file).to_dict()


def queued(ws: Path) -> list:
    return queued_replies(Workspace.at(ws))


def one_error_line(proc: subprocess.CompletedProcess, *fragments: str) -> str:
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    for fragment in fragments:
        assert fragment in proc.stderr, (fragment, proc.stderr)
    return proc.stderr.strip()


def decided(ws: Path) -> list[tuple]:
    return [(d["stage"], d["approve"], d["comment"]) for d in state(ws)["decisions"]]


@pytest.mark.slow
def test_a_reply_on_a_damaged_database_leaves_nothing_and_the_corrected_one_counts(
    tmp_path, at_gate
):
    ws = copy_of(at_gate, tmp_path)
    db = ws / ".lightscientist" / "checkpoints.sqlite"
    _page_damage(db)
    before = state(ws)

    one_error_line(cli(ws, "reply", "y"), str(db), "is damaged", "--fresh-sessions")
    assert queued(ws) == [] and state(ws) == before  # reported failed: left nothing

    fresh = cli(ws, "resume", "--fresh-sessions")  # the way on the error names
    assert fresh.returncode == 0 and last_line(fresh) == "waiting_user", fresh.stderr
    assert "approved" not in fresh.stdout
    assert (state(ws)["stage"], decided(ws)) == ("idea.gate", [])  # nobody decided for the user

    corrected = cli(ws, "reply", "n", "--to", "idea.generate", "--comment", "Narrower.")
    assert corrected.returncode == 0 and last_line(corrected) == "waiting_user", corrected.stderr
    assert decided(ws) == [("idea.gate", False, "Narrower.")]
    assert state(ws)["visits"]["idea.generate"] == 2


@pytest.fixture
def own_postgres():
    """A PostgreSQL server of this test's own, to stop and start again."""
    with server_in_tmp("ls-postgres-down-") as server:
        yield server


@pytest.mark.slow
def test_a_reply_while_postgres_is_down_leaves_nothing(tmp_path, own_postgres):
    ws = tmp_path / "project"
    made = cli(ws, "research", GOAL, "--checkpoints", own_postgres.new_database())
    assert made.returncode == 0 and last_line(made) == "waiting_user", made.stderr
    env = clean_env(PGPASSWORD=PASSWORD)
    own_postgres.stop()
    before = state(ws)

    line = one_error_line(cli(ws, "reply", "y", env=env), "the server is unreachable")
    assert "cannot open the PostgreSQL checkpoint database" in line and PASSWORD not in line
    assert queued(ws) == [] and state(ws) == before

    own_postgres.start()
    resumed = cli(ws, "resume", env=env)
    assert resumed.returncode == 0 and last_line(resumed) == "waiting_user", resumed.stderr
    assert (state(ws)["stage"], decided(ws)) == ("idea.gate", [])


@pytest.mark.slow
def test_resume_carries_out_a_queued_reply_and_runs_on(tmp_path, at_gate):
    ws = copy_of(at_gate, tmp_path)
    sent = api.reply(ws, True, "Fine.")
    assert sent.route is Route.QUEUED and len(queued(ws)) == 1

    proc = cli(ws, "resume")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert lines[0] == (
        "queued reply applied: idea.gate approved; the project is now at 'experiment.setup' "
        "(running)"
    )
    assert lines[-1] == "waiting_user"  # it ran on, to the next gate
    assert state(ws)["stage"] == "experiment.gate" and decided(ws) == [("idea.gate", True, "Fine.")]
    assert queued(ws) == []


@pytest.mark.slow
def test_a_later_queued_reply_replaces_an_earlier_one(tmp_path, at_gate):
    ws = copy_of(at_gate, tmp_path)
    api.reply(ws, True, "Fine.")
    api.reply(ws, False, "On second thought: narrower.", "idea.generate")
    assert len(queued(ws)) == 2

    proc = cli(ws, "resume")
    assert proc.returncode == 0 and last_line(proc) == "waiting_user", proc.stderr
    decision = state(ws)["decisions"][0]["id"]
    assert proc.stdout.splitlines()[:2] == [
        f"queued reply not applied: replaced by a later reply to decision {decision}; "
        "nothing changed",
        "queued reply applied: idea.gate rejected, back to 'idea.generate'; the project is now "
        "at 'idea.generate' (running)",
    ]
    assert decided(ws) == [("idea.gate", False, "On second thought: narrower.")]
    assert state(ws)["visits"]["idea.generate"] == 2


@pytest.mark.slow
def test_the_magic_and_the_widgets_reply_leave_nothing_when_the_project_cannot_open(
    tmp_path, at_gate, magic_shell
):
    ws = copy_of(at_gate, tmp_path)
    db = ws / ".lightscientist" / "checkpoints.sqlite"
    _page_damage(db)
    before = state(ws)
    with capture_output(), pytest.raises(UsageError, match="is damaged"):
        magic_shell.run_line_magic("lightscientist", f'reply y -w "{ws}"')
    with pytest.raises(LightScientistError, match="is damaged"):  # the dashboard's buttons
        api.reply(ws, True, source=ReplySource.WIDGET, resume_if_idle=True)
    assert queued(ws) == [] and state(ws) == before
    assert api.current(ws) is None
