"""Secrets and bulk stay out of events: `redact`, `clip`, `safe`, and the layer-3 events a real
worker writes to `events.jsonl`."""

from __future__ import annotations

import json

import pytest
from support.runtime import answer, finish, plain_spec, tool_call

from lightscientist_jupyter.events import EventBus, JsonlWriter
from lightscientist_jupyter.redact import clip, redact, safe
from lightscientist_jupyter.runtime.session.observe import EVENT_TEXT_LIMIT

FAKE_KEY = "sk-abcdefghijklmnopqrstuv"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (f"key {FAKE_KEY} here", "key [REDACTED] here"),
        ("anthropic sk-ant-api03-abcdefghijklmnop_QRS", "anthropic [REDACTED]"),
        ("token ghp_abcdefghijklmnopqrstuvwxyz012345", "token [REDACTED]"),
        ("github_pat_11ABCDEFG0123456789_abcdefghij", "[REDACTED]"),
        ("slack xoxb-1234567890-abcdefghij", "slack [REDACTED]"),
        ("aws AKIAABCDEFGHIJKLMNOP", "aws [REDACTED]"),
        (
            "jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
            "jwt [REDACTED]",
        ),
        ("Authorization: Bearer abcdefghijklmnop1234", "Authorization: [REDACTED]"),
    ],
)
def test_key_like_strings_are_redacted(text, shown):
    assert redact(text) == shown  # the whole secret goes, the words around it stay


@pytest.mark.parametrize(
    "text, kept",
    [
        ("api_key=abcdef123456", "api_key="),
        ("password: hunter2hunter2", "password: "),
        ('token = "abcdefgh12"', "token = "),
    ],
)
def test_assignments_keep_their_name_and_lose_their_value(text, kept):
    out = redact(text)
    assert out.startswith(kept + "[REDACTED]")
    assert text[len(kept) :].strip('"') not in out


def test_values_of_secret_environment_variables_are_redacted(monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plain-looking-value-42")
    monkeypatch.setenv("UNRELATED_SETTING", "visible-value-42")
    out = redact("a plain-looking-value-42 and a visible-value-42")
    assert out == "a [REDACTED] and a visible-value-42"


def test_ordinary_text_is_left_alone():
    text = "final_loss=0.0593 at lr=0.2; see experiment/results.csv (report..final.md)"
    assert redact(text) == text


@pytest.mark.parametrize(
    "text, shown",
    [
        (
            "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            "AWS_SECRET_ACCESS_KEY=[REDACTED]",
        ),
        ("DATABASE_PASSWORD=correct-horse-battery", "DATABASE_PASSWORD=[REDACTED]"),
        ("SECRET_KEY_BASE: 0123456789abcdef", "SECRET_KEY_BASE: [REDACTED]"),
    ],
)
def test_settings_named_like_secret_environment_variables_are_redacted(text, shown):
    """What a `.env` file holds, whatever its values look like."""
    assert redact(text) == shown


@pytest.mark.parametrize(
    "text",
    [
        "token = tokenizer(text)",
        'secret = os.environ["SECRET"]',
        "token = args.token",
        "password: getpass.getpass()",
        "MONKEY=bananas-and-more",
        "GIT_AUTHOR_NAME=somebody-else",
        "sort_key = lambda row: row[0]",
    ],
)
def test_code_that_names_a_secret_is_left_readable(text):
    """Tool results are redacted before the model reads them: code it reads stays code."""
    assert redact(text) == text


def test_clip_keeps_head_and_tail():
    text = "H" * 5000 + "T" * 5000
    # two thirds of the limit from the head, the rest less room for the note from the tail
    assert clip(text, 1000) == "H" * 666 + "\n… [9040 characters cut] …\n" + "T" * 294
    assert clip("short", 1000) == "short"


def test_safe_serializes_redacts_and_clips():
    out = safe({"command": f"curl -H 'x: {FAKE_KEY}'", "blob": "x" * 5000}, 500)
    assert FAKE_KEY not in out and "[REDACTED]" in out and len(out) <= 510
    assert safe(["a", 1]) == '["a", 1]'
    assert safe(object(), 50).startswith('"<object object')


def test_worker_events_are_redacted_and_clipped(chat_server, chat_model, make_runtime, ws):
    long_content = f"notes with {FAKE_KEY}\n" + "y" * 10_000
    chat_server.play(
        tool_call("write_file", file_path="/notes.md", content=long_content),
        tool_call("execute", command=f"echo {FAKE_KEY}; head -c 5000 /dev/zero | tr '\\0' z"),
        answer("Done."),
    )
    writer = JsonlWriter(ws.events_file)
    bus = EventBus(next_seq=writer.next_seq)
    bus.subscribe(writer)
    runtime = make_runtime(chat_model, retries=0, bus=bus)
    worker = runtime.start(plain_spec("Take notes."))
    record = finish(runtime, worker)
    writer.close()
    assert record["status"] == "completed", record

    raw = ws.events_file.read_text()
    assert FAKE_KEY not in raw
    assert "[REDACTED]" in raw
    events = [json.loads(line) for line in raw.splitlines()]
    assert all(e["layer"] == 3 and e["worker_id"] == worker for e in events)
    types = [e["type"] for e in events]
    assert types[0] == "session.start" and types[-1] == "session.end"
    assert types.count("model.call") == 3
    assert types.count("tool.call") == types.count("tool.result") == 2

    calls = [e for e in events if e["type"] == "model.call"]
    assert [e["data"]["call"] for e in calls] == [1, 2, 3]
    assert all(e["data"]["input_chars"] > 0 for e in calls)
    assert calls[1]["data"]["input_chars"] > calls[0]["data"]["input_chars"] + 10_000

    for e in events:
        if e["type"] in ("tool.call", "tool.result", "model.output"):
            for value in e["data"].values():
                if isinstance(value, str):
                    assert len(value) <= EVENT_TEXT_LIMIT + 10
            assert len(e["message"]) <= 300
    write = next(
        e for e in events if e["type"] == "tool.call" and e["data"]["tool"] == "write_file"
    )
    assert "characters cut" in write["data"]["args"]
    shell = next(e for e in events if e["type"] == "tool.result" and e["data"]["tool"] == "execute")
    assert "[REDACTED]" in shell["data"]["result"]

    # The delivery record lists the command redacted; the worker's own file keeps what it wrote.
    delivery = (ws.workers_dir / worker / "agent-run.md").read_text()
    assert FAKE_KEY not in delivery and "- `echo [REDACTED]; head -c 5000" in delivery
    assert (ws.root / "notes.md").read_text() == long_content
