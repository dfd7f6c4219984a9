"""Our side of the Agent Client Protocol: what an agent tells becomes layer-3 events, and what
it asks is answered by the table's policy or by the caller's `AskPermission`.

The updates map onto the event vocabulary the deepagents workers use (`session.observe`):
the agent's message (its chunks joined, one event when the message is over) is a
`model.output`, a tool call a `tool.call`, its end a `tool.result`; a plan is an `agent.plan`,
a permission request and its answer an `agent.permission`. The model the agent says
it runs (its session's config option of category `model`, in `session/new`'s answer or a
later `config_option_update`) is kept to price its usage. A message is over when another
update comes, the turn ends, or its chunks stop for `QUIET_S`. Its thoughts are not shown (events
show what agents did, never hidden reasoning), nor the replayed history of `session/load`.
Every text is redacted and clipped before it leaves.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from acp import schema

from lightscientist_jupyter.redact import safe
from lightscientist_jupyter.runtime.acp.permissions import AskPermission, by_policy
from lightscientist_jupyter.runtime.session.observe import EVENT_TEXT_LIMIT
from lightscientist_jupyter.values.permission import PermissionOption, PermissionRequest
from lightscientist_jupyter.vocab import AgentPermissions, EventType

EDIT_TEXT_LIMIT = 20_000
"""An edit's old and new text, as a permission request carries them for its diff, at most."""
QUIET_S = 1.0
"""A message whose chunks stopped this long is shown, even if nothing else follows yet (the
agent may work on in silence)."""

Emit = Callable[[str, str, dict[str, Any]], None]
"""`emit(type, message, data)`: a layer-3 event of this worker (as `SessionObserver`'s)."""


class AgentClient:
    """The ACP client of one agent session (`acp.Client`, by its method names)."""

    def __init__(
        self,
        agent: str,
        emit: Emit,
        permissions: AgentPermissions,
        ask: AskPermission | None = None,
        workspace: Path | None = None,
    ):
        self.agent = agent
        self.workspace = workspace
        """The session's `cwd`: a permission request names the files inside it relatively."""
        self.emit = emit
        self.permissions = permissions
        self.ask = ask
        self.replaying = False
        """True while `session/load` replays the history: nothing is shown again."""
        self.cancelling: asyncio.Event | None = None
        """Set (on the loop) by a cancel: a pending question is answered `cancelled`."""
        self.last_message = ""
        """The agent's last whole message: a finished turn's summary."""
        self.tool_calls = 0
        self.cost_usd: float | None = None
        """The session's cost so far, when the agent reports one in USD."""
        self.model: str | None = None
        """The model the agent says its session runs, when it says (`model_of`)."""
        self._chunks: list[str] = []
        self._pieces = 0
        """Chunks received so far (a message is over when this has not moved for QUIET_S)."""
        self._titles: dict[str, str] = {}
        self._starts: dict[str, schema.ToolCallStart] = {}
        """Each tool call as it started: a permission request about it may name only its id."""
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ session updates

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.replaying:
            return
        if isinstance(update, schema.AgentMessageChunk):
            text = getattr(update.content, "text", None)
            if isinstance(text, str):
                with self._lock:
                    self._chunks.append(text)
                    self._pieces += 1
                    pieces = self._pieces
                asyncio.get_running_loop().call_later(QUIET_S, self._end_if_quiet, pieces)
            return
        self.end_message()
        if isinstance(update, schema.ToolCallStart):
            self._tool_call(update)
        elif isinstance(update, schema.ToolCallProgress):
            self._tool_progress(update)
        elif isinstance(update, schema.AgentPlanUpdate):
            self._plan(update)
        elif isinstance(update, schema.UsageUpdate) and update.cost is not None:
            if update.cost.currency.upper() == "USD":
                self.cost_usd = update.cost.amount
        elif isinstance(update, schema.ConfigOptionUpdate):
            self.model = model_of(update.config_options) or self.model

    def end_message(self) -> None:
        """Show the message its chunks made, once it is over (another update came, or the
        turn ended)."""
        with self._lock:
            text, self._chunks = "".join(self._chunks), []
        if not text.strip():
            return
        self.last_message = text.strip()
        self.emit(
            EventType.MODEL_OUTPUT,
            safe(self.last_message, 120),
            {"text": safe(self.last_message, EVENT_TEXT_LIMIT), "agent": self.agent},
        )

    def _end_if_quiet(self, pieces: int) -> None:
        if self._pieces == pieces:  # no chunk came since
            self.end_message()

    def _tool_call(self, call: schema.ToolCallStart) -> None:
        self._titles[call.tool_call_id] = call.title
        self._starts[call.tool_call_id] = call
        self.tool_calls += 1
        args = (
            call.raw_input
            if call.raw_input is not None
            else [loc.path for loc in call.locations or []]
        )
        self.emit(
            EventType.TOOL_CALL,
            f"{call.title}",
            {
                "tool": call.title,
                "kind": call.kind,
                "id": call.tool_call_id,
                "args": safe(args, EVENT_TEXT_LIMIT),
                "paths": [loc.path for loc in call.locations or []],
                "agent": self.agent,
            },
        )

    def _tool_progress(self, update: schema.ToolCallProgress) -> None:
        if update.title:
            self._titles[update.tool_call_id] = update.title
        if update.status not in ("completed", "failed"):
            return
        title = self._titles.get(update.tool_call_id, update.tool_call_id)
        result = _content_text(update.content) or safe(update.raw_output, 400)
        verb = "→" if update.status == "completed" else "failed:"
        data: dict[str, Any] = {"tool": title, "id": update.tool_call_id, "agent": self.agent}
        data["result" if update.status == "completed" else "error"] = safe(result, EVENT_TEXT_LIMIT)
        self.emit(EventType.TOOL_RESULT, f"{title} {verb} {safe(result, 160)}", data)

    def _plan(self, plan: schema.AgentPlanUpdate) -> None:
        entries = [{"content": safe(e.content, 300), "status": e.status} for e in plan.entries]
        done = sum(e["status"] == "completed" for e in entries)
        self.emit(
            EventType.AGENT_PLAN,
            f"plan: {done}/{len(entries)} done"
            + "".join(f"; {e['content']} ({e['status']})" for e in entries[:5]),
            {"entries": entries, "agent": self.agent},
        )

    # ------------------------------------------------------------------ permission

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> schema.RequestPermissionResponse:
        self.end_message()
        offered = tuple(PermissionOption(o.option_id, o.name, o.kind) for o in options)
        request = self._request(tool_call, offered)
        title = request.title
        if self.permissions == AgentPermissions.ASK:
            chosen, by = await self._asked(request), "asked"
        else:
            chosen, by = by_policy(self.permissions, offered), f"policy {self.permissions}"
        answer = chosen.name if chosen is not None else "cancelled"
        self.emit(
            EventType.AGENT_PERMISSION,
            f"{title}: {answer} ({by})",
            {
                "tool": title,
                "id": tool_call.tool_call_id,
                "question": request.question,
                "options": [o.name for o in offered],
                "answer": answer,
                "by": by,
                "agent": self.agent,
            },
        )
        if chosen is None:
            return schema.RequestPermissionResponse(
                outcome=schema.DeniedOutcome(outcome="cancelled")
            )
        return schema.RequestPermissionResponse(
            outcome=schema.AllowedOutcome(outcome="selected", option_id=chosen.id)
        )

    def _request(self, tool_call: Any, offered: tuple[PermissionOption, ...]) -> PermissionRequest:
        """The request as a value: what the tool call says, completed by the call as it
        started (an agent may send only its id), its files relative to the workspace, an
        edit's texts for its diff (redacted, clipped)."""
        started = self._starts.get(tool_call.tool_call_id)
        content = tool_call.content or (started.content if started else None) or []
        locations = tool_call.locations or (started.locations if started else None) or []
        raw_input = tool_call.raw_input or (started.raw_input if started else None)
        edit = next((c for c in content if isinstance(c, schema.FileEditToolCallContent)), None)
        paths = [loc.path for loc in locations] or ([edit.path] if edit is not None else [])
        new_text = edit.new_text if edit is not None else None
        if new_text is None and isinstance(raw_input, dict) and "content" in raw_input:
            new_text = str(raw_input["content"])  # an edit that carries its text as input
        return PermissionRequest(
            agent=self.agent,
            title=safe(
                tool_call.title or self._titles.get(tool_call.tool_call_id) or "a tool call", 300
            ),
            kind=tool_call.kind or (started.kind if started else None),
            options=offered,
            paths=tuple(dict.fromkeys(self._shown(p) for p in paths)),
            old_text=_clipped(edit.old_text if edit is not None else None),
            new_text=_clipped(new_text),
            detail=safe(_content_text(content) or raw_input or "", 2000),
        )

    def _shown(self, path: str) -> str:
        """A path as a request names it: relative to the workspace when inside it."""
        if self.workspace is None:
            return path
        for root in (self.workspace, self.workspace.resolve()):
            if Path(path).is_relative_to(root):
                return str(Path(path).relative_to(root))
        return path

    async def _asked(self, request: PermissionRequest) -> PermissionOption | None:
        """The option whoever `ask` reaches picks; None when nobody can be asked, the answer
        names no option, or a cancel comes first."""
        if self.ask is None:
            return None
        question = asyncio.ensure_future(asyncio.to_thread(self.ask, request))
        waits: set[asyncio.Future[Any]] = {question}
        if self.cancelling is not None:
            waits.add(asyncio.ensure_future(self.cancelling.wait()))
        done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for other in pending - {question}:
            other.cancel()
        if question not in done:
            return None  # the cancel came first; the question's thread ends on its own
        picked = question.result()
        return next((o for o in request.options if o.id == picked), None)


def _clipped(text: str | None) -> str | None:
    return None if text is None else safe(text, EDIT_TEXT_LIMIT)


def _content_text(content: Any) -> str:
    """The text of a tool call's content: its text blocks, and an edit's path and new text."""
    parts = []
    for item in content or []:
        if isinstance(item, schema.FileEditToolCallContent):
            parts.append(f"edit {item.path}:\n{item.new_text}")
        elif isinstance(item, schema.TerminalToolCallContent):
            parts.append(f"terminal {item.terminal_id}")
        else:
            text = getattr(getattr(item, "content", None), "text", None)
            if isinstance(text, str):
                parts.append(text)
    return "\n".join(parts)


def model_of(options: Sequence[Any] | None) -> str | None:
    """The model a session's config options name: the current value of the select option of
    category `model` (the protocol's way for an agent to say which model it runs); None when
    there is none."""
    for option in options or ():
        if isinstance(option, schema.SessionConfigOptionSelect) and option.category == "model":
            return option.current_value.strip() or None
    return None
