"""What model calls used: the `Usage` totals (tokens, calls, wall time, cost) that layer 1
adds up against the budgets and layer 3's meter writes, one line per call, into the ledger
`.lightscientist/usage.jsonl` (`LEDGER`, read back by `read_ledger`)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from lightscientist_jupyter._fs import read_text

LEDGER = "usage.jsonl"


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
    unreported: int = 0
    """Turns of a coding agent that reported no usage: their tokens are not known (shown as
    "usage not reported", never as zero) and their cost is unknown."""

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
            unreported=int(raw.get("unreported") or 0),
        )


def total(usages: Iterable[Usage]) -> Usage:
    out = Usage()
    for usage in usages:
        out = out.plus(usage)
    return out


def dollars(cost: float | None, *, unknown: str = "cost unknown") -> str:
    """A cost in the words every view uses: `$0` when nothing was charged (the offline model, a
    free one), four decimals under a dollar (`$0.0123`), cents from one (`$12.34`); `unknown`
    when a call had no price."""
    if cost is None:
        return unknown
    if cost == 0:
        return "$0"
    return f"${cost:.4f}" if cost < 1 else f"${cost:.2f}"


def usage_line(raw: dict[str, Any] | None) -> str | None:
    """One line for some usage (a PROCESS.md entry's last): tokens and cost; None for none."""
    used = Usage.from_dict(raw)
    if not used.model_calls:
        return None
    cost = dollars(used.cost)
    est = " (estimated)" if used.estimated else ""
    return (
        f"{used.tokens:,} tokens{est} ({used.input_tokens:,} in, {used.output_tokens:,} out) "
        f"in {used.model_calls} model call(s), {cost}"
    )


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
