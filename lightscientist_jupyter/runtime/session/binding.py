"""What a worker binds its runtime's shared graph to, for the length of one of its turns.

The graph is built once per runtime (`graphs`); a worker's stop flags, shell, literature hub,
job context and `recall` scope are its `Binding`, which its session sets in `BOUND` before it
runs the graph. LangGraph carries the context into the threads that run the tools, where `bound()`
reads it back. The session sets it and the graph's tools read it: both import this module,
neither imports the other.
"""

from __future__ import annotations

import contextvars
import dataclasses

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.literature.service import Literature
from lightscientist_jupyter.runtime.jobs.tools import JobContext
from lightscientist_jupyter.runtime.memory_tools import RecallScope
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkerShell
from lightscientist_jupyter.runtime.session.lifecycle import TurnFlags


@dataclasses.dataclass(eq=False)
class Binding:
    """One worker's side of the shared graph."""

    flags: TurnFlags
    shell: WorkerShell
    literature: tuple[Literature, str]
    jobs: JobContext
    recall: RecallScope


BOUND: contextvars.ContextVar[Binding] = contextvars.ContextVar("lightscientist_worker")
"""The binding of the worker whose turn runs in this context."""


def bound() -> Binding:
    try:
        return BOUND.get()
    except LookupError:
        raise RuntimeLayerError("a worker's step ran outside its session's turn") from None
