"""`scripts/lab`: the README's way from the demo to JupyterLab. It sets up what JupyterLab
needs (`scripts/setup --lab`) and starts it on the quickstart notebook, with the front-end
extension loaded and the server one answering. Run here over this checkout's `.venv` (set up
already, so its set-up has nothing left to do); a fresh clone's figure is in the issue note."""

from __future__ import annotations

import json
import os
import re
import secrets
import time
import urllib.request
from pathlib import Path

import pytest
from support.browser import NO_TOASTS, free_port, lab_config, spawn, stop, write_settings

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return reply.read().decode("utf-8")


def test_scripts_lab_opens_the_quickstart_with_both_extensions(tmp_path: Path):
    settings = tmp_path / "settings"
    write_settings(settings, NO_TOASTS)
    port, token = free_port(), secrets.token_hex(16)
    proc, output = spawn(
        [str(REPO / "scripts" / "lab"), "--no-browser", "--ip=127.0.0.1", f"--port={port}",
         f"--IdentityProvider.token={token}", "--LabApp.news_url=None",
         f"--LabApp.user_settings_dir={settings}",
         f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}"],
        cwd=tmp_path,  # the script finds the repository by itself
        # jupyter-collaboration (installed for its own test) off, as in a newcomer's lab
        env={**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
             "JUPYTER_CONFIG_DIR": str(lab_config(tmp_path / "config", collaboration=False))},
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        output.wait_for(f"127.0.0.1:{port}/lab/tree/notebooks/quickstart.ipynb", timeout=180)
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(f"{base}/api/status?token={token}")
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "\n".join(output.lines)
                time.sleep(0.3)
        page = _get(f"{base}/lab/tree/notebooks/quickstart.ipynb?token={token}")
        config = json.loads(
            re.search(r'id="jupyter-config-data"[^>]*>(.*?)</script>', page, re.S).group(1)  # type: ignore[union-attr]
        )
        loaded = {extension["name"] for extension in config["federated_extensions"]}
        assert "lightscientist-jupyter" in loaded
        projects = json.loads(_get(f"{base}/lightscientist/projects?token={token}"))
        assert isinstance(projects["projects"], list)  # the server extension answers
        notebook = json.loads(_get(f"{base}/api/contents/notebooks/quickstart.ipynb?token={token}"))
        assert notebook["type"] == "notebook"
    finally:
        stop(proc, output)
    said = "\n".join(output.lines)
    assert "JupyterLab with notebooks/quickstart.ipynb" in said
    assert "Traceback" not in said, said
