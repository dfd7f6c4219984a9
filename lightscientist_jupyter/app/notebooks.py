"""A workspace's notebook as the front doors show it (`show experiment/analysis.ipynb`): read
through the guarded path (`beneath.Beneath`: no link, nothing outside the workspace) and
parsed by `values.notebook`. What cannot be shown — no such file, a link in its place, a
file too large, JSON that is no notebook — is one `NotebookUnavailable` line naming the file.
The command line prints `values.notebook.reading` of it; the notebook draws its cells
(`jupyter.notebook_view`).
"""

from __future__ import annotations

from typing import Any

from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.errors import LightScientistError
from lightscientist_jupyter.values.notebook import NotebookProblem, loads

NOTEBOOK_MAX = 64 * 1024 * 1024
"""The largest notebook read (its images included); a larger one is named, not read."""
OUTPUT_LIMIT = 1000
"""Characters of one output the command line prints."""


class NotebookUnavailable(LightScientistError):
    """A notebook that cannot be shown; the message names the file and why."""


def read_notebook(files: Beneath, rel: str) -> Any:
    """The notebook at the workspace path `rel`, validated (nbformat 4.5)."""
    try:
        where = str(files.path(rel))
        data = files.read_bytes(rel, limit=NOTEBOOK_MAX + 1)
    except FileNotFoundError:
        raise NotebookUnavailable(f"{files.root / rel} does not exist") from None
    except OSError as exc:  # out of the workspace or a link (PathRefused), a folder, unreadable
        raise NotebookUnavailable(str(exc)) from None
    if len(data) > NOTEBOOK_MAX:
        raise NotebookUnavailable(f"{where} is larger than the {NOTEBOOK_MAX:,} bytes shown here")
    try:
        return loads(data.decode("utf-8", errors="replace"), where)
    except NotebookProblem as exc:
        raise NotebookUnavailable(str(exc)) from None
