"""Can this model call tools? One short call that offers one trivial tool, read back.

Every layer above drives its model through tool calls; a model (or a server) that answers in
text instead fails a whole project later with a vaguer reason. This check costs one small
request and tells at once, in words a user can act on. The offline model and a replay of a
recording need no check (`needs_check`).
"""

from __future__ import annotations

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.tools import tool

from lightscientist_jupyter.redact import safe

NO_TOOL_CALL = (
    "answered in text instead of calling a tool: this model or its server may not support "
    "tool calling; with Ollama pick a model tagged 'tools'"
)
WORD = "ready"


@tool
def report_word(word: str) -> str:
    """Report the word you were asked to report."""
    return word


def needs_check(spec: str) -> bool:
    """The offline model and a replay (`replay:PATH`) call tools by construction."""
    name = spec.strip().split(":", 1)[0]
    return name not in ("offline", "replay")


def tool_calling_problem(model: BaseChatModel) -> str | None:
    """None when `model` calls `report_word` with a string `word`; else what it did instead,
    as a phrase (`answered in text …`, `called … with malformed arguments …`, `failed: …`)."""
    messages = [
        SystemMessage("You are checking that tool calling works. Answer only with a tool call."),
        HumanMessage(f"Call the tool report_word with word = '{WORD}'."),
    ]
    try:
        reply = model.bind_tools([report_word]).invoke(messages)
    except Exception as exc:  # the server's own error, reported plainly
        return f"failed: {type(exc).__name__}: {safe(str(exc), 300)}"
    invalid = list(getattr(reply, "invalid_tool_calls", None) or [])
    if invalid:
        raw = safe(str(invalid[0].get("args") or ""), 80)
        return f"called {invalid[0].get('name') or 'a tool'} with malformed arguments ({raw!r})"
    calls = list(getattr(reply, "tool_calls", None) or [])
    if not calls:
        text = safe(" ".join(str(reply.content).split()), 80)  # one line, whatever it sent
        return NO_TOOL_CALL + (f' (its answer began: "{text}")' if text else "")
    call = calls[0]
    if call.get("name") != report_word.name:
        return f"called a tool it was not offered ('{safe(call.get('name'), 40)}')"
    if not isinstance((call.get("args") or {}).get("word"), str):
        return f"called report_word with malformed arguments ({safe(call.get('args'), 80)})"
    return None
