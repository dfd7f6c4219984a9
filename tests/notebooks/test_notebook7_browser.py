"""The same extension in Notebook 7 (a real `jupyter notebook` in headless Chromium): a
research cell draws the dashboard, its gate is approved with the dashboard's button, and
the side panel opens beside the notebook with its shortcut and shows the project.

Notebook 7 builds its pages from JupyterLab's parts but has neither JupyterLab's shell nor
its status bar: the extension takes both as optional, and this is where that is checked.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
from support.browser import OUTPUT, lab_page, require_browser, show_panel, start_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

HIDDEN = ("LIGHTSCIENTIST_AUTO_APPROVE", "LIGHTSCIENTIST_MODEL", "OPENAI_BASE_URL",
          "OPENAI_API_KEY")  # fmt: skip


def _state(project: Path) -> dict:
    return json.loads((project / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


def kernel_idle(url: str, token: str, within: float = 90) -> None:
    """Wait until the server has a kernel that is idle (the notebook's, started)."""
    deadline = time.monotonic() + within
    while True:
        with urllib.request.urlopen(f"{url}/api/kernels?token={token}", timeout=5) as answer:
            kernels = json.loads(answer.read())
        if any(k.get("execution_state") == "idle" for k in kernels):
            return
        assert time.monotonic() < deadline, f"no idle kernel: {kernels}"
        time.sleep(0.3)


@pytest.mark.timeout(300)
def test_a_research_cell_its_dashboard_and_the_panel_in_notebook_7(tmp_path):
    from playwright.sync_api import expect

    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    study = nbformat.v4.new_notebook(
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)"}}
    )
    study.cells = [
        nbformat.v4.new_code_cell("%load_ext lightscientist_jupyter"),
        nbformat.v4.new_code_cell(
            '%lightscientist research "Does warmup help a small MLP?" -w study --mode manual'
        ),
    ]
    nbformat.write(study, root / "study.ipynb")
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    with start_lab(root, tmp_path / "nb", env=env, app="notebook") as server:
        logs = {"notebook": server.output}
        with lab_page(server.url, server.token, "notebook7-failure.png", logs) as page:
            page.goto(server.page_url("notebooks/study.ipynb"))
            idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
            expect(idle).to_have_count(1, timeout=90_000)
            kernel_idle(server.url, server.token)  # started and connected, not only drawn
            page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
            page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()

            dashboard = page.locator(".jp-OutputArea-output .lightscientist-dashboard")
            expect(dashboard).to_be_visible(timeout=120_000)
            gate = dashboard.locator("svg.ls-graph g.ls-node[data-stage='idea.gate']").first
            expect(gate).to_have_attribute("data-state", "waiting", timeout=120_000)
            approve = dashboard.locator(".ls-gatecard button.ls-approve")
            expect(approve).to_be_enabled()
            page.screenshot(path=str(OUTPUT / "notebook7-gate.png"))
            approve.click()
            project = root / "study"
            expect(dashboard.locator(".ls-status-line")).to_contain_text(
                "experiment.gate", timeout=90_000
            )
            assert [d["stage"] for d in _state(project)["decisions"]] == ["idea.gate"]

            panel = show_panel(page)  # Alt+Shift+L: the panel beside the notebook
            row = panel.locator(".ls-project[data-path='study']")
            expect(row).to_be_visible(timeout=30_000)
            row.click()
            expect(panel.locator(".ls-stage")).to_have_text("experiment.gate", timeout=60_000)
            expect(panel.locator(".ls-gate .ls-approve")).to_be_visible()
            page.screenshot(path=str(OUTPUT / "notebook7-panel.png"))
