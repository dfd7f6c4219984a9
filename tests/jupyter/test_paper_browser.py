"""The paper and its reviews in a real JupyterLab (headless Chromium). In the side panel the
project's detail links the PDF pdflatex built, and the link opens it in JupyterLab's PDF
viewer; the reviews are a table of each reviewer's scores with the decision they add up to
and what the round before asked for. In a notebook, the dashboard's gate card at the review
stage draws the same table. Screenshots go to `test-output/`.
"""

from __future__ import annotations

import nbformat
import pytest
from support.browser import (
    OUTPUT,
    axe_problems,
    lab_page,
    open_panel,
    require_browser,
    run_all_cells,
    start_lab,
)
from support.papers import REVIEW_TABLE, write_paper, write_reviews

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser


@pytest.fixture
def lab(tmp_path, write_table):
    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace.at(root / "reviewed")
    table = load_table(write_table(tmp_path / "table", REVIEW_TABLE))
    controller = ResearchController.create(
        workspace, "Does warmup help?", mode="manual", table=table
    )
    write_paper(workspace.root, tmp_path / "tex", pages=2)
    assert controller.finish_stage("paper written", (), "review").accepted
    write_reviews(workspace.root)
    assert controller.finish_stage("Three reviews; the mean meets the bar.", ()).accepted
    notebook = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)"}}
    )
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext lightscientist_jupyter"),
        nbformat.v4.new_code_cell("%lightscientist status -w reviewed"),
    ]
    nbformat.write(notebook, root / "review.ipynb")
    with start_lab(root, tmp_path) as server:
        yield server


def sees_the_reviews(box) -> None:
    """`box` draws `write_reviews`' three reviews, their aggregate and round 1's changes."""
    from playwright.sync_api import expect

    rows = box.locator(".ls-reviews tbody tr")
    expect(rows).to_have_count(3)
    expect(box.locator(".ls-reviews thead th")).to_have_text(
        ["reviewer", "soundness", "presentation", "contribution", "overall", "decision"]
    )
    expect(rows.nth(0).locator("td")).to_have_text(["1", "3", "3", "3", "7", "accept"])
    expect(rows.nth(2).locator("td")).to_have_text(["3", "2", "3", "2", "5", "revise"])
    expect(box.locator(".ls-review-summary")).to_have_text(
        "round 2: mean 6 against accept 6 — accept"
    )
    expect(box.locator(".ls-reviews li")).to_have_text(
        ["add an ablation without warmup", "caption Figure 1 with its seeds"]
    )


def test_the_panel_links_the_pdf_and_shows_the_review_scores(lab):
    from playwright.sync_api import expect

    with lab_page(lab.url, lab.token, "panel-paper-failure.png", {"lab": lab.output}) as page:
        panel = open_panel(page)
        panel.locator(".ls-project[data-path='reviewed']").click()
        paper = panel.locator(".ls-paper-section")
        expect(paper).to_be_visible()
        pdf = paper.locator("button.ls-paper-pdf")
        expect(pdf).to_have_text("paper.pdf (2 pages)")
        expect(pdf).to_have_attribute("data-path", "reviewed/paper/paper.pdf")
        expect(paper.locator("button.ls-paper-source")).to_have_text("paper.tex")

        sees_the_reviews(paper)
        paper.screenshot(path=str(OUTPUT / "panel-paper.png"))
        problems = axe_problems(page, "#lightscientist-panel")
        assert not problems, "\n".join(problems)

        pdf.click()  # JupyterLab's PDF viewer opens it in the main area
        tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="paper.pdf")
        expect(tab).to_be_visible()
        expect(page.locator("#jp-main-dock-panel .jp-PDFContainer")).to_be_visible()


def test_the_gate_card_at_the_review_shows_the_scores_and_the_decision(lab):
    from playwright.sync_api import expect

    with lab_page(lab.url, lab.token, "gate-reviews-failure.png", {"lab": lab.output}) as page:
        run_all_cells(page, lab, "review.ipynb")
        card = page.locator(".jp-OutputArea-output .lightscientist-dashboard .ls-gatecard")
        expect(card.locator(".ls-card-title")).to_have_text(
            "◆ Approve review and move on to done?", timeout=60_000
        )
        sees_the_reviews(card)
        card.screenshot(path=str(OUTPUT / "gate-reviews.png"))
        problems = axe_problems(page, ".lightscientist-dashboard .ls-gatecard")
        assert not problems, "\n".join(problems)
