"""The defaults a researcher sets once in JupyterLab's Settings Editor (*LightScientist*):
the model, the mode and the budget of the runs a notebook starts.

The Settings Editor lives in the page and the runs in a kernel, so the page hands the values
to the server extension (`POST /lightscientist/defaults`), which checks them here and keeps
them in `<jupyter config dir>/lightscientist/defaults.json` (written whole, atomically); a
kernel reads that file each time it starts or resumes a run. They sit below the session's
own: a `%config LightScientistMagics.…` value, or an option on the line, wins
(`run_options.SessionDefaults.over`). The command line does not read them: it is not a
notebook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jupyter_core.paths import jupyter_config_dir

from lightscientist_jupyter import _fs
from lightscientist_jupyter.controller.budget import parse_limits
from lightscientist_jupyter.errors import BadInput

FIELDS = ("model", "mode", "budget")
"""The settings a kernel takes; '' (or absent) leaves the session's own default."""
MODES = ("", "auto", "manual")
MAX_CHARS = 200


def path() -> Path:
    """Where the defaults are kept (the same for the server and its kernels: they share the
    Jupyter configuration directory)."""
    return Path(jupyter_config_dir()) / "lightscientist" / "defaults.json"


def check(raw: Any) -> dict[str, str]:
    """The defaults in `raw` (a JSON object), each a string; `BadInput` naming the setting to
    fix (as the Settings Editor titles it)."""
    if not isinstance(raw, dict):
        raise BadInput("the defaults must be a JSON object with model, mode and budget")
    values: dict[str, str] = {}
    for name in FIELDS:
        value = raw.get(name) or ""
        if not isinstance(value, str) or len(value) > MAX_CHARS or "\n" in value:
            raise BadInput(f"Default {name}: a line of text of at most {MAX_CHARS} characters")
        values[name] = value.strip()
    if values["mode"] not in MODES:
        raise BadInput(f"Default mode: auto or manual, not '{values['mode']}'")
    if " " in values["model"]:
        raise BadInput(
            f"Default model: offline, provider:model or a model name, not '{values['model']}'"
        )
    try:
        if values["budget"]:
            parse_limits(values["budget"])
    except ValueError as exc:  # a notification's line: short, and in the editor's words
        raise BadInput(f"Default budget: {exc}") from None
    return values


def save(raw: Any) -> dict[str, str]:
    """Check `raw` and keep it (only the settings with a value); the values kept."""
    values = check(raw)
    target = path()
    _fs.mkdirs(target.parent)
    _fs.write_json_atomic(target, {k: v for k, v in values.items() if v})
    return values


def load() -> dict[str, str]:
    """The defaults kept ({} when none were set, or the file cannot be read: a kernel never
    fails a run over them)."""
    try:
        raw = json.loads(_fs.read_text(path()))
        return check(raw)
    except (OSError, ValueError, BadInput):
        return {}
