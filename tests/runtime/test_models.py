"""Model resolution, and the real `ChatOpenAI` client driving workers against a local
OpenAI-compatible server: JSON and streaming replies, retried transient failures, and a
permanent failure that ends the worker `failed` without crashing anything."""

from __future__ import annotations

import importlib.util
import socket

import httpx
import openai
import pytest
from langchain_core.messages import ToolMessage
from langchain_openai import ChatOpenAI
from support.runtime import (
    answer,
    checkpoint_messages,
    finish,
    http_error,
    plain_spec,
    tool_call,
)

from lightscientist_jupyter.errors import ModelConfigError, RuntimeLayerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.offline.model import OfflineScientistModel
from lightscientist_jupyter.runtime.models.resolver import is_transient, resolve_model


@pytest.fixture(autouse=True)
def no_model_settings(monkeypatch):
    for key in ("LIGHTSCIENTIST_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)


# ----------------------------------------------------------------------------- resolve_model


def test_the_offline_model_is_the_default(monkeypatch):
    assert isinstance(resolve_model(), OfflineScientistModel)
    assert isinstance(resolve_model("  "), OfflineScientistModel)
    assert resolve_model("offline:loops=3").loops == 3
    monkeypatch.setenv("LIGHTSCIENTIST_MODEL", "offline:loops=4")
    assert resolve_model().loops == 4


@pytest.mark.parametrize(
    "spec, message",
    [
        (
            "offline:speed=3",
            "unknown offline model option.s.: speed; the offline model takes loops=N",
        ),
        ("offline:loops=many", "offline model option 'loops' must be an integer"),
        ("offline:loops", "model option 'loops' must look like key=value"),
        (
            "nosuch:model-1",
            "unknown model provider 'nosuch'; known: anthropic, deepseek, "
            "google_genai, groq, mistralai, ollama, openai .or use --base-url",
        ),
        ("gpt-4.1-mini", "model 'gpt-4.1-mini' must be 'offline', 'provider:model'"),
        ("openai:", "must be 'offline', 'provider:model'"),
        ("openai:gpt-4.1-mini", "model 'openai:gpt-4.1-mini' needs an API key: set OPENAI_API_KEY"),
        ("anthropic:claude-sonnet-4-5", "needs an API key: set ANTHROPIC_API_KEY"),
    ],
)
def test_bad_model_specs_name_what_to_fix(spec, message):
    with pytest.raises(ModelConfigError, match=message) as caught:
        resolve_model(spec)
    assert isinstance(caught.value, RuntimeLayerError)


def test_a_provider_without_its_package_names_the_package(monkeypatch):
    real_find_spec = importlib.util.find_spec
    # as on a machine without langchain-groq, whether or not this one has it
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "langchain_groq" else real_find_spec(name, *a),
    )
    monkeypatch.setenv("GROQ_API_KEY", "gsk-test")
    with pytest.raises(
        ModelConfigError, match="provider 'groq' needs the package langchain-groq; pip install it"
    ):
        resolve_model("groq:llama-3")


def test_a_base_url_gives_chat_completions_openai(monkeypatch):
    model = resolve_model("openai:my-model", base_url="http://127.0.0.1:9/v1")
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.openai_api_base) == ("my-model", "http://127.0.0.1:9/v1")
    assert model.use_responses_api is False and model.max_retries == 0
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8/v1")
    assert resolve_model("llama3").openai_api_base == "http://127.0.0.1:8/v1"


def test_a_provider_with_its_key_resolves_without_network(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key-000000")
    model = resolve_model("openai:gpt-4.1-mini")
    assert isinstance(model, ChatOpenAI)
    assert model.use_responses_api is False and model.max_retries == 0


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "http://127.0.0.1/v1"))


@pytest.mark.parametrize(
    "error, transient",
    [
        (openai.InternalServerError("boom", response=_response(500), body=None), True),
        (openai.RateLimitError("slow down", response=_response(429), body=None), True),
        (openai.APIStatusError("bad gateway", response=_response(502), body=None), True),
        (openai.BadRequestError("bad", response=_response(400), body=None), False),
        (openai.AuthenticationError("who", response=_response(401), body=None), False),
        (openai.APIConnectionError(request=httpx.Request("POST", "http://127.0.0.1/")), True),
        (openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1/")), True),
        (TimeoutError(), True),
        (ConnectionRefusedError(), True),
        (ValueError("not a network problem"), False),
    ],
)
def test_which_failures_are_transient(error, transient):
    assert is_transient(error) is transient


# ----------------------------------------------------------------------------- a real client

WORK = (
    tool_call("write_file", file_path="/notes/result.md", content="# Result\n\n42\n"),
    tool_call("execute", command="python -c 'print(6 * 7)'"),
    tool_call(
        "complete_stage",
        summary="Computed 6 x 7 and wrote it down.",
        outputs=["notes/result.md"],
        next_stage="custom.next",
    ),
)


@pytest.mark.parametrize("streaming", [False, True], ids=["json", "stream"])
def test_the_openai_client_drives_a_worker(
    chat_server, chat_model, make_runtime, updates, ws, streaming
):
    chat_server.play(*WORK)
    model = chat_model.model_copy(update={"streaming": True}) if streaming else chat_model
    events = []
    bus = EventBus()
    bus.subscribe(events.append)
    runtime = make_runtime(model, retries=0, bus=bus)
    worker = runtime.start(plain_spec("Compute 6 x 7 and write it to notes/result.md."))
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    assert record["result"] == {
        "kind": "complete_stage",
        "summary": "Computed 6 x 7 and wrote it down.",
        "outputs": ["notes/result.md"],
        "next_stage": "custom.next",
    }
    assert (ws.root / "notes" / "result.md").read_text() == "# Result\n\n42\n"
    results = [
        m for m in checkpoint_messages(runtime, record["thread_id"]) if isinstance(m, ToolMessage)
    ]
    assert [m.name for m in results] == ["write_file", "execute", "complete_stage"]
    assert "42" in results[1].content
    assert record["files_written"] == ["/notes/result.md"]
    assert record["commands"] == ["python -c 'print(6 * 7)'"]
    assert record["progress"]["model_calls"] == 3 and record["progress"]["tool_calls"] == 3

    assert len(chat_server.requests) == 3
    first = chat_server.requests[0]
    assert first["model"] == "some-model" and bool(first.get("stream")) is streaming
    offered = {t["function"]["name"] for t in first["tools"]}
    assert {
        "write_file",
        "read_file",
        "edit_file",
        "ls",
        "glob",
        "grep",
        "execute",
        "write_todos",
        "request_input",
        "suspend",
        "complete_stage",
        "finalize_cancel",
    } <= offered
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][-1] == {
        "role": "user",
        "content": "Compute 6 x 7 and write it to notes/result.md.",
    }

    calls = [e for e in events if e.type == "model.call"]
    assert len(calls) == 3
    assert all(e.data["input_chars"] > 0 for e in calls)
    assert calls[-1].data["input_chars"] > calls[0].data["input_chars"]  # the history grew
    outputs = [e for e in events if e.type == "model.output"]
    assert [o.data["tool_calls"][0]["name"] for o in outputs] == [
        "write_file",
        "execute",
        "complete_stage",
    ]
    if not streaming:
        assert outputs[0].data["tokens"] == {
            "input_tokens": 11,
            "output_tokens": 7,
            "total_tokens": 18,
        }
    assert [e.type for e in events].count("session.end") == 1
    assert {u.status for u in updates.of(worker)} == {"running", "completed"}


def test_a_final_answer_ends_the_worker_with_its_text(chat_server, chat_model, make_runtime):
    chat_server.play(answer("Nothing to do: the answer is 42."))
    runtime = make_runtime(chat_model, retries=0)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)
    assert record["status"] == "completed"
    assert record["result"] == {"kind": "final_message", "text": "Nothing to do: the answer is 42."}


@pytest.mark.parametrize("status", [500, 429, 503])
def test_a_transient_failure_is_retried(chat_server, chat_model, make_runtime, ws, status):
    chat_server.play(
        http_error(status),
        tool_call("write_file", file_path="/ok.md", content="ok"),
        answer("done"),
    )
    runtime = make_runtime(chat_model, retries=2, retry_initial_delay=0.01)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)
    assert record["status"] == "completed", record
    assert record["error"] is None
    assert (ws.root / "ok.md").read_text() == "ok"
    assert len(chat_server.requests) == 3  # a failure, its retry, then the final answer


def test_a_permanent_failure_ends_the_worker_failed(
    chat_server, chat_model, make_runtime, updates, ws
):
    chat_server.play(http_error(500, "the model server is on fire"))
    events = []
    bus = EventBus()
    bus.subscribe(events.append)
    runtime = make_runtime(chat_model, retries=2, retry_initial_delay=0.01, bus=bus)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)

    assert record["status"] == "failed"
    assert "Error code: 500 - the model server is on fire" in record["error"]
    assert len(chat_server.requests) == 3  # the call and two retries
    last = updates.of(worker)[-1]
    assert (last.status, last.error) == ("failed", record["error"])
    ends = [e for e in events if e.type == "session.end" and e.worker_id == worker]
    assert len(ends) == 1 and ends[0].data == {"status": "failed", "error": record["error"]}
    assert "Error: OpenAIAPIError" in (ws.workers_dir / worker / "agent-run.md").read_text()
    with pytest.raises(RuntimeLayerError, match="is failed; a finished session cannot be resumed"):
        runtime.resume(worker, message="try again")

    # The runtime (and this process) carry on: the next worker works.
    chat_server.play(answer("fine now"))
    chat_server.requests.clear()
    other = runtime.start(plain_spec())
    assert finish(runtime, other)["status"] == "completed"


def test_a_client_error_is_not_retried(chat_server, chat_model, make_runtime):
    chat_server.play(http_error(400, "bad request: unknown field"))
    runtime = make_runtime(chat_model, retries=3, retry_initial_delay=0.01)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)
    assert record["status"] == "failed"
    assert "Error code: 400 - bad request: unknown field" in record["error"]
    assert len(chat_server.requests) == 1


def test_a_refused_connection_fails_the_worker(make_runtime):
    with socket.socket() as sock:  # a port that nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = resolve_model("some-model", base_url=f"http://127.0.0.1:{port}/v1", timeout=5)
    runtime = make_runtime(model, retries=1, retry_initial_delay=0.01)
    worker = runtime.start(plain_spec())
    record = finish(runtime, worker)
    assert record["status"] == "failed"
    assert "Connection error" in record["error"]
