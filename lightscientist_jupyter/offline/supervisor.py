"""The offline model playing the supervisor: one scheduling event in, tool calls, one line out.

It sees only the current turn (the event header and its own tool results), exactly like a
real model under the supervisor's bounded input, decides from what the event carries (no query
first: a decision is one model call, the settling tool ending the turn; the `Say` after an
action answers only when the tool did not settle it), and follows the supervisor prompt's advice:
reuse workers, cancel rarely, keep parallel workers few (two probes at most). Which stages fan
out into parallel helpers is the playbook's knowledge (`playbook.helper_labels`); the stage it
finishes with is the one the worker suggested.
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.offline import tools
from lightscientist_jupyter.offline.history import Act, History, Say, Step
from lightscientist_jupyter.offline.playbook import HELPER_PREFIX, helper_labels, is_helper
from lightscientist_jupyter.values.permission import PermissionRequest
from lightscientist_jupyter.values.review import META_FILE
from lightscientist_jupyter.values.search import TREE_FILE
from lightscientist_jupyter.vocab import SchedulingKind, WorkerStatus

MAX_ATTEMPTS = 3


def permission_answer(raw: dict[str, Any]) -> str:
    """The option the supervisor picks for a coding agent's permission request, by the
    prompt's rule: allow once an edit of files inside the workspace, reject anything else
    (the first option of that kind; "no" when the agent offers none, which cancels it)."""
    request = PermissionRequest.from_dict(raw)
    allow = request.kind == "edit" and request.within_workspace
    kinds = ("allow_once",) if allow else ("reject_once", "reject_always")
    option = next((o for o in request.options if o.kind in kinds), None)
    return option.name if option is not None else "no"


def answer_for(question: str) -> str:
    q = question.lower()
    if "budget" in q or "compute" in q:
        return "small: keep every batch to a few seconds on a laptop CPU"
    return "Use your best judgement, state the assumption in your outputs, and go on."


def _finish(
    fields: dict[str, Any], h: History, summary: str, outputs: list[str], next_stage: str | None
) -> Step:
    if not h.done("finish"):
        return Act(
            "finish",
            tools.COMPLETE,
            {"summary": summary, "outputs": outputs, "next_stage": next_stage or ""},
        )
    return Say("done" if h.result("finish").lower().startswith("accepted") else "continue")


def on_finished(fields: dict[str, Any], h: History) -> Step:
    result = fields.get("result") or {}
    label = str(fields.get("label") or "")
    stage = str(fields.get("stage") or "")
    if result.get("kind") != "complete_stage":
        return retry(
            fields,
            h,
            "the previous worker ended without calling complete_stage; "
            "finish the stage's outputs and call complete_stage",
        )
    helpers = helper_labels(stage)
    if helpers and not is_helper(label):
        if not h.done("probe0"):
            return [
                Act(
                    f"probe{i}",
                    tools.START,
                    {
                        "label": helper,
                        "instructions": "Run only the probe for candidate "
                        f"{helper.removeprefix(HELPER_PREFIX)}.",
                    },
                )
                for i, helper in enumerate(helpers)
            ]
        return Say("continue")
    if is_helper(label):
        # the event lists the stage's other workers; a probe that failed was started again
        # under its label: the latest one counts
        this = {
            "label": label,
            "status": WorkerStatus.COMPLETED,
            "outputs": result.get("outputs") or [],
            "summary": _first_line(str(result.get("summary") or "")),
        }
        workers = [*(fields.get("workers") or []), this]
        latest = {str(w.get("label")): w for w in workers if is_helper(str(w.get("label", "")))}
        probes = list(latest.values())
        if any(w.get("status") != WorkerStatus.COMPLETED for w in probes):
            return Say("continue")
        outputs = ["idea/probes/plan.md"] + [o for w in probes for o in w.get("outputs") or []]
        summary = "\n".join(
            [f"Ran {len(probes)} probes in parallel workers:"]
            + [
                f"- {str(w.get('label', '')).removeprefix(HELPER_PREFIX)}: "
                f"{w.get('summary') or 'done'}"
                for w in probes
            ]
        )
        return _finish(fields, h, summary, outputs, result.get("next_stage"))
    return _finish(
        fields,
        h,
        str(result.get("summary") or ""),
        list(result.get("outputs") or []),
        result.get("next_stage"),
    )


def _first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else ""


def retry(fields: dict[str, Any], h: History, why: str, label: str = "") -> Step:
    """Start the stage's work again (a failed probe: that probe again, under its label)."""
    attempts = int(fields.get("attempts") or 1)
    if attempts >= MAX_ATTEMPTS:
        return Say("failed")
    if not h.done("retry"):
        return Act(
            "retry", tools.START, {"instructions": why, **({"label": label} if label else {})}
        )
    return Say("continue")


def search_instructions(fields: dict[str, Any]) -> str:
    """What the stage's worker is told once its search is over: why, and where the tree is."""
    tree = str(fields.get("tree_file") or TREE_FILE)
    best = fields.get("best") or {}
    best_text = f"; the best node is {best.get('id')}" if isinstance(best, dict) and best else ""
    return (
        f"The search is over ({fields.get('reason') or 'every node has run'}){best_text}. "
        f"Write the stage's outputs from the tree in {tree}."
    )


def review_instructions(fields: dict[str, Any]) -> str:
    """What the review stage's worker is told once the round is aggregated."""
    meta = str(fields.get("meta_file") or META_FILE)
    return (
        f"The reviewers' round {fields.get('round')} is aggregated in {meta}: mean overall "
        f"{fields.get('mean')} against {fields.get('accept')} to accept, decision "
        f"{fields.get('decision')}. Write the stage's outputs, with the reviews' scores."
    )


def decide_supervisor(fields: dict[str, Any], h: History) -> Step:
    kind = str(fields.get("event") or "")
    worker = str(fields.get("worker") or "")
    if kind == SchedulingKind.STAGE_STARTED:
        if not h.done("start"):
            return Act("start", tools.START, {"instructions": ""})
        return Say("continue")
    if kind == SchedulingKind.SEARCH_OVER:  # the stage's own worker writes from the tree
        if not h.done("start"):
            return Act("start", tools.START, {"instructions": search_instructions(fields)})
        return Say("continue")
    if kind == SchedulingKind.REVIEW_OVER:  # the stage's own worker writes the review
        if not h.done("start"):
            return Act("start", tools.START, {"instructions": review_instructions(fields)})
        return Say("continue")
    if kind == SchedulingKind.WORKER_FINISHED:
        return on_finished(fields, h)
    if kind == SchedulingKind.WORKER_WAITING:
        if not h.done("answer"):
            permission = fields.get("permission")
            answer = (
                permission_answer(permission)
                if isinstance(permission, dict)
                else answer_for(str(fields.get("question") or ""))
            )
            return Act("answer", tools.ANSWER, {"worker_id": worker, "answer": answer})
        return Say("continue")
    if kind == SchedulingKind.WORKER_BACKGROUND:
        if not h.done("schedule"):
            return Act(
                "schedule",
                tools.SCHEDULE,
                {
                    "worker_id": worker,
                    "message": "Time to check on your background job.",
                    "delay_s": float(fields.get("check_after_s") or 5),
                },
            )
        return Say("continue")
    if kind == SchedulingKind.WORKER_FAILED:
        label = str(fields.get("label") or "")
        return retry(
            fields,
            h,
            f"the previous worker failed ({fields.get('error', '')}); try again, more simply",
            label if is_helper(label) else "",
        )
    if kind == SchedulingKind.WORKER_STALLED:
        if not h.done("cancel"):
            return Act("cancel", tools.CANCEL, {"worker_id": worker})
        return retry(
            fields,
            h,
            f"the previous worker ({worker}) stalled and was cancelled; "
            "start the stage's work again",
        )
    if kind == SchedulingKind.STAGE_IDLE:
        return retry(
            fields,
            h,
            "nothing was running on this stage; do the stage's work and call complete_stage",
        )
    if kind == SchedulingKind.STAGE_REJECTED:
        return retry(
            fields,
            h,
            f"the stage finish was refused: {fields.get('reason', '')}; "
            "fix that, then call complete_stage",
        )
    return Say("continue")
