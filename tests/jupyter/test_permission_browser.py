"""A coding agent's permission request on both screens (issue 40), in a real JupyterLab in
headless Chromium: a project whose stage b the fake agent works under `permissions = "ask"`
is run by the command line in manual mode until the agent asks to edit out/a.md. The side
panel and the notebook's dashboard show its card — the agent, the tool call, the edit's diff
and one button per option of the agent's — and a click on the dashboard's "Allow once"
answers through the server: the agent gets that option and writes the file. Its next request,
made while the page is open, is announced with the agent's options as the notification's
actions; "Reject" there refuses the write.

A screenshot of the two cards goes to `test-output/permission-card.png`.
"""

from __future__ import annotations

import os
import signal

import pytest
from support import acp_project
from support.browser import (
    OUTPUT,
    lab_page,
    open_panel,
    require_browser,
    run_all_cells,
    start_lab,
    write_notebook,
)
from support.waiting import wait_for

pytestmark = pytest.mark.browser

QUESTION = "fake asks to edit out/a.md"
SCRIPT = "# b\n\nask\nwrite out/a.md: revised by the agent\nwrite out/b.md: the output\n"


def test_the_permission_card_answers_the_agent_from_the_dashboard(tmp_path, write_table):
    require_browser()
    from playwright.sync_api import expect

    root = tmp_path / "root"
    ws = root / "agent"
    stages = acp_project.project(tmp_path / "table", write_table, "ask", b=SCRIPT)
    run = acp_project.start(ws, stages, "manual")
    try:
        acp_project.asked(ws, QUESTION)
        before = (ws / "out" / "a.md").read_text(encoding="utf-8")
        sources = ["%load_ext lightscientist_jupyter", "%lightscientist status --workspace agent"]
        write_notebook(root / "agent.ipynb", sources)
        OUTPUT.mkdir(exist_ok=True)
        with start_lab(root, tmp_path / "lab") as lab:
            logs = {"jupyter lab": lab.output}
            with lab_page(lab.url, lab.token, "permission-failure.png", logs) as page:
                page.set_viewport_size({"width": 1500, "height": 1000})
                run_all_cells(page, lab, "agent.ipynb")
                board = page.locator(".jp-Notebook .jp-CodeCell").nth(1)
                on_board = board.locator(".ls-gatecard .ls-permission")
                expect(on_board).to_be_visible(timeout=90_000)
                panel = open_panel(page)
                panel.locator(".ls-project[data-path='agent']").click()
                on_panel = panel.locator(".ls-gate .ls-permission")
                expect(on_panel).to_be_visible()
                for card in (on_board, on_panel):
                    expect(card.locator(".ls-permission-heading")).to_have_text(QUESTION)
                    expect(card.locator(".ls-permission-call code")).to_have_text("Write out/a.md")
                    expect(card.locator(".ls-permission-options button")).to_have_text(
                        ["Allow once", "Reject"]
                    )
                    diff = card.locator(".ls-diff-file[data-path='out/a.md']")
                    expect(diff).to_have_attribute("data-status", "changed")
                    expect(diff).to_contain_text("+revised by the agent")
                    expect(diff).to_contain_text("-" + before.splitlines()[0])
                # the dashboard's Yes / No and comment give way to the agent's options
                expect(board.locator(".ls-gatecard button.ls-approve")).to_be_hidden()
                page.screenshot(path=str(OUTPUT / "permission-card.png"))
                on_board.get_by_role("button", name=f"Allow once: {QUESTION}").click()
                wait_for(
                    lambda: (
                        (ws / "out" / "a.md").read_text(encoding="utf-8")
                        == "revised by the agent\n"
                    ),
                    "the agent's write, allowed from the dashboard",
                    within=60,
                )
                # its next write is the next card, on both screens
                acp_project.asked(ws, "fake asks to edit out/b.md")
                expect(on_panel.locator(".ls-permission-heading")).to_have_text(
                    "fake asks to edit out/b.md", timeout=30_000
                )
                expect(on_board.locator(".ls-permission-heading")).to_have_text(
                    "fake asks to edit out/b.md", timeout=30_000
                )
                # asked while the page is open: a notification, with the agent's options
                toast = page.locator(
                    ".jp-toast-message",
                    has_text="LightScientist: agent — fake asks to edit out/b.md",
                )
                expect(toast).to_be_visible(timeout=30_000)
                buttons = page.locator(".Toastify__toast", has=toast).locator(".jp-toast-button")
                expect(buttons).to_have_text(["Allow once", "Reject", "Show"])
                buttons.filter(has_text="Reject").click()
                wait_for(
                    lambda: len(acp_project.of_type(ws, "agent.permission")) >= 2,
                    "the agent's second write, refused from the notification",
                    within=60,
                )
    finally:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
    answered = acp_project.state(ws)["decisions"]
    assert [(d["question"], d["approve"], d["comment"], d["source"]) for d in answered[:2]] == [
        (QUESTION, True, "Allow once", "dashboard"),
        ("fake asks to edit out/b.md", False, "Reject", "panel"),
    ]
    assert [e["message"] for e in acp_project.of_type(ws, "agent.permission")][:2] == [
        "Write out/a.md: Allow once (asked)",
        "Write out/b.md: Reject (asked)",
    ]
    assert not (ws / "out" / "b.md").exists()
