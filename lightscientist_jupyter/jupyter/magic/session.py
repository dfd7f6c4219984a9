"""What a subcommand of `%lightscientist` gets of the magic: the session's defaults.

The handlers in `magic/*.py` take a `MagicSession` rather than `magics.LightScientistMagics`,
so the table in `magics.py` imports them and none of them imports it back; the magic itself
is the one session there is (its `%config` traits are these properties).
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol

from lightscientist_jupyter.app.ops.run_options import SessionDefaults


class MagicSession(Protocol):
    """The `%config LightScientistMagics.…` defaults of this kernel, and its shell."""

    def defaults(self) -> SessionDefaults:
        """The session's defaults now (`app.ops.run_options.SESSION_DEFAULTS`)."""
        ...

    @property
    def shell(self) -> Any:
        """IPython's shell (None outside one)."""

    def workspace_of(self, args: argparse.Namespace) -> str:
        """The subcommand's `--workspace`, else the session's default workspace."""
        ...
