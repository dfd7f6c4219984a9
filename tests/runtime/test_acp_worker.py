"""A coding agent as a worker session (`runtime.acp.worker`), driven through the real
`ExecutionRuntime` with the fake agent as a real subprocess: the runtime picks the session's
kind by the spec's agent; the turn's end settles the record as layer 2 reads it; the usage
it reports reaches the ledger ("not reported" when it reports none); a permission question
under `ask` makes the worker wait and a resume answers it; a worker left `running` by a
crash is continued by another runtime with `session/load`; a cancel ends its turn."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.runtime import Updates
from support.waiting import wait_for

from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.protocol import render_header
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.session.worker_files import load_record
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.values.usage import Usage, read_ledger
from lightscientist_jupyter.vocab import AgentPermissions, WorkerStatus
from lightscientist_jupyter.workspace import Workspace

FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py")


def fake(permissions: str = "allow") -> AgentSpec:
    return AgentSpec("fake", (sys.executable, FAKE), (), AgentPermissions(permissions))


def task(*lines: str, outputs: tuple[str, ...] = ("out/a.md",)) -> str:
    fields = {"role": "worker", "stage": "a", "outputs": list(outputs)}
    return render_header("LightScientist task", fields, "\n".join(lines))


@pytest.fixture
def runtime(tmp_path):
    """`runtime() -> (ExecutionRuntime, Updates)` in `tmp_path/ws`, unsandboxed (the run's
    sandbox is `tests/test_acp_stage.py`'s), its usage ledger in the workspace."""
    made: list[ExecutionRuntime] = []
    ws = Workspace.at(tmp_path / "ws")

    def make() -> tuple[ExecutionRuntime, Updates]:
        updates = Updates()
        rt = ExecutionRuntime(
            ws,
            resolve_model("offline"),
            on_update=updates,
            checkpointer="memory",
            meter=UsageMeter(ws.state_dir / "usage.jsonl", model="offline"),
        )
        made.append(rt)
        return rt, updates

    yield make
    for rt in made:
        rt.close()


def spec(message: str, agent: AgentSpec | None = None) -> WorkerSpec:
    return WorkerSpec(message=message, stage="a", task_id="a#1", agent=agent or fake())


def test_an_agents_turn_completes_its_worker_with_the_stages_outputs(runtime):
    rt, updates = runtime()
    wid = rt.start(spec(task("usage 40 7", "say done with a")))
    assert rt.wait(wid, 30)
    record = rt.get(wid)
    assert record.status == WorkerStatus.COMPLETED
    assert record.result == {
        "kind": "complete_stage",
        "summary": "done with a",
        "outputs": ["out/a.md"],
        "next_stage": None,
    }
    assert record.files_written == ("out/a.md",) and record.agent == fake()
    assert (rt.workspace.root / "out" / "a.md").is_file()
    assert updates.statuses(wid)[-1] == WorkerStatus.COMPLETED
    (line,) = read_ledger(rt.workspace.state_dir / "usage.jsonl")
    assert (line["worker"], line["model"], line["stage"]) == (wid, "fake", "a")
    assert Usage.from_dict(line) == Usage(
        input_tokens=40, output_tokens=7, model_calls=1, wall_s=line["wall_s"], unpriced_calls=1
    )


def test_a_turn_that_reports_no_usage_is_counted_as_not_reported(runtime):
    rt, _ = runtime()
    wid = rt.start(spec(task()))
    assert rt.wait(wid, 30)
    (line,) = read_ledger(rt.workspace.state_dir / "usage.jsonl")
    assert (line["unreported"], line["tokens"], line["cost_usd"]) == (1, 0, None)


def test_a_turn_of_an_agent_that_names_a_known_model_is_priced_by_it(runtime):
    rt, _ = runtime()
    codex = AgentSpec("codex", (sys.executable, FAKE, "--model", "gpt-4.1-mini"))
    mystery = AgentSpec("mystery", (sys.executable, FAKE, "--model", "default"))
    for agent in (codex, mystery):
        wid = rt.start(spec(task("usage 1000000 1000000"), agent))
        assert rt.wait(wid, 30)
    known, unknown = read_ledger(rt.workspace.state_dir / "usage.jsonl")
    assert (known["model"], known["cost_usd"]) == ("codex/gpt-4.1-mini", pytest.approx(0.4 + 1.6))
    assert (unknown["model"], unknown["cost_usd"], unknown["tokens"]) == (
        "mystery/default",
        None,
        2_000_000,
    )


def test_under_ask_the_worker_waits_with_the_agents_options_and_a_resume_answers(runtime):
    rt, updates = runtime()
    wid = rt.start(spec(task("ask"), fake("ask")))
    waiting = "fake asks to edit out/a.md"
    wait_for(lambda: rt.get(wid).status == WorkerStatus.WAITING, "the question", within=30)
    record = rt.get(wid)
    assert record.question == waiting
    assert record.permission is not None
    assert [(o.id, o.name, o.kind) for o in record.permission.options] == [
        ("allow", "Allow once", "allow_once"),
        ("reject", "Reject", "reject_once"),
    ]
    assert (record.permission.paths, record.permission.new_text) == (
        ("out/a.md",),
        "out/a.md, written by fake-acp-agent\n",
    )
    wait_for(lambda: any(u.permission == record.permission for u in updates.of(wid)), "its update")
    assert load_record(rt.workspace.workers_dir / wid).permission == record.permission
    rt.resume(wid, answer="yes")
    assert rt.wait(wid, 30)
    assert rt.get(wid).status == WorkerStatus.COMPLETED
    assert (rt.workspace.root / "out" / "a.md").is_file()


def test_another_runtime_continues_a_crashed_turn_with_session_load(runtime):
    rt, _ = runtime()
    wid = rt.start(spec(task()))
    assert rt.wait(wid, 30)
    first = rt.get(wid)
    folder = rt.workspace.workers_dir / wid
    # what a crash in its turn leaves: the record `running`, its agent's session named
    raw: dict[str, Any] = json.loads((folder / "worker.json").read_text())
    raw.update(status="running", result=None)
    (folder / "worker.json").write_text(json.dumps(raw))
    (rt.workspace.root / "out" / "a.md").unlink()
    again, _ = runtime()
    again.resume(wid)
    assert again.wait(wid, 30)
    record = load_record(folder)
    assert record is not None
    assert (record.status, record.agent_session) == (WorkerStatus.COMPLETED, first.agent_session)
    history = json.loads(
        (folder / "home" / ".fake-acp" / f"{first.agent_session}.json").read_text()
    )["history"]
    assert [role for role, _ in history] == ["user", "agent", "user", "agent"]
    assert history[2][1].startswith("Your previous turn on this task was cut short")
    assert (again.workspace.root / "out" / "a.md").is_file()


def test_a_cancel_ends_the_agents_turn(runtime):
    rt, updates = runtime()
    wid = rt.start(spec(task("sleep 60")))
    wait_for(lambda: rt.get(wid).agent_session, "the agent's session", within=30)
    record = rt.cancel(wid)
    assert record.status == WorkerStatus.CANCELLED
    assert record.result == {
        "kind": "finalize_cancel",
        "notes": "agent 'fake' cancelled: it stopped its turn. Files it wrote: none",
    }
    assert updates.statuses(wid)[-1] == WorkerStatus.CANCELLED


def test_an_agent_that_fails_fails_its_worker_with_one_line(runtime):
    rt, updates = runtime()
    broken = AgentSpec("broken", (sys.executable, FAKE, "--exit", "3"))
    wid = rt.start(spec(task(), broken))
    assert rt.wait(wid, 30)
    record = rt.get(wid)
    assert record.status == WorkerStatus.FAILED
    assert record.error == (
        "agent 'broken' exited with code 3 during initialize "
        "(it said: fake-acp-agent: cannot start (a test asked it to exit))"
    )
    assert updates.of(wid)[-1].error == record.error


def test_closing_the_runtime_ends_an_agent_that_waits_for_an_answer(runtime):
    rt, _ = runtime()
    wid = rt.start(spec(task("ask"), fake("ask")))
    wait_for(lambda: rt.get(wid).status == WorkerStatus.WAITING, "the question", within=30)
    assert working_in(rt.workspace.root)
    rt.close()
    assert rt.wait(wid, 10)
    wait_for(lambda: not working_in(rt.workspace.root), "the agent's end")
    assert rt.get(wid).status == WorkerStatus.WAITING  # a resume asks it again


def working_in(root: Path) -> list[int]:
    """The processes whose working directory is `root` (the agent's)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and (entry / "cwd").readlink() == root.resolve():
                found.append(int(entry.name))
        except OSError:  # ended meanwhile, or not ours to read
            continue
    return found
