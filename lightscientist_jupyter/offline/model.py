"""OfflineScientistModel: a deterministic chat model that drives LightScientist offline.

It is a demo and test driver, not a scientist. It decides each reply from the message
history alone — the task or event header that opens the conversation and the results of its
own earlier tool calls — so a session resumed in another process continues identically. It
acts only through real tool calls (real files, real commands, real results), naming each call
after the bound tool whose parameters fit it (`offline.tools`).

Tools are bound the way LangChain's chat models bind them (`bind(tools=[…])`, as `ChatOpenAI`
does): they travel with each request, so a recording of an offline run holds the tools each
call was offered, as one of a real model's does, and its replay can compare them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool

from lightscientist_jupyter.offline.history import (
    History,
    Say,
    Step,
    acts_of,
    read_history,
    text_of,
    to_message,
)
from lightscientist_jupyter.offline.supervisor import decide_supervisor
from lightscientist_jupyter.offline.tools import Toolbox
from lightscientist_jupyter.offline.worker import decide_worker
from lightscientist_jupyter.runtime.protocol import EVENT_TITLE, TASK_TITLE, parse_header

NOT_A_CHAT_MODEL = (
    "I am LightScientist's offline demo model: I only carry out LightScientist "
    "tasks. Configure a real model to chat."
)


class OfflineScientistModel(BaseChatModel):
    """The offline model. `loops` is how many experiment batches (loop visits) it plans."""

    loops: int = 2

    @property
    def _llm_type(self) -> str:
        return "lightscientist-offline"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"loops": self.loops}

    def bind_tools(
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with `tools` (their OpenAI schemas) passed with every request; the model
        can call nothing else."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        tools: Sequence[dict[str, Any]] = (),
        **kwargs: Any,
    ) -> ChatResult:
        toolbox = Toolbox.of(tools)
        history = read_history(messages)
        step = self._decide(messages, history)
        names = {act.tool: toolbox.name_for(act.tool) for act in acts_of(step)}
        missing = sorted({str(want) for want, name in names.items() if name is None})
        if missing:
            step = Say(
                "LightScientist's offline demo model cannot go on: no bound tool fits "
                f"what it needs ({'; '.join(missing)}). Bound: "
                f"{', '.join(toolbox.names) or 'none'}."
            )
        message = to_message(step, history.n_ai, {k: v for k, v in names.items() if v})
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _decide(self, messages: list[BaseMessage], history: History) -> Step:
        humans = [m for m in messages if isinstance(m, HumanMessage)]
        first = text_of(humans[0]) if humans else ""
        last = text_of(humans[-1]) if humans else ""
        title, fields = parse_header(last)
        if title == EVENT_TITLE:
            return decide_supervisor(fields, history)
        title, fields = parse_header(first)
        if title == TASK_TITLE:
            return decide_worker(fields, history, self.loops)
        return Say(NOT_A_CHAT_MODEL)
