"""The side panel's paper: a link to its PDF (opened in JupyterLab's PDF viewer) and the
reviews' scores, read as `show paper` and the gate card read them (`app.paper`,
`app.reviews`)."""

from __future__ import annotations

from lightscientist_jupyter.app.paper import read_paper
from lightscientist_jupyter.app.reviews import ReviewsCard, read_reviews
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.controller import StageTable
from lightscientist_jupyter.jupyter.server.answers import PaperCard
from lightscientist_jupyter.jupyter.server.paths import join


def paper_card(files: Beneath, rel: str, table: StageTable | None) -> PaperCard:
    """The paper's files, their paths relative to the server root (`rel`: the project's)."""
    paper = read_paper(files, table)
    return {
        "pdf": join(rel, paper.pdf) if paper.pdf else None,
        "pages": paper.pages,
        "source": join(rel, paper.source) if paper.written else None,
        "note": paper.header() if paper.pdf is None or paper.problem else None,
    }


def reviews_card(files: Beneath) -> ReviewsCard | None:
    """Each reviewer's scores and the aggregate; None when no review was written."""
    found = read_reviews(files)
    return found.card() if found.found else None
