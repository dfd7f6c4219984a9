"""The `slow` mark for every test that runs a whole project through a fixture.

A fixture that runs a whole research project (to a gate, a budget stop or `done`) is declared
with `@whole_project`; each test that uses it, directly or through another fixture, is marked
`slow`, so that CONTRIBUTING's fast suite (`-m "not slow ..."`) leaves it out. The fixture
says it once, where it is written, instead of each test that uses it (a test that forgot it
put a whole project into the fast suite).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import pytest

F = TypeVar("F", bound=Callable[..., object])

WHOLE_PROJECT: set[str] = set()
"""The names of the fixtures that run a whole project."""


def whole_project(fixture: F) -> F:
    """Declare `fixture` (the function, under `@pytest.fixture`) as running a whole project."""
    WHOLE_PROJECT.add(fixture.__name__)
    return fixture


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if WHOLE_PROJECT & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
