"""The dashboard and the side panel show the same state (issue 36): for a project waiting at a
gate, at a question, at a spent budget, at a hand-over, and one failed, one cancelled, one
done, both screens say the same status, draw each stage of the graph in the same state, show
the card of the same pending kind and offer the same run controls — in a real JupyterLab, in
headless Chromium, in the light and in the dark theme.

The seven projects are made through layer 1 (no model, no run): each is a real workspace on
disk that nobody runs. A notebook draws a dashboard for each (`%lightscientist status
--workspace X`); the panel shows each when its row is selected. Screenshots of every state in
both themes go to `test-output/screens-<theme>-<state>.png`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from support.browser import (
    OUTPUT,
    axe_problems,
    lab_page,
    open_panel,
    require_browser,
    run_all_cells,
    start_lab,
    write_notebook,
)

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser

TABLE = """\
start = "write"

[stages.write]
skill = "skills/write.md"
outputs = ["notes.md"]
next = "check"
allowed = ["check"]
approval = true

[stages.check]
skill = "skills/check.md"
outputs = ["checked.md"]
next = "done"
allowed = ["done"]
"""

WAITING = {"cancel", "pause", "rerun", "resume"}
ENDED_BADLY = {"rerun", "resume"}
EXPECTED: dict[str, dict[str, Any]] = {
    "gate": {"status": "waiting_user", "card": "gate", "controls": WAITING, "write": "waiting"},
    "question": {
        "status": "waiting_user",
        "card": "question",
        "controls": WAITING,
        "write": "waiting",
    },
    "budget": {"status": "waiting_user", "card": "budget", "controls": WAITING, "write": "waiting"},
    "handoff": {
        "status": "waiting_user",
        "card": "handoff",
        "controls": WAITING,
        "write": "waiting",
    },
    "failed": {"status": "failed", "card": None, "controls": ENDED_BADLY, "write": "failed"},
    "cancelled": {"status": "cancelled", "card": None, "controls": ENDED_BADLY, "write": "failed"},
    "done": {"status": "done", "card": None, "controls": set(), "write": "visited"},
}
"""Each project's state as both screens must show it: its status, the card that waits (None:
no card), the run controls offered, and how the graph draws the stage `write`."""

READ_SCREEN = """
(root, dashboard) => {
  const shown = e => !!e && e.checkVisibility();
  const graph = [...root.querySelectorAll('.ls-graph-box svg.ls-graph')].find(shown);
  const nodes = {};
  for (const g of graph ? graph.querySelectorAll('g.ls-node') : []) {
    nodes[g.getAttribute('data-stage')] = g.getAttribute('data-state');
  }
  const status = dashboard
    ? root.querySelector('.ls-status-line .ls-chip[data-status]')?.getAttribute('data-status')
    : root.querySelector('.ls-status-text')?.dataset.status;
  const words = dashboard
    ? root.querySelector('.ls-status-line .ls-chip[data-status]')?.textContent
    : root.querySelector('.ls-status-text')?.textContent;
  const gate = root.querySelector(dashboard ? '.ls-gatecard' : '.ls-gate');
  let card = null;
  if (shown(gate)) {
    card = gate.querySelector('button.ls-approve').textContent === 'Yes' ? 'question' : 'gate';
  } else if (shown(root.querySelector('.ls-budgetcard'))) {
    card = 'budget';
  } else if (shown(root.querySelector(dashboard ? '.ls-handoff-card .ls-handoff'
                                                : '.ls-handoff'))) {
    card = 'handoff';
  }
  const controls = ['cancel', 'pause', 'rerun', 'resume'].filter(name =>
    [...root.querySelectorAll(`.ls-controls button.ls-${name}`)].some(shown));
  return {status, words: (words || '').trim(), nodes, card, controls};
}
"""
"""What a screen shows (`dashboard`: the notebook's dashboard, else the side panel)."""


def _make(folder: Path, table: Path, state: str) -> None:
    """A project in `folder` left in `state` through layer 1 (nobody runs it after)."""
    project = ResearchController.create(
        Workspace.at(folder), "Does warmup help?", mode="manual", table=load_table(table)
    )
    if state in ("gate", "done"):
        (folder / "notes.md").write_text("notes\n", encoding="utf-8")
        assert project.finish_stage("notes written", ["notes.md"]).accepted
    if state == "done":
        assert project.reply(True, "good").applied
        (folder / "checked.md").write_text("checked\n", encoding="utf-8")
        assert project.finish_stage("checked", ["checked.md"]).accepted
    elif state == "question":
        project.request_user_decision("Use the small data set?", ["yes", "no"])
    elif state == "budget":
        project.set_budget({"tokens": 100})
        call = {"worker": "w1", "stage": "write", "task_id": project.task_id, "model_calls": 1}
        project.charge({**call, "wall_s": 0.5, "input_tokens": 90, "output_tokens": 30})
    elif state == "handoff":
        assert project.take().accepted
    elif state == "failed":
        project.fail("the test made it fail")
    elif state == "cancelled":
        project.cancel()
    assert project.status == EXPECTED[state]["status"], (state, project.status)


def _dark(page: Any) -> None:
    """Switch JupyterLab to its dark theme from the Settings menu."""
    from playwright.sync_api import expect

    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Settings$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Theme$")).hover()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^JupyterLab Dark$")).click()
    expect(page.locator("body")).to_have_attribute("data-jp-theme-name", "JupyterLab Dark")


def test_the_dashboard_and_the_panel_show_the_same_seven_states(tmp_path, write_table):
    require_browser()
    from playwright.sync_api import expect

    table = write_table(tmp_path / "table", TABLE)
    root = tmp_path / "root"
    for state in EXPECTED:
        _make(root / state, table, state)
    sources = ["%load_ext lightscientist_jupyter"]
    sources += [f"%lightscientist status --workspace {state}" for state in EXPECTED]
    write_notebook(root / "screens.ipynb", sources)
    OUTPUT.mkdir(exist_ok=True)

    with start_lab(root, tmp_path / "lab") as lab:
        logs = {"jupyter lab": lab.output}
        with lab_page(lab.url, lab.token, "screens-failure.png", logs) as page:
            page.set_viewport_size({"width": 1500, "height": 1000})
            run_all_cells(page, lab, "screens.ipynb")
            cells = page.locator(".jp-Notebook .jp-CodeCell")
            boards = {
                state: cells.nth(i + 1).locator(".lightscientist-dashboard")
                for i, state in enumerate(EXPECTED)
            }
            for board in boards.values():
                expect(board.locator(".ls-graph-box svg.ls-graph:visible")).to_be_visible(
                    timeout=90_000
                )
            panel = open_panel(page)
            for theme in ("light", "dark"):
                if theme == "dark":
                    _dark(page)
                for state, expected in EXPECTED.items():
                    row = panel.locator(f".ls-project[data-path='{state}']")
                    row.click()
                    expect(panel.locator(".ls-detail")).to_be_visible()
                    expect(panel.locator(".ls-status-text")).to_have_attribute(
                        "data-status", expected["status"]
                    )
                    board = boards[state]
                    board.scroll_into_view_if_needed()
                    # the dashboard's widgets and the panel's detail settle on what they show
                    wanted = expected["card"]
                    if wanted is not None:
                        expect(panel.locator(_card(wanted, dashboard=False))).to_be_visible()
                        expect(board.locator(_card(wanted, dashboard=True))).to_be_visible()
                    on_board = board.evaluate(READ_SCREEN, True)
                    on_panel = panel.evaluate(READ_SCREEN, False)
                    assert on_board == on_panel, (state, theme, on_board, on_panel)
                    assert on_panel["status"] == expected["status"], (state, on_panel)
                    assert on_panel["card"] == expected["card"], (state, on_panel)
                    assert set(on_panel["controls"]) == expected["controls"], (state, on_panel)
                    assert on_panel["nodes"]["write"] == expected["write"], (state, on_panel)
                    if state == "gate":
                        _the_markdown_diff_reads_as_text(board, panel)
                    page.screenshot(path=str(OUTPUT / f"screens-{theme}-{state}.png"))
                problems = axe_problems(page, "#lightscientist-panel")
                problems += axe_problems(page, ".lightscientist-dashboard")
                assert not problems, f"{theme}:\n" + "\n".join(problems)
            _every_action_is_a_command_with_a_shortcut(page, panel)
            _make(root / "late", table, "gate")  # news after the page loaded: announced
            _a_notification_offers_the_answers(page)


COMMANDS = {
    "LightScientist: Open Panel": "Alt+Shift+L",
    "LightScientist: Approve Pending Gate": "Alt+Shift+A",
    "LightScientist: Reject Pending Gate": "Alt+Shift+R",
    "LightScientist: Pause After This Stage": "Alt+Shift+P",
    "LightScientist: Cancel the Project": "Alt+Shift+X",
    "LightScientist: Resume": "Alt+Shift+G",
    "LightScientist: Re-run This Stage": "Alt+Shift+E",
    "LightScientist: Deliver write": "Alt+Shift+D",
    "LightScientist: Raise the Budget and Go On": "Alt+Shift+B",
}
"""Commands the palette lists (with the hand-over project selected) and their shortcuts."""


def _every_action_is_a_command_with_a_shortcut(page: Any, panel: Any) -> None:
    """The palette lists every action with its shortcut; the shortcuts open the dialogs of
    the actions that ask something first (nothing is sent: each is cancelled)."""
    from playwright.sync_api import expect

    panel.locator(".ls-project[data-path='handoff']").click()
    expect(panel.locator(".ls-handoff")).to_be_visible()
    page.keyboard.press("Control+Shift+C")
    palette = page.locator(".jp-ModalCommandPalette")
    palette.locator("input").fill("LightScientist")
    for label, keys in COMMANDS.items():
        item = palette.locator(".lm-CommandPalette-item", has_text=re.compile(f"^{label}"))
        expect(item).to_have_count(1)
        expect(item.locator(".lm-CommandPalette-itemShortcut")).to_have_text(keys)
    page.keyboard.press("Escape")
    # the hand-over's Deliver asks for a summary and the next stage
    page.keyboard.press(COMMANDS["LightScientist: Deliver write"])
    dialog = page.locator(".jp-Dialog")
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("Deliver write in handoff?")
    expect(dialog.locator("select option")).to_have_text(["check"])
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    # a spent budget's Raise proposes twice the limit
    panel.locator(".ls-project[data-path='budget']").click()
    expect(panel.locator(".ls-budgetcard")).to_be_visible()
    page.keyboard.press(COMMANDS["LightScientist: Raise the Budget and Go On"])
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("Raise the budget of budget?")
    expect(dialog.locator("input")).to_have_value("200")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)


def _a_notification_offers_the_answers(page: Any) -> None:
    """A gate reached while the page is open is announced with Approve and Reject…; Reject…
    asks what should change, and the notification stays while the dialog is cancelled."""
    from playwright.sync_api import expect

    toast = page.locator(".jp-toast-message", has_text="LightScientist: late waits for you")
    expect(toast).to_be_visible(timeout=30_000)
    buttons = page.locator(".Toastify__toast", has=toast).locator(".jp-toast-button")
    expect(buttons).to_have_text(["Approve", "Reject…", "Show"])
    buttons.filter(has_text="Reject…").click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog.locator(".jp-Dialog-header")).to_have_text("Reject write in late?")
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(toast).to_be_visible()


def _the_markdown_diff_reads_as_text(board: Any, panel: Any) -> None:
    """The gate's new notes.md is drawn as it reads on both screens, all of it inserted;
    its source diff is one click away."""
    from playwright.sync_api import expect

    for screen in (board, panel):
        expect(screen.locator(".ls-diff-rendered ins")).to_have_text("notes")
        source = screen.locator("details.ls-diff-source")
        expect(source.locator(".ls-diff-text")).to_be_hidden()
        source.locator("summary").click()
        expect(source.locator(".ls-diff-text")).to_contain_text("+notes")
        source.locator("summary").click()


def _card(kind: str, *, dashboard: bool) -> str:
    """The selector of the card of a pending `kind` on one screen."""
    if kind in ("gate", "question"):
        return ".ls-gatecard button.ls-approve" if dashboard else ".ls-gate button.ls-approve"
    if kind == "budget":
        return ".ls-budgetcard"
    return ".ls-handoff-card .ls-handoff" if dashboard else ".ls-handoff"
