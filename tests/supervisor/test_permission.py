"""A coding agent's permission request as a typed value (`values.permission`): the one line
it is asked as, the option an answer picks, its JSON round trip, how it rides a waiting
worker's update into the supervisor's event, and the option the offline supervisor picks
for it in auto mode (allow once an edit inside the workspace, reject anything else)."""

from __future__ import annotations

import pytest
from support.permissions import EDIT, OPTIONS

from lightscientist_jupyter.offline.supervisor import permission_answer
from lightscientist_jupyter.runtime.protocol import parse_header
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import Progress, WorkerUpdate
from lightscientist_jupyter.supervisor.prompts import event_message
from lightscientist_jupyter.supervisor.updates import apply_update, filter_update
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus

pytestmark = pytest.mark.unit


def test_the_question_names_the_agent_what_it_would_do_and_the_files():
    assert EDIT.question == "codex asks to edit analysis.py"
    run = PermissionRequest("codex", "pytest -q", "execute", OPTIONS)
    assert run.question == "codex asks to run: pytest -q"
    assert PermissionRequest("fake", "Think", None, OPTIONS).question == "fake asks to use Think"


@pytest.mark.parametrize(
    ("answer", "picked"),
    [
        ("Always allow", "always"),
        ("allow once", "allow"),
        ("reject", "reject"),
        ("y", "allow"),
        ("no", "reject"),
        ("Use your best judgement", None),
    ],
)
def test_an_answer_picks_the_option_it_names_or_the_first_of_its_kind(answer, picked):
    option = EDIT.pick(answer)
    assert (option.id if option is not None else None) == picked


def test_it_goes_through_json_unchanged():
    raw = EDIT.to_dict()
    assert raw["question"] == "codex asks to edit analysis.py"
    assert raw["options"][0] == {"id": "allow", "name": "Allow once", "kind": "allow_once"}
    assert PermissionRequest.from_dict(raw) == EDIT


def test_only_files_inside_the_workspace_are_within_it():
    assert EDIT.within_workspace
    for paths in (("/etc/passwd",), ("../other/x.py",), ()):
        outside = PermissionRequest("codex", "Edit", "edit", OPTIONS, paths)
        assert not outside.within_workspace


def test_a_waiting_workers_event_carries_the_request_and_its_record_keeps_it():
    before = WorkerRecord(id="w1", thread_id="t", role="worker", stage="a", task_id="a#1")
    update = WorkerUpdate(
        worker_id="w1",
        status=WorkerStatus.WAITING,
        progress=Progress(),
        question=EDIT.question,
        permission=EDIT,
        at=5.0,
    )
    after = apply_update(before, update)
    assert after.permission == EDIT
    assert WorkerRecord.from_dict(dict(after.to_dict())).permission == EDIT
    event = filter_update(before, after)
    assert event is not None and event.kind == SchedulingKind.WORKER_WAITING
    assert event.data["question"] == "codex asks to edit analysis.py"
    assert event.data["permission"] == EDIT.to_dict()


TASK = StageTask(
    goal="Does warmup help?",
    stage="experiment.loop",
    skill_path="/x/skill.md",
    outputs=("analysis.py",),
    default_next="done",
    allowed_next=("done",),
    workspace="/ws",
    process_md="/ws/PROCESS.md",
    visit=1,
    task_id="experiment.loop#1",
)


def offline_answer(request: PermissionRequest) -> str:
    """What the offline supervisor answers, from the event as the supervisor reads it."""
    before = WorkerRecord(id="w1", thread_id="t", role="worker", stage="a", task_id="a#1")
    update = WorkerUpdate(
        "w1", WorkerStatus.WAITING, Progress(), question=request.question, permission=request
    )
    event = filter_update(before, apply_update(before, update))
    assert event is not None
    fields = parse_header(event_message(event, TASK, 1))[1]
    return permission_answer(fields["permission"])


def test_the_offline_supervisor_allows_once_an_edit_inside_the_workspace():
    assert offline_answer(EDIT) == "Allow once"


@pytest.mark.parametrize(
    "request_",
    [
        PermissionRequest("codex", "Edit", "edit", OPTIONS, ("/etc/hosts",)),
        PermissionRequest("codex", "rm -rf build", "execute", OPTIONS),
        PermissionRequest("codex", "Read", "read", OPTIONS, ("notes.md",)),
    ],
)
def test_the_offline_supervisor_rejects_anything_else(request_):
    assert offline_answer(request_) == "Reject"
