"""The wheel ships the prebuilt JupyterLab extension, the dashboard widgets' built modules and
the config enabling the server extension."""

from __future__ import annotations

import json
import os
import re
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
BUILT = REPO / "lightscientist_jupyter" / "labextension"
DATA = "lightscientist_jupyter-{version}.data/data"


@pytest.fixture(scope="module")
def wheel_names(built_wheel: Path) -> tuple[str, set[str], zipfile.ZipFile]:
    if not (BUILT / "static" / "style.js").is_file():
        reason = "the JupyterLab extension is not built (scripts/setup builds it)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    version = built_wheel.name.split("-")[1]
    archive = zipfile.ZipFile(built_wheel)
    yield DATA.format(version=version), set(archive.namelist()), archive
    archive.close()


def test_wheel_ships_the_prebuilt_labextension(wheel_names):
    data, names, archive = wheel_names
    ext = f"{data}/share/jupyter/labextensions/lightscientist-jupyter"
    assert {f"{ext}/package.json", f"{ext}/install.json", f"{ext}/static/style.js"} <= names
    package = json.loads(archive.read(f"{ext}/package.json"))
    assert package["name"] == "lightscientist-jupyter"
    assert package["jupyterlab"]["_build"]["load"].startswith("static/remoteEntry.")
    assert f"{ext}/{package['jupyterlab']['_build']['load']}" in names
    install = json.loads(archive.read(f"{ext}/install.json"))
    assert install["packageName"] == "lightscientist-jupyter"


def test_wheel_ships_the_dashboard_widgets_modules(wheel_names):
    _data, names, archive = wheel_names
    for name in ("events", "gate", "budget", "controls", "handoff"):
        module = f"lightscientist_jupyter/jupyter/dashboard/static/{name}.js"
        assert module in names
        text = archive.read(module).decode()
        assert text.startswith(
            f"/*! Built by `jlpm build:widgets` from labextension/src/widgets/{name}.ts"
        )
        assert re.search(r"^export \{.* as default\b", text, re.M)  # anywidget's module shape
    assert "lightscientist_jupyter/jupyter/dashboard/style/theme.css" in names


def test_wheel_enables_the_server_extension(wheel_names):
    data, names, archive = wheel_names
    config = f"{data}/etc/jupyter/jupyter_server_config.d/lightscientist_jupyter.json"
    assert json.loads(archive.read(config)) == {
        "ServerApp": {"jpserver_extensions": {"lightscientist_jupyter": True}}
    }
    assert "lightscientist_jupyter/jupyter/server/extension.py" in names
    assert not any("node_modules" in name for name in names)
