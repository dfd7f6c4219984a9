"""Layer 2: the runtime supervisor (worker records, the event filter, the scheduling agent)."""

from lightscientist_jupyter.supervisor.task import StageHost, StageResult, StageTask

__all__ = ["StageHost", "StageResult", "StageTask"]
