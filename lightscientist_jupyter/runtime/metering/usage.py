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

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import append_text, read_text
from lightscientist_jupyter.runtime.metering.prices import Price
from lightscientist_jupyter.runtime.metering.tokens import tokens_of

LEDGER = "usage.jsonl"


class BudgetHold(Exception):
    """A model call was not started: the project's budget is spent (the reason says how)."""


@dataclasses.dataclass(frozen=True)
class Usage:
    """Totals of some model calls (one call, a worker, a stage visit, a project)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens served from the provider's cache (part of `input_tokens`)."""
    model_calls: int = 0
    wall_s: float = 0.0
    cost_usd: float = 0.0
    """The cost of the priced calls."""
    unpriced_calls: int = 0
    """Calls with no known price: while there is one, the total cost is unknown."""
    estimated: int = 0
    """Calls whose tokens were estimated from characters (the model reported none)."""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    @property
    def cost(self) -> float | None:
        """The total cost in USD, or None when some call had no known price."""
        return None if self.unpriced_calls else self.cost_usd

    def plus(self, other: Usage) -> Usage:
        return Usage(
            **{
                f.name: getattr(self, f.name) + getattr(other, f.name)
                for f in dataclasses.fields(self)
            }
        )

    def to_dict(self) -> dict[str, Any]:
        """As JSON: the counters, `tokens`, and `cost_usd` (null when unknown)."""
        raw = dataclasses.asdict(self)
        raw.update(
            tokens=self.tokens,
            wall_s=round(self.wall_s, 3),
            cost_usd=None if self.cost is None else round(self.cost_usd, 6),
        )
        return raw

    @classmethod
    def from_dict(cls, raw: dict[str, Any] | None) -> Usage:
        """Read `to_dict`'s form back (a null cost counts as one unpriced call)."""
        raw = raw or {}
        cost = raw.get("cost_usd")
        return cls(
            input_tokens=int(raw.get("input_tokens") or 0),
            output_tokens=int(raw.get("output_tokens") or 0),
            cached_tokens=int(raw.get("cached_tokens") or 0),
            model_calls=int(raw.get("model_calls") or 0),
            wall_s=float(raw.get("wall_s") or 0.0),
            cost_usd=float(cost or 0.0),
            unpriced_calls=int(raw.get("unpriced_calls") or (1 if cost is None and raw else 0)),
            estimated=int(raw.get("estimated") or 0),
        )


def total(usages: Iterable[Usage]) -> Usage:
    out = Usage()
    for usage in usages:
        out = out.plus(usage)
    return out


def usage_line(raw: dict[str, Any] | None) -> str | None:
    """One line for some usage (a PROCESS.md entry's last): tokens and cost; None for none."""
    used = Usage.from_dict(raw)
    if not used.model_calls:
        return None
    cost = "cost unknown" if used.cost is None else f"${used.cost:.4f}"
    est = " (estimated)" if used.estimated else ""
    return (
        f"{used.tokens:,} tokens{est} ({used.input_tokens:,} in, {used.output_tokens:,} out) "
        f"in {used.model_calls} model call(s), {cost}"
    )


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
        now = time.time()
        line = {
            **who,
            "model": self.model,
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


def read_ledger(path: Path) -> list[dict[str, Any]]:
    """The calls in a ledger, oldest first (a line cut by a crash is skipped)."""
    try:
        text = read_text(path)
    except FileNotFoundError:
        return []
    calls = []
    for line in text.splitlines():
        try:
            raw = json.loads(line)
        except ValueError:
            continue
        if isinstance(raw, dict):
            calls.append(raw)
    return calls
