"""One version number: the Python package and the JupyterLab extension's npm package agree.

The wheel's version comes from `lightscientist_jupyter.__version__` (hatch reads it); the
side panel's comes from `labextension/package.json`. A release bumps both, and this test
fails until it has.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import lightscientist_jupyter

REPO = Path(__file__).resolve().parents[1]


def test_the_labextension_has_the_python_package_version():
    package = json.loads((REPO / "labextension" / "package.json").read_text(encoding="utf-8"))
    assert package["version"] == lightscientist_jupyter.__version__


def test_the_wheel_takes_its_version_from_the_python_package():
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    source = REPO / pyproject["tool"]["hatch"]["version"]["path"]
    assert source.resolve() == Path(lightscientist_jupyter.__file__).resolve()
