"""Usage and budgets for the front doors: the run's meter, `--budget`, the `usage` views.

The meter (`runtime.metering.meter.UsageMeter`) is wired here, at the composition root: its gate is
the controller's `budget_hold`, its charges go to the controller's `charge`, its price comes
from `--price` or the price library (`runtime.metering.model_prices`). The views fold the ledger
(`.lightscientist/usage.jsonl`, one line per model call) by stage, worker or model; the totals
of `status --json` come from the controller's state.
"""

from __future__ import annotations

import dataclasses
import os
from typing import Any

from lightscientist_jupyter.controller import budget as budgets
from lightscientist_jupyter.controller.controller import ResearchController
from lightscientist_jupyter.controller.state import ProjectState, load_state
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.metering.model_prices import price_for
from lightscientist_jupyter.values.prices import parse_price
from lightscientist_jupyter.values.usage import LEDGER, Usage, dollars, read_ledger, total
from lightscientist_jupyter.workspace import Workspace

BY = ("stage", "worker", "model", "visit")
SETTLE_S = 180.0
"""How long a run stopped by a budget waits for its running turns to reach their next model
call (where they are held) before it returns."""


def parse_budget(text: str | None) -> dict[str, float]:
    """`--budget usd=…,tokens=…,hours=…` as limits ({} for none); `BadInput` naming the part."""
    if not text:
        return {}
    try:
        return budgets.parse_limits(text)
    except ValueError as exc:
        raise BadInput(
            f"--budget {text}: {exc} (e.g. --budget usd=5,tokens=2000000,hours=3)"
        ) from None


def reply_budget(raw: Any) -> dict[str, float] | None:
    """A reply's `budget` from the side panel or a card (`{"tokens": 4000}` or
    `"tokens=4000"`) as limits; None when absent; `BadInput` naming what to fix."""
    if raw in (None, "", {}):
        return None
    if not isinstance(raw, dict | str):
        raise BadInput('budget must be an object like {"tokens": 4000000} or "tokens=4000000"')
    try:
        return budgets.parse_limits(raw)
    except ValueError as exc:
        raise BadInput(f"budget: {exc}") from None


def check_options(budget: str | None, price: str | None) -> None:
    """`BadInput` for a `--budget` or a `--price` that does not parse (before any work)."""
    parse_budget(budget)
    if price:
        parse_price(price)


def open_meter(
    workspace: Workspace,
    controller: ResearchController,
    spec: str,
    base_url: str | None,
    price: str | None,
) -> UsageMeter:
    """The run's meter: ledger in the workspace, gate and charges through the controller."""
    return UsageMeter(
        workspace.state_dir / LEDGER,
        model=spec,
        price=price_for(spec, base_url, price),
        gate=controller.budget_hold,
        on_charge=controller.charge,
    )


def settle(project: Any) -> None:
    """After a stage stopped at a budget decision: let the turns still running end (each stops
    at its next model call, held), so that closing the run cuts none of them short."""
    runtime = project.supervisor.runtime
    for worker_id in runtime.live_workers():
        if runtime.is_active(worker_id):
            runtime.wait(worker_id, SETTLE_S)


# ---------------------------------------------------------------------------- the views


def status_usage(state: ProjectState) -> dict[str, Any]:
    """`status --json`'s `usage`: the project's totals, its limits, and `cost` ("unknown"
    while a call had no known price)."""
    used = budgets.project_usage(state)
    out = used.to_dict()
    out["cost"] = "unknown" if used.cost is None else round(used.cost, 6)
    out["budget"] = dict(state.budget.get("project") or {})
    out["hours"] = round(budgets.hours(state), 4)
    return out


def panel_usage(state: ProjectState) -> dict[str, Any]:
    """The side panel's `usage`: the project's totals (as `status_usage`) and each stage's."""
    stages = {k.rpartition("#")[0] for k in state.usage.get("visits") or {}}

    def worded(used: Usage, figures: dict[str, Any]) -> dict[str, Any]:
        return {**figures, "cost_words": dollars(used.cost)}  # the panel words no money itself

    return {
        "total": worded(budgets.project_usage(state), status_usage(state)),
        "stages": {
            s: worded(used, used.to_dict())
            for s in sorted(stages)
            for used in [budgets.stage_usage(state, s)]
        },
    }


@dataclasses.dataclass(frozen=True)
class UsageRow:
    """One line of `lightscientist usage`: a stage, a worker, a model or a stage visit."""

    key: str
    usage: Usage

    def to_dict(self) -> dict[str, Any]:
        out = {"key": self.key, **self.usage.to_dict()}
        out["cost"] = "unknown" if self.usage.cost is None else round(self.usage.cost, 6)
        return out


@dataclasses.dataclass(frozen=True)
class UsageView:
    by: str
    rows: tuple[UsageRow, ...]
    total: Usage
    budget: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "by": self.by,
            "rows": [r.to_dict() for r in self.rows],
            "total": UsageRow("total", self.total).to_dict(),
            "budget": self.budget,
        }


def usage_view(root: str | os.PathLike[str], by: str = "stage") -> UsageView:
    """The project's model calls in `root`, summed by `by` (stage, worker, model, visit)."""
    if by not in BY:
        raise BadInput(f"--by {by}: choose one of {', '.join(BY)}")
    workspace = Workspace.at(root)
    state = load_state(workspace.state_file)
    groups: dict[str, list[Usage]] = {}
    for call in read_ledger(workspace.state_dir / LEDGER):
        key = {
            "stage": call.get("stage") or "(none)",
            "worker": call.get("worker") or "?",
            "model": call.get("model") or "?",
            "visit": call.get("task_id") or "(none)",
        }[by]
        groups.setdefault(str(key), []).append(Usage.from_dict(call))
    rows = tuple(UsageRow(k, total(v)) for k, v in groups.items())
    return UsageView(by, rows, budgets.project_usage(state), dict(state.budget))


def render(view: UsageView) -> list[str]:
    """`lightscientist usage` as text lines (a table and a total)."""
    lines = [f"{view.by:<24} {'calls':>6} {'in':>10} {'out':>9} {'wall s':>8}  cost"]
    for row in (*view.rows, UsageRow("total", view.total)):
        u = row.usage
        cost = dollars(u.cost, unknown="unknown")
        est = " (estimated)" if u.estimated else ""
        if u.unreported and u.unreported == u.model_calls:
            lines.append(f"{row.key:<24} {u.model_calls:>6}  usage not reported")
            continue
        if u.unreported:
            est += f" ({u.unreported} call(s): usage not reported)"
        lines.append(
            f"{row.key:<24} {u.model_calls:>6} {u.input_tokens:>10,} {u.output_tokens:>9,} "
            f"{u.wall_s:>8.1f}  {cost}{est}"
        )
    if view.budget.get("project"):
        limits = ", ".join(f"{k}={v:g}" for k, v in view.budget["project"].items())
        lines.append(f"budget: {limits}")
    return lines
