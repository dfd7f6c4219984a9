"""The quickstart in a real JupyterLab, driven in headless Chromium (Debian's package).

The test copies `notebooks/quickstart.ipynb` under a fresh server root, starts `jupyter lab`
on loopback in the light theme, opens the notebook and runs all its cells
from the Run menu. The dashboard draws the stage graph; the project stops at `idea.gate` and
the gate card opens — and waits, since nobody set `LIGHTSCIENTIST_AUTO_APPROVE` here. An
accessibility check (axe-core) of the dashboard finds nothing serious or critical. The test
clicks Approve and reads, within two seconds, the decision and the stage the project moved
to. At `experiment.gate` it saves the notebook, *reloads the page* and approves from the
dashboard again (the click goes through the server extension, so a reloaded page's comm
does not matter), after checking that the gate's diff shows the analysis and the log as new
files; before that reload the researcher switches to the dark theme from the Settings
menu, so the first half runs in the light theme and the second in the dark (axe-core checks
the dashboard in each; `test_screens_agree_browser` draws every state in both). The last
gate is approved from the command line, and the graph reaches `done`, where no gate card is
left; a kernel restart then shows the banner saying the project is done, with nothing to
resume and no broken-link icon. Screenshots at 1400 and 900 px, named for the theme each
was taken in: `test-output/quickstart-<theme>-*.png`.

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
from support.browser import OUTPUT, axe_problems, launch_chromium, require_browser, start_lab
from support.waiting import wait_for

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


THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}
# what the outputs that hold a dashboard show (for a failure's report)
OUTPUTS_SEEN = """() => [...document.querySelectorAll('.jp-OutputArea-output')].filter(
  e => e.matches('.ls-ProjectOutput') || e.querySelector('.lightscientist-dashboard')
    || /widget/i.test(e.textContent.slice(0, 60))).map(
  e => e.className + ': ' + e.textContent.slice(0, 120))"""
# the edges of the dashboards' drawn graphs whose arrowhead is missing: a marker-end that
# names no marker of the page, or one in a drawing that is not shown
HEADLESS_EDGES = r"""() => [...document.querySelectorAll(
    '.lightscientist-dashboard svg.ls-graph path.ls-edge')].filter(
  p => p.getClientRects().length).filter(p => {
  const id = (p.getAttribute('marker-end') || '').replace(/^url\(#|\)$/g, '');
  const marker = id && document.getElementById(id);
  return !marker || marker.ownerSVGElement !== p.ownerSVGElement;
}).map(p => p.dataset.from + '->' + p.dataset.to)"""
# ipywidgets draws a broken-link icon before each widget of a gone kernel
BROKEN_LINK_ICONS = """() => [...document.querySelectorAll(
    '.lightscientist-dashboard.jupyter-widgets-disconnected,' +
    ' .lightscientist-dashboard .jupyter-widgets-disconnected')].filter(e => {
  const icon = getComputedStyle(e, '::before');
  return icon.display !== 'none' && icon.content !== 'none';
}).length"""


@pytest.mark.timeout(300)
def test_quickstart_in_jupyterlab_approved_from_the_dashboard_also_after_a_reload(tmp_path):
    require_browser()
    from playwright.sync_api import expect, sync_playwright

    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(QUICKSTART, root / QUICKSTART.name)
    env = {k: v for k, v in os.environ.items() if k not in HIDDEN}
    OUTPUT.mkdir(exist_ok=True)
    # the first half in the light theme, the second (from the reload on) in the dark
    names = {"light": ("gate", "gate-900", "approved"),
             "dark": ("reloaded", "gate-diff", "done", "done-900", "restarted",
                      "reloaded-restarted")}
    shots = {name: OUTPUT / f"quickstart-{theme}-{name}.png"
             for theme, taken in names.items() for name in taken}
    for shot in OUTPUT.glob("quickstart-*.png"):
        shot.unlink()
    console: list[str] = []
    theme = "light"
    settings = {**ALL_CELLS, "@jupyterlab/apputils-extension:themes": {"theme": THEMES[theme]}}

    with start_lab(root, tmp_path / "lab", settings=settings, env=env) as lab, \
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
                assert page.locator("body").get_attribute("data-jp-theme-name") == THEMES[theme]

                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")
                             ).click()

                toasts = page.locator(".jp-toast-message", has_text="LightScientist:")
                dashboard = page.locator(".jp-OutputArea-output .lightscientist-dashboard")
                graph = dashboard.locator(".ls-graph-box svg.ls-graph:visible")
                expect(graph).to_be_visible(timeout=60_000)
                expect(graph.locator("g.ls-node[data-stage='idea.survey']")).to_have_count(1)
                gate_node = graph.locator("g.ls-node[data-stage='idea.gate']")
                expect(gate_node).to_have_attribute("data-state", "waiting", timeout=60_000)
                card = dashboard.locator(".ls-gatecard")
                approve = card.locator("button.ls-approve")
                expect(approve).to_be_visible()
                expect(approve).to_be_enabled()
                expect(card.locator(".ls-card-title")).to_have_text(
                    "◆ Approve idea.gate and move on to experiment.setup?")
                expect(card.locator(".ls-files")).to_contain_text("idea/brief.md")
                expect(card.locator(".ls-badge")).to_have_text("offline demo")
                expect(dashboard.locator(".ls-status-line")).to_contain_text("waiting for you")

                # Run All has finished, and the notebook left the gate to a person
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
                       ).to_have_count(1, timeout=60_000)
                (project,) = (root / "studies").iterdir()
                assert _state(project)["stage"] == "idea.gate"
                assert _state(project)["decisions"] == []
                # every cell ran without an error, the check cell included
                expect(page.locator("[data-mime-type='application/vnd.jupyter.stderr']")
                       ).to_have_count(0)
                # the status bar names the waiting project, the side panel never opened
                expect(page.locator(".ls-StatusItem")).to_have_text(
                    f"LightScientist: {project.name} waits for you at idea.gate")
                assert not page.locator("#lightscientist-panel").is_visible()

                # the event stream: newest first, filtered in the browser by layer and type,
                # a row opened whole by Enter
                events = dashboard.locator(".ls-events")
                expect(events.locator(".ls-event").first).to_be_visible()
                expect(events.locator(".ls-events-count")).to_contain_text(" shown · ")
                events.locator("select.ls-events-layer").select_option("1")
                expect(events.locator(".ls-event:not(.ls-l1)")).to_have_count(0)
                expect(events.locator(".ls-event.ls-l1").first).to_be_visible()
                events.locator("input.ls-events-type").fill("stage.")
                types = events.locator(".ls-ev-type").all_inner_texts()
                assert types and all(t.startswith("stage.") for t in types), types
                first = events.locator(".ls-event").first
                first.focus()
                page.keyboard.press("Enter")
                expect(first).to_have_attribute("aria-expanded", "true")
                events.locator("input.ls-events-type").fill("")
                events.locator("select.ls-events-layer").select_option("0")
                expect(events.locator(".ls-event:not(.ls-l1)").first).to_be_visible()

                # the action comes first: the buttons are in view with the card's top
                _top(card)
                box = approve.bounding_box()
                assert box is not None and box["y"] < 300, box
                # no serious or critical accessibility problem, colour contrast included
                problems = axe_problems(page, ".lightscientist-dashboard")
                assert not problems, "\n".join(problems)
                page.screenshot(path=str(shots["gate"]))
                page.set_viewport_size({"width": 900, "height": 1300})
                _top(dashboard)
                page.screenshot(path=str(shots["gate-900"]))
                page.set_viewport_size({"width": 1400, "height": 1300})

                card.locator(".ls-comment").fill("clear enough")
                clicked = time.monotonic()
                approve.click()
                outcome = card.locator(".ls-outcome")
                expect(outcome).to_contain_text(re.compile(r"approved idea\.gate .*experiment\.setup"),
                                                timeout=2_000)
                assert time.monotonic() - clicked < 2.5
                expect(gate_node).to_have_attribute("data-state", "visited", timeout=20_000)
                timeline = dashboard.locator(".ls-timeline")
                expect(timeline).to_contain_text("approved at idea.gate")
                expect(timeline).to_contain_text("clear enough")
                decision = _state(project)["decisions"][0]
                assert (decision["stage"], decision["approve"], decision["source"]) == (
                    "idea.gate", True, "dashboard")
                # the side panel opens beside the notebook and stays open
                page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']"
                             ).click()
                expect(page.locator("#lightscientist-panel .ls-goal")).to_be_visible()

                # the next gate: save, reload the page, approve from the dashboard again
                exp_gate = graph.locator("g.ls-node[data-stage='experiment.gate']")
                expect(exp_gate).to_have_attribute("data-state", "waiting", timeout=60_000)
                toast = toasts.filter(has_text="waits for you at experiment.gate")
                expect(toast).to_be_visible(timeout=10_000)
                expect(toasts).to_have_count(1)  # one per pending decision
                assert page.evaluate(HEADLESS_EDGES) == []  # with the panel's graph open
                _top(dashboard)
                page.screenshot(path=str(shots["approved"]))
                page.keyboard.press("Control+s")
                expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=10_000)
                # the dark theme, chosen as a researcher would: it is kept across the reload
                theme = "dark"
                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Settings$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).click()
                dark = re.compile(f"^{THEMES[theme]}$")  # not its High Contrast sibling
                page.locator(".lm-Menu-itemLabel", has_text=dark).click()
                expect(page.locator("body")).to_have_attribute(
                    "data-jp-theme-name", THEMES[theme], timeout=10_000)
                page.reload()
                expect(page.locator("body")).to_have_attribute(
                    "data-jp-theme-name", THEMES[theme], timeout=60_000)
                dashboard = page.locator(".jp-OutputArea-output .lightscientist-dashboard")
                card = dashboard.locator(".ls-gatecard[data-decision]")
                expect(card.locator(".ls-card-title")).to_contain_text(
                    "experiment.gate", timeout=60_000)
                _top(card)
                page.screenshot(path=str(shots["reloaded"]))
                # beside the files under review, what changed since idea.gate's approval:
                # the analysis and the log are new, drawn as they read, all of them inserted;
                # their source diffs, a click away, draw the lines as additions
                diffs = card.locator(".ls-diff-card")
                for name in ("experiment/analysis.md", "experiment/log.md"):
                    shown = diffs.locator(f".ls-diff-file[data-path='{name}']")
                    expect(shown).to_have_attribute("data-status", "new")
                    expect(shown).to_contain_text(f"{name} — new")
                    expect(shown.locator(".ls-diff-rendered ins").first).to_be_visible()
                    expect(shown.locator(".ls-diff-rendered del")).to_have_count(0)
                    shown.locator(".ls-diff-source > summary").click()
                    expect(shown.locator(".ls-diff-add").first).to_be_visible()
                    # the shared style sheet's rule (--jp-success-color1) is applied
                    rule = shown.evaluate("e => getComputedStyle(e).borderLeftWidth")
                    assert rule == "3px", rule
                _top(diffs)
                page.screenshot(path=str(shots["gate-diff"]))
                clicked = time.monotonic()
                card.locator("button.ls-approve").click()
                expect(card.locator(".ls-outcome")).to_contain_text(
                    re.compile(r"approved experiment\.gate .*paper\."), timeout=2_000)
                assert time.monotonic() - clicked < 2.5

                expect(toast).to_have_count(0, timeout=5_000)  # answered: gone

                # paper.review rejected once, with a comment, from the dashboard
                review = card.filter(has=page.locator(".ls-card-title", has_text="paper.review"))
                expect(review).to_be_visible(timeout=60_000)
                expect(toasts.filter(has_text="waits for you at paper.review")).to_have_count(
                    1, timeout=10_000)
                review.locator(".ls-comment").fill("tighten the discussion")
                review.locator("button.ls-reject").click()
                expect(review.locator(".ls-outcome")).to_contain_text(
                    re.compile(r"rejected paper\.review"), timeout=5_000)
                wait_for(lambda: len(_state(project)["decisions"]) == 3, "the rejection",
                         within=20)
                # its notification goes with it; the offline run is quick, and the next round
                # of reviews may already ask again (a new decision, its own notification)
                rejected = _state(project)["decisions"][-1]["id"]
                asking = toasts.filter(has_text="waits for you at paper.review")
                def asked_again() -> bool:
                    return (_state(project).get("pending") or {}).get("id") not in (None, rejected)

                wait_for(lambda: asking.count() == 0 or asked_again(),
                         "the rejected decision's notification to go", within=5)
                _reply_when_waiting(project, "paper.review")
                graph = dashboard.locator(".ls-graph-box svg.ls-graph:visible")
                expect(graph.locator("g.ls-node[data-stage='done']")).to_have_attribute(
                    "data-state", "done", timeout=30_000)
                expect(dashboard.locator(".ls-status-line")).to_contain_text(
                    re.compile(r"done.*not running"))
                # nothing asks any more: the gate card went, its decision is the timeline's
                expect(dashboard.locator(".ls-gatecard:visible")).to_have_count(0)
                # one notification, and it says the project is done
                expect(toasts).to_have_count(1, timeout=10_000)
                expect(toasts).to_contain_text(f"{project.name} is done")
                expect(page.locator(".ls-StatusItem")).to_have_text(
                    f"LightScientist: {project.name} · done")
                assert page.evaluate(HEADLESS_EDGES) == []
                expect(dashboard.locator(".ls-timeline")).to_contain_text(
                    "approved at paper.review → done from the command line")
                _top(dashboard)
                page.screenshot(path=str(shots["done"]))
                page.set_viewport_size({"width": 900, "height": 1300})
                _top(dashboard)
                page.screenshot(path=str(shots["done-900"]))

                # a kernel restart: the dashboard says it is not live, and how to go on
                page.set_viewport_size({"width": 1400, "height": 1300})
                page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Kernel$")).click()
                page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Restart Kernel\W*$")
                             ).click()
                page.locator(".jp-Dialog-button.jp-mod-accept", has_text="Restart").click()
                dead = dashboard.locator(".ls-controls .ls-dead")
                expect(dead).to_be_visible(timeout=30_000)
                # a done project has nothing to resume; nothing says it runs; the banner says
                # once what the broken-link icon of every widget said
                expect(dead).to_contain_text("The project is done")
                expect(dead.locator("button.ls-dead-resume")).to_be_hidden()
                expect(dashboard.locator(".ls-runner-chip:visible")).to_have_count(0)
                expect(dashboard.locator(".ls-controls button.ls-cancel:visible")).to_have_count(0)
                assert page.evaluate(BROKEN_LINK_ICONS) == 0
                _top(dashboard)
                page.screenshot(path=str(shots["restarted"]))

                # a reload after the restart: the widgets' models are gone with the kernel;
                # the dashboard is drawn from the server instead, never "model not found"
                page.keyboard.press("Control+s")
                expect(page.locator(".jp-mod-dirty")).to_have_count(0, timeout=10_000)
                page.reload()
                every = page.locator(".jp-OutputArea-output.ls-ProjectOutput .ls-served")
                expect(every.first).to_be_visible(timeout=60_000)
                for served in every.all():  # the quickstart shows its dashboard twice
                    expect(served.locator(".ls-status-text")).to_have_text("done")
                    expect(served.locator(".ls-stage")).to_be_hidden()  # not "done · done"
                    expect(served.locator("svg.ls-graph:visible [data-stage='done']")
                           ).to_have_attribute("data-state", "done")
                    expect(served.locator(".ls-gate:visible")).to_have_count(0)
                expect(page.get_by_text("model not found")).to_have_count(0)
                # the dashboard drawn from the server passes axe-core too, in the dark theme
                problems = axe_problems(page, ".ls-ProjectOutput .ls-served")
                assert not problems, "\n".join(problems)
                served = every.first
                _top(served)
                page.screenshot(path=str(shots["reloaded-restarted"]))
                print("\nscreenshots: " + " ".join(str(s) for s in shots.values()))
            except Exception:
                page.screenshot(path=str(OUTPUT / f"quickstart-{theme}-failure.png"))
                print("dashboard outputs:\n" + "\n".join(page.evaluate(OUTPUTS_SEEN)))
                print("browser console:\n" + "\n".join(console[-40:]))
                print("jupyter lab:\n" + "\n".join(lab.output.lines[-60:]))
                raise
        finally:
            browser.close()

    state = _state(project)
    assert state["status"] == "done"
    assert [(d["stage"], d["approve"], d["source"]) for d in state["decisions"]] == [
        ("idea.gate", True, "dashboard"), ("experiment.gate", True, "dashboard"),
        ("paper.review", False, "dashboard"), ("paper.review", True, "cli")]
    assert state["decisions"][2]["comment"] == "tighten the discussion"
    assert (project / "paper" / "paper.tex").is_file()
