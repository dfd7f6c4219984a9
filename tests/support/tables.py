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
