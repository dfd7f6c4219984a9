"""An agent's permission request as plain values, and how the table's policy answers it.

ACP's `session/request_permission` names the tool call it is about and offers options, each
with a kind (`allow_once`, `allow_always`, `reject_once`, `reject_always`). Under `allow` the
answer is the agent's own "allow once" option (else "allow always"), under `deny` its
"reject once" (else "reject always", else the request is cancelled); under `ask` the caller's
`AskPermission` picks one, from the words of an answer (`option_for`). Nothing is ever
answered "always" on the researcher's behalf while a "once" option exists.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from lightscientist_jupyter.vocab import AgentPermissions


@dataclasses.dataclass(frozen=True)
class Option:
    """One answer the agent offers."""

    id: str
    name: str
    """Its label, as the agent words it ("Allow once")."""
    kind: str
    """`allow_once`, `allow_always`, `reject_once` or `reject_always`."""


@dataclasses.dataclass(frozen=True)
class PermissionRequest:
    """What an agent asks leave for."""

    agent: str
    tool_call: str
    """The tool call's title ("Write out/b.md")."""
    kind: str | None
    """The tool call's kind (`edit`, `execute`, `read`…), when the agent gives one."""
    options: tuple[Option, ...]
    detail: str = ""
    """What it concerns, redacted and clipped: the diff of an edit, a command, its input."""


AskPermission = Callable[[PermissionRequest], str | None]
"""Asks whoever decides (the researcher, the supervisor) and returns the chosen option's id,
or None to cancel the request. Called from its own thread; it may block."""

_PREFERRED: dict[AgentPermissions, tuple[str, ...]] = {
    AgentPermissions.ALLOW: ("allow_once", "allow_always"),
    AgentPermissions.DENY: ("reject_once", "reject_always"),
}


def by_policy(policy: AgentPermissions, options: Sequence[Option]) -> Option | None:
    """The option `allow` or `deny` answers with; None when the agent offers none of its
    kinds (the request is then cancelled). `ask` answers nothing by itself."""
    for kind in _PREFERRED.get(policy, ()):
        for option in options:
            if option.kind == kind:
                return option
    return None


ALLOW_WORDS = {"y", "yes", "allow", "approve", "ok"}
REJECT_WORDS = {"n", "no", "reject", "deny"}


def option_for(answer: str, options: Sequence[Option]) -> str | None:
    """The option an answer picks: one named (by its label or id), or the first that allows
    for a yes, the first that rejects for a no; None for anything else."""
    said = answer.strip().lower()
    for option in options:
        if said in (option.name.lower(), option.id.lower()):
            return option.id
    kinds: tuple[str, ...] = ()
    if said in ALLOW_WORDS:
        kinds = ("allow_once", "allow_always")
    elif said in REJECT_WORDS:
        kinds = ("reject_once", "reject_always")
    return next((o.id for o in options if o.kind in kinds), None)
