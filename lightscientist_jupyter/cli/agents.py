"""The command line's `agents check NAME`: the agent's line, then what it said of itself
(see `app.agents`); exit 1 when it failed, with its one line on stderr."""

from __future__ import annotations

import argparse
import sys

from lightscientist_jupyter.app import agents
from lightscientist_jupyter.app.ops.catalog import OPERATIONS
from lightscientist_jupyter.cli.foreground import EXIT_FAILED, EXIT_OK


def cmd_agents(args: argparse.Namespace) -> int:
    request = OPERATIONS["agents"].request_from(args)
    found = agents.check(
        request.agent,
        stages=request.stages,
        workspace=request.workspace or ".",
        sandbox=request.sandbox,
    )
    if not found.ok:
        print(f"lightscientist agents: {found.message}", file=sys.stderr)
        return EXIT_FAILED
    print("\n".join(found.lines()))
    return EXIT_OK


HANDLERS = {"agents": cmd_agents}
