"""The command line's `show`: the paper (`--pdf`: its PDF's path), its reviews, a stage's
outputs, a notebook's cells (ids, sources, shortened outputs), or a file's text. What cannot
be shown — no PDF, no reviews, a missing file, a link planted in the workspace, a file that is
no notebook — is one line on stderr and exit 1."""

from __future__ import annotations

import argparse
import sys

from lightscientist_jupyter.app import notebooks
from lightscientist_jupyter.app import paper as papers
from lightscientist_jupyter.app import reviews as reviewing
from lightscientist_jupyter.app.commands import require_project
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.cli.foreground import EXIT_FAILED, EXIT_OK
from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.events import printable
from lightscientist_jupyter.values.notebook import is_notebook, reading
from lightscientist_jupyter.workspace import Workspace

TEXT_MAX = 400_000
"""The most bytes of a text file printed (the rest is named, not printed)."""


def _failed(line: str) -> int:
    print(f"lightscientist show: {line}", file=sys.stderr)
    return EXIT_FAILED


def cmd_show(args: argparse.Namespace) -> int:
    ws = Workspace.at(args.workspace or ".")
    if args.pdf and args.target != "paper":
        raise BadInput(f"--pdf goes with `show paper`, not `show {args.target}`")
    if args.target == "paper":
        return _paper(ws, pdf_only=args.pdf)
    state = require_project(ws)
    if args.target == "reviews":
        found = reviewing.read_reviews(Beneath(ws.root))
        if not found.found:
            return _failed(reviewing.review_lines(found)[0])
        print("\n".join(printable(line) for line in reviewing.review_lines(found)))
        return EXIT_OK
    table = load_table(state.stages_file)
    if args.target in table:  # a stage: its outputs, and which were written
        files = Beneath(ws.root)
        for out in table[args.target].outputs:
            print(out if files.is_file(out) else f"{out}  (not written)")
        return EXIT_OK
    if is_notebook(args.target):
        return _notebook(Beneath(ws.root), args.target)
    return _text(Beneath(ws.root), args.target)


def _notebook(files: Beneath, rel: str) -> int:
    try:
        nb = notebooks.read_notebook(files, rel)
    except notebooks.NotebookUnavailable as exc:
        return _failed(str(exc))
    for line in reading(nb, rel, notebooks.OUTPUT_LIMIT).splitlines():
        print(printable(line))
    return EXIT_OK


def _paper(ws: Workspace, *, pdf_only: bool) -> int:
    paper = papers.paper_of(ws)
    if pdf_only:
        if paper.pdf_path is None:
            return _failed(f"no PDF was built ({ws.root / papers.PDF_FILE} does not exist)")
        print(paper.pdf_path)
        return EXIT_OK
    print(printable(paper.header()))
    return _text(Beneath(ws.root), paper.source)


def _text(files: Beneath, rel: str) -> int:
    try:
        data = files.read_bytes(rel, limit=TEXT_MAX + 1)
    except FileNotFoundError:
        return _failed(f"{files.path(rel)} does not exist")
    except OSError as exc:  # a link on the way (PathRefused), unreadable
        return _failed(str(exc))
    text = data[:TEXT_MAX].decode("utf-8", errors="replace")
    print(text, end="" if text.endswith("\n") else "\n")
    if len(data) > TEXT_MAX:
        print(f"… (cut at {TEXT_MAX:,} bytes; the file is {files.path(rel)})")
    return EXIT_OK


HANDLERS = {"show": cmd_show}
