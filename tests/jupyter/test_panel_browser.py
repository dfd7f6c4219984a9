"""The side panel in a real JupyterLab, driven in headless Chromium (Debian's package).

`lightscientist research … --wait` runs a project in the background; it stops at `idea.gate`
and waits for a reply. The test opens the panel, sees the gate and the stage graph drawn
from the server's layout, clicks Approve, sees the run go on past the gate, and the command
line reach the next gate. Screenshots go to `test-output/` at the repository root.

Needs the built extension (`scripts/setup` builds and links it), `/usr/bin/chromium` and
Python playwright. Without them the test is skipped — except under CI (`CI=true`), where a
missing piece fails it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from support.browser import (
    OUTPUT,
    axe_problems,
    launch_chromium,
    require_browser,
    show_panel,
    spawn,
    start_lab,
    stop,
    tab_to,
)

pytestmark = pytest.mark.browser

GOAL = "Does learning-rate warmup help a small MLP?"


@pytest.fixture(scope="module")
def prerequisites() -> None:
    require_browser()


@pytest.fixture
def project_root(tmp_path):
    """A server root holding `study/`, run by `lightscientist research --wait` in the
    background: it stops at idea.gate and waits there for a reply."""
    root = tmp_path / "root"
    root.mkdir()
    runner, output = spawn(
        [
            sys.executable,
            "-m",
            "lightscientist_jupyter",
            "research",
            GOAL,
            "--workspace",
            str(root / "study"),
            "--wait",
        ],
        cwd=root,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    try:
        output.wait_for("waiting at idea.gate", timeout=60)
        yield root, runner, output
    finally:
        stop(runner, output)


@pytest.fixture
def lab(tmp_path, project_root):
    """A real `jupyter lab` on loopback over the project root; yields its URL and token."""
    with start_lab(project_root[0], tmp_path) as server:
        yield server.url, server.token, server.output


DRAWN_GRAPH = """() => {
  const box = document.querySelector('#lightscientist-panel .ls-graph-box');
  const shown = [...box.querySelectorAll('svg.ls-graph')].filter(g => g.getClientRects().length);
  const graph = shown[0];
  const boxes = [...graph.querySelectorAll('g[data-stage]')].map(g => {
    const rect = g.querySelector('rect').getBBox();
    return [g.dataset.stage, rect.x, rect.y, rect.width, rect.height];
  });
  const edges = [...graph.querySelectorAll('path[data-from]')].map(
    p => [p.dataset.from, p.dataset.to, p.getAttribute('d')]);
  return {boxes, edges, width: Number(graph.getAttribute('width')), shown: shown.length,
          room: box.clientWidth};
}"""


def check_graph_follows_the_layout(page, url: str, token: str) -> int:
    """The panel shows one drawing of the graph: the widest of the server's layouts (wide, or
    wrapped after 3, 2 or 1 columns a band) that fits its width, every stage box where that
    layout puts it, every edge along its route — the layout the notebook dashboard draws
    (tests/jupyter/test_server.py). Returns the drawing's width."""
    answer = page.request.get(f"{url}/lightscientist/project?path=study&token={token}")
    assert answer.ok, answer.status
    layouts = answer.json()["graph"]["layouts"]
    assert [lay["width"] for lay in layouts] == sorted((lay["width"] for lay in layouts),
                                                       reverse=True)  # fmt: skip
    drawn = page.evaluate(DRAWN_GRAPH)
    # the widest that fits down to 90 % of its size (graph.ts SHRINK), else the narrowest
    fitting = [lay for lay in layouts if int(lay["width"] * 0.9) <= drawn["room"]] or layouts[-1:]
    layout = fitting[0]
    assert (drawn["shown"], drawn["width"]) == (1, layout["width"]), (drawn["room"], drawn["width"])
    assert sorted(tuple(box) for box in drawn["boxes"]) == sorted(
        (n["id"], n["x"], n["y"], n["width"], n["height"]) for n in layout["nodes"]
    )
    assert sorted(tuple(edge) for edge in drawn["edges"]) == sorted(
        (e["source"], e["target"], e["path"]) for e in layout["edges"]
    )
    return drawn["width"]


def test_panel_shows_the_gate_and_approves_it(prerequisites, project_root, lab):
    from playwright.sync_api import expect, sync_playwright

    root, runner, runner_output = project_root
    url, token, lab_output = lab
    OUTPUT.mkdir(exist_ok=True)
    console: list[str] = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(30_000)
            try:
                page.goto(f"{url}/lab?token={token}")
                tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']")
                tab.wait_for(timeout=60_000)
                # the status bar names the waiting project before the panel was ever opened
                expect(page.locator(".ls-StatusItem")).to_have_text(
                    "LightScientist: study waits for you at idea.gate"
                )
                show_panel(page)  # by its keyboard shortcut
                panel = page.locator("#lightscientist-panel")
                expect(panel).to_be_visible()

                expect(panel.locator(".ls-project[data-path='study']")).to_be_visible()
                expect(panel.locator(".ls-stage")).to_have_text("idea.gate")
                expect(panel.locator(".ls-status-text")).to_have_text("waiting for you")
                expect(panel.locator(".ls-runner")).to_contain_text(
                    f"Running from the command line (pid {runner.pid} on "
                )
                gate = panel.locator(".ls-gate")
                expect(gate.locator(":scope > h3")).to_contain_text("idea.gate")
                expect(gate.locator(".ls-approves")).to_contain_text("experiment.setup")
                expect(gate.locator(".ls-gate-outputs")).to_contain_text("idea/brief.md")
                expect(
                    panel.locator(
                        "svg.ls-graph:visible [data-stage='idea.gate'][data-state=waiting]"
                    )
                ).to_have_count(1)  # as the dashboard draws it (look.stage_states)
                expect(panel.locator(".ls-event").first).to_be_visible()
                expect(page.locator(".ls-StatusItem")).to_contain_text("idea.gate")
                narrow = check_graph_follows_the_layout(page, url, token)  # a side panel's
                assert narrow < 500  # the wide drawing (about 970 px) would scroll
                panel.locator(".ls-graph-box").screenshot(path=str(OUTPUT / "panel-graph.png"))
                page.screenshot(path=str(OUTPUT / "panel-waiting.png"))
                problems = axe_problems(page, "#lightscientist-panel")
                assert not problems, "\n".join(problems)
                # the panel widened (its splitter dragged): a wider drawing, fewer rows
                handle = page.locator("#jp-main-split-panel > .lm-SplitPanel-handle").first
                box = handle.bounding_box()
                page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.mouse.down()
                page.mouse.move(box["x"] + 1100, box["y"] + box["height"] / 2, steps=8)
                page.mouse.up()
                assert check_graph_follows_the_layout(page, url, token) > narrow
                panel.locator(".ls-graph-box").screenshot(path=str(OUTPUT / "panel-graph-wide.png"))
                page.screenshot(path=str(OUTPUT / "panel-waiting-wide.png"))
                # the sidebar tab counts the decisions waiting
                expect(tab).to_have_attribute("data-ls-waiting", "1")

                page.keyboard.press("Control+Shift+C")
                palette = page.locator(".jp-ModalCommandPalette")
                palette.locator("input").fill("LightScientist")
                for label in (
                    "LightScientist: Open Panel",
                    "LightScientist: Approve Pending Gate (idea.gate)",
                    "LightScientist: Reject Pending Gate (idea.gate)",
                    "LightScientist: Pause After This Stage",
                    "LightScientist: Cancel the Project",
                    "LightScientist: Re-run This Stage",
                ):
                    expect(
                        palette.locator(".lm-CommandPalette-item", has_text=label)
                    ).to_have_count(1)
                page.keyboard.press("Escape")
                # the project list's context menu holds the run's actions
                panel.locator(".ls-project[data-path='study']").click(button="right")
                menu = page.locator(".lm-Menu").last
                expect(
                    menu.locator(".lm-Menu-itemLabel", has_text="Pause After This Stage")
                ).to_be_visible()
                expect(menu.locator(".lm-Menu-itemLabel", has_text="Resume")).to_have_count(1)
                page.keyboard.press("Escape")

                # keyboard only: the shortcut puts the keyboard on the project's row; Tab
                # reaches the comment box, then Approve, each outlined by the theme's colour
                page.keyboard.press("Alt+Shift+L")
                expect(panel.locator(".ls-project[data-path='study']")).to_be_focused()
                tab_to(page, gate.locator(".ls-comment"))
                page.keyboard.type("Looks good; go ahead.")
                tab_to(page, gate.locator(".ls-approve"))
                page.keyboard.press("Enter")
                expect(panel.locator(".ls-reply-message")).to_contain_text("picks it up")
                # the decision's event shows before the run's next hundreds push it out of the
                # list (it keeps the newest 300)
                expect(
                    panel.locator(".ls-event-type").get_by_text("user.decision", exact=True)
                ).not_to_have_count(0)
                # the run goes on by itself (the offline model is quick): past the gate
                moved_on = re.compile(r"^(experiment|paper)\.")
                expect(panel.locator(".ls-stage")).to_have_text(moved_on, timeout=20_000)
                expect(
                    panel.locator(".ls-graph .ls-node-waiting[data-stage='idea.gate']")
                ).to_have_count(0)
                expect(page.locator(".ls-StatusItem")).to_contain_text(
                    re.compile(r"(experiment|paper)\.")
                )
                expect(panel.locator(".ls-project[data-path='study']")).to_contain_text(
                    re.compile(r"(experiment|paper)\.")
                )

                panel.locator(".ls-open-process").click()
                expect(page.locator(".jp-RenderedMarkdown").first).to_contain_text(
                    "Does learning-rate warmup help a small MLP?"
                )
                panel.locator(".ls-outputs .ls-link[data-path='study/idea/brief.md']").click()
                expect(
                    page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text="brief.md")
                ).to_have_count(1)
                # the next gate is announced, whether the panel shows that project or not
                toasts = page.locator(".jp-toast-message", has_text="LightScientist:")
                toast = toasts.filter(
                    has_text=re.compile("^LightScientist: study waits for you at experiment.gate$")
                )
                expect(toast).to_be_visible(timeout=60_000)
                expect(toasts).to_have_count(1)
                expect(tab).to_have_attribute("data-ls-waiting", "1")
                shot = OUTPUT / "panel-approved.png"
                page.screenshot(path=str(shot))
                # answered from another door: the notification goes with its decision, and
                # the next one takes its place
                reply = subprocess.run(
                    [
                        sys.executable,
                        "-m",
                        "lightscientist_jupyter",
                        "reply",
                        "y",
                        "--workspace",
                        str(root / "study"),
                    ],
                    check=False,
                    capture_output=True,
                    text=True,
                    timeout=60,
                )
                assert reply.returncode == 0, reply.stdout + reply.stderr
                expect(toast).to_have_count(0, timeout=5_000)
                review = toasts.filter(has_text="waits for you at paper.review")
                expect(review).to_be_visible(timeout=60_000)
                expect(toasts).to_have_count(1)
                # the notification's own Approve answers the gate; the last one says done
                page.locator(".jp-toast-button", has_text=re.compile("^Approve$")).click()
                done = toasts.filter(has_text="study is done")
                expect(done).to_be_visible(timeout=30_000)
                expect(toasts).to_have_count(1)
                expect(page.locator(".ls-StatusItem")).to_have_text("LightScientist: study · done")
                page.screenshot(path=str(OUTPUT / "panel-done.png"))
                print(f"\nscreenshots: {OUTPUT / 'panel-waiting.png'} {shot}")
            except Exception:
                page.screenshot(path=str(OUTPUT / "panel-failure.png"))
                print("browser console:\n" + "\n".join(console[-40:]))
                print("jupyter lab:\n" + "\n".join(lab_output.lines[-40:]))
                raise
        finally:
            browser.close()

    state = json.loads((root / "study" / ".lightscientist" / "state.json").read_text())
    assert (state["stage"], state["status"]) == ("done", "done")
    assert [(d["stage"], d["source"]) for d in state["decisions"]] == [
        ("idea.gate", "panel"),
        ("experiment.gate", "cli"),
        ("paper.review", "panel"),
    ]
    assert {"from": "idea.gate", "to": "experiment.setup", "by": "approve"}.items() <= next(
        h for h in state["history"] if h["from"] == "idea.gate"
    ).items()
    decision = state["decisions"][0]
    assert (decision["source"], decision["approve"], decision["comment"]) == (
        "panel",
        True,
        "Looks good; go ahead.",
    )
