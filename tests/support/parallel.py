"""The order test files are handed to parallel workers: the heaviest first.

`scripts/test` runs the suite with pytest-xdist, a file at a time (`--dist loadfile`, so that
a fixture a file's tests share runs once). A worker that takes a long file last keeps the
others waiting: the suite then ends with one worker busy and the rest idle. Handing out the
long files first fills the end with short ones instead. How long a file takes is read from its
marks, the same in every worker (they must collect the same order): a test in a browser or a
fresh virtual environment is the heaviest, a `slow` one (a whole project, a wheel, a
benchmark) next, any other light. xdist's own order (by the number of tests) would send a file
of many quick unit tests first.

Run without workers, the suite keeps pytest's order.
"""

from __future__ import annotations

import pytest

WEIGHTS = (("binder", 60), ("browser", 30), ("slow", 10))
"""A test's weight by its heaviest mark; a test with none of them weighs 1."""


def weight(item: pytest.Item) -> int:
    for mark, heavy in WEIGHTS:
        if item.get_closest_marker(mark) is not None:
            return heavy
    return 1


def _parallel(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput") or bool(getattr(config.option, "numprocesses", None))


def pytest_configure(config: pytest.Config) -> None:
    if _parallel(config) and hasattr(config.option, "loadscopereorder"):
        config.option.loadscopereorder = False  # keep the order below


@pytest.hookimpl(trylast=True)  # once every mark is on (support.slow adds `slow`)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _parallel(config):
        return
    files: dict[str, int] = {}
    for item in items:
        files[_file(item)] = files.get(_file(item), 0) + weight(item)
    rank = {name: place for place, name in enumerate(sorted(files, key=lambda f: -files[f]))}
    items.sort(key=lambda item: rank[_file(item)])  # stable: a file keeps its tests' order


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]
