"""The controller's usage and budget calls (a mixin of `ResearchController`): each model
call's charge, the runtime's gate, and `--budget`; `machine.step` decides
(`controller.budget`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from lightscientist_jupyter.controller import actions, budget
from lightscientist_jupyter.controller.state import ProjectState
from lightscientist_jupyter.controller.table import StageTable


class BudgetCalls:
    """The budget calls of `ResearchController` (which provides these attributes)."""

    _lock: threading.RLock
    _state: ProjectState
    table: StageTable

    def _run(self, action: actions.Action) -> actions.Respond:  # ResearchController's
        raise NotImplementedError

    def charge(self, call: dict[str, Any]) -> None:
        """Add one model call (a `runtime.usage` line) to the totals and check the budgets."""
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
