"""The model check (issue 20, point 10): a model that cannot call tools is told at once.

The model is the only stand-in: the local OpenAI-compatible chat server answers as a small
local model does (in text), with a bad call, with an error, or with a proper tool call; the
real `ChatOpenAI` client and the real command line do the rest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.chat_server import ChatServer, answer, http_error, tool_call

TEXT_LINE = (
    "answered in text instead of calling a tool: this model or its server may not support "
    "tool calling; with Ollama pick a model tagged 'tools'"
)


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=cwd,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": "", "OPENAI_BASE_URL": ""},
    )


@pytest.fixture
def server():
    chat = ChatServer()
    yield chat
    chat.close()


@pytest.mark.parametrize(
    ("reply", "said", "code"),
    [
        (answer("<start_of_turn>model\nSure!"), TEXT_LINE + ' (its answer began: "', 1),
        (tool_call("report_word", wrong="x"), "called report_word with malformed arguments", 1),
        (tool_call("finish_stage", summary="x"), "called a tool it was not offered", 1),
        (http_error(500, "model not loaded"), "failed: ", 1),
        (tool_call("report_word", word="ready"), "can call tools (it called the test tool in", 0),
    ],
    ids=["text", "bad-arguments", "other-tool", "error", "ok"],
)
def test_check_model_says_in_one_line_what_the_model_did(server, tmp_path, reply, said, code):
    server.play(reply)
    proc = cli("check-model", "--model", "tiny", "--base-url", server.base_url, cwd=tmp_path)
    assert proc.returncode == code, proc.stderr
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr
    assert lines[0].startswith(f"model 'tiny' at {server.base_url} {said}"), lines[0]
    request = server.requests[0]  # one short call offering one trivial tool
    assert len(server.requests) == 1
    assert [t["function"]["name"] for t in request["tools"]] == ["report_word"]


def test_the_offline_model_skips_the_check(tmp_path):
    proc = cli("check-model", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.strip() == "model 'offline' calls tools by construction; nothing to check"


def test_research_with_a_model_that_answers_in_text_does_not_start(server, tmp_path):
    """A small local model answering with fragments of its chat template: one line naming
    the model and what it did, exit 2, no project."""
    server.play(answer("<end_of_turn>\n<start_of_turn>user"))
    ws = tmp_path / "project"
    proc = cli(
        "research", "x", "--mode", "auto", "--model", "gemma3:270m", "--base-url",
        server.base_url, "--workspace", str(ws), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(
        f"lightscientist research: error: model 'gemma3:270m' at {server.base_url} " + TEXT_LINE
    ), line
    assert line.endswith("(the run did not start; --skip-model-check goes on anyway)")
    assert not (ws / ".lightscientist" / "state.json").exists()
    assert len(server.requests) == 1


@pytest.mark.slow
def test_skipping_the_check_runs_and_the_stage_says_no_tool_was_called(server, tmp_path):
    server.play(answer("continue"))
    ws = tmp_path / "project"
    proc = cli(
        "research", "x", "--mode", "auto", "--model", "lazy", "--base-url", server.base_url,
        "--workspace", str(ws), "--skip-model-check", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "failed"
    reason = json.loads((ws / ".lightscientist" / "state.json").read_text())["reason"]
    assert reason == (
        "the supervisor left idea.survey with no worker running 3 times in a row; its agents "
        "made no tool call (the model answered in text): this model or its server may not "
        "support tool calling (`lightscientist check-model` tells)"
    )
    # resume checks the project's model again before running anything
    again = cli("resume", "--workspace", str(ws), cwd=tmp_path)
    assert again.returncode == 2
    assert TEXT_LINE in again.stderr and "Traceback" not in again.stderr
