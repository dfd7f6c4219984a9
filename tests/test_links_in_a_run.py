"""Links a sandboxed command plants in the workspace, met by the kernel's own reads and writes
(issue 30, point 1): a real run through the real client, whose worker runs a real command in
bubblewrap that moves PROCESS.md away and leaves links to the user's files in its place, among
the outputs and as a folder; then a rewind over a folder a sandboxed command turned into a link.
Nothing outside the workspace is read into the project or written."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_TABLE, _write_table
from support.chat_server import ChatServer
from support.real_run import GOAL, cli, events, field, scientist

from lightscientist_jupyter.runtime.sandbox import bwrap

SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- not-a-real-key"
BASHRC = "export PATH=/usr/bin\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder of the user's beside the workspace: a login file and a key."""
    if bwrap.problem() is not None and os.environ.get("CI") != "true":
        pytest.skip(str(bwrap.problem()))
    home = tmp_path / "home"
    home.mkdir()
    (home / "bashrc").write_text(BASHRC, encoding="utf-8")
    (home / "id_rsa").write_text(SECRET + "\n", encoding="utf-8")
    return home


def untouched(home: Path) -> None:
    assert sorted(p.name for p in home.iterdir()) == ["bashrc", "id_rsa"]
    assert (home / "bashrc").read_text(encoding="utf-8") == BASHRC


def planting(command: str):
    """The suite's scripted scientist, whose worker of stage `a` runs `command` instead of
    its own (harmless) one."""

    def decide(body: dict[str, Any]) -> dict[str, Any]:
        reply = scientist(body)
        if reply.get("tool") == "execute":
            users = [m for m in body["messages"] if m["role"] == "user"]
            if field(str(users[0]["content"]), "stage") == "a":
                return {"tool": "execute", "args": {"command": command}}
        return reply

    return decide


def run_to_done(ws: Path, decide: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The small table in auto mode, sandboxed, through the real client and `decide`."""
    table = _write_table(ws.parent / "table", SMALL_TABLE)
    server = ChatServer().answer_with(decide)
    try:
        proc = cli(
            ws, "research", GOAL, "--mode", "auto", "--stages", str(table),
            "--model", "some-model", "--base-url", server.base_url, "--sandbox", "bwrap",
        )  # fmt: skip
    finally:
        server.close()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"


def history_text(ws: Path) -> str:
    """Every snapshot's message and every file it holds, as `git log -p` prints them."""
    return subprocess.run(
        ["git", f"--git-dir={ws / '.lightscientist' / 'history.git'}", "log", "-p", "--all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def sandboxed(ws: Path, command: str) -> None:
    """Run `command` in the workspace in the bubblewrap sandbox workers' commands get."""
    home = ws / ".lightscientist" / "workers" / "planter" / "home"
    home.mkdir(parents=True, exist_ok=True)
    args = [*bwrap.argv(ws, home, network=False), "bash", "-c", command]
    subprocess.run(args, check=True, timeout=60, stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_links_a_command_planted_are_never_followed_by_the_run(tmp_path, outside):
    ws = tmp_path / "ws"
    plant = (
        f"mv PROCESS.md PROCESS.before && ln -s {outside}/bashrc PROCESS.md && "
        f"ln -s {outside}/id_rsa out/key.md && ln -s {outside} notes && echo planted"
    )
    run_to_done(ws, planting(plant))
    results = [e for e in events(ws) if e["type"] == "tool.result" and "planted" in e["message"]]
    assert results, "the planting command did not run"

    untouched(outside)
    process = ws / "PROCESS.md"
    assert not process.is_symlink()
    text = process.read_text(encoding="utf-8")
    for stage in ("a", "gate", "b"):
        assert f"<!-- entry: {stage}#1 -->" in text
    refused = [e["message"] for e in events(ws) if e["type"] == "path.refused"]
    assert refused == [
        f"{process}: is a symbolic link (to {outside}/bashrc); LightScientist does not follow "
        "links in a workspace; PROCESS.md was written again as a file from the project's copy"
    ]

    snapshots = history_text(ws)
    assert SECRET not in snapshots
    assert "out/key.md (a symbolic link)" in snapshots
    assert "notes (a symbolic link)" in snapshots


@pytest.mark.slow
def test_a_rewind_replaces_a_planted_folder_link_instead_of_writing_through_it(tmp_path, outside):
    ws = tmp_path / "ws"
    run_to_done(ws, scientist)

    sandboxed(ws, f"rm -r out && ln -s {outside} out")
    assert os.readlink(ws / "out") == str(outside)
    proc = cli(ws, "rewind", "b")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    untouched(outside)
    assert (ws / "out").is_dir() and not (ws / "out").is_symlink()
    assert sorted(p.name for p in (ws / "out").iterdir()) == ["a.md", "brief.md"]
    state = json.loads((ws / ".lightscientist" / "state.json").read_text(encoding="utf-8"))
    assert state["stage"] == "b"
