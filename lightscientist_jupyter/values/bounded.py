"""Integer settings of a stage table's inline tables (`search = {…}`, `review = {…}`), read
with their defaults and checked against their bounds, each wrong one named."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def bounded_ints(
    raw: Mapping[str, Any], bounds: Mapping[str, tuple[int, int, int]], problems: list[str]
) -> dict[str, int]:
    """Each key of `bounds` (`key: (default, low, high)`) read from `raw`: the integers within
    their bounds; every other value is a line added to `problems` naming the key."""
    values: dict[str, int] = {}
    for key, (default, low, high) in bounds.items():
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            problems.append(f"'{key}' must be an integer from {low} to {high}, not {value!r}")
        else:
            values[key] = value
    return values
