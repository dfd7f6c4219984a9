"""What a subcommand of `%lightscientist` gets of the magic: the session's defaults.

The handlers in `magic/*.py` take a `MagicSession` rather than `magics.LightScientistMagics`,
so the table in `magics.py` imports them and none of them imports it back; the magic itself
is the one session there is (its `%config` traits are these properties).
"""

from __future__ import annotations

import argparse
from typing import Any, Protocol


class MagicSession(Protocol):
    """The `%config LightScientistMagics.…` defaults of this kernel, and its shell."""

    @property
    def model(self) -> str | None: ...

    @property
    def base_url(self) -> str | None: ...

    @property
    def record(self) -> bool: ...

    @property
    def budget(self) -> str | None: ...

    @property
    def price(self) -> str | None: ...

    @property
    def checkpoints(self) -> str | None: ...

    @property
    def ray(self) -> str | None: ...

    @property
    def library(self) -> list[str]: ...

    @property
    def job_time_limit(self) -> str | None: ...

    @property
    def shell(self) -> Any:
        """IPython's shell (None outside one)."""

    def workspace_of(self, args: argparse.Namespace) -> str:
        """The subcommand's `--workspace`, else the session's default workspace."""
        ...
