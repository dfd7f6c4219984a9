"""What the tests know of the default stage table, written out once (README, "The stage
table": the default flow)."""

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
