"""`%lightscientist jobs` on a finished project: the offline batch's job as a DataFrame."""

from __future__ import annotations

import pandas as pd
import pytest
from IPython.core.error import UsageError

from lightscientist_jupyter import api
from lightscientist_jupyter.app.jobs import COLUMNS
from tests.jupyter.test_magic import done, fresh_defaults, ip, ls  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def test_jobs_is_a_dataframe_and_json_a_list(ip, done, tmp_path):  # noqa: F811
    ws = done[0]
    frame = ls(ip, f'jobs -w "{ws}"')
    assert isinstance(frame, pd.DataFrame) and list(frame.columns) == list(COLUMNS)
    # the search's eight nodes each ran its script as a job (two at a time: which of a
    # round's two got the lower id is the threads' race, so the rows are found by name)
    by_name = {row["name"]: row for row in frame.to_dict("records")}
    first = by_name["node-n001"]
    assert first["id"] in ("j1", "j2")  # the first round's two drafts
    assert first | {"wall_s": 0, "id": "j1"} == {
        "id": "j1",
        "name": "node-n001",
        "worker_id": first["worker_id"],
        "stage": "experiment.loop",
        "backend": "local",
        "status": "succeeded",
        "exit_code": 0,
        "wall_s": 0,
        "log": "jobs/node-n001.log",
    }
    # the offline study's second draft carries a bug: its job fails, and says so
    assert (by_name["node-n002"]["status"], by_name["node-n002"]["exit_code"]) == ("failed", 1)
    assert api.jobs(ws).equals(frame)  # the API's frame is the magic's
    rows = ls(ip, f'jobs --json -w "{ws}"')
    assert sorted(r["name"] for r in rows) == [f"node-n{i:03d}" for i in range(1, 9)]
    with pytest.raises(UsageError, match="no LightScientist project in"):
        ls(ip, f'jobs -w "{tmp_path}"')
