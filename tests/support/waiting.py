"""Waiting for a condition with a deadline, instead of sleeping a fixed time.

A fixed sleep is too short on a loaded machine and wasted time on an idle one; a test waits
for the thing it needs, with a deadline of several seconds that only a real failure reaches.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


def wait_for(
    condition: Callable[[], T], what: str, *, within: float = 10.0, poll: float = 0.02
) -> T:
    """Call `condition` until it returns something true, and return that.

    Raises:
        AssertionError: naming `what`, when `within` seconds pass first.
    """
    deadline = time.monotonic() + within
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        time.sleep(poll)


def sigkill_in_experiment_loop(command: list[str], log: Path, **popen: Any) -> None:
    """Run `command` (a `research --mode auto`) and SIGKILL it once a worker of
    `experiment.loop` has called a tool (as the event log `log` shows): a run killed mid-loop."""
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **popen)
    loop_call = re.compile(r'"tool\.call".*"stage":"experiment\.loop"')
    try:
        wait_for(
            lambda: log.exists() and loop_call.search(log.read_text()),
            "the run to reach experiment.loop",
            within=120,
        )
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
