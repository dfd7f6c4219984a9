"""What model calls cost: tokens, wall time and price, per call, with a gate before each call.

`UsageMeter` belongs to one runtime (one run of a project). Its hooks on the model calls are
LangChain's, in `usage_callback` (LangChain stays out of what layer 1 reads here):

- before a call starts, `gate()` (handed down from layer 1) may answer a reason to hold it:
  the call does not start, the graph's `BudgetMiddleware` raises `BudgetHold`, and the
  session keeps its turn for later (`WorkerSession` holds it; a resume continues from the
  checkpoint);
- when a call ends, its usage is read from the response's `usage_metadata` (input, output and
  cached input tokens), or estimated from the characters sent and received (characters / 4,
  flagged `estimated`) when the model reports none — the offline model does not (see
  `tokens`). The call is priced (`prices.Price`), appended to `.lightscientist/usage.jsonl`
  (one JSON line per call, append-only: the views fold it) and handed up through `on_charge`
  (layer 1 adds it to the stage visit's and the project's totals and checks the budgets).

A call that failed and was retried is counted once: only a call that ended with an answer
reaches `on_llm_end`, and a failed attempt reports no usage.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import append_text
from lightscientist_jupyter.runtime.metering.model_prices import agent_model_price
from lightscientist_jupyter.runtime.metering.tokens import tokens_of
from lightscientist_jupyter.values.prices import Price
from lightscientist_jupyter.values.usage import Usage


class BudgetHold(Exception):
    """A model call was not started: the project's budget is spent (the reason says how)."""


class UsageMeter:
    """Counts, prices and gates the model calls of one runtime.

    Args:
        ledger: the append-only file of calls (`.lightscientist/usage.jsonl`); None keeps
            nothing on disk.
        model: the model's name as shown in the views.
        price: what a million tokens cost; None: unknown (costs are shown as unknown).
        gate: returns why no new call may start (a budget is spent), or None.
        on_charge: receives each call's line (layer 1 adds it to its totals).
    """

    def __init__(
        self,
        ledger: Path | None = None,
        *,
        model: str = "",
        price: Price | None = None,
        gate: Callable[[], str | None] | None = None,
        on_charge: Callable[[dict[str, Any]], None] | None = None,
    ):
        self.ledger = ledger
        self.model = model
        self.price = price
        self.gate = gate or (lambda: None)
        self.on_charge = on_charge or (lambda call: None)
        self.run = f"r{int(time.time() * 1000)}"
        """This run's id (the `hours` budget sums the runs' elapsed times)."""
        self.started = time.time()
        self._lock = threading.Lock()

    def admit(self) -> None:
        """Raises `BudgetHold` when no new model call may start."""
        reason = self.gate()
        if reason:
            raise BudgetHold(reason)

    def charge(self, who: dict[str, Any], message: Any, sent: list[Any], wall_s: float) -> Usage:
        """Count one finished call: write its line, hand it up; returns its usage."""
        tin, tout, cached, estimated = tokens_of(message, sent)
        cost = self.price.cost(tin, tout, cached) if self.price is not None else None
        usage = Usage(
            input_tokens=tin,
            output_tokens=tout,
            cached_tokens=cached,
            model_calls=1,
            wall_s=wall_s,
            cost_usd=cost or 0.0,
            unpriced_calls=int(cost is None),
            estimated=int(estimated),
        )
        return self._write(who, usage, self.model)

    def charge_reported(
        self,
        who: dict[str, Any],
        reported: Usage | None,
        agent: str,
        wall_s: float,
        model: str | None = None,
    ) -> Usage:
        """Count one prompt turn of a coding agent, with the tokens it reported (`reported`),
        or none: then its tokens are "not reported" (`Usage.unreported`), never zero. Its
        cost is known when the agent named its `model` and the price table knows it
        (`agent_model_price`); otherwise it is unknown. Its line names the agent, and the
        model after a slash when the agent named one (`codex/gpt-5.1`)."""
        price = agent_model_price(model) if model and reported is not None else None
        cost = None
        if price is not None and reported is not None:
            cost = price.cost(reported.input_tokens, reported.output_tokens, reported.cached_tokens)
        usage = Usage(
            input_tokens=reported.input_tokens if reported else 0,
            output_tokens=reported.output_tokens if reported else 0,
            cached_tokens=reported.cached_tokens if reported else 0,
            model_calls=1,
            wall_s=wall_s,
            cost_usd=cost or 0.0,
            unpriced_calls=int(cost is None),
            unreported=int(reported is None),
        )
        return self._write(who, usage, f"{agent}/{model}" if model else agent)

    def _write(self, who: dict[str, Any], usage: Usage, model: str) -> Usage:
        now = time.time()
        line = {
            **who,
            "model": model,
            "at": round(now, 3),
            "run": self.run,
            "run_s": round(now - self.started, 3),
            **usage.to_dict(),
        }
        with self._lock:
            if self.ledger is not None:
                append_text(self.ledger, json.dumps(line) + "\n")
        self.on_charge(line)
        return usage
