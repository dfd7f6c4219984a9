"""`%lightscientist memory`: the user's memory from a notebook.

    %lightscientist memory                      # a DataFrame, the newest entry first
    %lightscientist memory --json               # the same entries, a list of dicts
    %lightscientist memory search warmup -k 3   # the best matches, with their score
    %lightscientist memory add "…" / forget 7 / export
    %lightscientist remember Check the warmup before the learning rate

The operation is `app.memory` (`remember` is performed as every door performs it, its line
printed); `api.memory` gives the frames. An entry that is not there is a one-line
`UsageError`, and so is a store that cannot be opened.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from IPython.core.error import UsageError

from lightscientist_jupyter import api
from lightscientist_jupyter.app import memory as memories
from lightscientist_jupyter.app.ops.catalog import OPERATIONS
from lightscientist_jupyter.jupyter.magic.session import MagicSession


def memory(m: MagicSession, args: argparse.Namespace) -> Any:
    request = OPERATIONS["memory"].request_from(args)
    listing = request.action in (None, "search")
    if listing and not request.json:
        query = request.query if request.action else None
        return api.memory(query, k=request.k, kind=request.kind)
    outcome = memories.perform(request, m.defaults().workspace)
    if not outcome.ok:
        raise UsageError(f"%lightscientist memory: {outcome.message}")
    if listing:
        return outcome.records()
    if request.action == "export":
        for record in outcome.records():
            print(json.dumps(record, ensure_ascii=False))
    else:
        print(outcome.message)
    return None
