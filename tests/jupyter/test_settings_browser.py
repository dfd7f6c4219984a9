"""The extension's settings in JupyterLab's Settings Editor: `notifications` decides which
news of a project the notifications announce (a real JupyterLab in headless Chromium, the
setting written where JupyterLab keeps a user's settings).

A project reaches a gate while the page is open: with `all` a notification says it waits;
with `none` there is none, while the status bar and the panel's badge still say it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from support.browser import lab_page, require_browser, start_lab

from lightscientist_jupyter.controller import ResearchController, load_table
from lightscientist_jupyter.workspace import Workspace

pytestmark = pytest.mark.browser

GATED_TABLE = """\
start = "write"

[stages.write]
skill = "skills/write.md"
outputs = ["notes.md"]
next = "done"
allowed = ["done"]
approval = true
"""

PLUGIN = "lightscientist-jupyter:plugin"


@pytest.mark.parametrize("notifications", ["all", "none"])
def test_the_notifications_setting_decides_what_is_announced(
    tmp_path: Path, write_table, notifications
):
    from playwright.sync_api import expect

    require_browser()
    table = write_table(tmp_path / "table", GATED_TABLE)
    root = tmp_path / "root"
    folder = root / "study"
    project = ResearchController.create(
        Workspace.at(folder), "find x", mode="manual", table=load_table(table)
    )
    settings = {PLUGIN: {"notifications": notifications}}
    with start_lab(root, tmp_path, settings=settings) as lab:
        with lab_page(lab.url, lab.token, "settings-failure.png", {"lab": lab.output}) as page:
            status = page.locator(".ls-StatusItem")
            expect(status).to_contain_text("study", timeout=60_000)
            page.wait_for_timeout(1500)  # the watcher has seen the project as it was
            (folder / "notes.md").write_text("x\n")
            assert project.finish_stage("written", ["notes.md"]).accepted  # now at the gate
            expect(status).to_contain_text("study waits for you at write", timeout=30_000)
            tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']")
            expect(tab).to_have_attribute("data-ls-waiting", "1")
            toasts = page.locator(".jp-toast-message")
            if notifications == "all":
                expect(toasts).to_have_text(["LightScientist: study waits for you at write"])
            else:
                page.wait_for_timeout(3000)  # several of the watcher's rounds
                expect(toasts).to_have_count(0)


def test_the_runs_defaults_reach_the_kernels_and_a_bad_one_is_named(tmp_path: Path):
    """The Settings Editor's model, mode and budget go to the server, which keeps them where
    the kernels read them (`app.lab_defaults`); a budget to fix is refused, and a notification
    names the setting, while what was kept before stays."""
    import json

    from playwright.sync_api import expect

    require_browser()
    root = tmp_path / "root"
    root.mkdir()
    kept = tmp_path / "jupyter-config" / "lightscientist" / "defaults.json"  # start_lab's
    good = {"model": "offline", "mode": "auto", "budget": "tokens=5000"}
    with start_lab(root, tmp_path, settings={PLUGIN: good}) as lab:
        with lab_page(lab.url, lab.token, "settings-defaults-failure.png", {"lab": lab.output}):
            deadline = time.monotonic() + 60
            while not kept.exists() and time.monotonic() < deadline:
                time.sleep(0.2)
            assert json.loads(kept.read_text()) == good
    with start_lab(root, tmp_path, settings={PLUGIN: {**good, "budget": "lots"}}) as lab:
        with lab_page(
            lab.url, lab.token, "settings-defaults-failure.png", {"lab": lab.output}
        ) as page:
            toast = page.locator(".jp-toast-message", has_text="LightScientist settings:")
            expect(toast).to_have_text(
                "LightScientist settings: Default budget: 'lots' must look like key=number, "
                "e.g. tokens=2000000",
                timeout=60_000,
            )
            assert json.loads(kept.read_text()) == good
