"""`%lightscientist show`: a workspace's files inline, the paper and its reviews first.

    %lightscientist show paper          # the PDF's pages as images (else its source)
    %lightscientist show paper --pdf    # the PDF's absolute path
    %lightscientist show reviews        # each reviewer's scores, then the decision
    %lightscientist show PROCESS.md     # a file (Markdown, an image, a table, JSON…)
    %lightscientist show experiment.analyze   # a stage's outputs

The paper is `app.paper`'s (its pages drawn by poppler outside the workspace), the reviews
`app.reviews`'; every other file goes through `jupyter.show.load`.
"""

from __future__ import annotations

import argparse
from typing import Any

from IPython.display import Image, Markdown, display

from lightscientist_jupyter import api
from lightscientist_jupyter.app import paper as papers
from lightscientist_jupyter.app import reviews as reviewing
from lightscientist_jupyter.jupyter import show as show_files
from lightscientist_jupyter.jupyter.magic.session import MagicSession


def show(m: MagicSession, args: argparse.Namespace) -> Any:
    view = api.open_project(m.workspace_of(args))
    target = args.target
    if args.pdf and target != "paper":
        raise papers.PaperUnavailable(f"--pdf goes with `show paper`, not `show {target}`")
    if target == "paper":
        return _paper(view, pdf_only=args.pdf)
    if target == "reviews":
        return _reviews(view)
    table = view.table()
    if target in table:
        for rel in table[target].outputs:
            display(Markdown(f"**`{rel}`**"))
            try:
                display(*show_files.load(view.files, rel))
            except show_files.ShowError as exc:
                display(Markdown(f"*{exc}*"))
        return None
    objects = show_files.load(view.files, target)
    if len(objects) == 1:
        return objects[0]
    display(*objects)
    return None


def _paper(view: api.ProjectView, *, pdf_only: bool) -> None:
    paper = papers.read_paper(view.files, view.table())
    if pdf_only:
        if paper.pdf_path is None:
            raise papers.PaperUnavailable(
                paper.problem
                or f"no PDF was built ({view.files.path(papers.PDF_FILE)} does not exist)"
            )
        print(paper.pdf_path)
        return
    if paper.pdf is not None and paper.pages is not None:
        try:
            pages = papers.page_images(view.files, paper.pdf)
        except papers.PaperUnavailable as exc:  # drawn a moment ago, damaged now: the source
            paper = papers.Paper(paper.root, paper.source, paper.written, paper.pdf, None, str(exc))
        else:
            display(Markdown(f"**{paper.header()}**"))
            display(*(Image(data=png, format="png") for png in pages))
            return
    objects = show_files.load(view.files, paper.source)  # a missing source: its one line
    display(Markdown(f"*{paper.header()}*"), *objects)


def _reviews(view: api.ProjectView) -> Any:
    import pandas as pd

    found = reviewing.read_reviews(view.files)
    card = found.card()
    if not found.found:
        display(Markdown(f"*{reviewing.review_lines(found)[0]}*"))
        return None
    frame = pd.DataFrame(
        [
            {
                "reviewer": r["reviewer"],
                "round": r["round"],
                **{c: r["scores"].get(c) for c in card["columns"]},
                "decision": r["decision"],
            }
            for r in card["reviews"]
        ],
        columns=["reviewer", "round", *card["columns"], "decision"],
    ).set_index("reviewer")
    lines = [f"**{reviewing.aggregate_line(card)}**"]
    lines += [f"- required: {change}" for change in card["required_changes"]]
    if card["earlier_changes"]:
        lines.append(f"\nround {card['earlier_round']} asked for:")
        lines += [f"- {change}" for change in card["earlier_changes"]]
    lines += [f"\n*problem: {p}*" for p in card["problems"]]
    display(frame, Markdown("\n".join(lines)))
    return None
