"""The paper and its reviews as the doors read them (`app.paper`, `app.reviews`): a real PDF
made by pdflatex, review files as the review stage writes them, and what a damaged or
planted file turns into — one line naming the file, never a traceback."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from support.papers import EARLIER_CHANGES, make_pdf, write_paper, write_reviews

from lightscientist_jupyter.app import paper as papers
from lightscientist_jupyter.app import reviews as reviewing
from lightscientist_jupyter.beneath import Beneath
from lightscientist_jupyter.values.review import META_FILE, review_file

# ------------------------------------------------------------------------- the reviews


@pytest.mark.unit
def test_the_reviews_are_each_reviewer_s_scores_and_the_aggregate(tmp_path):
    write_reviews(tmp_path)
    card = reviewing.read_reviews(Beneath(tmp_path)).card()
    assert [(r["reviewer"], r["scores"]["overall"], r["decision"]) for r in card["reviews"]] == [
        (1, 7, "accept"),
        (2, 6, "accept"),
        (3, 5, "revise"),
    ]
    assert card["reviews"][2]["weaknesses"] == ["reviewer 3 wants more data"]
    assert (card["round"], card["mean"], card["accept"], card["decision"]) == (
        2,
        6.0,
        6.0,
        "accept",
    )
    assert card["summary"] == "round 2: mean 6 against accept 6 — accept"
    assert (card["earlier_round"], card["earlier_changes"]) == (1, EARLIER_CHANGES)
    assert card["columns"] == ["soundness", "presentation", "contribution", "overall"]
    assert card["problems"] == []


@pytest.mark.unit
def test_the_review_lines_are_a_table_then_what_was_asked(tmp_path):
    write_reviews(tmp_path)
    assert reviewing.review_lines(reviewing.read_reviews(Beneath(tmp_path))) == [
        "reviewer  round  soundness  presentation  contribution  overall  decision",
        "1         2      3          3             3             7        accept",
        "2         2      3          2             3             6        accept",
        "3         2      2          3             2             5        revise",
        "round 2: mean 6 against accept 6 — accept",
        "round 1 asked for:",
        "  add an ablation without warmup",
        "  caption Figure 1 with its seeds",
    ]


@pytest.mark.unit
def test_no_reviews_is_said_in_one_line(tmp_path):
    found = reviewing.read_reviews(Beneath(tmp_path))
    assert not found.found
    assert reviewing.review_lines(found) == [
        "No reviews yet (paper/reviews/ holds no review and no meta.json)."
    ]


@pytest.mark.unit
@pytest.mark.parametrize(
    "text, problem",
    [
        (
            "{not json",
            "paper/reviews/meta.json is damaged: not JSON (Expecting property name "
            "enclosed in double quotes at line 1)",
        ),
        ("[1, 2]", "paper/reviews/meta.json is damaged: not a JSON object"),
        (
            '{"round": "two", "mean": 6, "decision": "accept"}',
            "paper/reviews/meta.json is damaged: round, required_changes missing or of the wrong "
            "type",
        ),
    ],
)
def test_a_damaged_meta_is_one_line_and_the_reviews_still_show(tmp_path, text, problem):
    write_reviews(tmp_path)
    (tmp_path / META_FILE).write_text(text, encoding="utf-8")
    card = reviewing.read_reviews(Beneath(tmp_path)).card()
    assert card["problems"] == [problem]
    assert card["round"] is None and len(card["reviews"]) == 3
    assert card["summary"] == "no aggregate yet (paper/reviews/meta.json was not written)"


@pytest.mark.unit
def test_a_review_off_the_rubric_is_named_and_left_out(tmp_path):
    write_reviews(tmp_path)
    bad = json.loads((tmp_path / review_file(2)).read_text(encoding="utf-8"))
    bad["scores"]["overall"] = 11
    (tmp_path / review_file(2)).write_text(json.dumps(bad), encoding="utf-8")
    card = reviewing.read_reviews(Beneath(tmp_path)).card()
    assert [r["reviewer"] for r in card["reviews"]] == [1, 3]
    assert card["problems"] == [
        "paper/reviews/review-2.json is damaged: 'scores.overall' must be an integer from 1 to 10"
    ]


@pytest.mark.unit
def test_a_link_planted_for_the_meta_is_refused_not_followed(tmp_path):
    write_reviews(tmp_path)
    secret = tmp_path / "elsewhere.json"
    secret.write_text(json.dumps({"round": 9}), encoding="utf-8")
    (tmp_path / META_FILE).unlink()
    os.symlink(secret, tmp_path / META_FILE)
    card = reviewing.read_reviews(Beneath(tmp_path)).card()
    assert card["round"] is None
    [problem] = card["problems"]
    assert problem.startswith(f"{tmp_path / META_FILE}: is a symbolic link")


# ------------------------------------------------------------------------- the paper


def test_a_built_pdf_is_found_with_its_pages_and_drawn_as_png(tmp_path):
    write_paper(tmp_path / "ws", tmp_path / "tex", pages=3)
    files = Beneath(tmp_path / "ws")
    paper = papers.read_paper(files)
    assert (paper.source, paper.written, paper.pdf, paper.pages) == (
        "paper/paper.tex",
        True,
        "paper/paper.pdf",
        3,
    )
    assert paper.header() == f"{tmp_path / 'ws' / 'paper' / 'paper.pdf'} — 3 pages"
    images = papers.page_images(files)
    assert len(images) == 3 and all(png.startswith(b"\x89PNG\r\n") for png in images)
    assert sorted(os.listdir(tmp_path / "ws" / "paper")) == ["paper.pdf", "paper.tex"]


def test_without_a_pdf_the_source_is_named(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.md").write_text("# A paper\n", encoding="utf-8")
    paper = papers.read_paper(Beneath(tmp_path))
    assert (paper.source, paper.pdf, paper.pages) == ("paper/paper.md", None, None)
    assert paper.header() == (
        "No PDF was built (paper/paper.pdf does not exist); its source is paper/paper.md."
    )


def test_a_damaged_pdf_is_one_line_naming_it(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.pdf").write_bytes(b"%PDF-1.5 but nothing else")
    paper = papers.read_paper(Beneath(tmp_path))
    assert paper.pdf == "paper/paper.pdf" and paper.pages is None
    assert paper.header().startswith(
        "The PDF cannot be shown: paper/paper.pdf cannot be read as a PDF (pdfinfo: "
    )
    assert "\n" not in paper.header()


def test_a_pdf_link_planted_in_the_workspace_is_not_opened(tmp_path):
    outside = tmp_path / "outside.pdf"
    outside.write_bytes(make_pdf(tmp_path / "tex"))
    ws = tmp_path / "ws"
    (ws / "paper").mkdir(parents=True)
    os.symlink(outside, ws / "paper" / "paper.pdf")
    paper = papers.read_paper(Beneath(ws))
    assert paper.pdf is None and paper.pdf_path is None
    assert paper.header().startswith(
        f"The PDF cannot be shown: {ws / 'paper' / 'paper.pdf'}: is a symbolic link"
    )


def test_poppler_missing_is_said_in_one_line(tmp_path, monkeypatch):
    write_paper(tmp_path / "ws", tmp_path / "tex")
    papers._counted.clear()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert shutil.which("pdfinfo") is None
    paper = papers.read_paper(Beneath(tmp_path / "ws"))
    assert (
        paper.problem == "pdfinfo is not installed (poppler-utils: apt-get install poppler-utils)"
    )


def test_a_link_in_the_paper_s_place_is_the_paper_not_another_file(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "paper" / "paper.md").write_text("# The real paper\n", encoding="utf-8")
    os.symlink(tmp_path / "paper" / "paper.md", tmp_path / "paper" / "paper.tex")
    paper = papers.read_paper(Beneath(tmp_path))
    assert (paper.source, paper.written) == ("paper/paper.tex", False)
