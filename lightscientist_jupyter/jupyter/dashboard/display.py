"""How a project looks in a notebook: one live dashboard per project view.

The Python API (`lightscientist_jupyter.api`) imports no widget. This module gives its views
and runs their dashboards: `dashboard_of(view)` makes one on first use (fed by the run's event
buffer for a run of this kernel, from the log otherwise) and makes it anew when a finished
one shows a state that has moved on since. `register(ipython)` — called when the extension
loads — makes a view or a run shown in a cell display as its dashboard.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from lightscientist_jupyter import api
from lightscientist_jupyter.jupyter.dashboard.view import Dashboard

_lock = threading.Lock()
_boards: weakref.WeakKeyDictionary[api.ProjectView, Dashboard] = weakref.WeakKeyDictionary()


def dashboard_of(view: api.ProjectView) -> Dashboard:
    """The dashboard of `view` (a `ProjectView` or a `Run`)."""
    with _lock:
        board = _boards.get(view)
        if board is None or (board.finished and _stale(view, board)):
            buffer = view.buffer if isinstance(view, api.Run) else None
            board = _boards[view] = Dashboard(view, buffer)
        return board


def _stale(view: api.ProjectView, board: Dashboard) -> bool:
    if isinstance(view, api.Run):  # a run's board follows it to the end and stays
        return False
    state = board.state
    return state is None or state.updated_at != view.state().updated_at


def close_all() -> None:
    """Close every dashboard (their flusher threads end)."""
    with _lock:
        boards = list(_boards.values())
        _boards.clear()
    for board in boards:
        board.close()


def _bundle(view: api.ProjectView) -> dict[str, Any]:
    return dashboard_of(view)._repr_mimebundle_()


def register(ipython: Any) -> None:
    """Display views and runs as their dashboards in `ipython`'s cells."""
    formatter = ipython.display_formatter.mimebundle_formatter
    formatter.for_type(api.ProjectView, _bundle)
    formatter.for_type(api.Run, _bundle)


def unregister(ipython: Any) -> None:
    formatter = ipython.display_formatter.mimebundle_formatter
    for cls in (api.Run, api.ProjectView):
        formatter.pop(cls, None)


api.on_stop_all(close_all)
