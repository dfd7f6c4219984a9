"""The dashboard widgets' front ends are build output of the extension's TypeScript.

`jupyter/dashboard/static/` holds only what `jlpm build:widgets` writes from
`labextension/src/widgets/` (git ignores it; the wheel ships it), and a checkout whose
JavaScript was never built still shows a dashboard whose widgets say how to build theirs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from lightscientist_jupyter.jupyter.dashboard import widgets

REPO = Path(__file__).resolve().parents[2]
WIDGETS = REPO / "labextension" / "src" / "widgets"


def test_no_file_under_static_is_written_by_hand():
    tracked = subprocess.run(
        ["git", "ls-files", "--", "lightscientist_jupyter/jupyter/dashboard/static"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert tracked == []
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "lightscientist_jupyter/jupyter/dashboard/static/gate.js"],
        cwd=REPO,
    )
    assert ignored.returncode == 0


def test_each_widget_loads_the_module_built_from_its_typescript():
    for name in ("events", "gate", "budget", "controls", "handoff"):
        assert (WIDGETS / f"{name}.ts").is_file()
        assert widgets.esm(name) == widgets.STATIC / f"{name}.js"
        built = (widgets.STATIC / f"{name}.js").read_text(encoding="utf-8")
        assert built.startswith(
            f"/*! Built by `jlpm build:widgets` from labextension/src/widgets/{name}.ts"
        )


def test_an_unbuilt_widget_says_how_to_build_it(monkeypatch, tmp_path):
    monkeypatch.setattr(widgets, "STATIC", tmp_path / "static")
    module = widgets.esm("gate")
    assert isinstance(module, str)
    assert "export default" in module and "render" in module
    assert "The dashboard's gate widget is not built: run scripts/setup" in module
