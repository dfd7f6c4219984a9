"""`%lightscientist take / deliver / give-back` on an in-process `InteractiveShell`, on a
project on disk that nobody runs."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from lightscientist_jupyter import api
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.controller.state import load_state
from lightscientist_jupyter.workspace import Workspace


@pytest.fixture(scope="module")
def ip():
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "lightscientist_jupyter")
    yield shell
    api.stop_all()


def test_take_puts_the_skeleton_in_the_next_cell_and_deliver_names_the_problems(ip, tmp_path):
    ws = Workspace.at(tmp_path / "p")
    ResearchController.create(ws, "g", mode="auto", start_stage="experiment.loop")
    ip.rl_next_input = None
    with capture_output() as cap:
        ip.run_line_magic("lightscientist", f"take -w {ws.root}")
    assert "'experiment.loop' is yours now" in cap.stdout
    assert "open it in JupyterLab: experiment/experiment.loop.ipynb" in cap.stdout
    assert (ws.root / "experiment" / "experiment.loop.ipynb").is_file()
    # the kernel's shell turns this into a set_next_input payload: a new cell below
    assert "results_path = root / 'experiment/results.csv'" in ip.rl_next_input
    assert load_state(ws.state_file).pending.kind == "handoff"

    with pytest.raises(UsageError, match=r"deliver refused: .*experiment/log.md \(missing\)"):
        ip.run_line_magic("lightscientist", f'deliver -m "by hand" --next nope -w {ws.root}')
    with capture_output() as cap:
        ip.run_line_magic("lightscientist", f"give-back -w {ws.root}")
    assert "the workers' again" in cap.stdout and "the project resumes in this kernel" in cap.stdout
    run = api.current(ws.root)
    assert run is not None
    run.stop()
