"""The price of a model named as `--model` names it: the override, nothing for the offline
model, the recorded run's for a replay, `genai-prices`' for a `provider:model` it knows (see
`values.prices` for what a price is and how it is read); and the price of the model a coding
agent says it runs, by its bare name (`agent_model_price`)."""

from __future__ import annotations

from lightscientist_jupyter.values.prices import FREE, Price, parse_price


def price_for(spec: str, base_url: str | None = None, override: str | None = None) -> Price | None:
    """The price of the model `spec` (as `runtime.models.resolver.resolve_model` reads it): the
    override when given, nothing for the offline model, the recorded run's for a replay, the
    library's for a `provider:model` it knows; None when unknown."""
    if override:
        return parse_price(override)
    spec = (spec or "").strip()
    if spec == "offline" or spec.startswith("offline:"):
        return FREE
    if spec.startswith("replay:"):
        return recorded_price(spec.partition(":")[2].split(",")[0].strip())
    provider, sep, name = spec.partition(":")
    if base_url or not sep or not name:
        return None
    return _library_price(name, provider)


def _library_price(name: str, provider: str | None = None) -> Price | None:
    """`genai-prices`' price of the model `name` (of `provider`; None: the provider it finds
    by the name), or None when its snapshot does not know it."""
    try:
        from genai_prices import Usage, calc_price

        found = calc_price(Usage(input_tokens=1, output_tokens=1), name, provider_id=provider)
    except Exception:  # not in the snapshot (LookupError), or the library is missing
        return None
    return Price(
        0.0, 0.0, source="genai-prices", model=name, provider=provider or found.provider.id
    )


def recorded_price(path: str) -> Price | None:
    """The price a recorded run's calls were charged at (its first run line that names one);
    for a recording older than prices: nothing for the offline model's, unknown otherwise."""
    from lightscientist_jupyter.runtime.recording.recorder import (  # LangChain
        recording_files,
        run_headers,
    )

    headers = run_headers(recording_files(path) or [])
    for header in headers:
        if "price" in header:
            raw = header["price"]
            return Price.from_dict(raw) if isinstance(raw, dict) else None
    offline = [h for h in headers if str(h.get("model")).startswith("lightscientist-offline")]
    return FREE if headers and len(offline) == len(headers) else None


def agent_model_price(model: str) -> Price | None:
    """The price of the model a coding agent names (its session's model option: `gpt-5.1`,
    `claude-sonnet-4-5-20250929`, or with a reasoning effort after a slash, as Codex names
    its own: `gpt-5.1-codex/high`), from `genai-prices`, which finds the provider by the
    model's name; None when it knows no such model (an alias like `default` or `sonnet`)."""
    names = dict.fromkeys((model.strip(), model.strip().partition("/")[0]))
    return next(filter(None, (_library_price(name) for name in names if name)), None)
