"""Secrets at rest: what a worker's session stores — its checkpoints, its record, its command
logs, the event log — is redacted before it is written, with a real `ChatOpenAI` client
against the local chat server and real SQLite checkpoints; the test greps every file of the
workspace, as a command in the sandbox could."""

from __future__ import annotations

import errno
import subprocess
from pathlib import Path

import pytest
from langchain_core.messages import ToolMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.errors import GraphInterrupt
from support.runtime import answer, checkpoint_messages, finish, http_error, plain_spec, tool_call
from support.waiting import wait_for

from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.events import EventBus, JsonlWriter
from lightscientist_jupyter.redact import PIECE_BYTES, redact_file
from lightscientist_jupyter.runtime.checkpoints.redacting import (
    RedactedFailure,
    RedactionMiddleware,
    failure_text,
)
from lightscientist_jupyter.runtime.checkpoints.sqlite import open_checkpointer
from lightscientist_jupyter.runtime.jobs.manager import JobManager, ended_message
from lightscientist_jupyter.runtime.metering.meter import BudgetHold
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.sandbox import command_env, shell
from lightscientist_jupyter.workspace import Workspace

PROXY_KEY = "lsproxy-7f3a9c2e41d84b0b9e6f"
"""A key of no known shape: only the environment's secrets give it away."""
DOT_ENV = {
    "OPENAI_API_KEY": "sk-proj-Qm9vZ2xlIGlzIG5vdCBhIGtleQ",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "DATABASE_PASSWORD": "correct-horse-battery-staple",
}


def holding(root: Path, secret: str, *, besides: tuple[Path, ...] = ()) -> list[str]:
    """Every file under `root` (checkpoints, WAL, logs, records) whose bytes hold `secret`."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and p not in besides and secret.encode() in p.read_bytes()
    )


@pytest.fixture
def event_log(ws: Workspace):
    writer = JsonlWriter(ws.events_file)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    yield bus
    writer.close()


def test_a_model_error_that_echoes_the_key_is_stored_redacted(
    chat_server, make_runtime, ws, event_log, monkeypatch
):
    """A provider or proxy that repeats the Authorization header in its error: the failed
    call's exception is what LangGraph writes to the checkpoints (`__error__`)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", PROXY_KEY)
    model = resolve_model("some-model", base_url=chat_server.base_url, timeout=20)
    chat_server.play(http_error(401, "invalid credentials", echo="Authorization"))
    runtime = make_runtime(model, retries=0, bus=event_log)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)
    runtime.close()

    assert record["status"] == "failed"
    assert "Error code: 401" in record["error"] and "[REDACTED]" in record["error"]
    assert record["error"].startswith("OpenAIAuthenticationError: ")  # its kind, as before
    assert holding(ws.root, PROXY_KEY) == []
    assert (ws.state_dir / "checkpoints.sqlite").stat().st_size > 0


def test_command_output_and_file_reads_are_checkpointed_and_logged_redacted(
    chat_server, chat_model, make_runtime, ws, event_log
):
    dot_env = ws.root / ".env"
    dot_env.write_text("".join(f"{k}={v}\n" for k, v in DOT_ENV.items()) + "DEBUG=1\n")
    chat_server.play(
        tool_call("execute", command="cat .env"),
        tool_call("read_file", file_path="/.env"),
        tool_call("grep", pattern="PASSWORD"),
        answer("Done."),
    )
    runtime = make_runtime(chat_model, retries=0, bus=event_log)
    worker = runtime.start(plain_spec("Look at the settings."))
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    results = [
        m for m in checkpoint_messages(runtime, record["thread_id"]) if isinstance(m, ToolMessage)
    ]
    assert [m.name for m in results] == ["execute", "read_file", "grep"]
    shown = results[0].content
    assert "OPENAI_API_KEY=[REDACTED]" in shown and "DEBUG=1" in shown  # the rest is intact
    assert "[REDACTED]" in results[1].content
    runtime.close()

    (log,) = (ws.workers_dir / worker / "commands").glob("*.log")
    assert log.read_text() == (
        "OPENAI_API_KEY=[REDACTED]\nAWS_SECRET_ACCESS_KEY=[REDACTED]\n"
        "DATABASE_PASSWORD=[REDACTED]\nDEBUG=1\n"
    )
    for secret in DOT_ENV.values():
        assert holding(ws.root, secret, besides=(dot_env,)) == [], secret


def test_a_subagents_steps_are_checkpointed_redacted(chat_server, chat_model, make_runtime, ws):
    """deepagents' `task` subagent runs in the worker's thread, and its steps are
    checkpointed there too."""
    dot_env = ws.root / ".env"
    dot_env.write_text(f"OPENAI_API_KEY={DOT_ENV['OPENAI_API_KEY']}\n")
    chat_server.play(
        tool_call("task", description="What is in /.env?", subagent_type="general-purpose"),
        tool_call("read_file", file_path="/.env"),  # the subagent's call
        answer("It sets a key."),  # the subagent's answer
        answer("Done."),
    )
    runtime = make_runtime(chat_model, retries=0)
    record = finish(runtime, runtime.start(plain_spec("Ask a helper.")))
    runtime.close()

    assert record["status"] == "completed", record
    assert len(chat_server.requests) == 4
    assert holding(ws.root, DOT_ENV["OPENAI_API_KEY"], besides=(dot_env,)) == []


def test_output_a_command_left_running_writes_is_redacted_once_it_ends(tmp_path):
    """A command's background member writes after the command returned: its log is
    redacted when the group is gone, not before (so nothing it writes is lost)."""
    root = tmp_path.resolve()
    (root / ".env").write_text(f"API_KEY={DOT_ENV['OPENAI_API_KEY']}\n")
    log = root / "logs" / "0001.log"
    groups = shell.ProcessGroups()
    result = shell.run_command(
        "echo started; (sleep 0.5; cat .env; echo after) &",
        cwd=root,
        env=command_env.worker_env(root, root / "home"),
        log_path=log,
        timeout=20,
        groups=groups,
        owner="w1",
    )
    assert result.output.startswith("started")
    wait_for(lambda: not groups.owned_by("w1"), "the end of the command's group", within=10)
    assert log.read_text() == "started\nAPI_KEY=[REDACTED]\nafter\n"


def test_the_log_of_a_command_a_killed_run_left_is_redacted_by_the_next_run(tmp_path):
    """A run killed during a command leaves its log raw; the next run, ending the command's
    group (`end_recorded`), redacts it."""
    folder = tmp_path / "workers"
    log = folder / "w1" / "commands" / "0001.log"
    log.parent.mkdir(parents=True)
    log.write_text(f"password: {DOT_ENV['DATABASE_PASSWORD']}\n")
    proc = subprocess.Popen(["sleep", "30"], start_new_session=True)
    shell.mark_group(log.with_suffix(".pgid"), proc.pid)

    assert shell.end_recorded(folder) == [proc.pid]
    proc.wait(5)
    assert log.read_text() == "password: [REDACTED]\n"
    assert not log.with_suffix(".pgid").exists()


def test_a_job_log_and_its_tail_for_the_worker_are_redacted(ws):
    (ws.root / ".env").write_text(f"GITHUB_TOKEN={DOT_ENV['OPENAI_API_KEY']}\n")
    jobs = JobManager(ws, EventBus(), shell.ProcessGroups())
    job = jobs.submit("w1", "cat .env; echo finished", "show settings")
    # (a cat and an echo; the wait is long for a full suite on two busy cores: once > 20 s)
    wait_for(lambda: not jobs.get(job.id).running, "the end of the job", within=60)

    assert (ws.root / job.log).read_text() == "GITHUB_TOKEN=[REDACTED]\nfinished\n"
    message = ended_message([jobs.get(job.id)], ws.root)
    assert "GITHUB_TOKEN=[REDACTED]" in message and DOT_ENV["OPENAI_API_KEY"] not in message


# ----------------------------------------------------------------------------- redact_file


def test_redact_file_keeps_a_clean_log_and_rewrites_one_with_a_secret(tmp_path):
    clean = tmp_path / "clean.log"
    clean.write_bytes(b"loss=0.1\n" * 1000)
    before = clean.stat()
    assert redact_file(clean) is False
    assert clean.stat().st_ino == before.st_ino and clean.stat().st_mtime_ns == before.st_mtime_ns

    log = tmp_path / "big.log"
    head = b"x" * (3 * PIECE_BYTES) + b"\n\xff\xfe not UTF-8\n"  # past the first pieces
    log.write_bytes(head + f"token: {DOT_ENV['DATABASE_PASSWORD']}\n".encode() + b"tail\n")
    log.chmod(0o640)
    assert redact_file(log) is True
    assert log.read_bytes() == head + b"token: [REDACTED]\ntail\n"
    assert log.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir() if "redacting" in p.name] == []


def test_redact_file_follows_no_link(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text(f"API_KEY={DOT_ENV['OPENAI_API_KEY']}\n")
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "0001.log").symlink_to(outside)
    (tmp_path / "linked").symlink_to(tmp_path / "logs")
    with pytest.raises(OSError) as caught:  # the log itself a link
        redact_file(tmp_path / "logs" / "0001.log")
    assert caught.value.errno in (errno.ELOOP, errno.ENOTDIR)
    with pytest.raises(PathRefused, match="linked: is a symbolic link"):  # its folder one
        redact_file(tmp_path / "linked" / "0001.log")
    assert DOT_ENV["OPENAI_API_KEY"] in outside.read_text()


def test_a_failed_task_a_middleware_never_saw_is_stored_redacted(ws, monkeypatch):
    """A failure raised where no middleware of ours stands (deepagents' own summarisation
    calling the model) is stored as the failed task's write: the runtime's saver stores it
    redacted, and a plain write as it came."""
    monkeypatch.setenv("LS_TEST_PROXY_TOKEN", PROXY_KEY)
    saver = open_checkpointer(ws, "sqlite")
    config = saver.put(
        {"configurable": {"thread_id": "t1", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {}
    )
    failure = RuntimeError(f"summarisation failed: 401, header Authorization: Bearer {PROXY_KEY}")
    saver.put_writes(config, [("__error__", failure), ("notes", "plain text")], "task-1")
    stored = {channel: value for _, channel, value in saver.get_tuple(config).pending_writes}
    assert PROXY_KEY not in repr(stored["__error__"])
    assert "[REDACTED]" in str(stored["__error__"])
    assert stored["notes"] == "plain text"
    saver.conn.close()
    assert holding(ws.root, PROXY_KEY) == []


# ----------------------------------------------------------------------------- the middleware


def raising(exc: Exception):
    def handler(request):
        raise exc

    return handler


@pytest.mark.parametrize(
    "exc",
    [
        ValueError("Error code: 400 - bad request"),
        BudgetHold("the project's budget is spent: token: 2000000 of 2000000"),
        GraphInterrupt(({"question": "use password: hunter2hunter2?"},)),
    ],
    ids=["no secret", "budget hold", "interrupt"],
)
def test_a_failure_without_a_secret_and_control_flow_pass_as_they_are(exc):
    middleware = RedactionMiddleware()
    for wrap in (middleware.wrap_model_call, middleware.wrap_tool_call):
        with pytest.raises(type(exc)) as caught:
            wrap(None, raising(exc))
        assert caught.value is exc


def test_a_failure_with_a_secret_keeps_its_kind_and_loses_the_secret():
    exc = ConnectionError(f"proxy refused https://api.example/v1?api_key={PROXY_KEY}")
    with pytest.raises(RedactedFailure) as caught:
        RedactionMiddleware().wrap_tool_call(None, raising(exc))
    assert (
        str(caught.value)
        == "ConnectionError: proxy refused https://api.example/v1?api_key=[REDACTED]"
    )
    assert PROXY_KEY not in repr(caught.value)  # what LangGraph would store
    assert failure_text(caught.value, 600) == str(caught.value)
