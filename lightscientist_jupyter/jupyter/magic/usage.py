"""`%lightscientist usage` and `estimate`: what the project's model calls cost, and what a run
may cost before it starts, from a notebook.

    %lightscientist usage                  # a DataFrame, one row per stage and a total
    %lightscientist usage --by worker      # or model, visit
    %lightscientist usage --json           # the dict `lightscientist usage --json` prints
    %lightscientist estimate               # a DataFrame: per stage calls, tokens, cost, basis
    %lightscientist research "…" --dry-run # the same for that run; nothing starts

    %config LightScientistMagics.budget = "usd=5"          # the runs' default --budget
    %config LightScientistMagics.price = "in=0.2,out=0.6"  # and --price

The operations are `api.usage` and `api.estimate` (`app.usage`, `app.estimate` underneath).
"""

from __future__ import annotations

import argparse
from typing import Any

from lightscientist_jupyter.api.usage import estimate as estimate_frame
from lightscientist_jupyter.api.usage import usage as usage_frame
from lightscientist_jupyter.app import estimate as estimates
from lightscientist_jupyter.app import usage as usages
from lightscientist_jupyter.jupyter.magic.session import MagicSession


def usage(m: MagicSession, args: argparse.Namespace) -> Any:
    workspace = m.workspace_of(args)
    if args.json:
        return usages.usage_view(workspace, args.by).to_dict()
    return usage_frame(workspace, args.by)


def estimate(m: MagicSession, args: argparse.Namespace) -> Any:
    """`estimate`, and `research --dry-run` (its goal counts in the task's size)."""
    defaults = m.defaults()
    where = {
        "stages": args.stages,
        "model": args.model or defaults.model,
        "base_url": args.base_url or defaults.base_url,
        "price": args.price or defaults.price,
        "source": getattr(args, "source", None),
        "goal": getattr(args, "goal", ""),
    }
    if getattr(args, "json", False):
        return estimates.estimate(m.workspace_of(args), **where).to_dict()
    return estimate_frame(m.workspace_of(args), **where)
