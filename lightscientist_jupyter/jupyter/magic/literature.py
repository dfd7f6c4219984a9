"""`%lightscientist check [PATH…]`: the provenance report of a paper in a notebook."""

from __future__ import annotations

import argparse

from IPython.core.error import UsageError

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.jupyter.magic.session import MagicSession


def check(m: MagicSession, args: argparse.Namespace) -> None:
    from pathlib import Path

    report = literature.check(Path(m.workspace_of(args)), args.paths, args.results)
    print("\n".join(report.lines()))
    if not report.ok:
        raise UsageError(f"check: {len(report.problems)} unresolved: {report.problems[0]}")
