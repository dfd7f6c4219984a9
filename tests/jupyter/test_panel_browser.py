"""The side panel in a real JupyterLab, driven in headless Chromium (Debian's package).

A background process runs a project to `idea.gate` and waits for replies (see
`run_project.py`); the test opens the panel, sees the gate, clicks Approve, and sees the
stage move on. Screenshots go to `test-output/` at the repository root.

Needs the built extension (`scripts/setup` builds and links it), `/usr/bin/chromium` and
Python playwright. Without them the test is skipped — except under CI (`CI=true`), where a
missing piece fails it.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from jupyter_core.paths import jupyter_path

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
RUNNER = Path(__file__).with_name("run_project.py")
EXTENSION = "lightscientist-jupyter"


def _missing() -> str | None:
    if not any(Path(p, EXTENSION, "package.json").is_file()
               for p in jupyter_path("labextensions")):
        return (f"the JupyterLab extension {EXTENSION} is not installed (run scripts/setup, "
                "which builds labextension/ and links it)")
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python playwright is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="module")
def prerequisites() -> None:
    missing = _missing()
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser test cannot run under CI: {missing}")
        pytest.skip(missing)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class _Lines:
    """Collects a child's output lines on a thread, so waiting on them cannot block."""

    def __init__(self, proc: subprocess.Popen):
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def join(self) -> None:
        self._thread.join(timeout=10)

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return
            time.sleep(0.1)
        raise AssertionError(f"no '{text}' within {timeout} s; output:\n" + "\n".join(self.lines))


def _start(args: list[str], **kwargs) -> tuple[subprocess.Popen, _Lines]:
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, **kwargs)
    return proc, _Lines(proc)


def _stop(proc: subprocess.Popen, lines: _Lines) -> None:
    """End a child this test started (and its process group), politely first."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    lines.join()
    proc.stdout.close()


@pytest.fixture
def project_root(tmp_path):
    """A server root holding `study/`, run to idea.gate by a background process."""
    root = tmp_path / "root"
    root.mkdir()
    runner, output = _start([sys.executable, str(RUNNER), str(root / "study"),
                             "--serve", "120"], cwd=root)
    try:
        output.wait_for("waiting at idea.gate", timeout=60)
        yield root, runner, output
    finally:
        _stop(runner, output)


@pytest.fixture
def lab(tmp_path, project_root):
    """A real `jupyter lab` on loopback over the project root; yields its URL and token."""
    root = project_root[0]
    settings = tmp_path / "settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")
    config = tmp_path / "jupyter-config"
    config.mkdir()
    (config / "jupyter_server_config.json").write_text(json.dumps(
        {"ServerApp": {"jpserver_extensions": {"lightscientist_jupyter": True}}}),
        encoding="utf-8")
    port, token = _free_port(), secrets.token_hex(16)
    args = [sys.executable, "-m", "jupyter", "lab", "--no-browser", "--ip=127.0.0.1",
            f"--port={port}", f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={root}", "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            f"--LabApp.user_settings_dir={settings}",
            f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"]
    if os.geteuid() == 0:
        args.append("--allow-root")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config)}
    server, output = _start(args, cwd=root, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("jupyter lab did not start:\n"
                                         + "\n".join(output.lines)) from None
                time.sleep(0.3)
        yield url, token, output
    finally:
        _stop(server, output)


def test_panel_shows_the_gate_and_approves_it(prerequisites, project_root, lab):
    from playwright.sync_api import expect, sync_playwright

    root, runner, runner_output = project_root
    url, token, lab_output = lab
    OUTPUT.mkdir(exist_ok=True)
    console: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(30_000)
            try:
                page.goto(f"{url}/lab?token={token}")
                tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']")
                tab.wait_for(timeout=60_000)
                tab.click()
                panel = page.locator("#lightscientist-panel")
                expect(panel).to_be_visible()

                expect(panel.locator(".ls-project[data-path='study']")).to_be_visible()
                expect(panel.locator(".ls-stage")).to_have_text("idea.gate")
                expect(panel.locator(".ls-status-text")).to_have_text("waiting for you")
                gate = panel.locator(".ls-gate")
                expect(gate.locator("h3")).to_contain_text("idea.gate")
                expect(gate.locator(".ls-approves")).to_contain_text("experiment.setup")
                expect(gate.locator(".ls-gate-outputs")).to_contain_text("idea/brief.md")
                expect(panel.locator(".ls-graph .ls-node-current[data-stage='idea.gate']")
                       ).to_have_count(1)
                expect(panel.locator(".ls-event").first).to_be_visible()
                expect(page.locator(".ls-StatusItem")).to_contain_text("idea.gate")
                page.screenshot(path=str(OUTPUT / "panel-waiting.png"))

                page.keyboard.press("Control+Shift+C")
                palette = page.locator(".jp-ModalCommandPalette")
                palette.locator("input").fill("LightScientist")
                for label in ("LightScientist: Open Panel",
                              "LightScientist: Approve Pending Gate (idea.gate)"):
                    expect(palette.locator(".lm-CommandPalette-item", has_text=label)
                           ).to_have_count(1)
                page.keyboard.press("Escape")

                gate.locator(".ls-comment").fill("Looks good; go ahead.")
                gate.locator(".ls-approve").click()
                expect(panel.locator(".ls-stage")).to_have_text("experiment.setup",
                                                                timeout=20_000)
                expect(panel.locator(".ls-gate")).to_be_hidden()
                expect(panel.locator(".ls-graph .ls-node-current"
                                     "[data-stage='experiment.setup']")).to_have_count(1)
                expect(panel.locator(".ls-event-type").get_by_text("user.decision", exact=True)
                       ).to_have_count(1)
                expect(page.locator(".ls-StatusItem")).to_contain_text("experiment.setup")
                expect(panel.locator(".ls-project[data-path='study']")
                       ).to_contain_text("experiment.setup")
                expect(panel.locator(".ls-reply-message")).to_contain_text("applied")

                panel.locator(".ls-open-process").click()
                expect(page.locator(".jp-RenderedMarkdown").first).to_contain_text(
                    "Does learning-rate warmup help a small MLP?")
                panel.locator(".ls-outputs .ls-link[data-path='study/idea/brief.md']").click()
                expect(page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab",
                                    has_text="brief.md")).to_have_count(1)
                shot = OUTPUT / "panel-approved.png"
                page.screenshot(path=str(shot))
                print(f"\nscreenshots: {OUTPUT / 'panel-waiting.png'} {shot}")
            except Exception:
                page.screenshot(path=str(OUTPUT / "panel-failure.png"))
                print("browser console:\n" + "\n".join(console[-40:]))
                print("jupyter lab:\n" + "\n".join(lab_output.lines[-40:]))
                raise
        finally:
            browser.close()

    runner_output.wait_for("moved to experiment.setup", timeout=10)
    assert runner.wait(timeout=10) == 0
    state = json.loads((root / "study" / ".lightscientist" / "state.json").read_text())
    assert state["stage"] == "experiment.setup"
    decision = state["decisions"][-1]
    assert (decision["source"], decision["approve"], decision["comment"]) == (
        "panel", True, "Looks good; go ahead.")
