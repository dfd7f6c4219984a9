"""How the table's policy answers an agent's permission request.

The request is a `values.permission.PermissionRequest` (the tool call and the agent's own
options). Under `allow` the answer is the agent's own "allow once" option (else "allow
always"), under `deny` its "reject once" (else "reject always", else the request is
cancelled); under `ask` the caller's `AskPermission` picks one. Nothing is ever answered
"always" on the researcher's behalf while a "once" option exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from lightscientist_jupyter.values.permission import (
    ALLOW_KINDS,
    REJECT_KINDS,
    PermissionOption,
    PermissionRequest,
)
from lightscientist_jupyter.vocab import AgentPermissions

AskPermission = Callable[[PermissionRequest], str | None]
"""Asks whoever decides (the researcher, the supervisor) and returns the chosen option's id,
or None to cancel the request. Called from its own thread; it may block."""

_PREFERRED: dict[AgentPermissions, tuple[str, ...]] = {
    AgentPermissions.ALLOW: ALLOW_KINDS,
    AgentPermissions.DENY: REJECT_KINDS,
}


def by_policy(
    policy: AgentPermissions, options: Sequence[PermissionOption]
) -> PermissionOption | None:
    """The option `allow` or `deny` answers with; None when the agent offers none of its
    kinds (the request is then cancelled). `ask` answers nothing by itself."""
    for kind in _PREFERRED.get(policy, ()):
        for option in options:
            if option.kind == kind:
                return option
    return None
