"""Run controls in a real JupyterLab, driven in headless Chromium (issue 21).

- The dashboard after a kernel restart: a notebook runs the research in its kernel up to
  `idea.gate`; the kernel is restarted; the dashboard greys out and shows the banner with
  Resume and the command; Resume (through the server: a background `lightscientist resume
  --wait`) continues the project, and Approve on the same, dead dashboard reaches that run,
  which goes on past the gate.
- The side panel in the dark theme, at 1400 and 900 px: stage N of M and the time per stage;
  Resume for a project no process runs; an approval the resumed run applies; Re-run this
  stage (with its confirmation) rewinds and runs the stage again; Cancel (confirmed) ends it.
  axe-core finds nothing serious or critical in the panel, in the dark theme.

Screenshots: `test-output/controls-*.png`. Needs what `tests/support/browser.py` names.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from support.browser import (
    OUTPUT,
    axe_problems,
    launch_chromium,
    require_browser,
    show_panel,
    start_lab,
)
from support.waiting import wait_for

from lightscientist_jupyter.controller.lock import read_holder
from lightscientist_jupyter.workspace import Workspace

pytestmark = [pytest.mark.browser, pytest.mark.slow]

GOAL = "Does learning-rate warmup help a small MLP?"
HIDDEN = ("LIGHTSCIENTIST_AUTO_APPROVE", "LIGHTSCIENTIST_MODEL", "OPENAI_BASE_URL",
          "OPENAI_API_KEY")
ALL_CELLS = {"@jupyterlab/notebook-extension:tracker": {"windowingMode": "none"}}
DARK = {"@jupyterlab/apputils-extension:themes": {"theme": "JupyterLab Dark"}}


@contextlib.contextmanager
def _page(lab, viewport: dict, failure: str):
    """A Chromium page on `lab`; on a failure, a screenshot and the logs of both sides."""
    from playwright.sync_api import sync_playwright

    console: list[str] = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport=viewport)
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(30_000)
            try:
                yield page
            except Exception:
                page.screenshot(path=str(OUTPUT / failure))
                print("browser console:\n" + "\n".join(console[-40:]))
                print("jupyter lab:\n" + "\n".join(lab.output.lines[-60:]))
                raise
        finally:
            browser.close()


def _state(project: Path) -> dict:
    return json.loads((project / ".lightscientist" / "state.json").read_text(encoding="utf-8"))


def _notebook(path: Path, cells: list[str]) -> None:
    path.write_text(json.dumps({
        "cells": [{"cell_type": "code", "metadata": {}, "execution_count": None,
                   "outputs": [], "source": source} for source in cells],
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                    "language": "python"}},
        "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def _runner_pid(project: Path) -> int | None:
    holder = read_holder(Workspace.at(project))
    return holder.get("pid") if holder else None


def _end_background_run(project: Path) -> None:
    """Cancel a run the test's Resume started (it is detached, so nothing else ends it)."""
    if _runner_pid(project) is not None:
        subprocess.run([sys.executable, "-m", "lightscientist_jupyter", "cancel",
                        "--workspace", str(project)], check=False, capture_output=True,
                       timeout=60)
        wait_for(lambda: _runner_pid(project) is None, "the background run to end", within=60)


@pytest.mark.timeout(300)
def test_a_kernel_restart_shows_the_banner_and_resume_continues(tmp_path):
    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    project = root / "study"
    _notebook(root / "run.ipynb", [
        "%load_ext lightscientist_jupyter",
        "%config LightScientistMagics.workspace = 'study'",
        f'%lightscientist research "{GOAL}" --mode manual --model offline',
    ])
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    OUTPUT.mkdir(exist_ok=True)
    with start_lab(root, tmp_path / "lab", settings=ALL_CELLS, env=env) as lab:
        try:
            with _page(lab, {"width": 1400, "height": 1200},
                       "controls-restart-failure.png") as page:
                page.goto(lab.page_url("lab/tree/run.ipynb"))
                expect(page.get_by_role("contentinfo").get_by_role(
                    "button", name="Python 3 (ipykernel) | Idle")).to_be_visible(timeout=90_000)
                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")
                             ).click()
                dashboard = page.locator(".jp-OutputArea-output .lightscientist-dashboard")
                controls = dashboard.locator(".ls-controls")
                expect(controls.locator(".ls-progress")).to_contain_text(
                    re.compile(r"stage 6 of 14 · \d+s in idea\.gate"), timeout=90_000)
                # named as the file browser names it; whole in its tooltip and its copy
                chip = controls.locator(".ls-path-chip")
                expect(chip).to_have_text("study")
                expect(chip).to_have_attribute("title", str(project))
                expect(controls.locator("button.ls-copy-path")).to_be_visible()
                dead = controls.locator(".ls-dead")
                expect(dead).to_be_hidden()
                kernel_pid = _runner_pid(project)
                assert kernel_pid is not None  # the kernel runs it, waiting at the gate

                # narrow: the graph wraps into a narrower drawing; the current stage in view
                shown = dashboard.locator(".ls-graph-box svg.ls-graph:visible")
                expect(shown).to_have_count(1)
                wide_width = shown.get_attribute("width")
                page.set_viewport_size({"width": 900, "height": 1200})
                expect(shown).not_to_have_attribute("width", wide_width or "")
                narrow = dashboard.locator(".ls-graph-box svg.ls-graph:visible")
                expect(narrow).to_have_count(1)
                box = dashboard.locator(".ls-graph-box").bounding_box()
                gate = narrow.locator("g.ls-node[data-stage='idea.gate'] rect").first
                at = gate.bounding_box()
                assert box and at and at["x"] + at["width"] <= box["x"] + box["width"], (box, at)
                label = narrow.locator("g.ls-node[data-stage='idea.gate'] text.ls-label").first
                assert float(label.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")
                             ) >= 11
                dashboard.evaluate("e => e.scrollIntoView({block: 'start'})")
                page.screenshot(path=str(OUTPUT / "controls-900.png"))
                page.set_viewport_size({"width": 1400, "height": 1200})

                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Kernel$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel\W*$")
                             ).click()
                page.locator(".jp-Dialog-button.jp-mod-accept", has_text="Restart").click()
                expect(dead).to_be_visible(timeout=30_000)
                expect(dead).to_contain_text("This dashboard is not live")
                expect(dead.locator(".ls-resume-command")).to_have_text(
                    f"%lightscientist resume --workspace {project}")
                wait_for(lambda: _runner_pid(project) is None, "the dead kernel's lock", within=30)
                assert page.locator(".lightscientist-dashboard .ls-live").first.evaluate(
                    "e => getComputedStyle(e).opacity") != "1"  # greyed out
                dashboard.evaluate("e => e.scrollIntoView({block: 'start'})")
                page.screenshot(path=str(OUTPUT / "controls-restarted.png"))

                dead.locator("button.ls-dead-resume").click()
                outcome = dead.locator(".ls-outcome")
                expect(outcome).to_contain_text(
                    re.compile(r"resum\w+ .*in the background.* pid \d+"), timeout=15_000)
                pid = int(re.search(r"pid (\d+)", outcome.inner_text()).group(1))
                assert wait_for(_runner_pid_is(project, pid), "the resumed run", within=30)
                page.screenshot(path=str(OUTPUT / "controls-resumed.png"))

                # Approve on the dead dashboard reaches the resumed run, which goes on
                card = dashboard.locator(".ls-gatecard[data-decision]")
                card.locator("button.ls-approve").click()
                expect(card.locator(".ls-outcome")).to_contain_text(
                    re.compile(r"approved idea\.gate"), timeout=5_000)
                wait_for(lambda: _state(project)["stage"].startswith(("experiment.", "paper.")),
                             "the resumed run to go past idea.gate", within=60)
        finally:
            _end_background_run(project)

    state = _state(project)
    assert [(d["stage"], d["source"]) for d in state["decisions"]] == [("idea.gate", "dashboard")]
    log = (project / ".lightscientist" / "resume.log").read_text(encoding="utf-8")
    assert f"$ lightscientist resume --workspace {project} --wait" in log


def _runner_pid_is(project: Path, pid: int):
    return lambda: _runner_pid(project) == pid


@pytest.mark.timeout(300)
def test_the_panel_resumes_reruns_and_cancels_in_the_dark_theme(tmp_path):
    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    root.mkdir()
    project = root / "study"
    made = subprocess.run(
        [sys.executable, "-m", "lightscientist_jupyter", "research", GOAL, "--workspace",
         str(project)], capture_output=True, text=True, timeout=240,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""})
    assert made.returncode == 0, made.stderr  # it stopped at idea.gate; nobody runs it
    OUTPUT.mkdir(exist_ok=True)
    with start_lab(root, tmp_path / "lab", settings=DARK) as lab:
        try:
            with _page(lab, {"width": 1400, "height": 1000}, "controls-panel-failure.png") as page:
                page.goto(lab.page_url("lab"))
                tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']")
                tab.wait_for(timeout=60_000)
                # the theme is applied once its settings are read, after the side bar is up
                expect(page.locator("body")).to_have_attribute(
                    "data-jp-theme-name", "JupyterLab Dark", timeout=30_000)
                tab.click()
                panel = page.locator("#lightscientist-panel")
                panel.locator(".ls-project[data-path='study']").click()
                controls = panel.locator(".ls-controls")
                # where the run is goes with its state, above the card that waits
                expect(panel.locator(".ls-detail .ls-progress")).to_contain_text(
                    re.compile(r"Stage 6 of 14 · \d+(m\d+)?s in idea\.gate"))
                expect(controls.locator(".ls-times summary")).to_contain_text(
                    "Time per stage (6 visited)")
                resume = controls.locator("button.ls-resume")
                expect(resume).to_be_visible()
                expect(controls.locator("button.ls-pause")).to_be_visible()  # at a gate too
                # state, then the pending card, then the controls: one row of short labels
                card = panel.locator(".ls-gate").bounding_box()
                toolbar = controls.locator("[role='toolbar']")
                buttons = toolbar.locator("button:visible")
                expect(buttons).to_have_text(["Resume", "Pause", "", ""])  # two icons
                expect(toolbar.locator("button.ls-rerun")).to_have_attribute(
                    "aria-label", "Re-run idea.gate from its start")
                expect(toolbar.locator("button.ls-cancel")).to_have_attribute(
                    "title", "Cancel the project and its workers")
                tops = {round(buttons.nth(i).bounding_box()["y"]) for i in range(4)}
                assert card and len(tops) == 1 and tops.pop() > card["y"], (card, tops)
                expect(resume).to_have_attribute("title", "Resume the project in the background")
                problems = axe_problems(page, "#lightscientist-panel")
                assert not problems, "\n".join(problems)
                page.screenshot(path=str(OUTPUT / "controls-panel-dark.png"))

                resume.click()
                message = controls.locator(".ls-control-message")
                expect(message).to_contain_text(re.compile(r"in the background.* pid \d+"),
                                                timeout=15_000)
                expect(resume).to_be_hidden(timeout=10_000)  # a process runs it now
                panel.locator(".ls-gate .ls-approve").click()
                expect(panel.locator(".ls-stage")).to_have_text("experiment.gate",
                                                                timeout=60_000)

                # Re-run this stage, confirmed: rewound to its start, run again
                controls.locator("button.ls-rerun").click()
                ask = controls.locator(".ls-confirm")
                expect(ask).to_contain_text("Re-run experiment.gate?")
                problems = axe_problems(page, "#lightscientist-panel")
                assert not problems, "\n".join(problems)
                ask.locator("button.ls-confirm-yes").click()
                expect(message).to_contain_text(
                    re.compile(r"rewound to the start of experiment\.gate#1 \(snapshot \w+\); "
                               r"resumed in the background by pid \d+ "
                               r"\(log: \.lightscientist/resume\.log\)"),
                    timeout=40_000)
                expect(panel.locator(".ls-status-text")).to_have_text("waiting for you",
                                                                      timeout=60_000)

                # Pause after this stage: asked of the background run, kept in the state,
                # so a reload still says so
                controls.locator("button.ls-pause").click()
                expect(message).to_contain_text(
                    re.compile(r"the run \(pid \d+\) pauses after experiment\.gate finishes"),
                    timeout=15_000)
                pausing = controls.locator(".ls-pausing")
                expect(pausing).to_have_text("Pausing after experiment.gate", timeout=15_000)
                expect(controls.locator("button.ls-pause")).to_be_hidden()
                page.reload()
                tab.wait_for(timeout=60_000)
                show_panel(page)
                panel.locator(".ls-project[data-path='study']").click()
                expect(pausing).to_have_text("Pausing after experiment.gate", timeout=30_000)
                page.set_viewport_size({"width": 900, "height": 1000})
                page.screenshot(path=str(OUTPUT / "controls-panel-dark-900.png"))

                controls.locator("button.ls-cancel").click()
                ask.locator("button.ls-confirm-yes").click()
                expect(message).to_contain_text("cancel request sent", timeout=15_000)
                expect(panel.locator(".ls-status-text")).to_have_text("cancelled",
                                                                      timeout=30_000)
                expect(resume).to_be_visible(timeout=10_000)
        finally:
            _end_background_run(project)

    state = _state(project)
    assert state["status"] == "cancelled" and state["reason"].startswith("cancelled")
    events = [json.loads(line) for line in
              (project / ".lightscientist" / "events.jsonl").read_text().splitlines()]
    assert any(e["type"] == "stage.rewound" for e in events)
    assert [d["source"] for d in state["decisions"]][:1] == ["panel"]
