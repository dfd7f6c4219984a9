"""How many tokens a model call used: the model's own report, else an estimate.

A call's usage is read from the answer's `usage_metadata` (input, output and cached input
tokens), or estimated from the characters sent and received (characters / 4, flagged
`estimated`) when the model reports none — the offline model does not. The meter
(`usage.UsageMeter`) charges what this says; a recording keeps it (`recorded_usage`), so a
replay is charged the same.
"""

from __future__ import annotations

import json
from typing import Any

CHARS_PER_TOKEN = 4
ESTIMATED = "ls_usage_estimated"
"""The response-metadata key of an answer whose usage is an estimate (`recorded_usage`)."""


def message_chars(messages: list[Any]) -> int:
    """Characters of a model input: contents plus serialized tool calls."""
    total = 0
    for m in messages:
        content = getattr(m, "content", "")
        total += len(content if isinstance(content, str) else json.dumps(content, default=str))
        calls = getattr(m, "tool_calls", None)
        if calls:
            total += len(json.dumps(calls, default=str))
    return total


def tokens_of(message: Any, sent: list[Any]) -> tuple[int, int, int, bool]:
    """(input, output, cached, estimated) of one answer: from its `usage_metadata` (estimated
    when its metadata says so: a replay of an estimate), else characters / 4 of what was sent
    and what came back."""
    meta = getattr(message, "usage_metadata", None) or {}
    if meta.get("input_tokens") or meta.get("output_tokens"):
        details = meta.get("input_token_details") or {}
        return (
            int(meta.get("input_tokens") or 0),
            int(meta.get("output_tokens") or 0),
            int(details.get("cache_read") or 0),
            bool((getattr(message, "response_metadata", None) or {}).get(ESTIMATED)),
        )
    out_chars = message_chars([message]) if message is not None else 0
    return (
        -(-message_chars(sent) // CHARS_PER_TOKEN),
        -(-out_chars // CHARS_PER_TOKEN),
        0,
        True,
    )


def recorded_usage(message: Any, sent: list[Any]) -> dict[str, Any] | None:
    """What a recording keeps of a call's usage: the model's report, or the estimate it was
    charged (flagged `estimated`), so that its replay is charged the same whatever the
    replayed commands printed."""
    tin, tout, _, estimated = tokens_of(message, sent)
    if estimated:
        return {
            "input_tokens": tin,
            "output_tokens": tout,
            "total_tokens": tin + tout,
            "estimated": True,
        }
    meta = getattr(message, "usage_metadata", None)
    return dict(meta) if meta else None
