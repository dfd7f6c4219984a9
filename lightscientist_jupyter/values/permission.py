"""A coding agent's permission request as one typed value, from the agent to every screen.

ACP's `session/request_permission` names the tool call it is about and offers options, each
with a kind (`allow_once`, `allow_always`, `reject_once`, `reject_always`). Under
`permissions = "ask"` the request travels as this value: on the waiting worker's record and
update (layer 3), in the supervisor's scheduling event, on layer 1's pending decision (a
question whose `permission` is this), and, as `to_dict`'s JSON, to the server, the dashboard
and the panel, which draw it as a card with one button per option. Nothing parses it back
out of a question's text.

Its texts (an edit's old and new text, its detail) are redacted and clipped by whoever makes
it (`runtime.acp.client`); this module reads and writes nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

ALLOW_KINDS = ("allow_once", "allow_always")
REJECT_KINDS = ("reject_once", "reject_always")
_ALLOW_WORDS = {"y", "yes", "allow", "approve", "ok"}
_REJECT_WORDS = {"n", "no", "reject", "deny"}
_VERBS = {
    "edit": "edit",
    "delete": "delete",
    "move": "move",
    "read": "read",
    "execute": "run",
    "fetch": "fetch",
    "search": "search",
}
"""How the question words a tool call's kind ("codex asks to edit analysis.py")."""


@dataclasses.dataclass(frozen=True)
class PermissionOption:
    """One answer the agent offers."""

    id: str
    name: str
    """Its label, as the agent words it ("Allow once")."""
    kind: str
    """`allow_once`, `allow_always`, `reject_once` or `reject_always`."""

    @property
    def allows(self) -> bool:
        return self.kind in ALLOW_KINDS

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "kind": self.kind}


@dataclasses.dataclass(frozen=True)
class PermissionRequest:
    """What an agent asks leave for: the tool call, and the options it offers."""

    agent: str
    title: str
    """The tool call's title ("Write out/b.md")."""
    kind: str | None
    """The tool call's kind (`edit`, `execute`, `read`…), when the agent gives one."""
    options: tuple[PermissionOption, ...]
    paths: tuple[str, ...] = ()
    """The files it concerns: relative to the workspace when inside it, else absolute."""
    old_text: str | None = None
    """For an edit: the file's text before (None: a new file)."""
    new_text: str | None = None
    """For an edit: the file's text after (None: no edit content given)."""
    detail: str = ""
    """What else it concerns (a command, its input), redacted and clipped."""

    @property
    def question(self) -> str:
        """One line, for the worker's question, `status` and a notification ("codex asks
        to edit analysis.py")."""
        verb = _VERBS.get(self.kind or "")
        if verb and self.paths:
            what = f"{verb} {', '.join(self.paths)}"
        elif verb:
            what = f"{verb}: {self.title}"
        else:
            what = f"use {self.title}"
        return f"{self.agent} asks to {what}"

    @property
    def within_workspace(self) -> bool:
        """Whether it names files, and only ones inside the workspace."""
        return bool(self.paths) and all(_inside(p) for p in self.paths)

    def pick(self, answer: str) -> PermissionOption | None:
        """The option an answer picks: one named (by its label or id, in any case), else for
        a yes the agent's "allow once" (else "allow always"), for a no its "reject once"
        (else "reject always"); None for anything else."""
        said = answer.strip().lower()
        for option in self.options:
            if said in (option.name.lower(), option.id.lower()):
                return option
        kinds: tuple[str, ...] = ()
        if said in _ALLOW_WORDS:
            kinds = ALLOW_KINDS
        elif said in _REJECT_WORDS:
            kinds = REJECT_KINDS
        return next((o for kind in kinds for o in self.options if o.kind == kind), None)

    def to_dict(self) -> dict[str, Any]:
        """As JSON (a worker's record, `state.json`'s pending decision, the wire)."""
        return {
            "agent": self.agent,
            "title": self.title,
            "kind": self.kind,
            "options": [o.to_dict() for o in self.options],
            "paths": list(self.paths),
            "old_text": self.old_text,
            "new_text": self.new_text,
            "detail": self.detail,
            "question": self.question,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> PermissionRequest:
        return cls(
            agent=str(raw.get("agent") or ""),
            title=str(raw.get("title") or ""),
            kind=raw.get("kind") or None,
            options=options_from(raw.get("options") or ()),
            paths=tuple(str(p) for p in raw.get("paths") or ()),
            old_text=raw.get("old_text"),
            new_text=raw.get("new_text"),
            detail=str(raw.get("detail") or ""),
        )


def options_from(raw: Sequence[Mapping[str, Any]]) -> tuple[PermissionOption, ...]:
    return tuple(
        PermissionOption(str(o.get("id") or ""), str(o.get("name") or ""), str(o.get("kind") or ""))
        for o in raw
    )


def permission_of(raw: Mapping[str, Any] | None) -> PermissionRequest | None:
    """The request a record, an event or a pending decision carries (`to_dict`'s form), or
    None when it carries none."""
    return PermissionRequest.from_dict(raw) if raw else None


def _inside(path: str) -> bool:
    pure = PurePosixPath(path)
    return not pure.is_absolute() and ".." not in pure.parts
