"""A search stage's tree in the side panel and the dashboard of a real JupyterLab (headless
Chromium), one drawing on both: every node, its status, the best marked, the way to it
darker; a node clicked (or chosen with the keyboard) shows its summary, its files against
its parent's as a diff and the end of its job's log, read from the project's real files.
Screenshots go to `test-output/`.
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
from support.tables import search_table
from support.trees import searched_project, with_node_files

from lightscientist_jupyter.controller import load_table
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser


@pytest.fixture
def lab(tmp_path, write_table):
    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    workspace = Workspace.at(root / "searched")
    searched_project(workspace, load_table(write_table(tmp_path / "table", search_table())))
    with_node_files(workspace)
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    sources = ["%load_ext lightscientist_jupyter", "%lightscientist status --workspace searched"]
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in sources], metadata={"kernelspec": kernel}
    )
    nbformat.write(notebook, root / "search.ipynb")  # the dashboard's test opens it
    with start_lab(root, tmp_path) as server:
        yield server


def test_the_panel_draws_the_tree_and_a_click_shows_a_node(lab):
    from playwright.sync_api import expect

    with lab_page(lab.url, lab.token, "panel-search-failure.png", {"lab": lab.output}) as page:
        panel = open_panel(page)
        panel.locator(".ls-project[data-path='searched']").click()
        search = panel.locator(".ls-search-section")
        expect(search).to_be_visible()
        boxes = search.locator("svg.ls-tree g.ls-tree-node")
        expect(boxes).to_have_count(6)
        statuses = [boxes.nth(i).get_attribute("data-status") for i in range(6)]
        assert statuses == ["ok", "failed", "ok", "ok", "failed", "running"]
        best = search.locator("g.ls-tree-best")
        expect(best).to_have_attribute("data-node", "n004")
        expect(best).to_contain_text("★ best")
        darker = search.locator("path.ls-edge.ls-taken")
        expect(darker).to_have_count(1)
        assert (darker.get_attribute("data-from"), darker.get_attribute("data-to")) == (
            "n001",
            "n004",
        )

        best.click()
        node = search.locator(".ls-node-detail")
        expect(node.locator(".ls-node-head")).to_have_text("Node n004: improve, ok · metric 0.41")
        expect(node.locator(".ls-node-summary")).to_have_text("warmup for 500 steps")
        expect(node).to_contain_text("Files against its parent n001: 3 differ")
        node.locator(".ls-diff-file[data-path='train.py'] > summary").click()
        expect(node.locator(".ls-diff-add")).to_contain_text(["+warmup = 500"])
        expect(node.locator(".ls-diff-del")).to_contain_text(["-warmup = 0"])
        expect(node.locator(".ls-node-log")).to_have_text("node 4 ran\nfinal_loss=0.44")
        expect(search.locator("g.ls-tree-picked")).to_have_attribute("data-node", "n004")
        search.screenshot(path=str(OUTPUT / "panel-search-node.png"))
        problems = axe_problems(page, "#lightscientist-panel")
        assert not problems, "\n".join(problems)

        # the keyboard picks a node too: a draft, its files all new, its job's log
        search.locator("g.ls-tree-node[data-node='n001']").focus()
        page.keyboard.press("Enter")
        expect(node.locator(".ls-node-head")).to_have_text("Node n001: draft, ok · metric 0.52")
        expect(node).to_contain_text("A draft: its 2 file(s) are all new")
        expect(node.locator(".ls-node-log")).to_have_text("node 1 ran\nfinal_loss=0.41")


def test_the_dashboard_draws_the_same_tree_and_a_click_shows_the_same_node(lab):
    """The notebook's dashboard draws the tree with the panel's own drawing: the same boxes,
    the best marked, and a node clicked shown whole below it (read through the server)."""
    from playwright.sync_api import expect

    with lab_page(lab.url, lab.token, "dashboard-search-failure.png", {"lab": lab.output}) as page:
        run_all_cells(page, lab, "search.ipynb")
        search = page.locator(".lightscientist-dashboard .ls-search-card")
        boxes = search.locator("svg.ls-tree g.ls-tree-node")
        expect(boxes).to_have_count(6, timeout=90_000)
        statuses = [boxes.nth(i).get_attribute("data-status") for i in range(6)]
        assert statuses == ["ok", "failed", "ok", "ok", "failed", "running"]
        expect(search.locator(".ls-tree-words")).to_contain_text("search tree of")
        best = search.locator("g.ls-tree-best")
        expect(best).to_have_attribute("data-node", "n004")
        best.click()
        node = search.locator(".ls-node-detail")
        expect(node.locator(".ls-node-head")).to_have_text("Node n004: improve, ok · metric 0.41")
        expect(node).to_contain_text("Files against its parent n001: 3 differ")
        node.locator(".ls-diff-file[data-path='train.py'] > summary").click()
        expect(node.locator(".ls-diff-add")).to_contain_text(["+warmup = 500"])
        search.screenshot(path=str(OUTPUT / "dashboard-search-node.png"))
