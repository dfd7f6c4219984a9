"""A project with stages a coding agent works, run by the real command line: the offline
model works stage a, the fake agent (`fake_acp_agent.py`, a real subprocess) stages b and c.
Shared by the ACP stage tests, the server's and the browser's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from support.waiting import wait_for

REPO = Path(__file__).resolve().parents[2]
FAKE = str(REPO / "tests" / "support" / "fake_acp_agent.py")


def table(permissions: str, *, branching: bool = False) -> str:
    """a (the offline model) → b (the agent) → c (the agent) → done; `branching`: b goes to
    c (its default) or d, both then the offline model's."""
    after_b = ["c", "d"] if branching else ["c"]
    text = f"""\
start = "a"

[agents.fake]
command = ["{sys.executable}", "{FAKE}"]
permissions = "{permissions}"
"""
    text += _stage("a", ["b"])
    text += _stage("b", after_b, agent=True)
    text += _stage("c", ["done"], agent=not branching)
    return text + (_stage("d", ["done"]) if branching else "")


def _stage(name: str, allowed: list[str], *, agent: bool = False) -> str:
    """A stage of `table`: its skill, its one output, its allowed next stages (the first its
    default), the agent when it works it."""
    return (
        f'\n[stages.{name}]\nskill = "skills/{name}.md"\noutputs = ["out/{name}.md"]\n'
        f'next = "{allowed[0]}"\nallowed = {json.dumps(allowed)}\n'
        + ('agent = "fake"\n' if agent else "")
    )


def project(folder: Path, write_table: Any, permissions: str, b: str, c: str = "# c\n") -> Path:
    """The table in `folder` with its skills (`b` and `c`: the agent's script lines);
    returns it."""
    return write_table(
        folder,
        table(permissions),
        skills={"skills/a.md": "# a\n\nWrite the note.\n", "skills/b.md": b, "skills/c.md": c},
    )


def env() -> dict[str, str]:
    return {**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""}


def background(ws: Path, *args: str) -> subprocess.Popen[str]:
    """`lightscientist ARGS --workspace WS` in a process group of its own."""
    return subprocess.Popen(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env(),
        start_new_session=True,
    )


def start(ws: Path, stages: Path, mode: str = "auto") -> subprocess.Popen[str]:
    """`research --mode MODE` of `stages` with the offline model, in the background."""
    return background(
        ws, "research", "a goal", "--mode", mode, "--stages", str(stages), "--model", "offline"
    )


def state(ws: Path) -> dict[str, Any]:
    return json.loads((ws / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


def asked(ws: Path, question: str, within: float = 60) -> None:
    """Wait until the agent's permission request `question` is the pending decision."""
    wait_for(
        lambda: (
            (state(ws).get("pending") or {}).get("question") == question
            if (ws / ".lightscientist" / "state.json").is_file()
            else False
        ),
        f"'{question}' as the pending decision",
        within=within,
    )


def events(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".lightscientist" / "events.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def of_type(ws: Path, type: str) -> list[dict[str, Any]]:
    return [e for e in events(ws) if e["type"] == type]
