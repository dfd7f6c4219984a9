"""The unit tier: the pure cores' tests, a contributor's answer in well under 30 s.

`scripts/test -m unit` runs the tests of the modules below: the stage machine, its rules,
the loader, the state file, the budgets' arithmetic, the event bus and log, the graph's
layout, the status words, the server's answers against the panel's interfaces, the
supervisor's decisions and prompts, the guarded path, and the house's own checks (imports,
sizes, public seams, links to documents). Tests that open a whole controller (its history is
a git repository) are not unit tests.

A unit test starts no process: one that does fails, naming the command, so the tier stays
fast as tests are added to its modules. A test elsewhere may join with `@pytest.mark.unit`.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support.slow import WHOLE_PROJECT

UNIT_MODULES = (
    "controller/test_machine.py",
    "controller/test_rules.py",
    "controller/test_loader.py",
    "controller/test_state.py",
    "controller/test_budget.py",
    "controller/test_search.py",
    "controller/test_review.py",
    "events/test_bus.py",
    "events/test_jsonl.py",
    "events/test_jsonl_encoding.py",
    "events/test_printer.py",
    "jupyter/test_layout.py",
    "jupyter/test_look.py",
    "jupyter/test_markdown_diff.py",
    "jupyter/test_server_answers.py",
    "supervisor/test_decisions.py",
    "supervisor/test_loop_state.py",
    "supervisor/test_prompts.py",
    "supervisor/test_updates.py",
    "runtime/test_update_order.py",
    "runtime/test_worker_record.py",
    "test_imports.py",
    "test_house.py",
    "test_public_seams.py",
    "test_doc_links.py",
    "test_beneath.py",
)
"""Paths under tests/ of the modules whose tests are unit tests (but those marked slow)."""

TESTS = Path(__file__).resolve().parents[1]


def is_unit(item: pytest.Item) -> bool:
    try:
        rel = item.path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return False
    slow = item.get_closest_marker("slow") or WHOLE_PROJECT & set(getattr(item, "fixturenames", ()))
    return rel in UNIT_MODULES and not slow


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """With `-m unit` alone, the other test modules are not even imported (collecting the
    whole suite imports LangChain, LangGraph and JupyterLab's server: most of the time)."""
    if config.getoption("markexpr", "") != "unit" or collection_path.suffix != ".py":
        return None
    try:
        rel = collection_path.resolve().relative_to(TESTS).as_posix()
    except ValueError:
        return None
    if rel.rsplit("/", 1)[-1].startswith("test_") and rel not in UNIT_MODULES:
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by the marks
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if is_unit(item):
            item.add_marker(pytest.mark.unit)


class _NoProcess(subprocess.Popen):  # type: ignore[type-arg]
    def __init__(self, args: Any, *rest: Any, **options: Any) -> None:
        raise AssertionError(f"a unit test started a process: {args!r} (mark it slow, or move it)")


@pytest.fixture(autouse=True)
def _unit_tests_start_no_process(request: pytest.FixtureRequest) -> Iterator[None]:
    if request.node.get_closest_marker("unit") is None:
        yield
        return
    real = subprocess.Popen
    subprocess.Popen = _NoProcess  # type: ignore[misc]
    try:
        yield
    finally:
        subprocess.Popen = real  # type: ignore[misc]
