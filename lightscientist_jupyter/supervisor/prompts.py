"""What the supervisor agent and the workers are told: prompts and message builders.

No prompt grows with the project: the supervisor's input per decision is one event under a
fixed header; a worker's first message carries its task, the path of its skill and a digest
of PROCESS.md whose size is bounded (newest entries in full, older ones as a one-line index).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lightscientist_jupyter.redact import clip
from lightscientist_jupyter.runtime.protocol import (
    EVENT_TITLE,
    TASK_TITLE,
    recalled_block,
    render_header,
)
from lightscientist_jupyter.supervisor.updates import SchedulingEvent
from lightscientist_jupyter.values.review import REVIEWER_LABEL, REVIEWS_DIR
from lightscientist_jupyter.values.search import NODE_LABEL
from lightscientist_jupyter.values.task import StageTask
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, SchedulingKind

PROCESS_DIGEST_CHARS = 6000
EVENT_FIELD_CHARS = 1500
EVENT_SUMMARY_CHARS = 600
"""How much of a finished worker's summary its event carries (a 5-10 line summary fits)."""

SUPERVISOR_PROMPT = """You are the LightScientist supervisor. You run the workers of one research
stage at a time. Each message you get is ONE scheduling event (a worker finished, failed, is
waiting for an answer, went to the background, stalled; the stage started; a finish was
refused; the user answered; the stage is idle because nothing is running or scheduled).
The event carries what you need to decide: a finished worker's summary, outputs and
suggested next stage, the stage's allowed next stages and its other workers; a waiting
worker's question. Act with ONE message of tool calls (parallel calls if you need several):
start_worker, resume_worker, schedule_resume, request_user_decision and an accepted
finish_stage settle the event and end your turn. When you act with no such tool, reply with
exactly one line: `done` (the stage was finished and accepted), `failed` (the stage cannot be
completed), or `continue` (more events are expected).

Rules:
- A worker suggests the next stage with complete_stage; you decide. Call finish_stage with a
  5-10 line summary, the outputs and the next stage when the stage's work is really done.
  Layer 1 checks the outputs and the allowed stages; if it refuses, act on the reason.
- Prefer resuming or reusing workers to starting new ones; keep parallel workers few (at most
  two or three); cancel rarely.
- Answer a waiting worker with resume_worker(answer=...). A worker in the background asked to
  be checked later: schedule_resume it; it will be resumed without asking you again.
- A waiting worker whose event carries `permission` is a coding agent asking leave for one
  tool call (its title, kind, files and its own options): answer with resume_worker(answer=
  the name of one of its options). Allow once an edit of files inside the workspace; reject
  anything else.
- Use request_user_decision only for a project-level question a human must answer.
- A search stage's nodes are run for you; you hear of the search once, `search_over`, with
  the best node and the first draft: start the stage's worker then, as at a stage's start.
- A review stage's reviewers are run for you and layer 1 aggregates their scores; a round
  below the bar with rounds left sends the paper back by itself. Otherwise you hear of it
  once, `review_over`, with the scores and the decision: start the stage's worker then.
- Use get_task_info, list_workers and get_worker only when you need more than the event says."""


def event_message(
    event: SchedulingEvent,
    task: StageTask,
    attempts: int,
    workers: list[dict[str, Any]] | None = None,
) -> str:
    """The supervisor's whole input for one decision: a fixed header and the event.

    A finished worker's event also carries the stage's allowed next stages and `workers`, the
    stage's other workers that matter (`_listed`) in one line each (`worker_line`), so that
    deciding on it needs no query first."""
    fields: dict[str, Any] = {
        "event": str(event.kind),
        "task_id": task.task_id,
        "stage": task.stage,
        "visit": task.visit,
        "goal": clip(task.goal, 200),
        "worker": event.worker_id,
        "attempts": attempts,
    }
    for key, value in event.data.items():
        if key == "result" and isinstance(value, dict):
            value = compact_result(value)
        if isinstance(value, str):
            value = clip(value, EVENT_FIELD_CHARS)
        elif isinstance(value, dict):
            value = {
                k: clip(v, EVENT_FIELD_CHARS) if isinstance(v, str) else v for k, v in value.items()
            }
        fields[key] = value
    if event.kind == SchedulingKind.WORKER_FINISHED:
        fields["allowed_next"] = list(task.allowed_next)
        others = [worker_line(w) for w in workers or () if _listed(w, event.worker_id)]
        if others:
            fields["workers"] = others[-MAX_WORKER_LINES:]
    recalled = recalled_block(task.recalled) if event.kind == SchedulingKind.STAGE_STARTED else ""
    return render_header(
        EVENT_TITLE,
        fields,
        recalled + "Act with one message of tool calls (a settling tool ends your turn), or "
        "reply with one line: done, failed or continue.",
    )


def compact_result(result: dict[str, Any]) -> dict[str, Any]:
    """A worker's result as an event carries it: the summary up to `EVENT_SUMMARY_CHARS`
    (enough for the 5-10 lines a worker is asked for), so event sizes stay bounded."""
    summary = str(result.get("summary") or result.get("notes") or result.get("text") or "")
    out = {k: result[k] for k in ("kind", "next_stage", "outputs") if result.get(k)}
    out["summary"] = clip(summary.strip(), EVENT_SUMMARY_CHARS)
    return out


MAX_WORKER_LINES = 6
"""The stage's other workers a finished worker's event lists at most (the newest)."""


def worker_line(summary: dict[str, Any]) -> dict[str, Any]:
    """One of the stage's other workers as an event lists it (from `list_workers`' lines)."""
    line = {k: summary.get(k) for k in ("id", "label", "status")}
    line["outputs"] = list(summary.get("outputs") or [])[:8]
    line["summary"] = clip(str(summary.get("summary_line") or ""), 100)
    return {k: v for k, v in line.items() if v not in (None, "", [])}


def _listed(summary: dict[str, Any], worker_id: str | None) -> bool:
    """Whether a finished worker's event lists this other worker: one still going, or a
    labelled sub-task (a probe); an unlabelled one that ended was decided on already. A
    search's node workers and a review's reviewers never are: the agent hears of them once,
    in `search_over` or `review_over`."""
    label = str(summary.get("label", ""))
    if summary.get("id") == worker_id or label.startswith((NODE_LABEL, REVIEWER_LABEL)):
        return False
    return bool(summary.get("label")) or summary.get("status") not in FINAL_WORKER_STATUSES


def process_digest(text: str, max_chars: int = PROCESS_DIGEST_CHARS) -> str:
    """PROCESS.md bounded to `max_chars`: the header, the newest entries in full, older ones
    as a one-line index (itself bounded: the oldest fold into a count)."""
    if len(text) <= max_chars:
        return text
    parts = re.split(r"(?m)^(?=## )", text)
    header, entries = parts[0].rstrip()[: max_chars // 4], parts[1:]
    title = "\n\n## Earlier entries (one line each; PROCESS.md has them all)\n"
    index_budget = max_chars // 4
    budget = max_chars - len(header) - len(title) - index_budget - 4
    kept: list[str] = []
    for entry in reversed(entries):
        if len(entry) > budget:
            break
        kept.insert(0, entry)
        budget -= len(entry)
    index = [_index_line(entry) for entry in entries[: len(entries) - len(kept)]]
    while index and sum(len(line) + 1 for line in index) > index_budget - 60:
        index.pop(0)
    folded = len(entries) - len(kept) - len(index)
    if folded:
        index.insert(0, f"- ({folded} older entries: read PROCESS.md)")
    return header + title + "\n".join(index) + "\n\n" + "".join(kept)


def _index_line(entry: str) -> str:
    lines = [line for line in entry.splitlines() if line.strip() and not line.startswith("<!--")]
    title = lines[0][3:] if lines else "?"
    first = lines[1] if len(lines) > 1 else ""
    return f"- {title}: {first}"[:150]


PROCESS_TITLE = "## PROCESS.md (the project so far)\n\n"


def _task_fields(task: StageTask, skill: str = "") -> dict[str, Any]:
    """The header fields every worker's task starts with, in their order."""
    return {
        "role": "worker",
        "goal": task.goal,
        "stage": task.stage,
        "visit": task.visit,
        "task_id": task.task_id,
        "skill": skill,
        "outputs": list(task.outputs),
        "default_next": task.default_next,
        "allowed_next": list(task.allowed_next),
    }


def agent_message(task: StageTask, *, skill_text: str, digest: str) -> str:
    """The first prompt of a coding agent that works a stage (`task.agent`): the task header
    as a worker's, the skill inlined (the agent's working directory is the workspace, and it
    knows nothing of our paths), our tools as its `lightscientist` MCP server offers them,
    and the PROCESS.md digest. It delivers with `complete_stage`, or by ending its turn (an
    agent that cannot reach the tools): layer 1 checks the outputs either way."""
    fields = {**_task_fields(task), "feedback": task.feedback or ""}
    body = (
        "You work one stage of a research project; your working directory is the project's "
        "workspace. Follow the stage's skill below and write the outputs listed above (paths "
        "relative to your working directory). Then deliver with the `complete_stage` tool of "
        "the `lightscientist` MCP server: a 5-10 line summary, the files you wrote and one of "
        "the allowed next stages (a refused delivery says why: call it again). Its "
        "`request_input` asks the supervisor when you cannot decide; `submit_job` runs a long "
        "command; `search_literature`, `get_paper` and `cite` find and cite papers; `recall` "
        "searches what earlier projects learned. If you cannot reach these tools, end your "
        "turn with the 5-10 line summary: the stage is checked from the files.\n\n"
        f"## The stage's skill\n\n{skill_text.strip()}\n\n"
        + recalled_block(task.recalled)
        + PROCESS_TITLE
        + digest
    )
    return render_header(TASK_TITLE, fields, body)


def worker_message(
    task: StageTask,
    *,
    skill: str,
    digest: str,
    label: str = "",
    instructions: str = "",
    header: Mapping[str, Any] | None = None,
) -> str:
    """A worker's first message: its task header, how to work, and the PROCESS.md digest.

    A worker of a search node gets the node's fields too (`supervisor.search.node_fields`),
    and is asked for the node, not the stage's outputs; a reviewer gets its review's fields
    (`supervisor.review.reviewer_fields`) and is asked for its review file."""
    fields = {
        **_task_fields(task, skill),
        "process_md": "/PROCESS.md",
        "label": label,
        "instructions": instructions,
        "feedback": task.feedback or "",
        **(header or {}),
    }
    known = recalled_block(task.recalled) + PROCESS_TITLE + digest  # a reviewer's: the digest
    node = header if header and "node" in header else None
    if header and "reviewer" in header:
        body = (
            f"You are reviewer {header['reviewer']} of the paper (round {header['round']}), "
            "one of several who do not see each other's reviews: do not read other files "
            f"under {REVIEWS_DIR}/. Read the paper ({', '.join(header['paper_files'])}: those "
            f"that exist) and the results it reports ({header['results']}), judge it against "
            f"the {header['rubric']} rubric ({header['rubric_guidance']}) and write "
            f'{header["review_file"]}: a JSON object {{"reviewer": {header["reviewer"]}, '
            f'"round": {header["round"]}, "scores": {{...}}, "strengths": [...], '
            '"weaknesses": [...], "questions": [...], "decision": "accept"|"revise"|"reject"} '
            f"with integer scores on the scales {header['scales']}. Each weakness is a change "
            "the authors can make, in one sentence: the ones of reviewers who do not accept "
            "are sent back to the writer. Then call complete_stage with a 3-line summary, the "
            "review file and the default next stage.\n\n" + PROCESS_TITLE + digest
        )
        return render_header(TASK_TITLE, fields, body)
    if node:
        body = (
            f"You write one node of the stage's search: {node['node']} ({node['node_kind']}). "
            "Read your skill file first. Put the node's files in its folder "
            f"{node['node_dir']}; run its experiment as a job (submit_job) whose script writes "
            f"{node['result_file']}: a JSON object with the number '{node['metric']}' "
            f"({node['metric_goal']} is better). Wait for the job, then call complete_stage with "
            "what the node changed and what it gave (5-10 lines), its files, and the default "
            "next stage. The metric is read from the result file, not from your summary.\n\n"
            + known
        )
        return render_header(TASK_TITLE, fields, body)
    body = (
        f"Read your skill file {skill} first. Write the outputs listed above (paths relative "
        "to the workspace root '/'), then call complete_stage with a 5-10 line summary, the "
        "files you wrote and one of the allowed next stages.\n\n" + known
    )
    return render_header(TASK_TITLE, fields, body)
