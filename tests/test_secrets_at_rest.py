"""Secrets at rest, end to end (issue 30): the real `lightscientist` command on an offline
manual run. A key typed into a gate's comment reaches no file of the project — not the state,
the events, PROCESS.md, the history or the next workers' task — and a `.env` beside the
project is in no snapshot and no fork, whose messages say it was left out."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from support.slow import whole_project

from tests.test_research import cli, last_line

TYPED_KEY = "sk-live-5hQ2mX8vR1tY7uK3pL9wZ4"
DOT_ENV_KEY = "sk-proj-Zx81Qw72Er63Ty54Ui45Op36"


def holding(root: Path, secret: str, *, besides: tuple[Path, ...] = ()) -> list[str]:
    """Every file under `root` whose bytes hold `secret` (a `grep -rl`)."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p not in besides and secret.encode() in p.read_bytes()
    )


def git_log(ws: Path, *args: str) -> str:
    """`git log --all` of the project's history, with `args` (`-p`, `--name-only`)."""
    proc = subprocess.run(
        ["git", "--git-dir", str(ws / ".lightscientist" / "history.git"), "log", "--all", *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return proc.stdout


@pytest.fixture(scope="module")
@whole_project
def rejected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A manual project with a `.env` and an SSH key beside it, whose first gate was rejected
    with a comment holding a key, run on to the gate again."""
    ws = tmp_path_factory.mktemp("secrets") / "project"
    ws.mkdir()
    (ws / ".env").write_text(f"OPENAI_API_KEY={DOT_ENV_KEY}\n")
    (ws / "keys").mkdir()
    (ws / "keys" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    proc = cli(ws, "research", "Does warmup help?")
    assert proc.returncode == 0 and last_line(proc) == "waiting_user", proc.stderr
    comment = f"Be bolder; the API key for the big model is {TYPED_KEY}"
    proc = cli(ws, "reply", "n", "--comment", comment, "--to", "idea.generate")
    assert proc.returncode == 0 and last_line(proc) == "waiting_user", proc.stderr
    return ws


@pytest.mark.slow
def test_a_key_in_a_gate_comment_reaches_no_file(rejected: Path):
    ws = rejected
    assert holding(ws, TYPED_KEY) == []
    assert TYPED_KEY not in git_log(ws, "-p")
    state = json.loads((ws / ".lightscientist" / "state.json").read_text())
    assert (
        state["decisions"][0]["comment"] == "Be bolder; the API key for the big model is [REDACTED]"
    )
    assert "[REDACTED]" in (ws / "PROCESS.md").read_text()
    workers = [json.loads(p.read_text()) for p in ws.glob(".lightscientist/workers/*/worker.json")]
    (again,) = [w for w in workers if w.get("task_id") == "idea.generate#2"]
    task = (ws / ".lightscientist" / "workers" / again["id"] / "task.md").read_text()
    assert "Be bolder; the API key for the big model is [REDACTED]" in task


@pytest.mark.slow
def test_a_dot_env_and_a_key_file_are_in_no_snapshot_and_named_in_each(rejected: Path):
    ws = rejected
    listed = set(git_log(ws, "--format=", "--name-only").split())
    assert {".env", "keys/id_ed25519"}.isdisjoint(listed) and "PROCESS.md" in listed
    assert DOT_ENV_KEY not in git_log(ws, "-p")
    messages = git_log(ws, "--format=%B%x00").split("\0")
    snapshots = [m for m in messages if "Stage: " in m]
    assert snapshots and all(
        "Skipped: .env (secret, by default)" in m
        and "Skipped: keys/id_ed25519 (secret, by default)" in m
        for m in snapshots
    )


@pytest.mark.slow
def test_a_fork_copies_no_dot_env(rejected: Path, tmp_path: Path):
    other = tmp_path / "other"
    proc = cli(rejected, "fork", "idea.gate", str(other))
    assert proc.returncode == 0, proc.stderr
    assert (other / "PROCESS.md").is_file()
    assert not (other / ".env").exists() and not (other / "keys").exists()
    assert holding(other, DOT_ENV_KEY) == [] and holding(other, TYPED_KEY) == []
