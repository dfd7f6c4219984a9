"""What a million tokens of a model cost, from `--price` or the `genai-prices` library.

`genai-prices` (maintained by the pydantic team) ships a snapshot of the providers' prices
inside the package; `calc_price` reads that snapshot and never goes to the network (only its
`UpdatePrices` fetches newer data, and it is never started here). A model the snapshot does not
know, or a model served from a base URL (a local or compatible server, whose price nobody can
know), has no price unless `--price in=…,out=…[,cached=…]` gives one: its cost is unknown,
never a guess. The offline model costs nothing. A replay (`replay:PATH`) costs what the
recorded run did: its calls carry the recorded usage, and the recording's run line the price
they were charged at (`recording.Recorder`), so a replay writes the same tokens and cost — in
PROCESS.md too — as the run it replays.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lightscientist_jupyter.errors import BadInput

PRICE_KEYS = ("in", "out", "cached")


@dataclasses.dataclass(frozen=True)
class Price:
    """USD per million tokens: input, output, and cached input (None: the input price)."""

    input: float
    output: float
    cached: float | None = None
    source: str = "--price"
    """Where it came from: `--price`, `genai-prices`, `free`."""
    model: str = ""
    provider: str | None = None
    """For `genai-prices`: the model and provider it prices (it computes the cost itself)."""

    def cost(self, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float:
        """The USD cost of one call (cached tokens are part of `input_tokens`)."""
        if self.source == "genai-prices":
            return _library_cost(self, input_tokens, output_tokens, cached_tokens)
        cached = self.input if self.cached is None else self.cached
        fresh = max(0, input_tokens - cached_tokens)
        return (fresh * self.input + cached_tokens * cached + output_tokens * self.output) / 1e6

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "in": self.input,
            "out": self.output,
            "cached": self.cached,
            "source": self.source,
        }
        if self.source == "genai-prices":
            out.update(model=self.model, provider=self.provider)
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Price:
        """Read `to_dict`'s form back (a recording's run line)."""
        cached = raw.get("cached")
        return cls(
            float(raw.get("in") or 0.0),
            float(raw.get("out") or 0.0),
            None if cached is None else float(cached),
            source=str(raw.get("source") or "--price"),
            model=str(raw.get("model") or ""),
            provider=raw.get("provider"),
        )


FREE = Price(0.0, 0.0, 0.0, source="free")


def parse_price(text: str) -> Price:
    """`in=…,out=…[,cached=…]` (USD per million tokens) as a `Price`; `BadInput` naming the
    part to fix otherwise."""
    values: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, sep, value = part.partition("=")
        key = key.strip()
        if not sep or key not in PRICE_KEYS:
            raise BadInput(
                f"--price part '{part}' must be in=USD, out=USD or cached=USD "
                "(per million tokens), e.g. --price in=0.4,out=1.6"
            )
        try:
            number = float(value)
        except ValueError:
            raise BadInput(f"--price {key}={value}: '{value}' is not a number") from None
        if number < 0:
            raise BadInput(f"--price {key}={value}: a price cannot be negative")
        values[key] = number
    missing = [k for k in ("in", "out") if k not in values]
    if missing:
        raise BadInput(f"--price '{text}' lacks {' and '.join(missing)}= (USD per million tokens)")
    return Price(values["in"], values["out"], values.get("cached"))


def _library_cost(price: Price, input_tokens: int, output_tokens: int, cached: int) -> float:
    from genai_prices import Usage, calc_price

    usage = Usage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=cached)
    return float(calc_price(usage, price.model, provider_id=price.provider).total_price)
