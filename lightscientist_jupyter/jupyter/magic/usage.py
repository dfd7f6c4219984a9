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

from lightscientist_jupyter import options
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
    where = {
        "stages": args.stages,
        "model": args.model or m.model or None,
        "base_url": args.base_url or m.base_url or None,
        "price": args.price or m.price or None,
        "source": getattr(args, "source", None),
        "goal": getattr(args, "goal", ""),
    }
    if getattr(args, "json", False):
        return estimates.estimate(m.workspace_of(args), **where).to_dict()
    return estimate_frame(m.workspace_of(args), **where)


def run_values(m: MagicSession, args: argparse.Namespace) -> dict[str, Any]:
    """`options.sandbox_values`, with the session's `%config` budget, price, checkpoints, ray,
    library and job time limit as defaults (an option on the line wins)."""
    values = options.sandbox_values(args)
    for key in ("budget", "price", "checkpoints", "ray", "library", "job_time_limit"):
        values[key] = values[key] or getattr(m, key) or None
    if values["library"] is not None:
        values["library"] = list(values["library"])
    return values
