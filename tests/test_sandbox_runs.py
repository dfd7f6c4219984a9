"""Runs and the sandbox, from the command line: the default table end to end in bubblewrap;
`auto` on a PATH without bubblewrap runs unsandboxed and says so (an event, `status`);
`--sandbox bwrap` there refuses before any work; so it does with `--allow-network` on a PATH
without pasta (no network of their own for commands), where `auto` gives commands the host's
network and says so; a bad `--limits` is one line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightscientist_jupyter.runtime.sandbox import bwrap

GOAL = "Does warmup help a small MLP?"
NO_BWRAP = "bubblewrap (bwrap) is not on PATH; install the 'bubblewrap' package"
NO_PASTA = "pasta is not installed; install the 'passt' package"


def cli(ws: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 240):
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": "", **(env or {})},
    )


def path_without(bin_dir: Path, name: str) -> str:
    """The PATH of this process with every `name` left out (the other tools linked)."""
    bin_dir.mkdir()
    folders = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        if not folder or not Path(folder).is_dir():
            continue
        if not (Path(folder) / name).exists():
            folders.append(folder)
            continue
        for tool in Path(folder).iterdir():
            if tool.name != name and not (bin_dir / tool.name).exists():
                (bin_dir / tool.name).symlink_to(tool)
    return os.pathsep.join([str(bin_dir), *folders])


@pytest.fixture
def path_without_bwrap(tmp_path: Path) -> str:
    return path_without(tmp_path / "bin", "bwrap")


@pytest.fixture
def path_without_pasta(tmp_path: Path) -> str:
    if bwrap.problem() is not None and os.environ.get("CI") != "true":
        pytest.skip(str(bwrap.problem()))
    return path_without(tmp_path / "bin-without-pasta", "pasta")


def events_of(ws: Path, type_: str) -> list[dict]:
    lines = (ws / ".lightscientist" / "events.jsonl").read_text().splitlines()
    return [e for e in map(json.loads, lines) if e["type"] == type_]


@pytest.mark.slow
def test_the_default_table_runs_end_to_end_sandboxed(tmp_path):
    if bwrap.problem() is not None and os.environ.get("CI") != "true":
        pytest.skip(str(bwrap.problem()))
    ws = tmp_path / "project"
    proc = cli(ws, "research", GOAL, "--mode", "auto", "--sandbox", "bwrap")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert (ws / "paper" / "paper.tex").stat().st_size > 0
    assert (ws / "paper" / "paper.pdf").read_bytes().startswith(b"%PDF")  # built in bwrap
    assert (ws / "experiment" / "results.csv").stat().st_size > 0
    assert events_of(ws, "sandbox.unavailable") == []
    status = json.loads(cli(ws, "status", "--json").stdout)
    assert status["sandbox"] == {
        "mode": "bwrap",
        "network": False,
        "limits": "",
        "active": "bwrap",
        "warning": None,
    }
    assert "warning:" not in cli(ws, "status").stdout


@pytest.mark.slow
def test_auto_without_bwrap_runs_unsandboxed_and_says_so(tmp_path, path_without_bwrap):
    ws = tmp_path / "project"
    env = {"PATH": path_without_bwrap}
    proc = cli(ws, "research", GOAL, "--mode", "manual", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    warning = f"worker commands run unsandboxed: {NO_BWRAP}"
    [event] = events_of(ws, "sandbox.unavailable")
    assert event["layer"] == 3
    assert event["message"] == warning
    assert event["data"] == {"mode": "auto", "reason": NO_BWRAP}
    text = cli(ws, "status", env=env).stdout.splitlines()
    assert f"warning: {warning}" in text
    status = json.loads(cli(ws, "status", "--json", env=env).stdout)
    assert status["sandbox"]["active"] == "none"
    assert status["sandbox"]["warning"] == warning


def test_sandbox_bwrap_without_bwrap_refuses_before_any_work(tmp_path, path_without_bwrap):
    ws = tmp_path / "project"
    proc = cli(ws, "research", GOAL, "--sandbox", "bwrap", env={"PATH": path_without_bwrap})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        f"lightscientist research: error: --sandbox bwrap: {NO_BWRAP} "
        "(or use --sandbox auto or none)\n"
    )
    assert not (ws / ".lightscientist" / "state.json").exists()


def test_sandbox_bwrap_with_network_but_no_pasta_refuses_before_any_work(
    tmp_path, path_without_pasta
):
    ws = tmp_path / "project"
    env = {"PATH": path_without_pasta}
    proc = cli(ws, "research", GOAL, "--sandbox", "bwrap", "--allow-network", env=env)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == (
        "lightscientist research: error: --sandbox bwrap: a command with network needs a "
        f"network of its own, and {NO_PASTA} (or use --sandbox auto, which then shares the "
        "host's network)\n"
    )
    assert not (ws / ".lightscientist" / "state.json").exists()


@pytest.mark.slow
def test_auto_with_network_but_no_pasta_shares_the_host_network_and_says_so(
    tmp_path, path_without_pasta
):
    ws = tmp_path / "project"
    env = {"PATH": path_without_pasta}
    proc = cli(ws, "research", GOAL, "--mode", "manual", "--allow-network", env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    warning = (
        "worker commands with network share the host's network (its loopback services and "
        f"link-local addresses): {NO_PASTA}"
    )
    [event] = events_of(ws, "sandbox.unavailable")
    assert event["message"] == warning
    assert event["data"] == {"mode": "auto", "reason": NO_PASTA}
    assert f"warning: {warning}" in cli(ws, "status", env=env).stdout.splitlines()
    status = json.loads(cli(ws, "status", "--json", env=env).stdout)
    assert status["sandbox"]["active"] == "bwrap"
    assert status["sandbox"]["warning"] == warning


def test_a_bad_limits_option_is_one_line(tmp_path):
    ws = tmp_path / "project"
    proc = cli(ws, "research", GOAL, "--limits", "mem=lots")
    assert proc.returncode == 2
    assert proc.stderr == (
        "lightscientist research: error: --limits: mem='lots' must be a size such as 2G or "
        "512M (or none) (example: --limits mem=2G,cpu=600,procs=256)\n"
    )
    assert not (ws / ".lightscientist" / "state.json").exists()


@pytest.mark.slow
def test_resume_keeps_the_sandbox_research_was_given(tmp_path, path_without_bwrap):
    if bwrap.problem() is not None and os.environ.get("CI") != "true":
        pytest.skip(str(bwrap.problem()))
    ws = tmp_path / "project"
    first = cli(ws, "research", GOAL, "--mode", "manual", "--sandbox", "bwrap")
    assert first.stdout.strip().splitlines()[-1] == "waiting_user", first.stderr
    settings = json.loads((ws / ".lightscientist" / "state.json").read_text())["settings"]
    assert settings["sandbox"] == "bwrap"
    proc = cli(ws, "resume", env={"PATH": path_without_bwrap})
    assert proc.returncode == 2
    assert proc.stderr == (
        f"lightscientist resume: error: --sandbox bwrap: {NO_BWRAP} "
        "(or use --sandbox auto or none)\n"
    )
    status = json.loads(cli(ws, "status", "--json").stdout)
    assert status["status"] == "waiting_user" and status["sandbox"]["active"] == "bwrap"
