"""The controller's usage and budget calls (a mixin of `ResearchController`): each model
call's charge, the runtime's gate, and `--budget`; `machine.step` decides
(`controller.budget`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from lightscientist_jupyter._faults import report_storage_fault
from lightscientist_jupyter.controller import actions, budget
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable

USAGE_SAVE_S = 0.5
"""How long a change of the usage totals alone may wait to be written to `state.json`."""


class BudgetCalls:
    """The budget calls of `ResearchController` (which provides these attributes)."""

    _lock: threading.RLock
    _state: ProjectState
    table: StageTable
    changed: threading.Condition
    _saved_at = 0.0
    """When `state.json` was last written (monotonic clock)."""
    _unsaved = False
    _flusher: threading.Timer | None = None

    def _save(self) -> None:  # ResearchController's
        raise NotImplementedError

    def _hold_usage_save(self) -> bool:
        """Whether a change of the usage totals alone (one per model call, each already a
        line of the ledger) waits: `state.json` is written at most every `USAGE_SAVE_S` for
        them, by the next change of any kind or by `flush`. A run killed meanwhile is caught
        up from the ledger when the project is opened again (`budget.catch_up`)."""
        if time.monotonic() - self._saved_at >= USAGE_SAVE_S:
            return False
        if self._flusher is None:
            self._flusher = threading.Timer(USAGE_SAVE_S, self._flush_later)
            self._flusher.daemon = True
            self._flusher.start()
        self._unsaved = True
        self.changed.notify_all()
        return True

    def flush(self) -> None:
        """Write the usage totals held back, if any (when a run ends)."""
        with self._lock:
            self._flusher = None
            if self._unsaved:
                self._save()

    def _flush_later(self) -> None:
        """`flush` on the timer's thread: a full disk is reported to the run (which stops
        with one line), not raised as a traceback of that thread."""
        try:
            self.flush()
        except OSError as exc:
            if not report_storage_fault(exc):
                raise

    def _run(self, action: actions.Action) -> actions.Respond:  # ResearchController's
        raise NotImplementedError

    def charge(self, call: dict[str, Any]) -> None:
        """Add one model call (a `runtime.metering.meter` line) to the totals and check the
        budgets."""
        with self._lock:
            self._run(actions.Charge(dict(call), time.time()))

    def budget_hold(self) -> str | None:
        """Why no new model call may start now (a budget is spent), or None."""
        with self._lock:
            return budget.hold_reason(self._state, self.table)

    def set_budget(self, limits: Mapping[str, float]) -> None:
        """Set the project's limits (`--budget` of `research` / `resume`)."""
        with self._lock:
            self._run(actions.SetBudget(dict(limits)))
