"""The command line's time travel: `history`, `diff`, `rewind`, `fork` (see `app.history`)."""

from __future__ import annotations

import argparse
import json
import sys

from lightscientist_jupyter.app import history as timeline
from lightscientist_jupyter.app.ops import arguments
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.vocab import ReplySource
from lightscientist_jupyter.workspace import Workspace


def _workspace(args: argparse.Namespace) -> Workspace:
    return Workspace.at(args.workspace or ".")


def cmd_history(args: argparse.Namespace) -> int:
    rows = timeline.history(_workspace(args))
    if args.json:
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    print(f"{'id':<14}{'time':<21}{'stage':<24}{'event':<10}{'+':>4}{'~':>4}{'-':>4}")
    for r in rows:
        ref = f"{r['stage']}#{r['visit']}"
        print(
            f"{r['id']:<14}{r['time']:<21}{printable(ref):<24}{r['event']:<10}"
            f"{len(r['added']):>4}{len(r['changed']):>4}{len(r['removed']):>4}"
        )
    return 0


def cmd_diff(args: argparse.Namespace) -> int:
    refs, paths = arguments.diff_words(args)
    if len(refs) > 2:
        raise BadInput(f"diff takes at most two REFs, not {len(refs)}: {' '.join(refs)}")
    text = timeline.diff(
        Workspace.at(args.workspace or "."),
        *refs,
        stat=args.stat,
        paths=paths,
        against=args.against,
    )
    sys.stdout.write(text)
    return 0


def cmd_rewind(args: argparse.Namespace) -> int:
    print(timeline.rewind(_workspace(args), args.ref, source=ReplySource.CLI).message)
    return 0


def cmd_fork(args: argparse.Namespace) -> int:
    print(timeline.fork(_workspace(args), args.ref, args.new_dir).message)
    return 0


HANDLERS = {
    "history": cmd_history,
    "diff": cmd_diff,
    "rewind": cmd_rewind,
    "fork": cmd_fork,
}
