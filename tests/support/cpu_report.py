"""Where the suite's time goes: the processor time each test file takes, with `--cpu-report`.

The whole suite is bound by the processor (`scripts/test` runs twice as many workers as there
are cores), so a test's wall time says little: it stretches with whatever runs beside it. Its
processor time does not. `--cpu-report=PATH` has each worker add, for every test (its set-up,
call and tear-down), the processor time of its own process and of the child processes that
ended in it (`getrusage`: a kernel, a server, a command, a run of the CLI once it is waited
for) to a JSON line in PATH; at the end the controlling process prints the files that took
most, with their wall time beside. A process a test leaves running, or one that detaches (a
run started in the background), is counted where it is waited for, or not at all: the
figures are a floor.

    scripts/test --cpu-report=test-output/cpu.jsonl
"""

from __future__ import annotations

import fcntl
import json
import resource
import time
from collections.abc import Generator
from pathlib import Path

import pytest

SHOWN = 30
"""How many files the summary lists."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--cpu-report",
        metavar="PATH",
        default=None,
        help="write each test's processor time (its process and the children it waited for) "
        "to PATH as JSON lines, and print the files that took most",
    )


def _cpu() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    path = item.config.getoption("--cpu-report")
    if not path:
        yield
        return
    cpu, wall = _cpu(), time.monotonic()
    yield
    line = {
        "test": item.nodeid,
        "cpu": round(_cpu() - cpu, 3),
        "wall": round(time.monotonic() - wall, 3),
    }
    with Path(path).open("a", encoding="utf-8") as out:  # every worker appends, one at a time
        fcntl.flock(out, fcntl.LOCK_EX)
        out.write(json.dumps(line) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--cpu-report")
    if path and not hasattr(config, "workerinput"):  # the controlling process, before workers
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text("", encoding="utf-8")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    path = terminalreporter.config.getoption("--cpu-report")
    if not path or hasattr(terminalreporter.config, "workerinput"):
        return
    files: dict[str, list[float]] = {}
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        test = json.loads(line)
        spent = files.setdefault(test["test"].split("::")[0], [0.0, 0.0, 0])
        spent[0] += test["cpu"]
        spent[1] += test["wall"]
        spent[2] += 1
    total = sum(s[0] for s in files.values())
    terminalreporter.section(f"processor time by file (from {path})")
    terminalreporter.write_line(f"{'cpu s':>8} {'share':>6} {'wall s':>8} {'tests':>5}  file")
    for name, (cpu, wall, tests) in sorted(files.items(), key=lambda f: -f[1][0])[:SHOWN]:
        share = cpu / total if total else 0.0
        terminalreporter.write_line(f"{cpu:8.1f} {share:6.1%} {wall:8.1f} {tests:5d}  {name}")
    terminalreporter.write_line(f"{total:8.1f} in all, {len(files)} files")
