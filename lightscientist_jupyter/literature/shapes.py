"""The shapes of the sources' answers: what each field a record is made from must be.

A source's record is built from a few fields of its JSON. A field that is missing or null is
a gap (the record lacks it); a field that is there with another type — a number for a title,
an object for an author list — means the answer is not what the adapter was written for (the
API changed, a proxy or a captive portal answered), and a record built from it would be junk.
`problem` finds the first such field and says where it is, so the adapter refuses the answer
with an error naming the source and the field instead.

A shape is a type (or a tuple of types), `[shape]` (a list whose items have that shape), or
`{"field": shape}` (an object whose named fields have those shapes; others are not looked at).
"""

from __future__ import annotations

from typing import Any

Shape = Any
"""A type, a tuple of types, a one-item list `[shape]`, or a dict of field shapes."""

TEXT = str
WHOLE = int
NUMBER = (int, float)


def problem(value: Any, shape: Shape, where: str) -> str | None:
    """What is wrong with `value` against `shape` (`where` names it), or None."""
    if value is None:
        return None
    if isinstance(shape, dict):
        if not isinstance(value, dict):
            return f"{where} is {_kind(value)}, not an object"
        for field, inner in shape.items():
            found = problem(value.get(field), inner, f"{where}'s '{field}'")
            if found:
                return found
        return None
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} is {_kind(value)}, not a list"
        for n, item in enumerate(value, 1):
            found = problem(item, shape[0], f"{where} item {n}")
            if found:
                return found
        return None
    if isinstance(value, bool) or not isinstance(value, shape):
        return f"{where} is {_kind(value)}, not {_kind_of(shape)}"
    return None


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    return "a list" if isinstance(value, list) else "an object"


def _kind_of(shape: Shape) -> str:
    if shape is str:
        return "text"
    return "a whole number" if shape is int else "a number"
