"""Layer 1: the research controller, the stage table, PROCESS.md, replies and the run lock."""

from lightscientist_jupyter.controller.controller import (
    FinishOutcome,
    ReplyOutcome,
    ResearchController,
)
from lightscientist_jupyter.controller.loader import (
    default_table_path,
    load_table,
    shipped_stages,
)
from lightscientist_jupyter.controller.state import PendingDecision, ProjectState
from lightscientist_jupyter.controller.table import DONE, Stage, StageTable

__all__ = [
    "DONE",
    "FinishOutcome",
    "PendingDecision",
    "ProjectState",
    "ReplyOutcome",
    "ResearchController",
    "Stage",
    "StageTable",
    "default_table_path",
    "load_table",
    "shipped_stages",
]
