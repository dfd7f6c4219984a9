"""`%lightscientist check [PATH…]`: the provenance report of a paper in a notebook, then its
numbers with a button to the notebook cell that printed each, when a cell printed any
(`provenance_links`)."""

from __future__ import annotations

import argparse

from IPython.core.error import UsageError

from lightscientist_jupyter.app import literature
from lightscientist_jupyter.jupyter.magic.session import MagicSession
from lightscientist_jupyter.workspace import Workspace


def check(m: MagicSession, args: argparse.Namespace) -> None:
    from IPython.display import HTML, display

    from lightscientist_jupyter.jupyter.provenance_links import report_html, to_cells

    root = Workspace.at(m.workspace_of(args)).root  # absolute: `-w ws` is the kernel's ws
    report = literature.check(root, args.paths, args.results)
    print("\n".join(report.lines()))
    if to_cells(report.sections):  # the numbers again, with a button to each one's cell
        display(HTML(report_html(root, report.sections)))
    if not report.ok:
        raise UsageError(f"check: {len(report.problems)} unresolved: {report.problems[0]}")
