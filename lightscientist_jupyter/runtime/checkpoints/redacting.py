"""Redaction at the graph's edge: what a tool returns and what a failed call raises, redacted
before LangGraph checkpoints it.

A session's checkpoints hold every tool result (a `cat .env`, a `read_file` of a key file)
and, when a node raises, the exception's `repr` (the `__error__` write): a provider or a
proxy that repeats the request's Authorization header in its error puts the key there. The
checkpoints are a file in the workspace, so `RedactionMiddleware` — a langchain middleware,
the first of a session's stack — redacts both on the way in: a tool's result before it
enters the graph's state, and a model or tool call's exception into a `RedactedFailure`
whose text is redacted. What the model sees is the redacted result, as the event stream
always showed it.

A failure whose text holds nothing to redact is raised as it was, so its kind still decides
what follows (a retry, a disk fault); LangGraph's control flow (an interrupt) and a budget's
hold pass untouched whatever their text says.

A failure the middleware never sees — a middleware of deepagents' own calling its model, such
as the summarisation of a long history — still reaches the checkpoints as a write of the
failed task: `RedactedWrites`, a mixin of the savers the runtime opens, redacts any exception
among a task's writes before the saver stores it.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.errors import GraphBubbleUp
from langgraph.types import Command

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.redact import redact, safe
from lightscientist_jupyter.runtime.metering.meter import BudgetHold


class RedactedFailure(RuntimeLayerError):
    """A model or tool call's failure whose text held a secret: its kind, and its text
    redacted. (The original is not kept as its cause: it would be stored beside it.)"""

    def __init__(self, kind: str, text: str):
        super().__init__(f"{kind}: {text}")
        self.kind = kind


def redacted_failure(exc: Exception) -> Exception:
    """`exc` itself when nothing in it is secret (or it is LangGraph's control flow), else a
    `RedactedFailure` of the same kind and the redacted text."""
    if isinstance(exc, (GraphBubbleUp, BudgetHold)):
        return exc
    text = repr(exc)  # what LangGraph stores of it
    if redact(text) == text:
        return exc
    return RedactedFailure(type(exc).__name__, redact(str(exc)))


class RedactedWrites:
    """A checkpoint saver's `put_writes` that stores an exception among a task's writes (how
    LangGraph keeps a failed task's error) as `redacted_failure` makes it."""

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        clean = [(c, redacted_failure(v) if isinstance(v, Exception) else v) for c, v in writes]
        super().put_writes(config, clean, task_id, task_path)  # type: ignore[misc]


def failure_text(exc: BaseException, limit: int) -> str:
    """A failure in a line for the worker's record and events: its kind, its text redacted
    and clipped to `limit`."""
    if isinstance(exc, RedactedFailure):
        return safe(str(exc), limit)
    return f"{type(exc).__name__}: {safe(str(exc), limit)}"


def redacted_result(result: Any) -> Any:
    """A tool's result (a `ToolMessage`, or a `Command` carrying messages) with its text
    redacted; the same object when there was nothing to redact."""
    if isinstance(result, ToolMessage):
        content = _redacted_content(result.content)
        if content is result.content:
            return result
        return result.model_copy(update={"content": content})
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = result.update.get("messages")
        if isinstance(messages, list):
            clean = [redacted_result(m) for m in messages]
            if any(a is not b for a, b in zip(clean, messages, strict=True)):
                update = {**result.update, "messages": clean}
                return dataclasses.replace(result, update=update)
    return result


def _redacted_content(content: Any) -> Any:
    if isinstance(content, str):
        clean = redact(content)
        return content if clean == content else clean
    if isinstance(content, list):  # content blocks: the text ones
        blocks = [_redacted_block(b) for b in content]
        return content if all(a is b for a, b in zip(blocks, content, strict=True)) else blocks
    return content


def _redacted_block(block: Any) -> Any:
    if isinstance(block, str):
        return _redacted_content(block)
    if isinstance(block, dict) and isinstance(block.get("text"), str):
        clean = redact(block["text"])
        return block if clean == block["text"] else {**block, "text": clean}
    return block


class RedactionMiddleware(AgentMiddleware):
    """Redacts tool results and failed calls before LangGraph stores them (see the module).

    First in a session's middleware: outside the retries, which see a failure as it came."""

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        with _failures_redacted():
            return redacted_result(handler(request))

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        with _failures_redacted():
            return redacted_result(await handler(request))

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        with _failures_redacted():
            return handler(request)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        with _failures_redacted():
            return await handler(request)


@contextlib.contextmanager
def _failures_redacted() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        clean = redacted_failure(exc)
        if clean is exc:
            raise
        raise clean from None
