"""`lightscientist agents check NAME`: the real command in a subprocess, starting the fake ACP
agent (`tests/support/fake_acp_agent.py`) as its own subprocess; and the same operation
through the API."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from lightscientist_jupyter import api
from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.workspace import Workspace

FAKE = str(Path(__file__).resolve().parent / "support" / "fake_acp_agent.py")

TABLE = f"""\
start = "a"

[agents.fake]
command = ["{sys.executable}", "{FAKE}"]
permissions = "allow"

[agents.broken]
command = ["{sys.executable}", "{FAKE}", "--exit", "3"]

[agents.ghost]
command = ["no-such-acp-agent"]

[agents.keyed]
command = ["{sys.executable}", "{FAKE}"]
env = ["LS_TEST_UNSET_KEY"]

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "done"
allowed = ["done"]
agent = "fake"
"""


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_check_prints_what_the_agent_says_of_itself(tmp_path, write_table):
    table = write_table(tmp_path, TABLE)
    result = cli("agents", "check", "fake", "--stages", str(table), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "agent 'fake': fake-acp-agent 1.0.0 (Fake ACP agent), ACP version 1, answered initialize",
        f"  command:      {sys.executable} {FAKE}",
        "  started:      in bubblewrap, no network",  # where a run would start it
        "  protocol:     ACP version 1",
        "  capabilities: loadSession, promptCapabilities.embeddedContext",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["skills", "table.toml"]  # nothing left


def test_check_names_a_variable_the_agent_will_miss(tmp_path, write_table):
    table = write_table(tmp_path, TABLE)
    result = cli("agents", "check", "keyed", "--stages", str(table), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == (
        "  not set here: LS_TEST_UNSET_KEY (it starts without)"
    )


def test_check_reads_the_table_of_the_project_in_the_workspace(tmp_path, write_table):
    table = load_table(write_table(tmp_path / "tables", TABLE))
    ws = Workspace.at(tmp_path / "ws")
    ResearchController.create(ws, "a goal", mode="manual", table=table, bus=EventBus())
    result = cli("agents", "check", "fake", "--workspace", str(ws.root), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("agent 'fake': fake-acp-agent 1.0.0")


def test_an_agent_that_exits_is_one_line(tmp_path, write_table):
    table = write_table(tmp_path, TABLE)
    result = cli(
        "agents", "check", "broken", "--stages", str(table), "--sandbox", "none", cwd=tmp_path
    )
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "lightscientist agents: agent 'broken' exited with code 3 during initialize "
        "(it said: fake-acp-agent: cannot start (a test asked it to exit))"
        "; sandbox: unsandboxed: --sandbox none"
    ]


def test_an_agent_that_needs_what_the_sandbox_hides_fails_the_check_as_it_would_a_run(
    tmp_path, write_table, needs_bwrap
):
    # a launcher that runs a file beside it which its command does not name: the sandbox
    # shows the launcher, not its sibling (the check finds it before a run does)
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "impl.py").write_text(Path(FAKE).read_text(encoding="utf-8"), encoding="utf-8")
    launcher = agent / "run.sh"
    launcher.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "$(dirname "$0")/impl.py" "$@"\n', encoding="utf-8"
    )
    launcher.chmod(0o755)
    table = write_table(
        tmp_path,
        TABLE.replace(
            "[agents.ghost]", f'[agents.hidden]\ncommand = ["{launcher}"]\n\n[agents.ghost]'
        ),
    )
    unsandboxed = cli(
        "agents", "check", "hidden", "--stages", str(table), "--sandbox", "none", cwd=tmp_path
    )
    assert unsandboxed.returncode == 0, unsandboxed.stderr
    assert "  started:      unsandboxed: --sandbox none" in unsandboxed.stdout.splitlines()
    sandboxed = cli("agents", "check", "hidden", "--stages", str(table), cwd=tmp_path)
    assert (sandboxed.returncode, sandboxed.stdout) == (1, "")
    (line,) = sandboxed.stderr.splitlines()
    assert line.startswith("lightscientist agents: agent 'hidden' exited with code 2 ")
    assert "impl.py" in line and line.endswith("; sandbox: in bubblewrap, no network")


def test_a_missing_command_is_one_line(tmp_path, write_table):
    table = write_table(tmp_path, TABLE)
    result = cli("agents", "check", "ghost", "--stages", str(table), cwd=tmp_path)
    assert (result.returncode, result.stdout) == (1, "")
    assert result.stderr.splitlines() == [
        "lightscientist agents: agent 'ghost': command 'no-such-acp-agent' not found on PATH"
        "; sandbox: in bubblewrap, no network"
    ]


def test_an_agent_the_table_does_not_declare(tmp_path):
    result = cli("agents", "check", "codex", cwd=tmp_path)  # the shipped table has none
    assert (result.returncode, result.stdout) == (2, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith("lightscientist agents: error: the stage table ")
    assert line.endswith("research.toml declares no agent 'codex' (its agents: none)")


def test_the_api_performs_the_check(tmp_path, write_table):
    table = write_table(tmp_path, TABLE)
    checked = api.perform("agents", action="check", agent="fake", stages=str(table))
    assert checked.ok
    assert checked.message == (
        "agent 'fake': fake-acp-agent 1.0.0 (Fake ACP agent), ACP version 1, answered initialize"
    )
    failed = api.perform("agents", action="check", agent="broken", stages=str(table))
    assert not failed.ok and failed.message.startswith("agent 'broken' exited with code 3")
