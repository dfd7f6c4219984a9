"""What the dashboard shows of usage and budgets: the header's cost-and-tokens chip, and the
card of a pending `budget` decision.

The words come from the controller's state (`state.usage`, `state.budget`), so a dashboard
drawn from disk shows the same figures as `lightscientist status`.

The card (`BudgetActions`, drawn by `labextension/src/widgets/budget.ts`) says what was
spent, on what (by stage visit), and the limit reached, with a field for the new limit,
*Raise and resume* (`reply y --budget KEY=N`) and *Stop* (`reply n`). A click goes through
the server extension's reply endpoint with a `budget` field (`app.usage.reply_budget` reads
it), like the gate card's; only without a server extension through the comm (`source.reply`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypedDict

import anywidget
import traitlets

from lightscientist_jupyter._fs import NO_LINKS
from lightscientist_jupyter.app import usage as usages
from lightscientist_jupyter.controller import budget as budgets
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.jupyter.dashboard.widgets import THEME_CSS, esm
from lightscientist_jupyter.jupyter.graph_view import spend_words
from lightscientist_jupyter.values.usage import LEDGER, Usage, dollars
from lightscientist_jupyter.vocab import DecisionKind, ReplySource

RAISE_BY = 2
"""The new limit the field suggests: this many times the one reached."""


class BudgetCardView(TypedDict):
    """A pending budget decision as its card shows it (`IBudgetCardView` in
    `labextension/src/widgets/views.ts`)."""

    id: str
    stage: str
    scope: str
    key: str
    limit: float
    spent_value: float
    heading: str
    spent: str
    on_what: str
    suggested: float
    """The new limit the field proposes."""
    settled: bool


def usage_words(state: ProjectState) -> str:
    """`12,345 tokens · $0.0123` (or `cost unknown`), with the project's limits when set."""
    used = budgets.project_usage(state)
    if not used.model_calls:
        return ""
    est = " (est.)" if used.estimated else ""
    cost = dollars(used.cost)
    words = f"{used.tokens:,} tokens{est} · {cost}"
    if used.unreported == used.model_calls:  # a coding agent's turns: never shown as zero
        words = "usage not reported"
    elif used.unreported:
        words = f"{used.tokens:,} tokens{est} ({used.unreported} not reported) · {cost}"
    limits = state.budget.get("project") or {}
    if limits:
        words += " · budget " + ", ".join(budgets.shown(k, v) for k, v in limits.items())
    return words


def card_of(pending: PendingDecision | None) -> BudgetCardView | None:
    """The synced `card` of `BudgetActions` (None: no budget decision pending, the card is
    hidden)."""
    if pending is None or pending.kind != DecisionKind.BUDGET:
        return None
    d = pending.details
    key, limit = str(d.get("key") or "tokens"), float(d.get("limit") or 0)
    suggested = limit * RAISE_BY
    return {
        "id": pending.id,
        "stage": pending.stage,
        "scope": str(d.get("scope") or "project"),
        "key": key,
        "limit": limit,
        "spent_value": float(d.get("spent") or 0),
        "heading": f"Budget: the {d.get('scope') or 'project'} budget of "
        f"{budgets.shown(key, limit)} is spent",
        "spent": pending.summary.partition("; by stage visit:")[0],
        "on_what": "By stage visit:" + pending.summary.partition("; by stage visit:")[2],
        "suggested": int(suggested) if key == "tokens" else round(suggested, 2),
        "settled": False,
    }


class BudgetActions(anywidget.AnyWidget):
    """The budget decision's card (see the module's docstring)."""

    _esm = esm("budget")
    _css = THEME_CSS

    card = traitlets.Dict().tag(sync=True)
    root = traitlets.Unicode("").tag(sync=True)
    outcome = traitlets.Dict().tag(sync=True)

    def __init__(self, source: Any, **kwargs: Any):
        super().__init__(root=str(source.workspace.root), **kwargs)
        self.source = source
        self.on_msg(self._message)

    def show(self, state: ProjectState | None) -> None:
        """Draw the pending budget decision of `state`, or settle / hide the card."""
        card = card_of(state.pending if state is not None else None)
        if card is not None and card["id"] == self.card.get("id"):
            return
        if card is None and self.card and not self.card.get("settled") and state is not None:
            answer = next((d for d in state.decisions if d.get("id") == self.card["id"]), None)
            verdict = "the decision is no longer pending"
            if answer is not None:
                raised = ", ".join(f"{k}={v:g}" for k, v in (answer.get("budget") or {}).items())
                verdict = f"raised to {raised}" if answer.get("approve") else "stopped"
            text = f"budget {self.card['id']}: {verdict} (the project is {state.status})"
            self.outcome = {"state": "settled", "text": text}
            self.card = {**self.card, "settled": True}
            return
        if card is not None:
            self.outcome = {}
            self.card = dict(card)

    def _message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("kind") != "reply":
            return
        try:
            sent = self.source.reply(
                bool(content.get("approve")),
                "",
                None,
                decision_id=str(content.get("decision_id") or "") or None,
                source=ReplySource.WIDGET,
                resume_if_idle=True,
                budget=usages.reply_budget(content.get("budget")),
            )
            self.send({"kind": "outcome", "ok": True, "text": sent.message})
        except Exception as exc:  # the card must hear back, whatever went wrong
            self.send({"kind": "outcome", "ok": False, "text": f"not applied: {exc}"})


class WorkerSpend:
    """Each worker's tokens and cost, from the ledger (`usage.jsonl`), read on from where the
    last look stopped (the worker table's column)."""

    def __init__(self, state_dir: Path):
        self.ledger = state_dir / LEDGER
        self._at = 0
        self._by: dict[str, Usage] = {}

    def words(self) -> dict[str, str]:
        """worker id → `1,234 tok · $0.0012` (or `cost unknown`)."""
        try:
            with NO_LINKS.open_read(self.ledger) as f:
                f.seek(self._at)
                chunk = f.read()
        except OSError:
            chunk = b""
        end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next look
        self._at += end
        for line in chunk[:end].splitlines():
            try:
                call = json.loads(line)
            except ValueError:
                continue
            who = str(call.get("worker") or "?")
            self._by[who] = self._by.get(who, Usage()).plus(Usage.from_dict(call))
        return {w: spend_words(u) for w, u in self._by.items()}
