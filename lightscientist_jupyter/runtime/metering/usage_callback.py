"""The meter's two hooks on the model calls (`runtime.metering.meter.UsageMeter`), apart from
it because they are LangChain's: layer 1 and the command line read `values.usage`
without importing LangChain.

- `BudgetMiddleware`, in every graph's middleware, asks the meter before each model call
  starts: once a budget is spent the meter raises `BudgetHold` there, the call does not start
  and the session keeps its turn for later.
- `UsageCallback`, one per session, charges each call that ended with an answer — every call
  of the session's graph, a middleware's own (deepagents' summarising) included.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.callbacks import BaseCallbackHandler

from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.values.usage import Usage


class BudgetMiddleware(AgentMiddleware):
    """Holds a model call before it starts once a budget is spent (`UsageMeter.admit`)."""

    def __init__(self, meter: UsageMeter):
        super().__init__()
        self.meter = meter

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        self.meter.admit()
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        self.meter.admit()
        return await handler(request)


class UsageCallback(BaseCallbackHandler):
    """One session's charges for its model calls (see the module's docstring)."""

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
