"""The API's `usage`: the project's model calls summed by stage, worker, model or stage visit,
as a DataFrame (see `app.usage`; `lightscientist usage` prints the same rows)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

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
