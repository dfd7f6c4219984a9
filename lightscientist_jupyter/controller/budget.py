"""Layer 1's side of usage and budgets: the totals in the state, the limits, the `budget`
decision. Pure functions over the state, used by `machine.step`.

Every model call reaches `step` as a `Charge` (from `runtime.metering.meter.UsageMeter`): its usage
is added to the project's total and its stage visit's (`state.usage`), then the limits are
checked. The project's limits come from `--budget usd=…,tokens=…,hours=…`; a stage's from its
table entry's `budget = {usd = …, tokens = …}` (summed over all its visits), or from a raise at
its decision. At 80 % of a limit a `budget.warning` is emitted (once per limit); at 100 % a
`budget.exceeded`, and the project waits for the user with a decision of kind `budget`; from
then on `hold_reason` tells the runtime that no new model call may start. `reply y --budget
tokens=…` raises the limit that was reached and the run goes on; `reply n` ends the project
`failed` with the reason `budget`. An `hours` limit counts the wall time the project's runs
have been running (each run from its start to its latest model call).

A `usd` limit needs a price: while the model's price is unknown, it cannot be checked, and a
warning says so once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from typing import Any

from lightscientist_jupyter.controller import actions
from lightscientist_jupyter.controller.moves import Moves
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import StageTable
from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.values.usage import Usage, dollars, total
from lightscientist_jupyter.vocab import DecisionKind, EventType, ProjectStatus

PROJECT_KEYS = ("usd", "tokens", "hours")
STAGE_KEYS = ("usd", "tokens")
WARN_AT = 0.8
REASON = "budget"
"""The reason of a project ended at a budget decision (`reply n`)."""


def parse_limits(
    raw: str | Mapping[str, Any], keys: tuple[str, ...] = PROJECT_KEYS
) -> dict[str, float]:
    """`usd=5,tokens=2000000,hours=3` (or a table's mapping) as `{key: number}`; raises
    `ValueError` naming the part to fix."""
    if isinstance(raw, str):
        pairs = []
        for part in filter(None, (p.strip() for p in raw.split(","))):
            key, sep, value = part.partition("=")
            if not sep:
                raise ValueError(f"'{part}' must look like key=number, e.g. tokens=2000000")
            pairs.append((key.strip(), value.strip()))
    else:
        pairs = list(raw.items())
    limits: dict[str, float] = {}
    for key, value in pairs:
        if key not in keys:
            raise ValueError(f"unknown budget key '{key}' (known: {', '.join(keys)})")
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"budget {key}={value!r} is not a number") from None
        if number <= 0 or isinstance(value, bool):
            raise ValueError(f"budget {key}={value!r} must be a positive number")
        limits[key] = int(number) if key == "tokens" else number
    if not limits:
        raise ValueError(f"a budget needs at least one of {', '.join(keys)}")
    return limits


# ---------------------------------------------------------------------------- reading


def project_usage(state: ProjectState) -> Usage:
    return Usage.from_dict(state.usage.get("total"))


def stage_usage(state: ProjectState, stage: str) -> Usage:
    """A stage's usage over all its visits."""
    visits = state.usage.get("visits") or {}
    return total(Usage.from_dict(v) for k, v in visits.items() if k.rpartition("#")[0] == stage)


def visit_usage(state: ProjectState, task_id: str) -> Usage:
    return Usage.from_dict((state.usage.get("visits") or {}).get(task_id))


def hours(state: ProjectState) -> float:
    return sum(float(s) for s in (state.usage.get("runs") or {}).values()) / 3600


def stage_limits(state: ProjectState, table: StageTable, stage: str) -> dict[str, float]:
    mine = table[stage].budget if stage in table else {}
    return {**mine, **((state.budget.get("stages") or {}).get(stage) or {})}


def _checks(state: ProjectState, table: StageTable) -> Iterator[tuple[str, str, float, float]]:
    """(scope, key, limit, spent) of every limit that applies now (`usd` only when priced)."""
    used = project_usage(state)
    for key, limit in (state.budget.get("project") or {}).items():
        spent = {"usd": used.cost, "tokens": used.tokens, "hours": hours(state)}.get(key)
        if spent is not None:
            yield "project", key, float(limit), float(spent)
    if state.stage in table:
        mine = stage_usage(state, state.stage)
        for key, limit in stage_limits(state, table, state.stage).items():
            spent = {"usd": mine.cost, "tokens": mine.tokens}.get(key)
            if spent is not None:
                yield f"stage {state.stage}", key, float(limit), float(spent)


def shown(key: str, value: float) -> str:
    if key == "usd":
        return dollars(value)
    if key == "hours":
        return f"{value:.2f} h"
    return f"{int(value):,} tokens"


def hold_reason(state: ProjectState, table: StageTable) -> str | None:
    """Why no new model call may start (a budget is spent), or None."""
    if state.pending is not None and state.pending.kind == DecisionKind.BUDGET:
        return state.pending.question
    for scope, key, limit, spent in _checks(state, table):
        if spent >= limit:
            return f"the {scope} budget of {shown(key, limit)} is spent ({shown(key, spent)})"
    return None


# ---------------------------------------------------------------------------- the step


def charge(run: Moves, a: actions.Charge) -> None:
    """Add one model call to the totals, then check the limits."""
    add_call(run.state, a.call)
    run.save(soon=True)
    check(run, a.at)


def add_call(s: ProjectState, line: Mapping[str, Any]) -> None:
    """Add one ledger line (a model call) to the project's, its visit's and its run's totals."""
    call = Usage.from_dict(dict(line))
    s.usage["total"] = project_usage(s).plus(call).to_dict()
    key = str(line.get("task_id") or s.task_id)
    visits = s.usage.setdefault("visits", {})
    visits[key] = Usage.from_dict(visits.get(key)).plus(call).to_dict()
    if line.get("run"):
        runs = s.usage.setdefault("runs", {})
        runs[line["run"]] = max(float(runs.get(line["run"], 0)), float(line["run_s"]))


def catch_up(s: ProjectState, ledger: list[dict[str, Any]]) -> int:
    """Add the ledger's calls the totals do not count yet (a run killed before it wrote its
    latest totals: every call's line is written first); returns how many."""
    missing = ledger[project_usage(s).model_calls :]
    for line in missing:
        add_call(s, line)
    return len(missing)


def check(run: Moves, at: float) -> None:
    s = run.state
    warned = s.usage.setdefault("warned", [])
    if (s.budget.get("project") or {}).get("usd") and project_usage(s).cost is None:
        if "unpriced" not in warned:
            warned.append("unpriced")
            run.save()  # a warning is given once, also across a crash
            run.emit(
                EventType.BUDGET_WARNING,
                "the usd budget cannot be checked: the model's price is unknown "
                "(give one with --price in=…,out=…)",
                s.stage,
                s.task_id,
                {"scope": "project", "key": "usd", "limit": s.budget["project"]["usd"]},
            )
    for scope, key, limit, spent in _checks(s, run.table):
        data = {"scope": scope, "key": key, "limit": limit, "spent": spent}
        mark = f"{scope}:{key}:{limit}"
        if spent >= WARN_AT * limit and mark not in warned:
            warned.append(mark)
            run.save()
            run.emit(
                EventType.BUDGET_WARNING,
                f"{spent / limit:.0%} of the {scope} budget of {shown(key, limit)} is spent",
                s.stage,
                s.task_id,
                data,
            )
        if spent >= limit and s.status == ProjectStatus.RUNNING and s.pending is None:
            exceeded(run, data, at)


def exceeded(run: Moves, data: dict[str, Any], at: float) -> None:
    s = run.state
    scope, key, limit, spent = data["scope"], data["key"], data["limit"], data["spent"]
    used = project_usage(s)
    on_what = ", ".join(
        f"{k} {Usage.from_dict(v).tokens:,} tokens"
        for k, v in sorted((s.usage.get("visits") or {}).items())
    )
    question = (
        f"The {scope} budget of {shown(key, limit)} is spent ({shown(key, spent)}). "
        f"Raise it (reply y --budget {key}=…) or end the project (reply n)?"
    )
    run.emit(EventType.BUDGET_EXCEEDED, question, s.stage, s.task_id, data)
    run.wait_for(
        PendingDecision(
            id=run.next_decision_id(),
            kind=DecisionKind.BUDGET,
            stage=s.stage,
            question=question,
            summary=(
                f"Spent so far: {used.tokens:,} tokens in {used.model_calls} model calls"
                + ("" if used.cost is None else f", {dollars(used.cost)}")
                + f"; by stage visit: {on_what or 'none'}."
            ),
            details=dict(data),
            requested_at=at,
        )
    )


def raise_limits(s: ProjectState, scope: str, limits: Mapping[str, float]) -> None:
    """Set `limits` on `scope` (`project` or `stage X`); `hours` is always the project's."""
    budget = s.budget
    for key, value in limits.items():
        if scope == "project" or key not in STAGE_KEYS:
            budget.setdefault("project", {})[key] = value
        else:
            stage = scope.removeprefix("stage ")
            budget.setdefault("stages", {}).setdefault(stage, {})[key] = value


def set_budget(run: Moves, a: actions.SetBudget) -> None:
    """`--budget` of `research` / `resume`: the project's limits, or, for a project that
    ended at a budget decision, the limits of the scope that was spent."""
    s, scope = run.state, "project"
    if s.status == ProjectStatus.FAILED and s.reason == REASON:
        last = [d for d in s.decisions if d.get("kind") == DecisionKind.BUDGET]
        scope = str((last[-1] if last else {}).get("scope") or "project")
    raise_limits(s, scope, a.limits)
    run.save()


def raise_refusal(
    state: ProjectState, table: StageTable, limits: Mapping[str, float] | None
) -> str | None:
    """Why `reply y --budget LIMITS` cannot answer the budget decision pending in `state`: a
    limit would still be spent. One line naming what was spent and what was asked; None when
    the raise lets the project go on (or no budget decision is pending)."""
    pending = state.pending
    if pending is None or pending.kind != DecisionKind.BUDGET:
        return None
    trial = copy.deepcopy(state)
    raise_limits(trial, str(pending.details.get("scope") or "project"), limits or {})
    trial.pending = None
    spent_one = next(
        ((sc, k, lim, sp) for sc, k, lim, sp in _checks(trial, table) if sp >= lim), None
    )
    if spent_one is None:
        return None
    scope, key, limit, spent = spent_one
    spent_text = shown(key, spent)
    asked = ", ".join(f"{k}={v:g}" for k, v in (limits or {}).items())
    if not limits:
        what = f"the {scope} budget of {shown(key, limit)} is spent ({spent_text})"
    elif key in limits:
        what = f"--budget {asked} is not above what the {scope} has spent ({spent_text})"
    else:
        what = f"--budget {asked} leaves the {scope} budget of {shown(key, limit)} spent"
        what += f" ({spent_text})"
    return (
        f"{what}; answer `lightscientist reply y --budget {key}=N` with N above {spent_text}, "
        "or end the project with `reply n`"
    )


def decide(run: Moves, pending: PendingDecision, a: actions.Reply) -> None:
    """The user's answer to a budget decision: raise and go on, or end `failed`."""
    s = run.state
    details = pending.details
    if a.approve:
        refused = raise_refusal(s, run.table, a.budget)
        if refused:
            raise ControllerError(refused)
        raise_limits(s, str(details.get("scope") or "project"), a.budget or {})
        s.pending, s.status = None, ProjectStatus.RUNNING
        verdict = "raised to " + ", ".join(f"{k}={v:g}" for k, v in (a.budget or {}).items())
    else:
        s.pending, s.status, s.reason = None, ProjectStatus.FAILED, REASON
        verdict = "declined: the project ends"
    s.decisions.append(
        {
            "id": pending.id,
            "kind": str(DecisionKind.BUDGET),
            "stage": pending.stage,
            "approve": a.approve,
            "comment": a.comment,
            "to": None,
            "at": a.at,
            "source": str(a.source),
            "budget": dict(a.budget or {}),
            "scope": details.get("scope"),
        }
    )
    run.save()
    run.emit(
        EventType.USER_DECISION,
        f"budget {verdict}",
        pending.stage,
        s.task_id,
        {"id": pending.id, "approve": a.approve, "budget": dict(a.budget or {})},
    )
    run.respond(True, f"budget {verdict}; the project is {s.status}", pending.id)


def reopen_refusal(state: ProjectState, table: StageTable) -> str | None:
    """Why a project that ended at a budget cannot run again yet (`resume`), or None."""
    if state.status != ProjectStatus.FAILED or state.reason != REASON:
        return None
    still = hold_reason(state, table)
    if not still:
        return None
    return (
        f"the project ended at its budget ({still}); to go on, raise it: "
        "`lightscientist resume --budget tokens=…` (or usd=…, hours=…)"
    )
