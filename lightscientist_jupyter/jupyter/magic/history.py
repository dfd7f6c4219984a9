"""`%lightscientist history / diff / rewind / fork`: time travel from a notebook.

    %lightscientist history                       # a DataFrame, one row per snapshot
    %lightscientist diff experiment.loop#1 experiment.loop#2 --stat
    %lightscientist rewind experiment.setup
    %lightscientist fork idea.gate ../other-idea

The operations are `api.history` / `api.diff` / `api.rewind` / `api.fork`.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.core.error import UsageError

from lightscientist_jupyter import api
from lightscientist_jupyter.app.ops import arguments
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.vocab import ReplySource


def history(m: MagicSession, args: argparse.Namespace) -> Any:
    workspace = m.workspace_of(args)
    if args.json:
        from lightscientist_jupyter.app import history as timeline
        from lightscientist_jupyter.workspace import Workspace

        return timeline.history(Workspace.at(workspace))
    return api.history(workspace)


def diff(m: MagicSession, args: argparse.Namespace) -> None:
    refs, paths = arguments.diff_words(args)
    if len(refs) > 2:
        raise UsageError(f"%lightscientist diff takes at most two REFs, not {len(refs)}")
    print(
        api.diff(m.workspace_of(args), *refs, stat=args.stat, paths=paths, against=args.against),
        end="",
    )


def rewind(m: MagicSession, args: argparse.Namespace) -> None:
    print(api.rewind(m.workspace_of(args), args.ref, source=ReplySource.MAGIC))


def fork(m: MagicSession, args: argparse.Namespace) -> None:
    print(api.fork(m.workspace_of(args), args.ref, args.new_dir))
