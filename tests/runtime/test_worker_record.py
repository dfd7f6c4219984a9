"""The worker record: its JSON keys are those `worker.json` has always had."""

from __future__ import annotations

import json

from lightscientist_jupyter.runtime.session.worker_files import load_record, save_record
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.vocab import AgentPermissions, Role, WorkerStatus

KEYS = [
    "id",
    "thread_id",
    "role",
    "stage",
    "task_id",
    "goal",
    "status",
    "labels",
    "created_at",
    "updated_at",
    "progress",
    "result",
    "question",
    "check_after_s",
    "error",
    "files_written",
    "commands",
    "system_prompt",
    "file_tools",
    "current_turn_only",
    "workspace",
    "network",
    "limits",
    "memory",
    "usage",
    "held",
    "jobs",
    "answers_before",
    "agent",
    "agent_session",
    "permission",
]


def sample() -> WorkerRecord:
    return WorkerRecord(
        id="w2",
        thread_id="w2-1700000000000",
        role=Role.WORKER,
        stage="idea.survey",
        task_id="idea.survey#1",
        goal="Does warmup help?",
        status=WorkerStatus.COMPLETED,
        labels={"label": "probe c1"},
        created_at=1.0,
        updated_at=2.0,
        progress=Progress(model_calls=3, tool_calls=2, steps=6, input_chars=900),
        result={
            "kind": "complete_stage",
            "summary": "s",
            "outputs": ["idea/survey.md"],
            "next_stage": "idea.generate",
        },
        files_written=("/idea/survey.md",),
        commands=("ls",),
        workspace="/ws",
    )


def test_the_json_keys_and_their_order_stay_those_of_worker_json():
    raw = sample().to_dict()
    assert list(raw) == KEYS
    assert raw["progress"] == {"model_calls": 3, "tool_calls": 2, "steps": 6, "input_chars": 900}
    assert raw["status"] == "completed" and type(raw["status"]) is str
    assert raw["files_written"] == ["/idea/survey.md"]


def test_a_record_round_trips_through_its_files(tmp_path):
    save_record(tmp_path, sample())
    assert load_record(tmp_path) == sample()
    assert list(json.loads((tmp_path / "worker.json").read_text())) == KEYS
    assert "Suggested next stage: `idea.generate`" in (tmp_path / "agent-run.md").read_text()


def test_an_agent_workers_record_keeps_its_agent_for_another_process(tmp_path):
    agent = AgentSpec(
        "codex", ("codex-acp", "--quiet"), ("OPENAI_API_KEY",), AgentPermissions.DENY, True
    )
    save_record(tmp_path, WorkerRecord(id="w3", agent=agent, agent_session="sess-1"))
    assert json.loads((tmp_path / "worker.json").read_text())["agent"] == {
        "name": "codex",
        "command": ["codex-acp", "--quiet"],
        "env": ["OPENAI_API_KEY"],
        "permissions": "deny",
        "network": True,
    }
    loaded = load_record(tmp_path)
    assert loaded is not None
    assert (loaded.agent, loaded.agent_session) == (agent, "sess-1")


def test_secrets_are_redacted_in_both_files_but_not_in_memory(tmp_path):
    key = "sk-" + "a1B2c3D4" * 5
    record = WorkerRecord(id="w1", status=WorkerStatus.FAILED, error=f"bad key {key}")
    save_record(tmp_path, record)
    assert key not in (tmp_path / "worker.json").read_text()
    assert key not in (tmp_path / "agent-run.md").read_text()
    assert key in record.error


def test_unknown_keys_are_ignored_and_missing_ones_default(tmp_path):
    record = WorkerRecord.from_dict(
        {"id": "w9", "status": "waiting", "question": "q?", "a_key_from_a_later_version": 1}
    )
    assert (record.id, record.status, record.question) == ("w9", WorkerStatus.WAITING, "q?")
    assert record.suspension == WorkerStatus.WAITING and record.label == ""
    assert record.progress == Progress() and record.file_tools is True
    (tmp_path / "worker.json").write_text("{broken")
    assert load_record(tmp_path) is None
