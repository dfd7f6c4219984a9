"""`--job-time-limit DURATION`: the longest a worker's job may run (`90s`, `30m`, `6h`, `1d`).

A project keeps the limit `research` was given, so `resume` uses it; a limit given to
`resume` is kept from then on (`app/kept_settings.py`). Without one a job may run
`DEFAULT_WALL_S` (six hours).
"""

from __future__ import annotations

import re
from typing import Any

from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.runtime.jobs.record import DEFAULT_WALL_S

OPTION = "--job-time-limit"
KEY = "job_time_limit"
"""The project setting that keeps it."""
UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}
_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)\s*([smhd]?)")


def parse(text: str) -> float:
    """`90s` / `30m` / `6h` / `1.5h` / `1d` / `120` (seconds) → seconds; raises BadInput."""
    match = _DURATION.fullmatch(str(text).strip().lower())
    seconds = float(match.group(1)) * UNITS[match.group(2)] if match else 0.0
    if seconds <= 0:
        raise BadInput(
            f"{OPTION} '{text}' is not a duration; write a positive number with s, m, h or d "
            "(e.g. 90s, 30m, 6h)"
        )
    return seconds


def settings(given: str | None) -> dict[str, Any]:
    """What a new project keeps (checked first): `job_time_limit` when one was given."""
    if not given:
        return {}
    parse(given)
    return {KEY: str(given).strip()}


def choose(given: str | None, stored: dict[str, Any]) -> float:
    """This run's limit in seconds: the one given now, else the project's, else the default."""
    text = given or stored.get(KEY)
    return parse(str(text)) if text else DEFAULT_WALL_S
