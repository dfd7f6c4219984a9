"""The command line's `memory`: the user's memory as text (see `app.memory`).

`memory` lists the entries, newest first (`--json`: one JSON list); `memory search QUERY`
the best matches in the same columns; `memory export` prints every entry as a JSON line;
`memory add` and `memory forget` print one line (as `remember` does, which needs no handler
of its own). What is not done — no entry of that id — is one line on stderr and exit 1, and
so is a store that cannot be opened (`MemoryUnavailable`, which `cli.main` catches).
"""

from __future__ import annotations

import argparse
import json
import sys

from lightscientist_jupyter.app import memory
from lightscientist_jupyter.app.ops.catalog import OPERATIONS
from lightscientist_jupyter.cli.foreground import EXIT_FAILED, EXIT_OK


def cmd_memory(args: argparse.Namespace) -> int:
    request = OPERATIONS["memory"].request_from(args)
    outcome = memory.perform(request)
    listing = request.action in (None, "search")
    if not outcome.ok:
        print(f"lightscientist memory: {outcome.message}", file=sys.stderr)
        return EXIT_FAILED
    if request.action == "export":
        for record in outcome.records():
            print(json.dumps(record, ensure_ascii=False))
    elif listing and request.json:
        print(json.dumps(outcome.records(), ensure_ascii=False))
    elif listing and (outcome.entries or outcome.hits):
        found = [hit.entry for hit in outcome.hits] or list(outcome.entries)
        print("\n".join(memory.entry_lines(found)))
    else:
        print(outcome.message)
    return EXIT_OK


HANDLERS = {"memory": cmd_memory}
