"""What the browser tests share: a real `jupyter lab` on loopback and Debian's Chromium.

- `require_browser()` skips a test when the built extension, `/usr/bin/chromium` or Python
  playwright is missing — except under CI (`CI=true`), where a missing piece fails it.
- `start_lab(root, scratch)` starts `jupyter lab` over `root` on a free loopback port with a
  random token, the news and update toasts off (settings in a private user-settings dir) and
  private workspaces; it yields a `Lab` (url, token, output lines) and stops the server after.
- `spawn` / `stop` run a child in its own process group and collect its output on a thread.
- `launch_chromium(pw)` launches Debian's Chromium headless (never a downloaded browser).
- `lab_page(url, token, failure, logs)` opens JupyterLab in a Chromium page; on a failure it
  keeps a screenshot and prints the console and the given logs.
- `run_all_cells(page, lab, notebook)` opens a notebook, waits for its kernel, runs it all.
- `axe_problems(page, selector)` runs axe-core (axe-playwright-python, offline) on a part of
  the page and lists its serious and critical violations.

Screenshots go to `OUTPUT` (`test-output/` at the repository root, gitignored).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
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
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from jupyter_core.paths import jupyter_path

REPO = Path(__file__).resolve().parents[2]
OUTPUT = REPO / "test-output"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
EXTENSION = "lightscientist-jupyter"


def missing() -> str | None:
    """What a browser test lacks here, or None."""
    if not any(Path(p, EXTENSION, "package.json").is_file() for p in jupyter_path("labextensions")):
        return (
            f"the JupyterLab extension {EXTENSION} is not installed (run scripts/setup, "
            "which builds labextension/ and links it)"
        )
    if not os.access(CHROMIUM, os.X_OK):
        return f"{CHROMIUM} is missing (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Python playwright is not installed (pip install -e '.[test]')"
    try:
        import axe_playwright_python  # noqa: F401
    except ImportError:
        return "axe-playwright-python is not installed (pip install -e '.[test]')"
    return None


def require_browser() -> None:
    """Skip (or, under CI, fail) when something a browser test needs is missing."""
    reason = missing()
    if reason:
        if os.environ.get("CI") == "true":
            pytest.fail(f"browser test cannot run under CI: {reason}")
        pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Lines:
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


def spawn(args: list[str], **kwargs: Any) -> tuple[subprocess.Popen, Lines]:
    """Start a child in a new session (its own process group), output collected."""
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        **kwargs,
    )
    return proc, Lines(proc)


def stop(proc: subprocess.Popen, lines: Lines) -> None:
    """End a child a test started (and its process group), politely first."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    lines.join()
    proc.stdout.close()


@dataclasses.dataclass
class Lab:
    url: str
    token: str
    output: Lines

    def page_url(self, path: str) -> str:
        """`path` (e.g. `lab/tree/x.ipynb`) with the token."""
        return f"{self.url}/{path.lstrip('/')}?token={self.token}"


def write_settings(folder: Path, settings: Mapping[str, Mapping[str, Any]]) -> None:
    """JupyterLab user settings: `{"@scope/pkg-extension:plugin": {...}}` written as
    `folder/@scope/pkg-extension/plugin.jupyterlab-settings`."""
    for plugin, values in settings.items():
        package, _, name = plugin.partition(":")
        path = folder / package / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")


NO_TOASTS = {
    "@jupyterlab/apputils-extension:notification": {"fetchNews": "false", "checkForUpdates": False}
}


RTC_FRONT_END = ("@jupyter/docprovider-extension", "@jupyter/collaboration-extension")
"""jupyter-collaboration's front-end extensions (its server side is `jupyter_server_ydoc`)."""


def lab_config(folder: Path, *, collaboration: bool, lightscientist: bool = False) -> Path:
    """A Jupyter config folder (for `JUPYTER_CONFIG_DIR`) with real-time collaboration on or
    off, server and front end alike; with `lightscientist`, our server extension enabled
    there too (else it is enabled as the install left it)."""
    (folder / "labconfig").mkdir(parents=True, exist_ok=True)
    extensions = {"jupyter_server_ydoc": collaboration}
    if lightscientist:
        extensions["lightscientist_jupyter"] = True
    (folder / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": extensions}}), encoding="utf-8"
    )
    (folder / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {name: not collaboration for name in RTC_FRONT_END}}),
        encoding="utf-8",
    )
    return folder


@contextlib.contextmanager
def start_lab(
    root: Path,
    scratch: Path,
    *,
    settings: Mapping[str, Mapping[str, Any]] | None = None,
    env: Mapping[str, str] | None = None,
    start_timeout: float = 90,
    collaboration: bool = False,
    args: Sequence[str] = (),
    app: str = "lab",
) -> Iterator[Lab]:
    """A real `jupyter lab` over `root` on loopback; `scratch` holds its settings, config and
    workspaces. `settings` adds user settings to the toast-free defaults; `env` replaces the
    server's environment (default: this process's). Real-time collaboration, which the test
    environment installs (jupyter-collaboration), is off unless `collaboration`; `args` go
    to `jupyter lab` after the others. `app="notebook"` starts Notebook 7 instead."""
    user_settings = scratch / "settings"
    write_settings(user_settings, {**NO_TOASTS, **(settings or {})})
    if collaboration and importlib.util.find_spec("jupyter_server_ydoc") is None:
        raise AssertionError(
            "jupyter-collaboration is not installed: `pip install -e '.[test]'` (scripts/setup)"
        )
    config = lab_config(
        scratch / "jupyter-config", collaboration=collaboration, lightscientist=True
    )
    port, token = free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        app,
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    if app == "lab":
        command += [
            "--LabApp.news_url=None",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        ]
    front = "LabApp" if app == "lab" else "JupyterNotebookApp"
    command += [
        f"--{front}.user_settings_dir={user_settings}",
        f"--{front}.workspaces_dir={scratch / 'workspaces'}",
    ]
    if os.geteuid() == 0:
        command.append("--allow-root")
    command.extend(args)
    server_env = {**(os.environ if env is None else env), "JUPYTER_CONFIG_DIR": str(config)}
    server, output = spawn(command, cwd=root, env=server_env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + start_timeout
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        "jupyter lab did not start:\n" + "\n".join(output.lines)
                    ) from None
                time.sleep(0.3)
        yield Lab(url, token, output)
    finally:
        stop(server, output)


def axe_problems(page: Any, selector: str) -> list[str]:
    """axe-core's violations of impact serious or critical inside `selector`, one line each."""
    from axe_playwright_python.sync_playwright import Axe

    results = Axe().run(page, context=selector)
    return [
        f"{v['id']} ({v['impact']}): {v['help']} — "
        + "; ".join(n["html"][:120] for n in v["nodes"][:3])
        for v in results.response["violations"]
        if v.get("impact") in ("serious", "critical")
    ]


def launch_chromium(pw: Any) -> Any:
    """Debian's Chromium, headless, from a playwright handle."""
    return pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)


@contextlib.contextmanager
def lab_page(url: str, token: str, failure: str, logs: Mapping[str, Lines]) -> Iterator[Any]:
    """A Chromium page on JupyterLab at `url` (1400 × 1000, 30 s waits). When the block
    raises: a screenshot `OUTPUT/failure`, and the browser console and `logs` printed."""
    from playwright.sync_api import sync_playwright

    OUTPUT.mkdir(exist_ok=True)
    console: list[str] = []
    with sync_playwright() as pw:
        browser = launch_chromium(pw)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda msg: console.append(f"{msg.type}: {msg.text}"))
            page.set_default_timeout(30_000)
            page.goto(f"{url}/lab?token={token}")
            try:
                yield page
            except BaseException:
                page.screenshot(path=str(OUTPUT / failure))
                print("browser console:\n" + "\n".join(console[-40:]))
                for name, lines in logs.items():
                    print(f"{name}:\n" + "\n".join(lines.lines[-40:]))
                raise
        finally:
            browser.close()


def run_all_cells(page: Any, lab: Lab, notebook: str) -> None:
    """Open `notebook` (relative to the server root), wait until its kernel is idle, and run
    all its cells from the Run menu."""
    import re

    from playwright.sync_api import expect

    page.goto(lab.page_url(f"lab/tree/{notebook}"))
    # the kernel is up (before it is, Run All asks which kernel to start)
    idle = page.get_by_role("contentinfo").get_by_role("button", name="Python 3 (ipykernel) | Idle")
    expect(idle).to_be_visible(timeout=90_000)
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_have_count(
        1, timeout=90_000
    )
    page.locator(".lm-MenuBar-item", has_text=re.compile(r"^Run$")).click()
    page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()


def open_panel(page: Any) -> Any:
    """Click the LightScientist tab of the left sidebar; the panel's locator."""
    tab = page.locator(".jp-SideBar .lm-TabBar-tab[data-id='lightscientist-panel']")
    tab.wait_for(timeout=60_000)
    tab.click()
    return page.locator("#lightscientist-panel")


def tab_to(page: Any, target: Any, presses: int = 150) -> None:
    """Press Tab until the keyboard is on `target` (failing after `presses`), then check the
    theme draws where it is (an outline)."""
    for _ in range(presses):
        if target.evaluate("e => e === document.activeElement"):
            outline = target.evaluate("e => getComputedStyle(e).outlineStyle")
            assert outline != "none", f"{target} has the keyboard but no outline"
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {target}")


def show_panel(page: Any, within: float = 30) -> Any:
    """Open the LightScientist side panel and return it. Its shortcut (Alt+Shift+L) runs the
    panel's Open command, which activates it and never toggles it closed — unlike a click on
    its sidebar tab, which closes a panel that a reloaded page's layout restored a moment
    before. Pressed until the panel shows: the shortcuts load with the settings."""
    panel = page.locator("#lightscientist-panel")
    deadline = time.monotonic() + within
    while not panel.is_visible():
        assert time.monotonic() < deadline, "the LightScientist panel did not open"
        page.keyboard.press("Alt+Shift+L")
        page.wait_for_timeout(250)
    return panel


def write_notebook(path: Path, sources: Sequence[str]) -> None:
    """A notebook of one code cell per source, on the Python 3 kernel, at `path`."""
    import nbformat

    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(s) for s in sources], metadata={"kernelspec": kernel}
    )
    nbformat.write(notebook, path)
