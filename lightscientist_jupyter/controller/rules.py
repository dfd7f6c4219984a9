"""The transition rules of layer 1 as plain functions over explicit inputs.

A model can only suggest; these functions decide. They read nothing but their arguments
(`missing_outputs` alone looks at the disk) and return either a value or the reason for a
refusal, written for whoever acts on it: the supervisor's model, or the researcher who
delivered a stage by hand.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import missing_files
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable
from lightscientist_jupyter.values.task import next_stage_refusal
from lightscientist_jupyter.vocab import ReplySource


def missing_outputs(stage: Stage, root: Path) -> list[str]:
    """Required outputs that are not ready, as `path (what is wrong)` (see `missing_files`)."""
    return missing_files(stage.outputs, root)


@dataclasses.dataclass(frozen=True)
class _Audience:
    """How a refused finish is worded for whoever finished the stage."""

    write: str
    listed: str
    checks: str


_SUPERVISOR = _Audience(
    write="write them (non-empty)",
    listed="outputs the finish lists do not exist",
    checks="cite only through `cite`, quote only numbers a result file holds",
)
_RESEARCHER = _Audience(
    write="write each as a non-empty file in the workspace",
    listed="the further outputs you named are not ready",
    checks="`lightscientist check` shows each citation and number with its trace",
)


def finish_refusal(
    stage: Stage,
    next_stage: str,
    missing: list[str],
    unlisted: Iterable[str] = (),
    failed_checks: Iterable[str] = (),
    *,
    by: str = "supervisor",
    via: str = "",
) -> str | None:
    """Why a finish of `stage` suggesting `next_stage` must be refused, or None to accept.

    `missing`: required outputs not ready; `unlisted`: other outputs the finish lists that
    are not ready (a worker that reports a file its tools failed to write); `failed_checks`:
    what the stage's `checks` found wrong. A finish `by` the researcher (a `deliver`, from
    the front door `via`) is told what to do there; the supervisor, which tool to call."""
    words = _RESEARCHER if by == "researcher" else _SUPERVISOR
    again = deliver_again(via) if by == "researcher" else "call finish_stage again"
    reasons = []
    refused = next_stage_refusal(stage.id, next_stage, stage.allowed, stage.next)
    if refused:
        reasons.append(refused)
    if missing:
        reasons.append(
            f"required outputs are not ready: {', '.join(missing)}; {words.write}, then {again}"
        )
    unlisted = list(unlisted)
    if unlisted:
        reasons.append(
            f"{words.listed}: {', '.join(unlisted)}; write them (non-empty) or leave them out "
            "of the outputs"
        )
    failed_checks = list(failed_checks)
    if failed_checks:
        reasons.append(
            f"the stage's checks failed: {'; '.join(failed_checks)}; fix each "
            f"({words.checks}), then {again}"
        )
    return "; ".join(reasons) or None


DELIVER_AGAIN: dict[str, str] = {
    ReplySource.CLI: "run `lightscientist deliver` again",
    ReplySource.MAGIC: "run `%lightscientist deliver` again",
    ReplySource.PANEL: "deliver again from the side panel",
}
"""How the researcher delivers again, by the front door the refused deliver came from."""


def deliver_again(via: str) -> str:
    """How the researcher delivers again from the front door `via` (a `ReplySource`)."""
    return DELIVER_AGAIN.get(
        via,
        "deliver again (`lightscientist deliver` at the command line, `%lightscientist "
        "deliver` in a notebook)",
    )


def retry_notice(stage: str, reason: str | None) -> str:
    """What `resume` of a project that failed at `stage` says before it tries again."""
    return (
        f"{stage} failed before ({reason or 'no reason was recorded'}); it starts again "
        "from its start with fresh workers"
    )


def visit_limit_reason(stage: Stage, visits: int, table_path: Path) -> str | None:
    """Why entering `stage` for the `visits`-th time fails the project, or None."""
    if stage.max_visits is not None and visits > stage.max_visits:
        return (
            f"stage '{stage.id}' was entered {visits} times, more than its max_visits = "
            f"{stage.max_visits} (a runaway loop?); raise max_visits in {table_path} or "
            "change the flow"
        )
    return None


def previous_stage(history: list[dict[str, Any]], stage_id: str) -> str | None:
    """The stage the project came from when it last entered `stage_id`."""
    for step in reversed(history):
        if step.get("to") == stage_id and step.get("from"):
            return str(step["from"])
    return None


def reject_target(
    table: StageTable, gate: Stage, history: list[dict[str, Any]], to_stage: str | None
) -> tuple[str | None, str | None]:
    """Where a rejection of `gate` sends the project: `(target, None)` or `(None, reason)`."""
    if to_stage:
        if to_stage == DONE or to_stage not in table:
            return None, (
                f"'{to_stage}' is not a stage of {table.path.name}; choose one of "
                f"{', '.join(table.ids())}"
            )
        return to_stage, None
    target = previous_stage(history, gate.id)
    if target is None:
        preds = [s.id for s in table if gate.id in s.allowed and s.id != gate.id]
        target = preds[0] if preds else gate.id
    return target, None
