"""One session's hook on its model calls: it asks the meter (`runtime.metering.usage.UsageMeter`)
before each call starts, which raises `BudgetHold` once a budget is spent, and charges each finished
call. Apart from the meter because it is a LangChain callback: layer 1 and the command line
read `runtime.metering.usage` without importing LangChain."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from lightscientist_jupyter.runtime.metering.usage import Usage, UsageMeter


class UsageCallback(BaseCallbackHandler):
    """One session's hook on its model calls (see the module's docstring)."""

    raise_error = True  # so that the gate's `BudgetHold` stops the call before it starts

    def __init__(self, meter: UsageMeter, who: Callable[[], dict[str, Any]]):
        self.meter = meter
        self.who = who
        self.usage = Usage()
        """This session's totals in this process (the record adds them up)."""
        self.on_usage: Callable[[Usage], None] = lambda usage: None
        self._calls: dict[UUID, tuple[float, list[Any]]] = {}

    def on_chat_model_start(
        self, serialized: dict[str, Any], messages: list[list[Any]], *, run_id: UUID, **kwargs: Any
    ) -> None:
        self.meter.admit()
        self._calls[run_id] = (time.monotonic(), messages[0] if messages else [])

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        started, sent = self._calls.pop(run_id, (time.monotonic(), []))
        try:
            message = response.generations[0][0].message
        except (AttributeError, IndexError):
            message = None
        usage = self.meter.charge(self.who(), message, sent, time.monotonic() - started)
        self.usage = self.usage.plus(usage)
        self.on_usage(usage)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._calls.pop(run_id, None)  # a failed attempt: its retry is the call that counts
