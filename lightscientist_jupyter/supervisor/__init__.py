"""Layer 2: the stage supervisor (the update function and event filter, the scheduling agent,
the loop around it; `loop.StageSupervisor` is its entry point)."""

from lightscientist_jupyter.values.task import StageHost, StageResult, StageTask

__all__ = ["StageHost", "StageResult", "StageTask"]
