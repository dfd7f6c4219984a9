"""What the tests know of the default stage table, written out once (README, "The stage
table": the default flow)."""

import shutil
from pathlib import Path

from lightscientist_jupyter.controller.loader import shipped_stages

DEFAULT_STAGE_IDS = [
    "idea.survey",
    "idea.generate",
    "idea.evaluate",
    "idea.probe_batch",
    "idea.probe_collect",
    "idea.gate",
    "experiment.setup",
    "experiment.loop",
    "experiment.analyze",
    "experiment.gate",
    "paper.plan",
    "paper.figure",
    "paper.write",
    "paper.review",
]


def search_table(nodes: int = 3, parallel: int = 2, debug_depth: int = 1) -> str:
    """A one-stage table whose stage `a` is a search of `loss` (lower is better), writing
    `out/a.md` once the search is over."""
    return f"""\
start = "a"

[stages.a]
skill = "skills/a.md"
outputs = ["out/a.md"]
next = "done"
allowed = ["done"]
search = {{ metric = "loss", goal = "min", nodes = {nodes}, parallel = {parallel}, \
debug_depth = {debug_depth} }}
"""


def loop_stages(folder: Path) -> Path:
    """The default table with its experiment loop run as one plan (no `search` key), copied
    with its skills into `folder`; returns the table's path. The offline scientist's loop then
    runs its second batch as one job (`jobs/batch-2.log`): the tests of the jobs' own
    mechanics (a time limit, a killed run, Ray) drive that one job."""
    shutil.copytree(shipped_stages(), folder, dirs_exist_ok=True)
    table = folder / "research.toml"
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("search = ")]
    assert len(kept) == len(lines) - 1, "the default table's experiment.loop has no search key"
    table.write_text("".join(kept), encoding="utf-8")
    return table
