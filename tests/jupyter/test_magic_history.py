"""`%lightscientist history / diff / rewind / fork` and `api.history` on a finished project."""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.utils.capture import capture_output

from lightscientist_jupyter import api
from tests.jupyter.test_magic import done, fresh_defaults, ip, ls  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def test_history_is_a_dataframe_and_diff_prints(ip, done):  # noqa: F811
    ws = done[0]
    frame = ls(ip, f'history -w "{ws}"')
    assert isinstance(frame, pd.DataFrame)
    assert list(frame.columns) == [
        "id", "stage", "visit", "event", "time", "added", "changed", "removed",
    ]  # fmt: skip
    assert {"start", "finish"} <= set(frame["event"])
    assert len(api.history(ws)) == len(frame)
    assert isinstance(ls(ip, f'history --json -w "{ws}"'), list)
    with capture_output() as cap:
        ls(ip, f'diff experiment.setup#1 experiment.loop#1 --stat -w "{ws}"')
    assert "experiment/tree.json" in cap.stdout  # the search's tree is the loop's
    assert "experiment/tree.json" in api.diff(ws, "experiment.setup#1", "experiment.loop#1")


def test_fork_from_the_magic_and_bad_refs_as_usage_errors(ip, done, tmp_path):  # noqa: F811
    ws = done[0]
    with capture_output() as cap:
        ls(ip, f'fork idea.gate "{tmp_path / "other"}" -w "{ws}"')
    assert "forked idea.gate#1" in cap.stdout
    assert api.status(tmp_path / "other")["stage"] == "idea.gate"
    with pytest.raises(UsageError, match="names no snapshot and no stage"):
        ls(ip, f'rewind nosuch -w "{ws}"')
