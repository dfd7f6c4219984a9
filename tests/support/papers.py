"""A paper and its reviews on disk, as the paper and review stages leave them.

`make_pdf` builds a real PDF with pdflatex (TeX Live: a test that needs it fails, naming the
package, where it is missing); `write_reviews` writes three reviewers' `review-<n>.json` of
round 2 and the `meta.json` layer 1 aggregates them into, with round 1's required changes.
`REVIEW_TABLE` is a small stage table whose gate is the review stage (it writes into
`paper/reviews/`).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from lightscientist_jupyter.values.review import META_FILE, review_file

LATEX = r"""\documentclass{article}
\begin{document}
\section{Warmup helps}
%s
\end{document}
"""

REVIEW_TABLE = """\
start = "write"

[stages.write]
skill = "skills/write.md"
outputs = ["paper/paper.tex"]
next = "review"
allowed = ["review"]

[stages.review]
skill = "skills/review.md"
outputs = ["paper/reviews/meta.json"]
next = "done"
allowed = ["done", "write"]
approval = true
"""
"""write → review (a gate, the review stage) → done."""

SCORES = {
    1: {"soundness": 3, "presentation": 3, "contribution": 3, "overall": 7},
    2: {"soundness": 3, "presentation": 2, "contribution": 3, "overall": 6},
    3: {"soundness": 2, "presentation": 3, "contribution": 2, "overall": 5},
}
DECISIONS = {1: "accept", 2: "accept", 3: "revise"}
EARLIER_CHANGES = ["add an ablation without warmup", "caption Figure 1 with its seeds"]


def make_pdf(folder: Path, pages: int = 2) -> bytes:
    """A real `pages`-page PDF made by pdflatex in `folder`; its bytes."""
    if shutil.which("pdflatex") is None:
        pytest.fail("pdflatex is missing (apt-get install texlive-latex-base)")
    folder.mkdir(parents=True, exist_ok=True)
    body = "\n\\newpage\n".join(f"Page {n} of the paper." for n in range(1, pages + 1))
    (folder / "p.tex").write_text(LATEX % body, encoding="utf-8")
    subprocess.run(
        ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "p.tex"],
        cwd=folder,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return (folder / "p.pdf").read_bytes()


def write_paper(root: Path, scratch: Path, pages: int = 2) -> None:
    """`paper/paper.tex` and the `paper/paper.pdf` built from a source like it."""
    paper = root / "paper"
    paper.mkdir(parents=True, exist_ok=True)
    (paper / "paper.tex").write_text(LATEX % "Warmup lowers the loss.", encoding="utf-8")
    (paper / "paper.pdf").write_bytes(make_pdf(scratch, pages))


def review(reviewer: int, round: int = 2) -> dict:
    return {
        "reviewer": reviewer,
        "round": round,
        "scores": SCORES[reviewer],
        "strengths": [f"reviewer {reviewer} likes the seeds"],
        "weaknesses": [f"reviewer {reviewer} wants more data"],
        "questions": [],
        "decision": DECISIONS[reviewer],
    }


def meta() -> dict:
    lines = [
        {"reviewer": n, "overall": SCORES[n]["overall"], "decision": DECISIONS[n], "scores": s}
        for n, s in SCORES.items()
    ]
    first = {
        "round": 1,
        "mean": 4.67,
        "decision": "revise",
        "required_changes": EARLIER_CHANGES,
        "accept": 6.0,
        "rubric": "neurips",
        "reviews": lines,
        "problems": [],
    }
    last = {"round": 2, "mean": 6.0, "decision": "accept", "required_changes": []}
    return {**first, **last, "rounds": [first]}


def write_reviews(root: Path) -> None:
    """Three reviews of round 2 and their aggregate (round 1 asked for `EARLIER_CHANGES`)."""
    for n in SCORES:
        path = root / review_file(n)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(review(n)), encoding="utf-8")
    (root / META_FILE).write_text(json.dumps(meta()), encoding="utf-8")
