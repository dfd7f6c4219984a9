"""OfflineScientistModel: a deterministic chat model that drives LightScientist offline.

It is a demo and test driver, not a scientist. It decides each reply from the message
history alone — the task or event header that opens the conversation and the results of its
own earlier tool calls — so a session resumed in another process continues identically. It
acts only through real tool calls: real files, real commands, real results.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

from lightscientist_jupyter.runtime.offline.history import Say, read_history, text_of, to_message
from lightscientist_jupyter.runtime.offline.supervisor import decide_supervisor
from lightscientist_jupyter.runtime.offline.worker import decide_worker
from lightscientist_jupyter.runtime.protocol import EVENT_TITLE, TASK_TITLE, parse_header


class OfflineScientistModel(BaseChatModel):
    """The offline model. `loops` is how many experiment batches (loop visits) it plans."""

    loops: int = 2
    tool_names: tuple[str, ...] = ()

    @property
    def _llm_type(self) -> str:
        return "lightscientist-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"loops": self.loops}

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> OfflineScientistModel:
        names = tuple(convert_to_openai_tool(t)["function"]["name"] for t in tools)
        return self.model_copy(update={"tool_names": names})

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        history = read_history(messages)
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        first = text_of(humans[0]) if humans else ""
        last = text_of(humans[-1]) if humans else ""
        title, fields = parse_header(last)
        if title == EVENT_TITLE:
            step = decide_supervisor(fields, history)
        else:
            title, fields = parse_header(first)
            if title == TASK_TITLE:
                step = decide_worker(fields, history, self.loops)
            else:
                step = Say("I am LightScientist's offline demo model: I only carry out "
                           "LightScientist tasks. Configure a real model to chat.")
        message = to_message(step, history.n_ai)
        return ChatResult(generations=[ChatGeneration(message=message)])
