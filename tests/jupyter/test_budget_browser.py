"""The side panel's usage and budget views in a real JupyterLab, in headless Chromium.

`lightscientist research … --budget tokens=4000 --wait` runs an offline auto project in the
background; it spends its budget and waits at a `budget` decision. The test opens the panel,
sees the project's usage and each stage's, and the budget card with the spend and the limit;
a too-small limit is refused by the card, a raised one goes to the server's reply endpoint,
and the runner moves on to the end. Screenshots go to `test-output/`.

Needs what tests/jupyter/test_panel_browser.py needs (the built extension, chromium, playwright).
"""

from __future__ import annotations

import json
import os
import re
import sys

import pytest
from support.browser import (
    OUTPUT,
    axe_problems,
    lab_page,
    open_panel,
    require_browser,
    spawn,
    start_lab,
    stop,
    tab_to,
)

pytestmark = pytest.mark.browser

GOAL = "Does learning-rate warmup help a small MLP?"


@pytest.fixture
def project_root(tmp_path):
    """`study/`, run in the background with a 4,000-token budget: it waits at the budget."""
    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    command = [sys.executable, "-m", "lightscientist_jupyter", "research", GOAL]
    command += ["--workspace", str(root / "study"), "--mode", "auto", "--model", "offline"]
    command += ["--budget", "tokens=4000", "--wait"]
    runner, output = spawn(command, cwd=root, env={**os.environ, "LIGHTSCIENTIST_MODEL": ""})
    try:
        output.wait_for("The project budget of 4,000 tokens is spent", timeout=90)
        yield root, runner, output
    finally:
        stop(runner, output)


@pytest.fixture
def lab(tmp_path, project_root):
    with start_lab(project_root[0], tmp_path) as server:
        yield server.url, server.token, server.output


def test_panel_raises_the_budget_and_the_project_goes_on(project_root, lab):
    from playwright.sync_api import expect

    root, runner, runner_output = project_root
    url, token, lab_output = lab
    logs = {"jupyter lab": lab_output, "runner": runner_output}
    with lab_page(url, token, "panel-budget-failure.png", logs) as page:
        panel = open_panel(page)
        panel.locator(".ls-project[data-path='study']").click()
        expect(panel.locator(".ls-status-text")).to_have_text("waiting for you")

        # the usage: the project's total and each stage's, offline: estimated, $0
        total = panel.locator(".ls-usage-words")
        expect(total).to_have_text(re.compile(r"^[\d,]+ tokens \(est\.\) · \$0$"))
        expect(panel.locator(".ls-usage-split")).to_have_text(
            re.compile(r"^[\d,]+ in, [\d,]+ out · \d+ model calls?$")
        )
        expect(panel.locator(".ls-usage-budget")).to_have_text("budget 4,000 tokens")
        stages = panel.locator(".ls-usage-stage")
        expect(stages.first).to_contain_text(re.compile(r"[\d,]+ tokens"))
        first = stages.first.get_attribute("data-stage")
        title = panel.locator(f"svg.ls-graph:visible g[data-stage='{first}'] > title")
        expect(title).to_contain_text(re.compile(r"[\d,]+ tok"))  # the graph's own words

        # the card: what was spent, on what, the limit, a field for the new one
        card = panel.locator(".ls-budgetcard")
        expect(card.locator(".ls-card-title")).to_have_text(
            "Budget: the project budget of 4,000 tokens is spent"
        )
        expect(card.locator(".ls-budget-spent")).to_contain_text("Spent so far: ")
        expect(card.locator(".ls-budget-on")).to_contain_text("By stage visit:")
        field = card.get_by_label("New limit of tokens")
        expect(field).to_have_value("8000")
        expect(panel.locator(".ls-gate")).to_be_hidden()  # the card stands for it
        # the stage it stopped in is drawn waiting, as the dashboard draws it
        graph = panel.locator("svg.ls-graph:visible")
        expect(graph.locator("g.ls-node-waiting[data-state=waiting]")).to_have_count(1)
        expect(graph.locator("g.ls-node-current")).to_have_count(0)
        problems = axe_problems(page, "#lightscientist-panel")
        assert not problems, "\n".join(problems)
        page.screenshot(path=str(OUTPUT / "panel-budget.png"))

        outcome = panel.locator(".ls-usage .ls-outcome")
        field.fill("0")
        card.get_by_role("button", name="Raise and resume").click()
        expect(outcome).to_have_text("Give the new limit: a number above 4000.")
        # keyboard only: the panel's shortcut, Tab to the field, the number, Tab, Enter
        page.keyboard.press("Alt+Shift+L")
        tab_to(page, field)
        page.keyboard.press("Control+A")
        page.keyboard.type("1000000")
        tab_to(page, card.get_by_role("button", name="Raise and resume"))
        page.keyboard.press("Enter")
        expect(outcome).to_contain_text("raised to 1,000,000 tokens")
        # the runner picks the reply up and runs the project to its end
        expect(panel.locator(".ls-status-text")).to_have_text("done", timeout=90_000)
        expect(card).to_be_hidden()
        expect(outcome).to_have_text(
            re.compile(r"^Budget d\d+: raised to 1,000,000 tokens; the project is done")
        )
        expect(panel.locator(".ls-usage-budget")).to_have_text("budget 1,000,000 tokens")
        shot = OUTPUT / "panel-budget-raised.png"
        page.screenshot(path=str(shot))
        print(f"\nscreenshots: {OUTPUT / 'panel-budget.png'} {shot}")

    state = json.loads((root / "study" / ".lightscientist" / "state.json").read_text())
    assert state["status"] == "done"
    decision = next(d for d in state["decisions"] if d.get("kind") == "budget")
    assert (decision["source"], decision["approve"]) == ("panel", True)
    assert state["budget"]["project"]["tokens"] == 1_000_000


def test_a_notification_raises_the_budget_spent_while_the_page_is_open(tmp_path):
    """The page is open when the run spends its budget: the notification says so, and its
    Raise ×2 answers the decision with twice the limit (the card's proposal)."""
    from playwright.sync_api import expect

    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    with start_lab(root, tmp_path / "lab") as server:
        with lab_page(server.url, server.token, "budget-toast-failure.png", {}) as page:
            expect(page.locator(".ls-StatusItem")).to_have_count(1, timeout=60_000)
            command = [sys.executable, "-m", "lightscientist_jupyter", "research", GOAL]
            command += ["--workspace", str(root / "study"), "--mode", "auto"]
            command += ["--model", "offline", "--budget", "tokens=4000", "--wait"]
            env = {**os.environ, "LIGHTSCIENTIST_MODEL": ""}
            runner, output = spawn(command, cwd=root, env=env)
            try:
                toast = page.locator(".jp-toast-message", has_text="spent its budget")
                expect(toast).to_have_text(
                    re.compile(
                        r"^LightScientist: study spent its budget at \S+: raise it or stop$"
                    ),
                    timeout=90_000,
                )
                raise_it = page.locator(".jp-toast-button", has_text="Raise ×2")
                expect(raise_it).to_have_attribute(
                    "title", "Raise the tokens limit to 8,000 tokens and go on"
                )
                raise_it.click()
                state = root / "study" / ".lightscientist" / "state.json"
                for _ in range(200):
                    decisions = json.loads(state.read_text())["decisions"]
                    if decisions:
                        break
                    page.wait_for_timeout(100)
                (decision,) = decisions[:1]
                assert decision["kind"] == "budget" and decision["approve"] is True
                assert "8000" in json.dumps(decision)  # the limit it was raised to
                pending = json.loads(state.read_text())["pending"]  # answered: not again
                assert pending is None or pending["id"] != decision["id"]
            finally:
                stop(runner, output)
