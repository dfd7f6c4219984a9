"""A coding agent's ACP session (`runtime.acp`), against the fake agent run as a real
subprocess (`tests/support/fake_acp_agent.py`): the files it writes, the events its updates
become, the permission policies, cancel, `session/load`, its environment, and the one line
for every way an agent fails."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lightscientist_jupyter.errors import AgentFailed
from lightscientist_jupyter.runtime.acp.session import AcpSession, TurnResult
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.vocab import AgentPermissions

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py")


class Events:
    """The layer-3 events a session emits, as `(type, message)` (data in `data`)."""

    def __init__(self) -> None:
        self.items: list[tuple[str, str, dict[str, Any]]] = []
        self.lock = threading.Lock()

    def __call__(self, type_: str, message: str, data: dict[str, Any]) -> None:
        with self.lock:
            self.items.append((str(type_), message, data))

    def lines(self) -> list[tuple[str, str]]:
        with self.lock:
            return [(t, m) for t, m, _ in self.items]


def fake(*flags: str, permissions: str = "ask", env: tuple[str, ...] = ()) -> AgentSpec:
    return AgentSpec(
        name="fake",
        command=(sys.executable, FAKE, *flags),
        env=env,
        permissions=AgentPermissions(permissions),
    )


@pytest.fixture
def open_session(tmp_path):
    """`open_session(spec, **options) -> (session, events)`, in `tmp_path/ws`; every
    session is closed at the end, and its process group must be gone."""
    made: list[AcpSession] = []
    workspace = tmp_path / "ws"
    workspace.mkdir()

    def make(spec: AgentSpec, **options: Any) -> tuple[AcpSession, Events]:
        events = Events()
        session = AcpSession(
            spec,
            workspace,
            home=tmp_path / "home",
            log=tmp_path / "agent.log",
            emit=events,
            **options,
        )
        made.append(session)
        return session, events

    yield make
    for session in made:
        session.close()
        assert not session.alive()


def workspace_of(session: AcpSession) -> Path:
    return session.workspace


# ------------------------------------------------------------------ a turn


def test_a_turn_writes_its_files_and_its_updates_become_events(open_session):
    session, events = open_session(fake())
    info = session.initialize()
    assert (info.name, info.title, info.version) == ("fake-acp-agent", "Fake ACP agent", "1.0.0")
    assert info.protocol_version == 1 and info.load_session
    assert info.capabilities["promptCapabilities"]["embeddedContext"] is True
    session.start()
    result = session.prompt(
        "Write the results\nwrite out/b.md: The answer is 42.\nusage 1200 300\nsay Done: out/b.md"
    )
    assert (workspace_of(session) / "out" / "b.md").read_text() == "The answer is 42.\n"
    assert (result.stop_reason, result.summary, result.tool_calls) == (
        "end_turn",
        "Done: out/b.md",
        1,
    )
    assert result.usage is not None
    assert (result.usage.input_tokens, result.usage.output_tokens) == (1200, 300)
    assert result.usage.cost is None  # not priced yet: unknown, never zero
    assert events.lines() == [
        (
            "agent.plan",
            "plan: 0/3 done; read the task (pending); write out/b.md (pending); report (pending)",
        ),
        ("model.output", "Working on: Write the results"),
        ("tool.call", "Write out/b.md"),
        ("tool.result", "Write out/b.md → wrote 18 bytes to out/b.md"),
        (
            "agent.plan",
            "plan: 3/3 done; read the task (completed); write out/b.md (completed); "
            "report (completed)",
        ),
        ("model.output", "Done: out/b.md"),
    ]
    _, _, call = events.items[2]
    assert call["kind"] == "edit" and "The answer is 42." in call["args"]


def test_an_agent_that_reports_no_usage_has_none(open_session):
    session, _ = open_session(fake())
    session.start()
    result = session.prompt('A task\n\noutputs: ["out/a.md", "out/b.csv"]')
    assert result.usage is None
    assert result.summary == "Wrote out/a.md, out/b.csv."
    assert (workspace_of(session) / "out" / "b.csv").read_text() == (
        "out/b.csv, written by fake-acp-agent\n"
    )


def test_the_agent_gets_only_the_variables_its_table_lists(open_session, monkeypatch, tmp_path):
    monkeypatch.setenv("FAKE_PROVIDER_KEY", "sk-fake-provider-0123456789")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-the-agent-0123456789")
    monkeypatch.setenv("LIGHTSCIENTIST_MODEL", "offline")
    session, _ = open_session(fake(env=("FAKE_PROVIDER_KEY", "UNSET_VARIABLE")))
    info = session.initialize()
    assert info.missing_env == ("UNSET_VARIABLE",)
    session.start()
    session.prompt("env env.txt")
    lines = (workspace_of(session) / "env.txt").read_text().splitlines()
    seen = dict(line.split("=", 1) for line in lines)
    assert sorted(seen) == ["FAKE_PROVIDER_KEY", "HOME", "LANG", "PATH"]
    assert seen["FAKE_PROVIDER_KEY"] == "sk-fake-provider-0123456789"
    assert seen["HOME"] == str(tmp_path / "home")
    assert seen["PATH"] == f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin"


def test_a_secret_in_what_the_agent_does_never_reaches_an_event(open_session, monkeypatch):
    secret = "sk-proj-secretvalue0123456789"
    monkeypatch.setenv("OPENAI_API_KEY", secret)  # ours, not the agent's: its table lists none
    session, events = open_session(fake())
    session.start()
    session.prompt(f"write out/key.txt: the key is {secret}\nsay I saw {secret}")
    assert (workspace_of(session) / "out" / "key.txt").read_text() == f"the key is {secret}\n"
    shown = repr(events.items)
    assert secret not in shown and "[REDACTED]" in shown
    assert ("model.output", "I saw [REDACTED]") in events.lines()


# ------------------------------------------------------------------ permissions


def test_allow_answers_at_once_with_the_agents_allow_once(open_session):
    session, events = open_session(fake(permissions="allow"))
    session.start()
    session.prompt("ask\nwrite out/b.md: allowed")
    assert (workspace_of(session) / "out" / "b.md").read_text() == "allowed\n"
    assert ("agent.permission", "Write out/b.md: Allow once (policy allow)") in events.lines()


def test_deny_answers_at_once_and_nothing_is_written(open_session):
    session, events = open_session(fake(permissions="deny"))
    session.start()
    result = session.prompt("ask\nwrite out/b.md: refused")
    assert not (workspace_of(session) / "out" / "b.md").exists()
    assert result.summary == "Wrote nothing."
    lines = events.lines()
    assert ("agent.permission", "Write out/b.md: Reject (policy deny)") in lines
    assert ("tool.result", "Write out/b.md failed: permission refused for out/b.md") in lines


def test_ask_reaches_the_callers_question_with_the_agents_options(open_session):
    asked: list[PermissionRequest] = []

    def ask(request: PermissionRequest) -> str:
        asked.append(request)
        return "allow"

    session, events = open_session(fake(), ask=ask)
    session.start()
    session.prompt("ask\nwrite out/b.md: the researcher said yes")
    (request,) = asked
    assert (request.agent, request.title, request.kind) == ("fake", "Write out/b.md", "edit")
    assert (request.paths, request.old_text, request.new_text) == (
        ("out/b.md",),
        None,
        "the researcher said yes\n",
    )
    assert [(o.id, o.name, o.kind) for o in request.options] == [
        ("allow", "Allow once", "allow_once"),
        ("reject", "Reject", "reject_once"),
    ]
    assert (workspace_of(session) / "out" / "b.md").read_text() == "the researcher said yes\n"
    assert ("agent.permission", "Write out/b.md: Allow once (asked)") in events.lines()


def test_ask_with_nobody_to_ask_cancels_the_request(open_session):
    session, events = open_session(fake())
    session.start()
    session.prompt("ask\nwrite out/b.md: nobody answered")
    assert not (workspace_of(session) / "out" / "b.md").exists()
    assert ("agent.permission", "Write out/b.md: cancelled (asked)") in events.lines()


# ------------------------------------------------------------------ cancel


def run_turn(session: AcpSession, text: str) -> tuple[threading.Thread, list[Any]]:
    """The turn on a thread of its own; its result (or error) lands in the list."""
    out: list[Any] = []

    def turn() -> None:
        try:
            out.append(session.prompt(text))
        except AgentFailed as exc:
            out.append(exc)

    thread = threading.Thread(target=turn)
    thread.start()
    return thread, out


def wait_for(events: Events, line: tuple[str, str], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while line not in events.lines():
        assert time.monotonic() < deadline, events.lines()
        time.sleep(0.02)


def test_cancel_ends_the_turn_cooperatively(open_session):
    session, events = open_session(fake())
    session.start()
    thread, out = run_turn(session, "Long task\nsleep 30\nwrite out/b.md: never")
    wait_for(events, ("model.output", "Working on: Long task"))
    started = time.monotonic()
    assert session.cancel() is True  # it stopped by itself
    thread.join(10)
    (result,) = out
    assert isinstance(result, TurnResult) and result.stop_reason == "cancelled"
    assert time.monotonic() - started < 3
    assert not (workspace_of(session) / "out" / "b.md").exists()
    assert session.alive()  # the agent itself goes on; `close` ends it


def test_a_cancel_for_the_next_turn_cancels_a_turn_that_has_not_begun(open_session):
    session, events = open_session(fake())
    session.start()
    assert session.cancel(next_turn=True) is True  # no turn runs: the next one is cancelled
    started = time.monotonic()
    result = session.prompt("Long task\nsleep 30\nwrite out/b.md: never")
    assert (result.stop_reason, result.summary, result.usage) == ("cancelled", "", None)
    assert time.monotonic() - started < 1
    assert session.prompt("Short task\nsay done").stop_reason == "end_turn"  # only that one


def test_cancel_answers_a_pending_question_cancelled(open_session):
    never = threading.Event()

    def ask(request: PermissionRequest) -> str | None:
        never.wait(30)  # nobody answers before the cancel
        return "allow"

    session, events = open_session(fake(), ask=ask)
    session.start()
    thread, out = run_turn(session, "Task\nask\nwrite out/b.md: never")
    wait_for(events, ("tool.call", "Write out/b.md"))
    assert session.cancel() is True
    thread.join(10)
    never.set()
    (result,) = out
    assert (result.stop_reason, result.summary) == ("cancelled", "Working on: Task")
    assert ("agent.permission", "Write out/b.md: cancelled (asked)") in events.lines()
    assert not (workspace_of(session) / "out" / "b.md").exists()


def test_cancel_ends_an_agent_deaf_to_it_after_the_grace_period(open_session):
    session, events = open_session(fake(), grace=0.5)
    session.start()
    thread, out = run_turn(session, "Long task\nstubborn 60")
    wait_for(events, ("model.output", "Working on: Long task"))
    started = time.monotonic()
    assert session.cancel() is False  # its process group was ended
    thread.join(10)
    (result,) = out
    assert isinstance(result, TurnResult) and result.stop_reason == "cancelled"
    assert time.monotonic() - started < 5
    assert not session.alive()


# ------------------------------------------------------------------ session/load


def test_a_new_process_loads_the_session_and_goes_on(open_session):
    first, _ = open_session(fake())
    session_id = first.start()
    first.prompt("write out/one.md: first turn")
    first.close()
    second, events = open_session(fake())
    assert second.start(load=session_id) == session_id
    assert events.lines() == []  # the replayed history is not shown again
    result = second.prompt("write out/two.md: second turn\nsay both")
    assert result.summary == "both"
    assert (workspace_of(second) / "out" / "two.md").read_text() == "second turn\n"


def test_an_agent_that_cannot_load_gets_a_new_session(open_session):
    first, _ = open_session(fake())
    session_id = first.start()
    first.close()
    second, _ = open_session(fake("--no-load"))
    assert second.start(load=session_id) != session_id


# ------------------------------------------------------------------ failures, one line each


def test_a_missing_command(open_session):
    spec = AgentSpec(name="ghost", command=("no-such-acp-agent", "--acp"))
    session, _ = open_session(spec)
    with pytest.raises(AgentFailed) as info:
        session.initialize()
    assert str(info.value) == "agent 'ghost': command 'no-such-acp-agent' not found on PATH"


def test_an_agent_that_exits_at_start(open_session):
    session, _ = open_session(fake("--exit", "3"))
    with pytest.raises(AgentFailed) as info:
        session.initialize()
    assert str(info.value) == (
        "agent 'fake' exited with code 3 during initialize "
        "(it said: fake-acp-agent: cannot start (a test asked it to exit))"
    )


def test_an_agent_that_exits_in_the_middle_of_a_turn(open_session):
    session, _ = open_session(fake())
    session.start()
    with pytest.raises(AgentFailed) as info:
        session.prompt("Task\nexit 7")
    assert str(info.value) == (
        "agent 'fake' exited with code 7 during session/prompt "
        "(it said: fake-acp-agent: exiting with 7 in the middle of a turn)"
    )


def test_an_agent_that_speaks_something_else(open_session):
    session, _ = open_session(fake("--garbage"))
    with pytest.raises(AgentFailed) as info:
        session.initialize()
    assert str(info.value) == (
        "agent 'fake' speaks something else than JSON-RPC on its stdout "
        "(it wrote 'Hello! I am a chat bot, not an ACP agent.')"
    )


def test_an_agent_that_never_answers(open_session):
    session, _ = open_session(fake("--silent"), timeout=1.0)
    started = time.monotonic()
    with pytest.raises(AgentFailed) as info:
        session.initialize()
    assert str(info.value) == "agent 'fake' did not answer initialize within 1 s"
    assert time.monotonic() - started < 3
