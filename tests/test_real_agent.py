"""A real coding agent from the npm registry works a stage: Codex's ACP adapter
(`@zed-industries/codex-acp`, pinned in scripts/setup, which installs it into .cache/agents)
pointed at the tests' local server (`support.chat_server`, through its Responses API, the
only one Codex speaks) by `-c` overrides in the agent's table. The server scripts the model:
run one command that writes the stage's output, then say so. `agents check` starts it and
prints what it says of itself; `research` runs a project whose stage b it works to `done`;
installed into a folder (not `-g`), it starts inside the sandbox.

A sandboxed agent with `network = true` reaches the internet but nothing of the host
(tests/runtime/test_netstack.py): against the server on the host's loopback the run is
unsandboxed (`--sandbox none`); in the sandbox, the server is on "another machine"
(`support.outside_net`, which needs root: skipped without). Without npm or the adapter these
tests fail under CI (`CI=true`), where scripts/setup installs it, and are skipped elsewhere.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.chat_server import ChatServer, answer, tool_call
from support.outside_net import WORLD

from lightscientist_jupyter.runtime.acp.launch import agent_sandbox
from lightscientist_jupyter.runtime.acp.session import AcpSession
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.vocab import AgentPermissions

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
CODEX_ACP = REPO / ".cache" / "agents" / "node_modules" / ".bin" / "codex-acp"
WRITE = "mkdir -p out && printf 'written by codex\\n' > out/b.md"


@pytest.fixture
def codex_acp() -> Path:
    if not CODEX_ACP.exists():
        why = f"{CODEX_ACP} is missing: scripts/setup installs it with npm"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the real agent's test needs codex-acp under CI: {why}")
        pytest.skip(why)
    return CODEX_ACP


def scripted(body: dict[str, Any]) -> dict[str, Any]:
    """The model: run the command that writes the output, then, once it ran, say so."""
    ran = any(item.get("type") == "function_call_output" for item in body.get("input", []))
    return answer("Wrote out/b.md.") if ran else tool_call("exec_command", cmd=WRITE)


@pytest.fixture
def server():
    chat = ChatServer().answer_with(scripted)
    yield chat
    chat.close()


def table(program: Path, base_url: str) -> str:
    """a (the offline model) → b (Codex, on the local server) → done."""
    overrides = [
        f'model_providers.local={{name="local", base_url="{base_url}", wire_api="responses"}}',
        'model_provider="local"',
        'model="test-model"',
        # the run's sandbox is ours; Codex's own would be a second one inside it
        'sandbox_mode="danger-full-access"',
        'approval_policy="never"',
    ]
    command = [str(program)] + [x for o in overrides for x in ("-c", o)]
    return f"""\
start = "a"

[agents.codex]
command = {json.dumps(command)}
permissions = "allow"
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
"""


def cli(ws: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""}
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )


def project(tmp_path: Path, write_table: Any, program: Path, base_url: str) -> tuple[Path, Path]:
    """The table (with its skills) and an empty workspace."""
    stages = write_table(
        tmp_path / "table",
        table(program, base_url),
        skills={"skills/a.md": "# a\n\nWrite the note.\n", "skills/b.md": "# b\n\nWrite it.\n"},
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    return stages, ws


def research(ws: Path, stages: Path, sandbox: str) -> subprocess.CompletedProcess[str]:
    return cli(
        ws,
        "research",
        "a goal",
        "--mode",
        "auto",
        "--stages",
        str(stages),
        "--model",
        "offline",
        "--sandbox",
        sandbox,
    )


def test_codex_from_npm_works_a_stage_against_the_local_server(
    tmp_path, write_table, codex_acp, server
):
    stages, ws = project(tmp_path, write_table, codex_acp, server.base_url)

    check = cli(ws, "agents", "check", "codex", "--stages", str(stages))
    assert check.returncode == 0, check.stderr
    first = check.stdout.splitlines()[0]
    assert first == "agent 'codex': codex-acp 0.16.0 (Codex), ACP version 1, answered initialize"

    run = research(ws, stages, "none")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "done"
    assert (ws / "out" / "b.md").read_text(encoding="utf-8") == "written by codex\n"
    (codex,) = [w for w in workers(ws) if w.get("agent")]
    assert (codex["stage"], codex["status"]) == ("b", "completed")
    assert codex["result"]["summary"] == "Wrote out/b.md."
    # the model saw the task and ran the command it was scripted to
    assert len(server.requests) == 2
    assert "out/b.md" in json.dumps(server.requests[0]["input"])
    assert "written by codex" in json.dumps(server.requests[1]["input"])
    usage = cli(ws, "usage", "--by", "worker")
    rows = {line.split()[0]: line for line in usage.stdout.splitlines()[1:]}
    assert rows[codex["id"]].split() == [codex["id"], "1", "usage", "not", "reported"]


def test_codex_in_the_sandbox_reaches_its_provider_on_the_internet_and_works_the_stage(
    tmp_path, write_table, codex_acp, needs_bwrap, outside
):
    """With `network = true` in the run's sandbox, its provider a server on another machine
    (`support.outside_net`, standing for the internet), reached through the sandbox's own
    network; the command Codex runs runs in the sandbox too."""
    chat = outside.inside(lambda: ChatServer(host=WORLD).answer_with(scripted))
    try:
        stages, ws = project(tmp_path, write_table, codex_acp, chat.base_url)
        run = research(ws, stages, "bwrap")
    finally:
        chat.close()
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip().splitlines()[-1] == "done"
    assert (ws / "out" / "b.md").read_text(encoding="utf-8") == "written by codex\n"
    assert len(chat.requests) == 2
    (codex,) = [w for w in workers(ws) if w.get("agent")]
    assert (codex["status"], codex["result"]["summary"]) == ("completed", "Wrote out/b.md.")


def test_codex_installed_with_npm_into_a_folder_starts_inside_the_sandbox(
    tmp_path, codex_acp, needs_bwrap
):
    """The launcher `npm install` leaves in `node_modules/.bin` finds its package's binary
    in the sandbox, which shows that `node_modules` folder (read-only) and nothing else."""
    ws = (tmp_path / "ws").resolve()
    (ws / ".lightscientist").mkdir(parents=True)
    home = ws / ".lightscientist" / "workers" / "w1" / "home"
    agent = AgentSpec("codex", (str(codex_acp),), (), AgentPermissions.ALLOW)
    sandbox = agent_sandbox(agent, ShellPolicy(sandbox=True), ws, home)
    session = AcpSession(
        agent, ws, home=home, log=tmp_path / "agent.log", emit=lambda *a: None, sandbox=sandbox
    )
    try:
        info = session.initialize()
    finally:
        session.close()
    assert (info.name, info.version, info.protocol_version) == ("codex-acp", "0.16.0", 1)


def workers(ws: Path) -> list[dict[str, Any]]:
    folder = ws / ".lightscientist" / "workers"
    files = sorted(folder.glob("*/worker.json"))
    return [json.loads(f.read_text(encoding="utf-8")) for f in files]
