"""The hand-over card in a real JupyterLab (headless Chromium): "Do it myself" in the side
panel takes the stage of a project nobody runs; the card shows the task and its checklist,
which ticks when a file appears; the skeleton goes into the open notebook as a new cell; a
deliver with an output missing is refused naming it. The notebook dashboard's card puts its
skeleton into a new cell below the dashboard's, once per click. Screenshots go to
`test-output/`.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from support.browser import (
    OUTPUT,
    lab_page,
    launch_chromium,
    require_browser,
    start_lab,
    tab_to,
)

from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser


@pytest.fixture
def lab(tmp_path):
    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    ResearchController.create(
        Workspace.at(root / "study"),
        "Does warmup help?",
        mode="auto",
        start_stage="experiment.loop",
    )
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("1")], metadata={"kernelspec": kernel}
    )
    nbformat.write(notebook, root / "scratch.ipynb")
    with start_lab(root, tmp_path) as server:
        yield root, server


def test_do_it_myself_shows_the_card_with_its_checklist(lab):
    from playwright.sync_api import expect, sync_playwright

    root, server = lab
    OUTPUT.mkdir(exist_ok=True)
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.set_default_timeout(30_000)
            try:
                page.goto(f"{server.url}/lab/tree/scratch.ipynb?token={server.token}")
                cells = page.locator(".jp-Notebook .jp-Cell")
                expect(cells).to_have_count(1, timeout=60_000)
                page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']").click()
                panel = page.locator("#lightscientist-panel")
                panel.locator(".ls-project[data-path='study']").click()
                take = panel.locator(".ls-take")
                expect(take).to_have_text("Do it myself")
                take.click()
                card = panel.locator(".ls-handoff")
                expect(card.locator("h3")).to_have_text("experiment.loop is yours")
                check = card.locator(".ls-handoff-check li")
                expect(check).to_have_count(2)
                expect(card.locator(".ls-handoff-check li[data-ready='false']")).to_have_count(2)
                expect(panel.locator(".ls-gate")).to_be_hidden()
                expect(take).to_be_hidden()
                (root / "study" / "experiment").mkdir(exist_ok=True)  # the take's notebook
                (root / "study" / "experiment" / "results.csv").write_text("a\n1\n")
                expect(card.locator(".ls-handoff-check li[data-ready='true']")).to_have_text(
                    "☑ experiment/results.csv", timeout=15_000
                )
                page.screenshot(path=str(OUTPUT / "handoff-card.png"))

                card.locator(".ls-insert").click()
                expect(cells).to_have_count(2)
                expect(cells.nth(1)).to_contain_text("'experiment.loop' is yours")

                # keyboard only: the panel's shortcut, Tab to the comment, Tab to Deliver
                page.keyboard.press("Alt+Shift+L")
                tab_to(page, card.locator(".ls-comment"))
                page.keyboard.type("Ran it by hand.")
                tab_to(page, card.locator(".ls-deliver"))
                page.keyboard.press("Enter")
                expect(panel.locator(".ls-handoff-message")).to_contain_text(
                    "experiment/log.md (missing)"
                )
            except Exception:
                page.screenshot(path=str(OUTPUT / "handoff-failure.png"))
                print("jupyter lab:\n" + "\n".join(server.output.lines[-40:]))
                raise
        finally:
            browser.close()
    state = json.loads((root / "study" / ".lightscientist" / "state.json").read_text())
    assert (state["status"], state["pending"]["kind"]) == ("waiting_user", "handoff")


@pytest.mark.slow
def test_the_dashboards_skeleton_button_inserts_a_cell_below_and_the_graphs_keep_their_heads(
    tmp_path,
):
    require_browser()
    from lightscientist_jupyter import api

    root = tmp_path / "root"
    root.mkdir()
    ResearchController.create(
        Workspace.at(root / "study"), "Does warmup help?", mode="auto",
        start_stage="experiment.loop",
    )  # fmt: skip
    assert api.take(root / "study").accepted is not False  # nobody runs it: handed now
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    sources = ["%load_ext lightscientist_jupyter", "%lightscientist status --workspace study",
               "1 + 1"]  # fmt: skip
    cells = [nbformat.v4.new_code_cell(source) for source in sources]
    notebook = nbformat.v4.new_notebook(cells=cells, metadata={"kernelspec": kernel})
    nbformat.write(notebook, root / "board.ipynb")
    with start_lab(root, tmp_path / "lab") as server:
        logs = {"jupyter lab": server.output}
        with lab_page(server.url, server.token, "handoff-dashboard-failure.png", logs) as page:
            skeleton_cell_below_the_dashboard(page, server)
            every_edge_keeps_its_arrowhead_with_the_panel_open(page)


EDGE_MARKERS = """
() => [...document.querySelectorAll('svg.ls-graph path[marker-end]')]
  .filter(edge => edge.getClientRects().length)
  .map(edge => {
    const id = edge.getAttribute('marker-end').slice(5, -1);
    const marker = document.getElementById(id);
    return {id, own: !!marker && marker.closest('svg') === edge.closest('svg'),
            panel: !!edge.closest('#lightscientist-panel')};
  })
"""
"""Each edge drawn on the page, whether the marker its `url(#id)` names is its own drawing's
(an id is the page's: the first element with it wins), and whether it is the panel's."""


def every_edge_keeps_its_arrowhead_with_the_panel_open(page) -> None:
    """The dashboard's graph and the side panel's, on one page: every edge ends with its own
    drawing's arrowhead, so none draws without a head (#41: the two once shared `ls-arrow`)."""
    from playwright.sync_api import expect

    page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']").click()
    panel = page.locator("#lightscientist-panel")
    panel.locator(".ls-project[data-path='study']").click()
    expect(panel.locator(".ls-graph-box svg.ls-graph:visible")).to_have_count(1, timeout=30_000)
    edges = page.evaluate(EDGE_MARKERS)
    assert any(e["panel"] for e in edges) and any(not e["panel"] for e in edges), edges
    assert [e for e in edges if not e["own"]] == []
    assert (
        len({e["id"] for e in edges if e["panel"]} & {e["id"] for e in edges if not e["panel"]})
        == 0
    )
    page.screenshot(path=str(OUTPUT / "dashboard-and-panel-arrowheads.png"))


def skeleton_cell_below_the_dashboard(page, server) -> None:
    from playwright.sync_api import expect

    page.goto(f"{server.url}/lab/tree/board.ipynb?token={server.token}")
    cells_shown = page.locator(".jp-Notebook .jp-Cell")
    expect(cells_shown).to_have_count(3, timeout=60_000)
    idle = page.get_by_role("contentinfo").get_by_role("button", name=re.compile(r"\| Idle$"))
    expect(idle).to_be_visible(timeout=90_000)
    cells_shown.nth(0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Shift+Enter")  # the dashboard, with its hand-over card
    insert = page.get_by_role("button", name="Insert a skeleton cell below")
    expect(insert).to_be_visible(timeout=60_000)
    insert.click()
    expect(cells_shown).to_have_count(4)
    new = cells_shown.nth(2)  # right below the dashboard's cell
    expect(new).to_contain_text("'experiment.loop' is yours")
    expect(new.locator(".jp-OutputArea-output")).to_have_count(0)
    expect(cells_shown.nth(3)).to_contain_text("1 + 1")
    note = page.locator(".ls-skeleton-output[data-inserted='true']")
    expect(note).to_have_text("Inserted the skeleton as a new cell below.")
    page.screenshot(path=str(OUTPUT / "handoff-dashboard-skeleton.png"))
    insert.click()  # each click its own cell
    expect(cells_shown).to_have_count(5)
