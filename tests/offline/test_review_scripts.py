"""The offline scientist's reviewers and its revision, as the scripts a project runs:
`review_paper.py` judges paper/paper.tex from what the text holds (three reviewers weighing
different things), and `paper_revision.py` makes the changes a round asks for from the
result files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from lightscientist_jupyter.controller.review import aggregate
from lightscientist_jupyter.offline.study.files import script_text, write_into
from lightscientist_jupyter.values.review import ReviewSpec, parse_review

SPEC = ReviewSpec()
DRAFT = r"""\documentclass{article}
\begin{document}
Warmup helps \cite{goyal2017,vaswani2017}.
\begin{figure}\includegraphics{figures/figure1.png}\caption{Loss.}\end{figure}
\begin{tabular}{ll} a & b \\ \end{tabular}
\bibliography{references}
\end{document}
"""
SEARCH_CSV = """node,parent,kind,status,lr,warmup,schedule,epochs,metric
n001,,draft,ok,0.2,0,constant,300,0.08127
n002,,draft,failed,0.8,50,linear,300,
n003,n002,debug,ok,0.8,50,linear,300,0.0430858
"""


def review(ws: Path, reviewer: int, round_number: int = 1) -> dict:
    out = f"paper/reviews/review-{reviewer}.json"
    proc = subprocess.run(
        [sys.executable, "paper/reviews/review_paper.py", str(reviewer), str(round_number), out],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    raw = json.loads((ws / out).read_text())
    parse_review(raw, SPEC, reviewer=reviewer, round=round_number)  # on the rubric
    return raw


def test_three_reviewers_judge_a_first_draft_differently_and_ask_for_two_changes(tmp_path):
    write_into(tmp_path, {"paper/reviews/review_paper.py": script_text("review_paper.py")})
    (tmp_path / "paper" / "paper.tex").write_text(DRAFT)
    reviews = [review(tmp_path, n) for n in (1, 2, 3)]
    assert [(r["scores"]["overall"], r["decision"]) for r in reviews] == [
        (4, "revise"),
        (6, "accept"),
        (5, "revise"),
    ]
    assert "2 cited works" in reviews[2]["strengths"][0]
    valid = [parse_review(r, SPEC, reviewer=i + 1, round=1) for i, r in enumerate(reviews)]
    meta = aggregate(SPEC, 1, valid)
    assert (meta["mean"], meta["decision"]) == (5.0, "revise")
    assert [c.split(":")[0] for c in meta["required_changes"]] == [
        "Add an ablation table of the search",
        "State in the limitations that the study used a single generated dataset (one data "
        "seed), and how far the finding on warmup can be expected to reach beyond it.",
    ]


def test_the_revision_makes_the_changes_and_the_second_round_accepts(tmp_path):
    files = {
        "paper/reviews/review_paper.py": script_text("review_paper.py"),
        "paper/paper_revision.py": script_text("paper_revision.py"),
        "paper/study_common.py": script_text("study_common.py"),
        "paper/study_design.py": script_text("study_design.py"),
        "experiment/search.csv": SEARCH_CSV,
    }
    write_into(tmp_path, files)
    meta = {
        "round": 1,
        "decision": "revise",
        "required_changes": [
            "Add an ablation table of the search: every node …",
            "State in the limitations that the study used a single generated dataset …",
            "Run it on ImageNet.",
        ],
    }
    (tmp_path / "paper" / "reviews" / "meta.json").write_text(json.dumps(meta))
    code = (
        "import sys; sys.dont_write_bytecode = True; import json, paper_revision as r\n"
        "results, limits, done = r.revision(r.requested_changes(), str)\n"
        "print(json.dumps([results, limits, done]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path / "paper",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    results, limits, done = json.loads(proc.stdout)
    assert r"\label{tab:ablation}" in results
    assert r"n003 & debug & n002 & ok & 0.8 & 50 & linear & 300 & 0.04309 \\" in results
    assert r"n002 & draft & -- & failed" in results and "single generated dataset" in limits
    assert [what for _, what in done] == [
        "added Table (ablation) of every search node from experiment/search.csv",
        "added the study's reach to the limitations",
        "not addressed: the offline demo model does not know how to make this change",
    ]
    revised = DRAFT.replace(r"\bibliography", results + limits + "\n" + r"\bibliography")
    (tmp_path / "paper" / "paper.tex").write_text(revised)
    overall = [review(tmp_path, n, 2)["scores"]["overall"] for n in (1, 2, 3)]
    assert overall == [7, 6, 6]
