"""The API's `usage`: the project's model calls summed by stage, worker, model or stage visit,
as a DataFrame (see `app.usage`; `lightscientist usage` prints the same rows); and `estimate`,
what a run of a stage table may cost, before it starts (see `app.estimate`)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from lightscientist_jupyter.app import estimate as estimates
from lightscientist_jupyter.app import usage as usages

if TYPE_CHECKING:
    import pandas as pd

COLUMNS = [
    "input_tokens",
    "output_tokens",
    "cached_tokens",
    "tokens",
    "model_calls",
    "wall_s",
    "cost",
    "estimated",
]


def usage(workspace: str | os.PathLike[str] = ".", by: str = "stage") -> pd.DataFrame:
    """One row per stage (or worker, model, visit: `by`) and a last row `total`; `cost` is
    in USD, or "unknown" while a call had no known price."""
    import pandas as pd

    view = usages.usage_view(workspace, by)
    rows = [r.to_dict() for r in view.rows] + [view.to_dict()["total"]]
    return pd.DataFrame(rows, columns=["key", *COLUMNS]).set_index("key").rename_axis(by)


def estimate(workspace: str | os.PathLike[str] = ".", **options: Any) -> pd.DataFrame:
    """An estimate (never a measurement) of a run: one row per stage — model calls, tokens,
    cost ("unknown" without a price) and its basis (`recorded`: a recorded run of the same
    table, `sizes`: the skill and task sizes) — and a last row `total`. Writes nothing.
    `options` are `app.estimate.estimate`'s: stages, model, base_url, price, source (a
    recording), goal."""
    import pandas as pd

    est = estimates.estimate(workspace, **options)
    rows = [r.to_dict() for r in (*est.rows, est.total)]
    frame = pd.DataFrame(rows).set_index("stage")
    frame.attrs.update(estimate=True, model=est.model, table=est.table, recording=est.recording)
    return frame
