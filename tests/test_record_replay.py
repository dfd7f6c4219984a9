"""Record and replay from the command line: a custom stage table run once through the real
`ChatOpenAI` client against the local chat server with `--record`, then replayed with
`--model replay:<workspace>` into new folders after the server has stopped.

The recording is made once per test session (`support.real_run`); each test replays it into
its own folder.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import SMALL_TABLE, _write_table
from support.chat_server import ChatServer
from support.real_run import (
    CONTENT,
    GOAL,
    asking_scientist,
    cli,
    events,
    is_model_check,
    nothing_listens,
    scientist,
)
from support.waiting import wait_for


def stages_of(ws: Path) -> list[tuple[str, str]]:
    return [
        (e["data"].get("from"), e["data"].get("to"))
        for e in events(ws)
        if e["type"] == "stage.transition"
    ]


def process_entries(ws: Path) -> str:
    """PROCESS.md with its times masked."""
    text = (ws / "PROCESS.md").read_text(encoding="utf-8")
    return re.sub(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})? UTC", "<time>", text)


def outputs(ws: Path) -> dict[str, str]:
    return {
        str(p.relative_to(ws)): p.read_text(encoding="utf-8")
        for p in sorted((ws / "out").rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def recorded(real_recording) -> dict[str, Any]:
    """The session's recorded real-model run (`support.real_run`)."""
    return real_recording


def replay(
    recorded: dict[str, Any],
    name: str,
    spec: str,
    table: Path | None = None,
    pg_url: str | None = None,
):
    """Replay the recording into a new folder `name` (on `pg_url`'s checkpoints if given)."""
    ws = recorded["base"] / name
    proc = cli(
        ws,
        "research",
        GOAL,
        "--mode",
        "auto",
        "--stages",
        str(table or recorded["table"]),
        "--model",
        spec,
        *(["--checkpoints", pg_url] if pg_url else []),
        env={"OPENAI_BASE_URL": recorded["url"]},  # a dead server: any connection would fail
    )
    return ws, proc


@pytest.mark.slow
def test_the_recording_holds_every_call_of_every_session(recorded):
    first, server = recorded["first"], recorded["server"]
    files = sorted((first / ".lightscientist" / "recordings").glob("*.jsonl"))
    assert [f.name for f in files] == ["run-0001.jsonl"]
    lines = [json.loads(line) for line in files[0].read_text(encoding="utf-8").splitlines()]
    assert lines[0]["kind"] == "run" and lines[0]["model"] == "openai-chat:some-model"
    calls = [line for line in lines if line["kind"] == "call"]
    sessions = [r for r in server.requests if not is_model_check(r)]
    assert len(calls) == len(sessions)  # every request of a session (the check is none)
    per_session: dict[str, list[int]] = {}
    for call in calls:
        per_session.setdefault(call["session"], []).append(call["call"])
    assert {k: len(v) for k, v in per_session.items()} == {
        "supervisor/0": 6,  # per stage: start_worker, finish_stage (each settles its event)
        "worker/a/0": 4,
        "worker/gate/0": 4,
        "worker/b/0": 5,
        "worker/lessons/0": 2,  # the project's end: read PROCESS.md, deliver the lessons
    }
    assert all(v == list(range(len(v))) for v in per_session.values())
    first_call = calls[0]
    assert (first_call["role"], first_call["stage"], first_call["worker"]) == (
        "supervisor",
        "a",
        "supervisor",
    )
    names = {first_call["defs"][h]["name"] for h in first_call["tools"]}
    assert {"start_worker", "finish_stage", "get_worker"} <= names
    worker_call = next(c for c in calls if c["session"] == "worker/b/0" and c["call"] == 4)
    assert worker_call["response"]["tool_calls"][0]["name"] == "complete_stage"
    assert worker_call["response"]["usage"]["total_tokens"] == 18
    # each worker's end as layer 2 took it in, before the supervisor's call that decided on it
    updates = [n for n, line in enumerate(lines) if line["kind"] == "update"]
    assert [(lines[n]["session"], lines[n]["status"]) for n in updates] == [
        ("worker/a/0", "completed"),
        ("worker/gate/0", "completed"),
        ("worker/b/0", "completed"),
    ]
    for n in updates:
        decided = next(line for line in lines[n:] if line.get("role") == "supervisor")
        assert decided["response"]["tool_calls"][0]["name"] == "finish_stage"
    text = files[0].read_text(encoding="utf-8")
    assert str(first) not in text


def test_a_replay_without_the_server_reproduces_the_run(recorded):
    first = recorded["first"]
    assert nothing_listens(recorded["url"])
    second, proc = replay(recorded, "second", f"replay:{first}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert stages_of(second) == stages_of(first) == [("a", "gate"), ("gate", "b"), ("b", "done")]
    assert process_entries(second) == process_entries(first)
    assert (
        outputs(second)
        == outputs(first)
        == {
            "out/a.md": CONTENT["out/a.md"],
            "out/b.csv": CONTENT["out/b.csv"],
            "out/b.md": CONTENT["out/b.md"],
            "out/brief.md": CONTENT["out/brief.md"],
        }
    )
    assert [e for e in events(second) if e["type"] == "replay.divergence"] == []
    assert not (second / ".lightscientist" / "recordings").exists()  # a replay records nothing


@pytest.mark.slow
def test_a_changed_skill_fails_a_strict_replay_and_counts_once_in_a_lenient_one(recorded):
    table = recorded["base"] / "changed" / "table.toml"
    shutil.copytree(recorded["table"].parent, table.parent)
    (table.parent / "skills" / "b.md").write_text("# b\n\nWrite b with care.\n", encoding="utf-8")

    strict, proc = replay(recorded, "strict", f"replay:{recorded['first']}", table)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "failed"
    ends = [e for e in events(strict) if e["type"] == "session.end" and "error" in e["data"]]
    assert ends[0]["worker_id"] == "w3" and ends[0]["stage"] == "b"
    assert ends[0]["data"]["error"] == (
        "ReplayDivergence: replay diverged: worker w3 (stage b), call 2, message 4 (tool) "
        "differs — recorded: '@@ lines 1-3 of 3 @@\\n# skills/b.md\\n\\nDo the work of this "
        "stage.'; now: '@@ lines 1-3 of 3 @@\\n# b\\n\\nWrite b with care.' (replay with "
        "replay:PATH,lenient to go on)"
    )
    assert stages_of(strict) == [("a", "gate"), ("gate", "b")]

    lenient, proc = replay(recorded, "lenient", f"replay:{recorded['first']},lenient", table)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    found = [e for e in events(lenient) if e["type"] == "replay.divergence"]
    assert [(e["worker_id"], e["stage"], e["data"]["call"], e["data"]["total"]) for e in found] == [
        ("w3", "b", 2, 1)
    ]
    assert found[0]["message"] == (
        "call 2: message 4 (tool) differs from the recording (request; 1 so far)"
    )
    assert outputs(lenient) == outputs(recorded["first"])


@pytest.mark.slow
def test_gate_replies_are_recorded_and_replayed_with_replies_recorded(recorded):
    base, table = recorded["base"], recorded["table"]
    server = ChatServer().answer_with(scientist)
    manual = base / "manual"
    try:
        proc = cli(
            manual,
            "research",
            GOAL,
            "--stages",
            str(table),
            "--model",
            "some-model",
            "--base-url",
            server.base_url,
            "--record",
        )
        assert proc.stdout.strip().splitlines()[-1] == "waiting_user", proc.stdout + proc.stderr
        proc = cli(manual, "reply", "y", "--comment", "Looks right.")
        assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    finally:
        server.close()
    files = sorted((manual / ".lightscientist" / "recordings").glob("*.jsonl"))
    assert [f.name for f in files] == ["run-0001.jsonl", "run-0002.jsonl"]  # research, reply
    replies = [
        json.loads(line)
        for line in files[1].read_text(encoding="utf-8").splitlines()
        if '"kind": "reply"' in line
    ]
    # the seal (runtime.recording.seal)
    assert all(len(reply.pop("prev")) == 32 for reply in replies)
    assert replies == [
        {
            "kind": "reply",
            "stage": "gate",
            "approve": True,
            "comment": "Looks right.",
            "to": "b",
            "source": "cli",
        }
    ]

    again = base / "manual-again"
    proc = cli(
        again, "research", GOAL, "--stages", str(table), "--model", f"replay:{manual}",
        "--replies", "recorded",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert stages_of(again) == stages_of(manual) == [("a", "gate"), ("gate", "b"), ("b", "done")]
    assert process_entries(again) == process_entries(manual)
    assert outputs(again) == outputs(manual)

    # Without --replies recorded the replay waits at the gate, and a reply given anew goes on.
    anew = base / "manual-anew"
    proc = cli(anew, "research", GOAL, "--stages", str(table), "--model", f"replay:{manual}")
    assert proc.stdout.strip().splitlines()[-1] == "waiting_user"
    proc = cli(anew, "reply", "y", "--comment", "Looks right.")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    assert [e for e in events(anew) if e["type"] == "replay.divergence"] == []


def test_replies_recorded_needs_a_replay_model(tmp_path):
    proc = cli(tmp_path / "ws", "research", GOAL, "--replies", "recorded")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines()[-1] == (
        "lightscientist research: error: --replies recorded needs --model replay:PATH "
        "(the replies come from that recording)"
    )
    assert not (tmp_path / "ws" / ".lightscientist").exists()


@pytest.mark.slow
def test_an_answered_question_is_recorded_and_replayed_with_replies_recorded(tmp_path):
    table = _write_table(tmp_path / "table", SMALL_TABLE)
    server = ChatServer().answer_with(asking_scientist)
    asked = tmp_path / "asked"
    args = ["research", GOAL, "--mode", "auto", "--stages", str(table)]
    run = subprocess.Popen(
        [sys.executable, "-m", "lightscientist_jupyter", *args, "--model", "some-model"]
        + ["--base-url", server.base_url, "--record", "--workspace", str(asked)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        state = asked / ".lightscientist" / "state.json"
        wait_for(
            lambda: (
                run.poll() is not None
                or (state.exists() and '"kind": "question"' in state.read_text())
            ),
            "the supervisor's question",
            within=60,
        )
        assert run.poll() is None, run.communicate()
        proc = cli(asked, "reply", "y", "--comment", "Yes, the larger one.")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        out, err = run.communicate(timeout=120)
    finally:
        server.close()
        if run.poll() is None:  # a failure above: do not leave the run behind
            run.kill()
            run.communicate()
    assert out.strip().splitlines()[-1] == "done", out + err

    again = tmp_path / "again"
    proc = cli(again, *args, "--model", f"replay:{asked}", "--replies", "recorded")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "done"
    assert "Decision: answered yes via cli — “Yes, the larger one.”" in process_entries(again)
    assert process_entries(again) == process_entries(asked)
    assert outputs(again) == outputs(asked)
    assert [e for e in events(again) if e["type"] == "replay.divergence"] == []


def sealed_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def edited_copy(recorded: dict[str, Any], name: str, edit) -> tuple[Path, int]:
    """A copy of the recorded run's file in which `edit(line)` changed the first call line it
    returns True for; (the copy, that line's number)."""
    source = recorded["first"] / ".lightscientist" / "recordings" / "run-0001.jsonl"
    lines = source.read_text(encoding="utf-8").split("\n")
    for n, text in enumerate(lines, 1):
        line = json.loads(text) if text else {}
        if line.get("kind") == "call" and edit(line):
            lines[n - 1] = json.dumps(line, ensure_ascii=False)
            break
    else:
        raise AssertionError("no line to edit")
    copy = recorded["base"] / name / "run-0001.jsonl"
    copy.parent.mkdir()
    copy.write_text("\n".join(lines), encoding="utf-8")
    return copy, n


def tamper(tool: str, arg: str, value: str):
    """An edit that sets the `arg` of the first `tool` call a response makes to `value`."""

    def edit(line: dict[str, Any]) -> bool:
        call = next((c for c in line["response"]["tool_calls"] if c["name"] == tool), None)
        if call is not None:
            call["args"][arg] = value
        return call is not None

    edit.__name__ = f"{tool}-{arg}"
    return edit


_tamper_write = tamper("write_file", "content", "TAMPERED\n")
_tamper_command = tamper("execute", "command", "echo TAMPERED > out/tampered.txt")


def _tamper_and_rehash(line: dict[str, Any]) -> bool:
    """The write_file content changed and the line's own answer hash recomputed to match."""
    from lightscientist_jupyter.runtime.recording.seal import answer_hash

    if not _tamper_write(line):
        return False
    line["answer"] = answer_hash(line["response"])
    return True


@pytest.mark.parametrize(
    "edit, why",
    [
        (_tamper_write, "the response was changed after it was recorded (it does not match the "
                        "hash kept with its request)"),
        (_tamper_command, "the response was changed after it was recorded (it does not match "
                          "the hash kept with its request)"),
        (_tamper_and_rehash, "changed after it was recorded, or a line after it removed (line "
                             "{next} holds another hash of it)"),
    ],
    ids=["write_file content", "execute command", "answer hash recomputed too"],
)  # fmt: skip
def test_an_edited_response_stops_a_strict_replay_naming_its_line_before_anything_runs(
    recorded, edit, why
):
    name = f"edited-{edit.__name__.strip('_').replace('_', '-')}"
    copy, n = edited_copy(recorded, name, edit)
    ws, proc = replay(recorded, name + "-ws", f"replay:{copy}")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"lightscientist research: error: replay: {copy}:{n}: {why.format(next=n + 1)}; record "
        "the run again with --record, or replay it with replay:PATH,lenient"
    ]
    written = [p for p in ws.rglob("*") if p.is_file()] if ws.exists() else []
    assert written == []  # not the edited content, not the command's file: nothing ran


def test_a_lenient_replay_gives_an_edited_response_and_reports_it(recorded):
    copy, _ = edited_copy(recorded, "edited-lenient", _tamper_write)
    ws, proc = replay(recorded, "edited-lenient-ws", f"replay:{copy},lenient")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    found = [e for e in events(ws) if e["type"] == "replay.divergence"]
    assert (found[0]["stage"], found[0]["data"]["kind"]) == ("a", "edited response")
    assert found[0]["message"] == (
        "call 2: the response differs from the recording (edited response; 1 so far)"
    )
    assert (ws / "out" / "a.md").read_text(encoding="utf-8") == "TAMPERED\n"


def test_a_response_that_is_text_names_its_file_and_line(recorded):
    def as_text(line: dict[str, Any]) -> bool:
        line["response"] = "Write the notes."
        return True

    copy, n = edited_copy(recorded, "text-response", as_text)
    for spec in (f"replay:{copy}", f"replay:{copy},lenient"):
        ws, proc = replay(recorded, "text-response-ws", spec)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr.strip().splitlines() == [
            f"lightscientist research: error: replay: {copy}:{n}: the response is text, not an "
            "object"
        ]


@pytest.mark.slow
def test_an_offline_recording_of_the_default_table_replays_strictly_to_done(tmp_path):
    """The default table's `idea.probe_batch` runs two probe workers at once: they end in
    whatever order their commands take, each replay differently, and the supervisor hears of
    them in the recorded order (3 replays here; 10 in a row were checked by hand)."""
    first = tmp_path / "first"
    args = ("research", GOAL, "--mode", "auto")
    proc = cli(first, *args, "--model", "offline", "--record")
    assert proc.stdout.strip().splitlines()[-1] == "done", proc.stdout + proc.stderr
    assert ("idea.probe_batch", "idea.probe_collect") in stages_of(first)
    (recording,) = (first / ".lightscientist" / "recordings").glob("*.jsonl")
    calls = [line for line in sealed_lines(recording) if line["kind"] == "call"]
    assert all(line["response"]["usage"]["estimated"] for line in calls)
    for n in range(3):
        again = tmp_path / f"again-{n}"
        proc = cli(again, *args, "--model", f"replay:{first}")
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert proc.stdout.strip().splitlines()[-1] == "done"
        assert stages_of(again) == stages_of(first)
        # PROCESS.md's usage lines too: the offline model reports no usage, so each call's
        # line keeps the estimate it was charged, and the replay is charged that, whatever
        # its commands printed this time
        assert process_entries(again) == process_entries(first)
        kinds = {e["data"]["kind"] for e in events(again) if e["type"] == "replay.divergence"}
        assert kinds <= {"command output"}  # timings and logs of commands and jobs, nothing else
