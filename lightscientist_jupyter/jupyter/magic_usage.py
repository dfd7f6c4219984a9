"""`%lightscientist usage`: what the project's model calls cost, from a notebook.

    %lightscientist usage                  # a DataFrame, one row per stage and a total
    %lightscientist usage --by worker      # or model, visit
    %lightscientist usage --json           # the dict `lightscientist usage --json` prints

The operation is `api.usage` (`app.usage.usage_view` underneath).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.api.usage import usage as usage_frame
from lightscientist_jupyter.app import usage as usages

if TYPE_CHECKING:
    from lightscientist_jupyter.jupyter.magic import LightScientistMagics


def usage(m: LightScientistMagics, args: argparse.Namespace) -> Any:
    workspace = m.workspace_of(args)
    if args.json:
        return usages.usage_view(workspace, args.by).to_dict()
    return usage_frame(workspace, args.by)
