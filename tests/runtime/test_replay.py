"""Recording model calls at layer 3 and answering them again with the replay model: the real
`ChatOpenAI` client against the local chat server records, a new workspace replays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.runtime import answer, finish, http_error, plain_spec, tool_call

from lightscientist_jupyter import memory
from lightscientist_jupyter.errors import ModelConfigError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.recording import forms
from lightscientist_jupyter.runtime.recording.forms import compared, view_hash
from lightscientist_jupyter.runtime.recording.recorded import Tape
from lightscientist_jupyter.runtime.recording.recorder import run_headers
from lightscientist_jupyter.runtime.recording.replay import ReplayChatModel
from lightscientist_jupyter.runtime.recording.seal import Chain
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.vocab import RecordingLine, ReplySource, Role
from lightscientist_jupyter.workspace import Workspace

KEY = "sk-fake0123456789abcdefghijklmn"
SECRET = "hunter2-correct-horse-battery"


def recording(ws: Workspace) -> list[dict]:
    folder = ws.state_dir / "recordings"
    return [
        json.loads(line)
        for path in sorted(folder.glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def calls(ws: Workspace) -> list[tuple[str, int, list[str]]]:
    return [
        (c["session"], c["call"], [t["name"] for t in c["response"]["tool_calls"]])
        for c in recording(ws)
        if c["kind"] == "call"
    ]


@pytest.fixture
def other(tmp_path: Path) -> Workspace:
    """A second, empty workspace to replay into."""
    (tmp_path / "other").mkdir()
    return Workspace.at(tmp_path / "other")


def replay_runtime(other: Workspace, source: Workspace, spec: str = "", **options):
    bus = EventBus()
    seen: list = []
    bus.subscribe(seen.append)
    model = resolve_model(f"replay:{source.root}{spec}")
    return ExecutionRuntime(other, model, bus=bus, **options), seen


def record_one(chat_server, chat_model, make_runtime, final: str) -> None:
    """A worker session recorded through the real client: it writes `a.md`, then answers
    `final`."""
    chat_server.play(tool_call("write_file", file_path="/a.md", content="a"), answer(final))
    runtime = make_runtime(chat_model, retries=0, record=True)
    assert finish(runtime, runtime.start(plain_spec()))["status"] == "completed"
    runtime.close()


def test_a_recording_holds_no_key_and_no_secret_of_the_environment(
    chat_server, make_runtime, ws, monkeypatch
):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("MY_SERVICE_TOKEN", SECRET)
    chat_server.play(
        tool_call("write_file", file_path="/notes.md", content=f"token {SECRET} key {KEY}\n"),
        answer(f"Done. The token was {SECRET}."),
    )
    model = resolve_model("some-model", base_url=chat_server.base_url)
    runtime = make_runtime(model, retries=0, record=True)
    worker = runtime.start(plain_spec(f"Write down {SECRET}."))
    assert finish(runtime, worker)["status"] == "completed"
    runtime.close()

    (path,) = (ws.state_dir / "recordings").glob("*.jsonl")
    text = path.read_text(encoding="utf-8")
    assert SECRET not in text and KEY not in text
    assert text.count("[REDACTED]") >= 4  # the task, the call's arguments, the answer
    assert calls(ws) == [
        ("worker/custom.stage/0", 0, ["write_file"]),
        ("worker/custom.stage/0", 1, []),
    ]
    last = recording(ws)[-1]
    assert last["response"]["content"] == "Done. The token was [REDACTED]."
    assert last["response"]["usage"]["input_tokens"] == 11
    assert str(ws.root) not in text


def test_a_retried_call_is_recorded_once(chat_server, chat_model, make_runtime, ws):
    chat_server.play(
        http_error(500), tool_call("write_file", file_path="/a.md", content="a"), answer("ok")
    )
    runtime = make_runtime(chat_model, retries=1, retry_initial_delay=0.01, record=True)
    assert finish(runtime, runtime.start(plain_spec()))["status"] == "completed"
    assert len(chat_server.requests) == 3
    assert calls(ws) == [
        ("worker/custom.stage/0", 0, ["write_file"]),
        ("worker/custom.stage/0", 1, []),
    ]


def test_a_replay_matches_sessions_by_stage_and_order_not_by_worker_id(
    chat_server, chat_model, make_runtime, ws, other
):
    record_one(chat_server, chat_model, make_runtime, "all done")
    chat_server.close()

    replayer, seen = replay_runtime(other, ws)
    try:
        worker = replayer.start(plain_spec(worker_id="w7"))
        record = finish(replayer, worker)
    finally:
        replayer.close()
    assert isinstance(replayer.model, ReplayChatModel) and replayer.retries == 0
    assert record["status"] == "completed", record
    assert record["result"] == {"kind": "final_message", "text": "all done"}
    assert (other.root / "a.md").read_text() == "a"
    assert [e for e in seen if e.type == "replay.divergence"] == []


def test_a_session_that_asks_for_more_calls_than_recorded_fails(
    chat_server, chat_model, make_runtime, ws, other
):
    record_one(chat_server, chat_model, make_runtime, "ok")
    (path,) = (ws.state_dir / "recordings").glob("*.jsonl")
    path.write_text("".join(path.read_text().splitlines(keepends=True)[:-1]))  # drop the last

    replayer, _ = replay_runtime(other, ws)
    try:
        record = finish(replayer, replayer.start(plain_spec()))
    finally:
        replayer.close()
    assert record["status"] == "failed"
    assert record["error"] == (
        f"ReplayExhausted: replay: worker w1 (stage custom.stage) asks for model call 2, but "
        f"{ws.root} recorded 1 for this session (worker/custom.stage/0)"
    )


def test_a_command_whose_output_changed_is_reported_not_failed(
    chat_server, chat_model, make_runtime, ws, other
):
    chat_server.play(tool_call("execute", command="date +%N"), answer("timed"))
    runtime = make_runtime(chat_model, retries=0, record=True)
    assert finish(runtime, runtime.start(plain_spec()))["status"] == "completed"
    runtime.close()

    replayer, seen = replay_runtime(other, ws)
    try:
        record = finish(replayer, replayer.start(plain_spec()))
    finally:
        replayer.close()
    assert record["status"] == "completed", record
    (found,) = [e for e in seen if e.type == "replay.divergence"]
    assert found.data["kind"] == "command output"
    assert (found.data["call"], found.data["where"], found.data["total"]) == (
        2,
        "message 4 (tool)",
        1,
    )


def task_recalling(line: str) -> str:
    return (
        "LightScientist task\nstage: custom.stage\n\nWrite the outputs.\n\n"
        f"## Recalled from memory (earlier projects; your recall tool searches further)\n\n"
        f"- {line}\n\n## PROCESS.md (the project so far)\n\n# Research process\n"
    )


def test_what_memory_recalled_is_outside_the_comparison_and_recall_is_reported(
    chat_server, chat_model, make_runtime, ws, other, own_memory, monkeypatch
):
    """The user's memory is an input from outside the run, like a command's output: a task
    header's recalled entries are not compared, and `recall`'s result is reported only."""
    chat_server.play(tool_call("recall", query="warmup divergence", k=3), answer("noted"))
    runtime = make_runtime(chat_model, retries=0, record=True)
    spec = plain_spec(task_recalling("lesson (a, its lessons): warmup fixed the divergence"))
    assert finish(runtime, runtime.start(spec))["status"] == "completed"
    runtime.close()

    monkeypatch.setenv("LIGHTSCIENTIST_MEMORY", str(own_memory.parent / "other.sqlite3"))
    store = memory.open_store()
    store.add(memory.NewEntry("lesson", "warmup divergence at lr 0.5", "/elsewhere", "k1"))
    store.close()
    replayer, seen = replay_runtime(other, ws)
    try:
        spec = plain_spec(task_recalling("finding (b, x#1): a cosine schedule did as well"))
        record = finish(replayer, replayer.start(spec))
    finally:
        replayer.close()
    assert record["status"] == "completed", record
    (found,) = [e for e in seen if e.type == "replay.divergence"]
    assert (found.data["kind"], found.data["where"]) == ("command output", "message 4 (tool)")
    assert "warmup divergence at lr 0.5" in found.data["now"]


def test_call_indices_go_on_across_runs_and_replay_across_them(
    chat_server, chat_model, make_runtime, ws, other
):
    chat_server.play(tool_call("suspend", reason="a long job", check_after_s=1))
    first = make_runtime(chat_model, retries=0, record=True)
    worker = first.start(plain_spec())
    assert finish(first, worker)["status"] == "background"
    first.close()
    chat_server.play(answer("finished after the pause"))
    second = make_runtime(chat_model, retries=0, record=True)
    second.resume(worker, message="check again")
    assert finish(second, worker)["status"] == "completed"
    second.close()
    assert sorted(p.name for p in (ws.state_dir / "recordings").glob("*")) == [
        "run-0001.jsonl",
        "run-0002.jsonl",
    ]
    assert calls(ws) == [
        ("worker/custom.stage/0", 0, ["suspend"]),
        ("worker/custom.stage/0", 1, []),
    ]

    replayer, seen = replay_runtime(other, ws)
    try:
        again = replayer.start(plain_spec())
        assert finish(replayer, again)["status"] == "background"
        replayer.resume(again, message="check again")
        record = finish(replayer, again)
    finally:
        replayer.close()
    assert record["result"] == {"kind": "final_message", "text": "finished after the pause"}
    assert [e for e in seen if e.type == "replay.divergence"] == []


def test_a_tool_schema_sent_anew_with_each_call_is_made_into_its_view_once(monkeypatch):
    made: list[str] = []
    make = forms.tool_views.make
    monkeypatch.setattr(
        forms.tool_views,
        "make",
        lambda schema, root, scrub: made.append("x") or make(schema, root, scrub),
    )
    schema = {
        "type": "function",
        "function": {"name": "probe_once", "description": "d", "parameters": {}},
    }
    first = forms.tool_views(json.loads(json.dumps(schema)), "")
    again = forms.tool_views(json.loads(json.dumps(schema)), "")  # equal, a new dict
    changed = forms.tool_views(
        {**schema, "function": {**schema["function"], "description": "e"}}, ""
    )
    assert first == again and changed[0] != first[0]
    assert made == ["x", "x"]  # the equal schema was looked up, not made again


def test_the_compared_form_masks_times_ids_and_machine_paths():
    text = (
        "at 2026-12-01 07:40 UTC (2026-12-01T07:40:05.123+00:00), updated_at 1796111244.80, "
        "thread w3-1796111419372, worker w12; table /home/me/proj/table.toml; file /out/a.md"
    )
    assert compared(text) == (
        "at <time> (<time>), updated_at <time>, thread w*-<time>, worker w*; "
        "table <path>/table.toml; file /out/a.md"
    )


@pytest.mark.parametrize(
    "spec, message",
    [
        ("replay:/no/such/recording", "replay: /no/such/recording does not exist; give a"),
        ("replay:", "model 'replay:' must be replay:PATH or replay:PATH,lenient"),
        ("replay:x,fast", r"must be replay:PATH or replay:PATH,lenient \(unknown option: fast\)"),
    ],
)
def test_bad_replay_specs_name_what_to_fix(spec, message):
    with pytest.raises(ModelConfigError, match=message):
        resolve_model(spec)


def test_a_folder_without_recorded_calls_is_refused(tmp_path):
    (tmp_path / "empty.jsonl").write_text('{"kind": "run", "v": 1}\n')
    with pytest.raises(ModelConfigError, match=f"replay: {tmp_path} holds no recorded model call"):
        resolve_model(f"replay:{tmp_path}")


def test_a_replay_whose_worker_has_other_tools_fails_naming_them(
    chat_server, chat_model, make_runtime, ws, other
):
    from langchain_core.tools import tool

    @tool
    def measure(quantity: str) -> str:
        """Measure a quantity."""
        return quantity

    chat_server.play(answer("nothing to do"))
    runtime = make_runtime(chat_model, retries=0, record=True)
    assert finish(runtime, runtime.start(plain_spec()))["status"] == "completed"
    runtime.close()

    replayer, _ = replay_runtime(other, ws)
    try:
        record = finish(replayer, replayer.start(plain_spec(extra_tools=(measure,))))
    finally:
        replayer.close()
    assert record["status"] == "failed"
    assert record["error"] == (
        "ReplayDivergence: replay diverged: worker w1 (stage custom.stage), call 1, the bound "
        "tools differs — recorded: 'none'; now: 'measure' (replay with replay:PATH,lenient to "
        "go on)"
    )


def test_a_recording_written_before_the_seal_replays_only_leniently(
    chat_server, chat_model, make_runtime, ws, other
):
    record_one(chat_server, chat_model, make_runtime, "all done")
    (path,) = (ws.state_dir / "recordings").glob("*.jsonl")
    old = [{k: v for k, v in line.items() if k not in ("prev", "answer")} for line in recording(ws)]
    old[0]["v"] = 1  # as the recorder wrote it before recordings were sealed
    path.write_text("".join(json.dumps(line) + "\n" for line in old), encoding="utf-8")

    with pytest.raises(ModelConfigError) as refused:
        resolve_model(f"replay:{ws.root}")
    assert str(refused.value) == (
        f"replay: {path} was recorded before recordings were sealed (format 1), so a strict "
        "replay cannot check its responses; record the run again with --record, or replay it "
        "with replay:PATH,lenient"
    )
    replayer, seen = replay_runtime(other, ws, ",lenient")
    try:
        record = finish(replayer, replayer.start(plain_spec()))
    finally:
        replayer.close()
    assert record["result"] == {"kind": "final_message", "text": "all done"}
    assert [e for e in seen if e.type == "replay.divergence"] == []


def write_sealed(path: Path, lines: list[dict]) -> None:
    """A recording file written as the recorder writes one (each line sealed)."""
    chain = Chain()
    path.write_bytes(b"".join(chain.seal(line) for line in lines))


def call_line(session: str, message: str, **changes) -> dict:
    view = {"role": "human", "content": message}
    digest = view_hash(view)
    line = {
        "kind": "call", "session": session, "call": 0, "messages": [digest], "tools": [],
        "response": {"content": f"answer to {message}", "tool_calls": [], "usage": None},
        "defs": {digest: view},
    }  # fmt: skip
    return {**line, **changes}


RUN = {"kind": "run", "v": 2, "model": "x", "price": None}


@pytest.mark.parametrize(
    "line, what",
    [
        ("not json", "not a JSON object"),
        (call_line("worker/s/0", "hi", response="hello"), "the response is text, not an object"),
        (call_line("worker/s/0", "hi", response=None), "the response is null, not an object"),
        ({**call_line("worker/s/0", "hi"), "session": 3}, "no 'session' (a text such as "
         "worker/<stage>/<n>)"),
        (call_line("worker/s/0", "hi", call=-1), "a bad 'call' index (-1; a whole number from 0)"),
        (call_line("worker/s/0", "hi", messages="abc"), "a bad 'messages' (a list of hashes)"),
        (call_line("worker/s/0", "hi", defs={}), "hash 935e0d4ee3fd2b07 is defined under 'defs' "
         "of no line up to it"),
        (call_line("worker/s/0", "hi", response={"tool_calls": [{"args": {}}]}),
         "the response's tool call 1 lacks a 'name' text or an 'args' object"),
        (call_line("worker/s/0", "hi", response={"content": 7}),
         "the response's 'content' is neither text nor a list of blocks"),
        ({"kind": "reply", "stage": "gate"}, "a reply without 'approve' (true or false)"),
        ({"kind": "update", "status": "completed"}, "an update without 'session' (a text such "
         "as worker/<stage>/<n>)"),
        ({"kind": "update", "session": "worker/s/0", "status": 3}, "an update whose 'status' is "
         "not text"),
        ({"kind": "answer"}, "kind 'answer'; after its run line a recording holds 'call', "
         "'reply' and 'update' lines"),
        # the kinds of the closed vocabularies, and the views under `defs`
        (call_line("worker/s/0", "hi", role="boss"), "a call whose 'role' is not 'worker', "
         "'supervisor' or null"),
        (call_line("worker/s/0", "hi", stage=7), "a call whose 'stage' is not text"),
        ({"kind": "update", "session": "worker/s/0", "status": "asleep"}, "an update whose "
         "'status' is not 'running', 'waiting', 'background', 'completed', 'failed', "
         "'cancelled', 'interrupted' or null"),
        (call_line("worker/s/0", "hi", defs={"935e0d4ee3fd2b07": {"role": "human"}}),
         "hash 935e0d4ee3fd2b07 under 'defs' is not a message (a 'role' and a 'content' text)"),
        (call_line("worker/s/0", "hi", response={"tool_calls": [{"name": "ls", "id": 5}]}),
         "the response's tool call 1 has an 'id' that is not text"),
        (call_line("worker/s/0", "hi", response={"content": ["a", 7]}),
         "the response's 'content' is neither text nor a list of blocks"),
    ],
)  # fmt: skip
def test_a_malformed_line_names_its_file_and_line(tmp_path, line, what):
    path = tmp_path / "run-0001.jsonl"
    if isinstance(line, str):
        write_sealed(path, [RUN, call_line("worker/s/0", "first")])
        path.write_text(path.read_text() + line + "\n")
    else:  # sealed as the recorder would have: the shape is what is wrong
        write_sealed(path, [RUN, call_line("worker/s/0", "first"), line])
    for spec in ("", ",lenient"):
        with pytest.raises(ModelConfigError) as bad:
            resolve_model(f"replay:{path}{spec}")
        assert str(bad.value) == f"replay: {path}:3: {what}"


def test_a_recording_must_start_with_a_run_line_this_version_reads(tmp_path):
    path = tmp_path / "run-0001.jsonl"
    write_sealed(path, [call_line("worker/s/0", "first")])
    with pytest.raises(ModelConfigError, match=r"run-0001.jsonl:1: not a run line \(a recording"):
        resolve_model(f"replay:{path}")
    write_sealed(path, [{**RUN, "v": 99}, call_line("worker/s/0", "first")])
    with pytest.raises(ModelConfigError, match=r":1: format 99, newer than this LightScientist"):
        resolve_model(f"replay:{path}")
    write_sealed(path, [{**RUN, "model": 5}, call_line("worker/s/0", "first")])
    with pytest.raises(ModelConfigError, match=r"run-0001.jsonl:1: a 'model' that is not text$"):
        resolve_model(f"replay:{path}")
    # what only reads a run's label and price takes what it can of such a line
    write_sealed(path, [{**RUN, "model": 5, "price": "cheap"}, call_line("worker/s/0", "first")])
    assert run_headers([path]) == [{"kind": "run", "v": 2, "price": None}]


def test_a_line_read_back_holds_the_members_of_its_vocabularies(tmp_path):
    """A line that passes its check is handed on typed (`recording.lines`): its kind, a
    call's role, an update's status and a reply's source are members of their vocabularies;
    a reply's source outside `ReplySource` (another version's door) reads as the API's."""
    path = tmp_path / "run-0001.jsonl"
    supervisor = {**call_line("supervisor/0", "go"), "role": "supervisor", "stage": "s"}
    update = {"kind": "update", "session": "worker/s/0", "stage": "s", "status": "completed"}
    reply = {"kind": "reply", "stage": "gate", "approve": True, "source": "slack-bot"}
    write_sealed(path, [RUN, supervisor, update, reply])
    tape = Tape.load(str(path))
    call = tape.sessions["supervisor/0"][0]
    assert call["kind"] is RecordingLine.CALL and call["role"] is Role.SUPERVISOR
    assert call["message_views"] == [
        (supervisor["messages"][0], {"role": "human", "content": "go"})
    ]
    assert [(r["kind"], r["source"]) for r in tape.replies] == [
        (RecordingLine.REPLY, ReplySource.API)
    ]
    assert type(tape.replies[0]["kind"]) is RecordingLine
    assert tape.order is not None and tape.order.due() is None  # the supervisor's call first


def test_sessions_started_together_are_told_apart_by_their_requests(tmp_path):
    """Two workers a supervisor turn starts at once get their ids in whichever order their
    threads run: the replay answers each from the recorded session asked the same."""
    path = tmp_path / "run-0001.jsonl"
    first, second = call_line("worker/s/0", "probe c1"), call_line("worker/s/1", "probe c2")
    write_sealed(path, [RUN, first, second])
    tape = Tape.load(str(path))
    assert tape.match("worker/s/0", 0, second["messages"]) == "worker/s/1"
    assert tape.match("worker/s/1", 0, first["messages"]) == "worker/s/0"
    assert tape.match("worker/s/0", 0, first["messages"]) == "worker/s/1"  # decided once
    # a request no recorded session was asked keeps its own key (a strict replay then fails)
    assert tape.match("worker/s/2", 0, ["0" * 16]) == "worker/s/2"
