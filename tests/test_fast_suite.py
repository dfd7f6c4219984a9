"""CONTRIBUTING's fast suite leaves out every test that runs a whole project: a fixture that
runs one is declared `@whole_project` (`support/slow.py`) and marks its tests `slow`. Before,
the tests using the magic's finished project or the recorded real run were in the fast suite,
which took 4.4 minutes instead of the 2 CONTRIBUTING promised."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
SLOW_MARKS = ("slow", "browser", "binder")
"""The marks CONTRIBUTING's fast suite leaves out."""
FAST = " and ".join(f"not {mark}" for mark in SLOW_MARKS)
"""CONTRIBUTING's fast suite, as `-m` reads it: `not slow and not browser and not binder`."""
WHOLE_PROJECT = {
    "done",  # jupyter/test_magic.py: `research --mode auto` to done
    "real_recording",  # support/real_run.py: a run through ChatOpenAI, recorded
    "at_gate",
    "rejected",
    "finished",
    "waiting_project",
    "at_budget",
}
"""Fixtures that run a whole project (each is declared `@whole_project`)."""

COLLECT = """
import json, sys, pytest

class Report:
    def pytest_collection_finish(self, session):
        from support.slow import WHOLE_PROJECT  # once pytest has imported it as a plugin
        used = {i.nodeid: sorted(i.fixturenames) for i in session.items}
        print("REPORT " + json.dumps({"declared": sorted(WHOLE_PROJECT), "used": used}))

sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", sys.argv[1],
                      sys.argv[2]], plugins=[Report()]))
"""


def _fast_suite(config: pytest.Config, items: list[pytest.Item]) -> dict:
    """The fixtures declared `@whole_project` (`declared`) and the fast suite's tests with
    the fixtures each uses (`used`): this session's own when it collected the whole suite
    (a full run, `scripts/test`), else collected in a process of its own (about 15 s: this
    file run alone, or a part of the suite)."""
    whole = (
        [Path(arg).resolve() for arg in config.args] == [TESTS]
        and not config.option.keyword
        and not config.option.markexpr
        and not config.getoption("deselect")
    )
    if whole:
        # FAST, as `-m` reads it: marks a whole project's fixture added are on the items
        from support.slow import WHOLE_PROJECT as declared

        fast = [i for i in items if not any(i.get_closest_marker(m) for m in SLOW_MARKS)]
        used = {i.nodeid: sorted(getattr(i, "fixturenames", ())) for i in fast}
        return {"declared": sorted(declared), "used": used}
    proc = subprocess.run(
        [sys.executable, "-c", COLLECT, FAST, str(TESTS)],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    line = next(x for x in proc.stdout.splitlines() if x.startswith("REPORT "))
    return json.loads(line.removeprefix("REPORT "))


@pytest.mark.slow  # alone, it collects the whole suite in a process of its own
def test_the_fast_suite_runs_no_whole_project(request):
    report = _fast_suite(request.config, request.session.items)
    assert WHOLE_PROJECT <= set(report["declared"])
    used = report["used"]
    assert len(used) > 500  # the fast suite was collected
    leaks = {test: sorted(WHOLE_PROJECT & set(f)) for test, f in used.items()}
    assert {test: names for test, names in leaks.items() if names} == {}


UNIT_RUN = """
import subprocess, sys, pytest

pytestmark = pytest.mark.unit

def test_starts_a_process():
    subprocess.run(["true"], check=True)

def test_pure():
    assert sorted([3, 1, 2]) == [1, 2, 3]
"""


@pytest.mark.slow  # two pytest processes (about 15 s)
def test_the_unit_tier_collects_only_its_modules_and_refuses_a_process(tmp_path):
    """`-m unit` imports only the unit modules, and a unit test that starts a process fails
    with the command named (checked on a throwaway module marked `unit`)."""
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
        + ["-m", "unit", str(TESTS)],
        cwd=TESTS,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert collected.returncode == 0, collected.stdout[-2000:] + collected.stderr[-2000:]
    from support.tiers import UNIT_MODULES

    files = {line.split("::")[0] for line in collected.stdout.splitlines() if "::" in line}
    assert files and files <= {f"tests/{m}" for m in UNIT_MODULES} | set(UNIT_MODULES), files

    probe = tmp_path / "test_probe.py"
    probe.write_text(UNIT_RUN)
    python_path = os.pathsep.join([str(TESTS), str(TESTS.parent), os.environ.get("PYTHONPATH", "")])
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "support.tiers"]
        + ["--rootdir", str(tmp_path), str(probe)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONPATH": python_path},
    )
    assert "a unit test started a process: ['true']" in run.stdout, run.stdout[-2000:]
    assert "1 failed, 1 passed" in run.stdout
