"""The offline scientist model: it drives real workers through real stages (real files, real
commands), handles a stage it does not know honestly, and is deterministic — the same history
gives the same reply, in any instance."""

from __future__ import annotations

import csv
import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from support.offline import bound_worker, reply
from support.runtime import checkpoint_messages, copy_skill, finish, stage_task

from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.offline.model import OfflineScientistModel
from lightscientist_jupyter.offline.study.scripts.study_design import PROBE_CANDIDATES
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.session.lifecycle import CANCEL_NOTICE
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.supervisor.prompts import worker_message


def test_the_offline_model_carries_out_experiment_setup(make_runtime, spec_for, updates, ws):
    runtime = make_runtime()
    worker = runtime.start(spec_for("experiment.setup"))
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    result = record["result"]
    assert result["next_stage"] == "experiment.loop"
    assert result["outputs"] == ["experiment/plan.md", "experiment/run_experiment.py"]
    assert "Smoke check: ok final_loss=" in result["summary"]
    assert "does not depend on the goal text" in result["summary"]
    script = ws.root / "experiment" / "run_experiment.py"
    assert script.read_text().startswith("#!/usr/bin/env python3")
    assert "2 batch" in (ws.root / "experiment" / "plan.md").read_text()

    # The command really ran, through the worker's shell, and its log is kept.
    assert record["commands"] == ["python experiment/run_experiment.py --check"]
    logs = sorted((ws.workers_dir / worker / "commands").glob("*.log"))
    assert len(logs) == 1 and logs[0].read_text().startswith("ok final_loss=")
    assert record["files_written"] == [  # the script with the modules it imports, then the plan
        "/experiment/run_experiment.py",
        "/experiment/study_design.py",
        "/experiment/study_common.py",
        "/experiment/plan.md",
    ]
    assert "\nfrom study_design import" in script.read_text()
    delivery = (ws.workers_dir / worker / "agent-run.md").read_text()
    assert "- `python experiment/run_experiment.py --check`" in delivery
    assert "Suggested next stage: `experiment.loop`" in delivery
    assert updates.of(worker)[-1].progress.tool_calls == 7  # skill, 4 writes, check, complete


def test_the_offline_model_runs_a_batch_with_real_results(make_runtime, spec_for, ws):
    runtime = make_runtime()
    setup = runtime.start(spec_for("experiment.setup"))
    assert finish(runtime, setup)["status"] == "completed"
    loop = runtime.start(spec_for("experiment.loop", visit=1))
    record = finish(runtime, loop)

    assert record["status"] == "completed", record
    assert record["result"]["next_stage"] == "experiment.loop"  # a second batch remains
    with open(ws.root / "experiment" / "results.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {"final_loss", "best_loss", "diverged"} <= {row["metric"] for row in rows}
    assert {row["run_id"] for row in rows} == {
        "r01",
        "r03",
        "r05",
        "r07",
        "r09",
        "r11",
        "r13",
        "r15",
        "r17",
    }  # batch 1 of 2: every other run
    assert record["commands"] == ["python experiment/run_experiment.py --batches 2 --batch 1"]


def test_parallel_probe_workers_share_one_runtime(make_runtime, table, ws):
    runtime = make_runtime()
    task = stage_task(table, ws, "idea.probe_batch")
    planner = runtime.start(
        WorkerSpec(
            message=worker_message(task, skill=copy_skill(ws, task), digest=""), stage=task.stage
        )
    )
    planned = finish(runtime, planner)
    assert planned["result"]["outputs"] == ["idea/probes/plan.md"]
    # the planning worker puts the modules every probe imports in place before they start
    assert {p.name for p in (ws.root / "idea" / "probes").glob("study_*.py")} == {
        "study_design.py",
        "study_common.py",
    }
    skill = copy_skill(ws, task)
    workers = [
        runtime.start(
            WorkerSpec(
                message=worker_message(task, skill=skill, digest="", label=f"probe {candidate}"),
                stage=task.stage,
                task_id=task.task_id,
                labels={"label": f"probe {candidate}"},
            )
        )
        for candidate in PROBE_CANDIDATES
    ]
    records = [finish(runtime, w, timeout=60) for w in workers]

    assert [r["status"] for r in records] == ["completed", "completed"], records
    for candidate, record in zip(PROBE_CANDIDATES, records, strict=True):
        assert record["result"]["outputs"] == [f"idea/probes/{candidate}.md"]
        assert (ws.root / "idea" / "probes" / f"{candidate}.md").stat().st_size > 0
        assert record["labels"] == {"label": f"probe {candidate}"}
        assert record["commands"] == [f"python idea/probes/{candidate}.py {candidate}"]


def test_an_unknown_stage_gets_an_honest_note_and_its_default_next(
    make_runtime, write_table, tmp_path, ws
):
    table = load_table(
        write_table(
            tmp_path / "table",
            """\
start = "survey.cats"

[stages."survey.cats"]
skill = "skills/cats.md"
outputs = ["cats/notes.md", "cats/data.csv"]
next = "survey.dogs"
allowed = ["survey.dogs", "done"]

[stages."survey.dogs"]
skill = "skills/dogs.md"
outputs = ["dogs/notes.md"]
next = "done"
allowed = ["done"]
""",
            skills={"skills/cats.md": "# Cats\n\nAsk cats.\n", "skills/dogs.md": "# Dogs\n"},
        )
    )
    runtime = make_runtime()
    task = stage_task(table, ws, "survey.cats")
    spec = WorkerSpec(
        message=worker_message(task, skill=copy_skill(ws, task), digest=""), stage=task.stage
    )
    record = finish(runtime, runtime.start(spec))

    assert record["status"] == "completed", record
    assert record["result"]["next_stage"] == "survey.dogs"
    assert record["result"]["outputs"] == ["cats/notes.md", "cats/data.csv"]
    note = (ws.root / "cats" / "notes.md").read_text()
    assert note.startswith("# survey.cats") and "does not know the stage 'survey.cats'" in note
    assert "nothing here is a research result" in note
    with open(ws.root / "cats" / "data.csv", newline="") as fh:
        assert list(csv.DictReader(fh))[0]["note"].startswith("LightScientist's offline demo")
    messages = checkpoint_messages(runtime, record["thread_id"])
    reads = [
        c
        for m in messages
        if isinstance(m, AIMessage)
        for c in m.tool_calls
        if c["name"] == "read_file"
    ]
    assert reads[0]["args"] == {"file_path": "/.lightscientist/skills/survey.cats.md"}


# ----------------------------------------------------------------------------- determinism


def _same(a: AIMessage, b: AIMessage) -> bool:
    return (a.content, a.tool_calls) == (b.content, b.tool_calls)


def test_the_same_history_gives_the_same_reply(table, ws):
    task = stage_task(table, ws, "experiment.setup")
    history = [
        SystemMessage("any system prompt"),
        HumanMessage(worker_message(task, skill="/skill.md", digest="")),
    ]
    first = reply(bound_worker(), history)
    again = reply(bound_worker(), history)
    model = bound_worker()
    assert _same(first, again)
    assert _same(first, reply(model, history))
    assert _same(first, reply(model, history))
    assert first.tool_calls[0]["name"] == "read_file"
    assert first.tool_calls[0]["args"] == {"file_path": "/skill.md"}


def test_a_recorded_session_replays_identically(make_runtime, spec_for):
    """Every reply of a real session is what a fresh model gives for the history before it:
    what a process that resumes the session from its checkpoint relies on."""
    runtime = make_runtime()
    worker = runtime.start(spec_for("idea.generate"))
    assert finish(runtime, worker)["status"] == "waiting"
    runtime.resume(worker, answer="small")
    record = finish(runtime, worker)
    assert record["status"] == "completed"
    messages = checkpoint_messages(runtime, record["thread_id"])

    replies = [i for i, m in enumerate(messages) if isinstance(m, AIMessage)]
    assert len(replies) >= 4
    for i in replies:
        fresh = reply(bound_worker(), messages[:i])
        assert _same(fresh, messages[i]), f"reply {i} differs: {fresh} != {messages[i]}"


def test_the_offline_model_answers_a_cancel_notice_and_plain_chat():
    model = bound_worker()
    task = HumanMessage("LightScientist task\nrole: worker\nstage: idea.survey\n\nDo it.")
    step = reply(model, [task, HumanMessage(CANCEL_NOTICE)])
    assert [c["name"] for c in step.tool_calls] == ["finalize_cancel"]
    chat = reply(model, [HumanMessage("hello there")])
    assert chat.tool_calls == [] and "offline demo model" in chat.content


def test_bind_tools_sends_the_tools_with_each_request_as_chat_models_do():
    @tool
    def ping(x: int) -> int:
        """Ping."""
        return x

    bound = OfflineScientistModel(loops=3).bind_tools([ping])
    assert bound.bound == OfflineScientistModel(loops=3)  # type: ignore[attr-defined]
    assert [t["function"]["name"] for t in bound.kwargs["tools"]] == ["ping"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("loops", [1, 3])
def test_loops_set_how_many_batches_the_plan_has(make_runtime, spec_for, loops):
    runtime = make_runtime(resolve_model(f"offline:loops={loops}"))
    record = finish(runtime, runtime.start(spec_for("experiment.setup")))
    assert f"({loops} batch(es))" in record["result"]["summary"]


# ----------------------------------------------------------------------------- learned, not copied


def _task(stage: str, allowed: list[str], default_next: str, visit: int = 1) -> HumanMessage:
    lines = [
        "LightScientist task",
        "role: worker",
        f"stage: {stage}",
        f"visit: {visit}",
        f"default_next: {default_next}",
        f"allowed_next: {json.dumps(allowed)}",
        'outputs: ["out/x.md"]',
        "",
        "Do it.",
    ]
    return HumanMessage("\n".join(lines))


def _complete_call(model: OfflineScientistModel, task: HumanMessage) -> dict:
    """Answer every call of the model until it calls the completing tool; returns that call."""
    messages: list = [task]
    for _ in range(20):
        message = reply(model, messages)
        messages.append(message)
        for call in message.tool_calls:
            if call["name"] == "complete_stage":
                return call
            messages.append(ToolMessage("ok final_loss=0.1", tool_call_id=call["id"]))
    raise AssertionError("the model never completed the stage")


def test_the_tool_called_is_the_bound_one_whose_parameters_fit():
    @tool
    def save(file_path: str, content: str) -> str:
        """Save a file."""
        return "saved"

    @tool
    def complete_stage(summary: str, outputs: list[str], next_stage: str) -> str:
        """Complete."""
        return "ok"

    model = OfflineScientistModel().bind_tools([save, complete_stage])
    first = reply(model, [_task("paper.plan", ["paper.figure"], "paper.figure")])
    assert [(c["name"], c["args"]["file_path"]) for c in first.tool_calls] == [
        ("save", "/paper/outline.md")
    ]


def test_without_a_fitting_tool_the_model_says_so_instead_of_inventing_one():
    message = reply(OfflineScientistModel(), [_task("paper.plan", ["b"], "b")])
    assert message.tool_calls == []
    assert "no bound tool fits" in message.content
    assert "(content, file_path)" in message.content


def test_the_next_stage_comes_from_the_task_not_from_the_default_table():
    # evaluate suggests the probe stage only when the task offers it
    call = _complete_call(bound_worker(), _task("idea.evaluate", ["g", "idea.probe_batch"], "g"))
    assert call["args"]["next_stage"] == "idea.probe_batch"
    call = _complete_call(bound_worker(), _task("idea.evaluate", ["g", "h"], "g"))
    assert call["args"]["next_stage"] == "g"
    # the loop asks for itself again while batches remain, if allowed; else the default
    loop = _task("experiment.loop", ["experiment.loop", "next.one"], "next.one")
    assert _complete_call(bound_worker(), loop)["args"]["next_stage"] == "experiment.loop"
    loop = _task("experiment.loop", ["next.one"], "next.one")
    assert _complete_call(bound_worker(), loop)["args"]["next_stage"] == "next.one"
    last = _task("experiment.loop", ["experiment.loop", "next.one"], "next.one", visit=3)
    assert _complete_call(bound_worker(loops=3), last)["args"]["next_stage"] == "next.one"
