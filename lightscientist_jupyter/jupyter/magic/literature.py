"""`%lightscientist check [PATH…]`: the provenance report of a paper in a notebook, then its
numbers with a button to the notebook cell that printed each (`provenance_links`)."""

from __future__ import annotations

import argparse

from IPython.core.error import UsageError

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.workspace import Workspace


def check(m: MagicSession, args: argparse.Namespace) -> None:
    from IPython.display import HTML, display

    from lightscientist_jupyter.jupyter.provenance_links import report_html

    root = Workspace.at(m.workspace_of(args)).root  # absolute: `-w ws` is the kernel's ws
    report = literature.check(root, args.paths, args.results)
    print("\n".join(report.lines()))
    traced = report_html(root, report.sections)
    if traced:  # the numbers again, each with a button to the cell that printed it
        display(HTML(traced))
    if not report.ok:
        raise UsageError(f"check: {len(report.problems)} unresolved: {report.problems[0]}")
