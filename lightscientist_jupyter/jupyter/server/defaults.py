"""`POST /lightscientist/defaults`: the Settings Editor's model, mode and budget, kept for the
kernels (`app.lab_defaults`). The page sends them when it loads its settings and whenever they
change; a value to fix is refused (400) with the line that names the setting."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lightscientist_jupyter.app import lab_defaults
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.jupyter.server.answers import DefaultsAnswer
from lightscientist_jupyter.jupyter.server.paths import Refused


def save_defaults(_root: Path, body: Any) -> DefaultsAnswer:
    """Keep the defaults in `body`; what is kept now, and where."""
    try:
        values = lab_defaults.save(body)
    except BadInput as exc:
        raise Refused(400, str(exc)) from None
    except OSError as exc:
        raise Refused(500, f"the defaults were not kept: {exc}") from None
    return {
        "model": values["model"],
        "mode": values["mode"],
        "budget": values["budget"],
        "path": str(lab_defaults.path()),
    }
