"""A checkpoint saver that notices when its database goes away, and stops waiting on it.

LangGraph writes a step's checkpoint on a background thread and raises a failed write only
when the whole turn ends; a worker whose database went away runs on meanwhile, and with
PostgreSQL each of its queued writes waits for the pool's timeout (30 s) in turn — a run
stopped mid-way by a database outage was still waiting a quarter of an hour later. The guard
stands in front of the saver's own methods: the first call failing on a storage fault (see
`_faults`) reports it at once, so the run stops with one line, and frees what waits on the
database (`on_gone`: the PostgreSQL pool is closed, which fails its waiting callers); every
later call fails at once with the same fault instead of reaching the database again. The
next run opens a new saver.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ParamSpec, TypeVar, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from lightscientist_jupyter._faults import Fault, report_storage_fault
from lightscientist_jupyter.errors import StorageFault
from lightscientist_jupyter.runtime.checkpoints.redacting import RedactedWrites

P = ParamSpec("P")
T = TypeVar("T")


class StorageGuard:
    """Put in front of a saver class (see `guarded`)."""

    on_gone: Callable[[], None] | None = None
    """Called once when the database went away (frees callers waiting on it)."""
    gone: Fault | None = None
    """The storage fault that ended this saver's use, if one did."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self._gone_lock = threading.Lock()

    def _call(self, method: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
        self._check()
        try:
            return method(*args, **kwargs)
        except Exception as exc:
            self._failed(exc)
            raise

    def _check(self) -> None:
        if self.gone is not None:
            raise StorageFault(self.gone)

    def _failed(self, exc: BaseException) -> None:
        with self._gone_lock:
            if self.gone is not None:
                return
            self.gone = report_storage_fault(exc)
            on_gone = self.on_gone if self.gone is not None else None
        if on_gone is not None:
            on_gone()

    # the saver's methods a run calls (LangGraph's loop, history, dropping threads)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        tup = self._call(super().get_tuple, config)  # type: ignore[misc]
        return cast("CheckpointTuple | None", tup)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        self._check()
        try:
            yield from super().list(config, filter=filter, before=before, limit=limit)  # type: ignore[misc]
        except Exception as exc:
            self._failed(exc)
            raise

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        stored = self._call(super().put, config, checkpoint, metadata, new_versions)  # type: ignore[misc]
        return cast(RunnableConfig, stored)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._call(super().put_writes, config, writes, task_id, task_path)  # type: ignore[misc]

    def delete_thread(self, thread_id: str) -> None:
        self._call(super().delete_thread, thread_id)  # type: ignore[misc]


S = TypeVar("S", bound=BaseCheckpointSaver[Any])


def guarded(saver_class: type[S], *args: Any, on_gone: Callable[[], None] | None = None) -> S:
    """`saver_class(*args)`, with `StorageGuard` in front of its methods (and the failures
    among a task's writes redacted: `redacting.RedactedWrites`)."""
    saver = _guarded_class(saver_class)(*args)
    saver.on_gone = on_gone
    return cast(S, saver)


_CLASSES: dict[type, type] = {}


def _guarded_class(saver_class: type) -> type:
    """The guarded subclass of `saver_class`, made once."""
    if saver_class not in _CLASSES:
        name = f"Guarded{saver_class.__name__}"
        _CLASSES[saver_class] = type(name, (StorageGuard, RedactedWrites, saver_class), {})
    return _CLASSES[saver_class]
