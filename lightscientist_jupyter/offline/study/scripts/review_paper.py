#!/usr/bin/env python3
"""Review paper/paper.tex as one of the offline demo's reviewers, and write the review file.

Written by LightScientist's offline demo model (see DISCLAIMER in study_design.py). Run from
the workspace root:
    python paper/reviews/review_paper.py REVIEWER ROUND paper/reviews/review-REVIEWER.json

Each reviewer reads the paper on its own (never another reviewer's file) and judges it from
what the text holds, on the NeurIPS-style scales (soundness, presentation and contribution
1-4, overall 1-10). The three reviewers weigh different things, so their judgements differ:
1. methods: is the search's gain attributed — a table of every node of the search with its
   change and its metric (an ablation over the variants), not only the best one?
2. presentation: is the figure embedded and captioned, with its results table and references?
3. contribution: does the paper say how far its finding reaches — that the study used a
   single generated dataset (one data seed) — among its limitations?
A reviewer past the third weighs as reviewer ((n - 1) mod 3) + 1 does. The judgements are
fixed functions of the text: the same paper gets the same review.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
PAPER = ROOT / "paper" / "paper.tex"

ABLATION_LABEL = r"\label{tab:ablation}"
"""The search's ablation table, as paper/paper_revision.py labels it."""
SCOPE_PHRASE = "single generated dataset"
"""The limitation the contribution reviewer looks for (paper/paper_revision.py writes it)."""


def has_figure(text: str) -> bool:
    return "\\includegraphics" in text and "\\caption" in text


def review_methods(text: str) -> dict[str, object]:
    ablation = ABLATION_LABEL in text
    weaknesses = (
        []
        if ablation
        else [
            "Add an ablation table of the search: every node with its kind, parent, the setting "
            "it changed and its final loss, so the best node's gain can be attributed to its "
            "changes rather than read from one number."
        ]
    )
    return {
        "scores": {
            "soundness": 3 if ablation else 2,
            "presentation": 3,
            "contribution": 3 if ablation else 2,
            "overall": 7 if ablation else 4,
        },
        "strengths": [
            "Every condition is run over several seeds and reported with 95% t-intervals.",
            "The search's variants ran as separate jobs, each with its own result file.",
        ],
        "weaknesses": weaknesses,
        "questions": ["Would the search's best settings keep their rank with more seeds?"],
        "decision": "accept" if ablation else "revise",
    }


def review_presentation(text: str) -> dict[str, object]:
    figure = has_figure(text)
    table = "\\begin{tabular}" in text
    cited = "\\bibliography" in text or "\\begin{thebibliography}" in text
    missing = [
        what
        for what, present in (
            ("Embed figure 1 with a caption saying what it plots.", figure),
            ("Give the summary of results as a table.", table),
            ("Give the references as a bibliography.", cited),
        )
        if not present
    ]
    presentation = 3 if not missing else 2
    return {
        "scores": {
            "soundness": 3,
            "presentation": presentation,
            "contribution": 2,
            "overall": 6 if not missing else 4,
        },
        "strengths": [
            "The figure's caption says what the error bars are and how many seeds each holds."
            if figure
            else "The results are stated with their intervals.",
            "Every number in the text can be traced to the result files.",
        ],
        "weaknesses": missing,
        "questions": ["Could the learning-rate axis show where training starts to diverge?"],
        "decision": "accept" if not missing else "revise",
    }


def review_contribution(text: str) -> dict[str, object]:
    scoped = SCOPE_PHRASE in text
    groups = re.findall(r"\\cite[a-z]*\{([^}]*)\}", text)
    cites = len({key.strip() for group in groups for key in group.split(",") if key.strip()})
    weaknesses = (
        []
        if scoped
        else [
            "State in the limitations that the study used a single generated dataset (one "
            "data seed), and how far the finding on warmup can be expected to reach beyond it."
        ]
    )
    return {
        "scores": {
            "soundness": 3,
            "presentation": 3,
            "contribution": 3 if scoped else 2,
            "overall": 6 if scoped else 5,
        },
        "strengths": [
            f"The paper places its question among {cites} cited works on warmup."
            if cites
            else "The question is stated plainly.",
        ],
        "weaknesses": weaknesses,
        "questions": ["Does the finding hold for an adaptive optimiser such as Adam?"],
        "decision": "accept" if scoped else "revise",
    }


REVIEWERS = (review_methods, review_presentation, review_contribution)


def main(argv: list[str]) -> int:
    if len(argv) != 3 or not argv[0].isdigit() or not argv[1].isdigit():
        print("usage: review_paper.py REVIEWER ROUND OUTPUT.json", file=sys.stderr)
        return 2
    reviewer, round_number, output = int(argv[0]), int(argv[1]), ROOT / argv[2]
    try:
        text = PAPER.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"cannot read {PAPER.relative_to(ROOT)}: {exc}", file=sys.stderr)
        return 1
    judge = REVIEWERS[(reviewer - 1) % len(REVIEWERS)]
    review = {"reviewer": reviewer, "round": round_number, **judge(text)}
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(f".{output.name}.tmp")
    tmp.write_text(json.dumps(review, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, output)
    scores = review["scores"]
    assert isinstance(scores, dict)
    print(
        f"reviewer {reviewer} (round {round_number}, {judge.__name__.removeprefix('review_')}): "
        f"overall {scores['overall']}, {review['decision']}; wrote {argv[2]}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
