"""The quickstart in a real JupyterLab, driven in headless Chromium (Debian's package).

The test copies `notebooks/quickstart.ipynb` under a fresh server root, starts `jupyter lab`
on loopback, opens the notebook and runs all its cells from the Run menu. The dashboard draws
the stage graph; the project stops at `idea.gate` and the gate panel opens — and waits, since
nobody set `LIGHTSCIENTIST_AUTO_APPROVE` here. The test clicks Approve in the page and sees the
graph's current stage move past `idea.gate`; then it approves the two later gates from the
command line (`lightscientist reply y`, through the project's inbox) and sees the graph reach
`done`. Screenshots: `test-output/quickstart-*.png`.

Needs the built extension, `/usr/bin/chromium` and Python playwright (see
`tests/support/browser.py`); without them the test is skipped, except under CI.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.browser import OUTPUT, launch_chromium, require_browser, start_lab

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[2]
QUICKSTART = REPO / "notebooks" / "quickstart.ipynb"
HIDDEN = ("LIGHTSCIENTIST_AUTO_APPROVE", "LIGHTSCIENTIST_MODEL", "OPENAI_BASE_URL",
          "OPENAI_API_KEY")
# every cell in the DOM (no virtual scrolling), so locators see the whole notebook
ALL_CELLS = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}


def _state(project: Path) -> dict:
    return json.loads((project / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


def _top(locator) -> None:
    """Scroll the notebook so that `locator`'s top is at the top of the view."""
    locator.evaluate("element => element.scrollIntoView({block: 'start'})")


def _reply_when_waiting(project: Path, stage: str, timeout: float = 60) -> str:
    """Wait until the project waits at `stage`, then approve it with the command line."""
    deadline = time.monotonic() + timeout
    while True:
        state = _state(project)
        if state["status"] == "waiting_user" and state["stage"] == stage:
            break
        assert state["status"] in ("running", "waiting_user"), state
        assert time.monotonic() < deadline, f"not waiting at {stage}: {state['stage']}"
        time.sleep(0.2)
    reply = subprocess.run([sys.executable, "-m", "lightscientist_jupyter", "reply", "y",
                            "--workspace", str(project), "--comment",
                            "approved from a terminal"],
                           check=False, capture_output=True, text=True, timeout=60)
    assert reply.returncode == 0, reply.stdout + reply.stderr
    return reply.stdout


@pytest.mark.timeout(240)
def test_quickstart_in_jupyterlab_waits_for_a_click_on_approve(tmp_path):
    require_browser()
    from playwright.sync_api import expect, sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(QUICKSTART, root / QUICKSTART.name)
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    OUTPUT.mkdir(exist_ok=True)
    shots = {name: OUTPUT / f"quickstart-{name}.png" for name in ("gate", "approved", "done")}
    for shot in shots.values():
        shot.unlink(missing_ok=True)
    console: list[str] = []

    with start_lab(root, tmp_path / "lab", settings=ALL_CELLS, env=env) as lab, \
            sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1300})
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(30_000)
            try:
                page.goto(lab.page_url(f"lab/tree/{QUICKSTART.name}"))
                # the kernel is up (before it is, Run All asks which kernel to start)
                expect(page.get_by_role("contentinfo").get_by_role(
                    "button", name="Python 3 (ipykernel) | Idle")).to_be_visible(timeout=90_000)
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
                       ).to_have_count(1)

                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")
                             ).click()

                dashboard = page.locator(".jp-OutputArea-output .lightscientist-dashboard")
                graph = dashboard.locator("svg.ls-graph")
                expect(graph).to_be_visible(timeout=60_000)
                expect(graph.locator("g.ls-stage[data-stage='idea.survey']")).to_have_count(1)
                gate_node = graph.locator("g.ls-stage[data-stage='idea.gate']")
                expect(gate_node).to_have_attribute("data-state", "waiting", timeout=60_000)
                approve = dashboard.locator("button.widget-button", has_text="Approve")
                expect(approve).to_be_visible()
                expect(approve).to_be_enabled()
                expect(dashboard).to_contain_text("Approve idea.gate and move on to "
                                                  "experiment.setup?")

                # Run All has finished, and the notebook left the gate to a person
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
                       ).to_have_count(1, timeout=60_000)
                outputs = page.locator(".jp-OutputArea-output")
                expect(outputs.filter(has_text="The project waits at idea.gate: click Approve "
                                               "in the dashboard above.")).to_have_count(1)
                expect(outputs.filter(has_text="Not done yet: the project is waiting_user at "
                                               "idea.gate")).to_have_count(1)
                (project,) = (root / "studies").iterdir()
                assert _state(project)["stage"] == "idea.gate"
                assert _state(project)["decisions"] == []

                _top(dashboard)
                page.screenshot(path=str(shots["gate"]))

                approve.click()
                expect(gate_node).to_have_attribute("data-state", "visited", timeout=20_000)
                # the verdict shows until the next gate's question replaces it
                expect(dashboard).to_contain_text("approved at idea.gate")
                # the run goes on by itself and stops at the next gate: that one, and only it
                expect(graph.locator("g.ls-stage[data-stage='experiment.gate']")
                       ).to_have_attribute("data-state", "waiting", timeout=60_000)
                lit = graph.locator("g.ls-stage[data-state='current'], "
                                    "g.ls-stage[data-state='waiting']")
                expect(lit).to_have_count(1)
                _top(dashboard)
                page.screenshot(path=str(shots["approved"]))
                decision = _state(project)["decisions"][0]
                assert (decision["stage"], decision["approve"], decision["source"]) == (
                    "idea.gate", True, "widget")

                # the later gates from a terminal: the dashboard follows the inbox replies
                for stage in ("experiment.gate", "paper.review"):
                    _reply_when_waiting(project, stage)
                expect(graph.locator("g.ls-stage[data-stage='done']")).to_have_attribute(
                    "data-state", "done", timeout=30_000)
                expect(dashboard).to_contain_text(
                    re.compile(r"● done · stage done .* not running"))
                _top(dashboard)
                page.screenshot(path=str(shots["done"]))
                print("\nscreenshots: " + " ".join(str(s) for s in shots.values()))
            except Exception:
                page.screenshot(path=str(OUTPUT / "quickstart-failure.png"))
                print("browser console:\n" + "\n".join(console[-40:]))
                print("jupyter lab:\n" + "\n".join(lab.output.lines[-60:]))
                raise
        finally:
            browser.close()

    state = _state(project)
    assert state["status"] == "done"
    assert [(d["stage"], d["source"]) for d in state["decisions"]] == [
        ("idea.gate", "widget"), ("experiment.gate", "cli"), ("paper.review", "cli")]
    assert (project / "paper" / "paper.md").is_file()
