"""Waiting for a condition with a deadline, instead of sleeping a fixed time.

A fixed sleep is too short on a loaded machine and wasted time on an idle one; a test waits
for the thing it needs, with a deadline of several seconds that only a real failure reaches.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

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
