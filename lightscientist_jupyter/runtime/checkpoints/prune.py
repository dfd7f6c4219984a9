"""Lighter checkpoints: a settled thread keeps only its newest checkpoint, the supervisor
agent's thread is renewed every few turns, and the SQLite file is compacted and closed when
the run ends.

LangGraph's SQLite saver stores every step's checkpoint with the whole state in it (but for a
`DeltaChannel`, deepagents' messages), so a session's thread grows with the square of its
length. Once a worker reaches a final state
(and after each turn of the supervisor agent, whose session outlives every stage) no turn
will ever resume from an intermediate step: the newest checkpoint — which holds the whole
message history, still readable with `get_state` — and its pending writes are all a later
read needs. What resumes after a crash is a turn still running, and a running thread is
never pruned.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

from langchain_core.messages import AIMessage

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord, new_thread_id
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, Role, WorkerStatus

_PRUNE_SQL = (
    "DELETE FROM {table} WHERE thread_id = ? AND checkpoint_id < ("
    "SELECT MAX(c.checkpoint_id) FROM checkpoints c "
    "WHERE c.thread_id = {table}.thread_id AND c.checkpoint_ns = {table}.checkpoint_ns)"
)
"""Everything of a thread older than its newest checkpoint, per namespace (checkpoint ids
are time-ordered; the saver itself reads the newest as the largest)."""

VACUUM_FREE_SHARE = 0.25
"""At close, the file is rewritten without its free pages when they are this share or more."""


def settled(record: WorkerRecord) -> bool:
    """Whether the session's thread has no turn left to resume mid-way: a worker in a final
    state, or the supervisor agent between two decisions."""
    if record.status in FINAL_WORKER_STATUSES:
        return True
    return record.role == Role.SUPERVISOR and record.status != WorkerStatus.RUNNING


def prune_thread(saver: Any, thread_id: str, graph: Any = None) -> int:
    """Drop every checkpoint of `thread_id` but the newest (and the older ones' pending
    writes); returns the checkpoints dropped. A saver that cannot prune is left alone.

    A deepagents worker keeps its messages in a `DeltaChannel`: a checkpoint holds only the
    newest messages and the rest is rebuilt from its ancestors' writes. Its newest checkpoint
    is first given the whole value (`snapshot_deltas`, through `graph`), so that it stands
    alone."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        # (a graph without a `DeltaChannel`, like the supervisor agent's, has whole values in
        # every checkpoint: reading the newest first would only cost its deserialisation)
        if graph is not None and _delta_channels(graph):
            if not snapshot_deltas(graph, saver, thread_id):
                return 0
        with getattr(saver, "lock", threading.Lock()):
            try:
                with conn:
                    dropped = conn.execute(
                        _PRUNE_SQL.format(table="checkpoints"), (thread_id,)
                    ).rowcount
                    conn.execute(_PRUNE_SQL.format(table="writes"), (thread_id,))
            except sqlite3.Error:  # closed at exit meanwhile, or a full disk: nothing is lost
                return 0
        return max(0, dropped)
    prune = getattr(saver, "prune", None)
    if prune is None:
        return 0
    try:
        prune([thread_id], strategy="keep_latest")  # PostgresSaver has it
    except NotImplementedError:
        return 0
    return 0


def snapshot_deltas(graph: Any, saver: Any, thread_id: str) -> bool:
    """Store the whole value of each `DeltaChannel` of `graph` in the thread's newest root
    checkpoint (with no parent: it needs none then); False when there is no checkpoint."""
    from langgraph.checkpoint.serde.types import _DeltaSnapshot

    config: dict[str, Any] = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    newest = saver.get_tuple(config)
    if newest is None:
        return False
    checkpoint = dict(newest.checkpoint)
    stored = dict(checkpoint.get("channel_values") or {})
    versions = checkpoint.get("channel_versions") or {}
    missing = [
        name
        for name in _delta_channels(graph)
        if name in versions and not isinstance(stored.get(name), (_DeltaSnapshot, list))
    ]
    if not missing:
        return True
    values = graph.get_state({"configurable": {"thread_id": thread_id}}).values or {}
    for name in missing:
        stored[name] = _DeltaSnapshot(values.get(name) or [])
    checkpoint["channel_values"] = stored
    saver.put(config, checkpoint, newest.metadata, {})  # same id: the row is replaced
    return True


def _delta_channels(graph: Any) -> list[str]:
    from langgraph.channels.delta import DeltaChannel

    channels = getattr(graph, "channels", None) or {}
    return [name for name, channel in channels.items() if isinstance(channel, DeltaChannel)]


SUPERVISOR_EVERY = 8
"""The supervisor agent's thread is renewed before its 9th turn: each turn starts from one
event and its model sees only that turn, yet every turn's checkpoint reads and writes the
thread's whole message list (its graph has no `DeltaChannel`), which grew with the project
(46 KB by the end of the default offline run, read back at the start of every turn)."""


def after_turn(graph: Any, record: WorkerRecord) -> bool:
    """At the end of a session's turn: prune its thread when the turn settled it for good (a
    worker's final state). Returns whether it was pruned."""
    if record.status not in FINAL_WORKER_STATUSES:
        return False  # (the supervisor's thread is renewed instead: `renewal`)
    return prune_settled(graph, record)


def renewal(graph: Any, record: WorkerRecord, turns: int) -> dict[str, Any] | None:
    """The record's changes that start the supervisor agent's next turn on a new, empty
    thread (after `SUPERVISOR_EVERY` turns in one), or None. Nothing in the old thread is
    read again; its answers are counted into `answers_before` (a recording's call numbers).
    The record must be saved before the old thread is dropped (`drop_thread`): a crash in
    between leaves an unused thread, never a record pointing at a deleted one."""
    if record.role != Role.SUPERVISOR or turns < SUPERVISOR_EVERY or not settled(record):
        return None
    values = graph.get_state({"configurable": {"thread_id": record.thread_id}}).values or {}
    answers = sum(isinstance(m, AIMessage) for m in values.get("messages") or [])
    thread_id = new_thread_id(record.id, time.time())
    return {"thread_id": thread_id, "answers_before": record.answers_before + answers}


def drop_thread(graph: Any, thread_id: str) -> None:
    """Delete a renewed-away thread; a saver's error leaves it (unused) in place."""
    saver = getattr(graph, "checkpointer", None)
    try:
        if saver is not None:
            saver.delete_thread(thread_id)
    except Exception:  # a leftover thread is harmless: no record points at it
        pass


def prune_settled(graph: Any, record: WorkerRecord) -> bool:
    """Prune the session's thread (through its graph's saver) if no turn of it can resume
    mid-way; whether it was pruned. A saver's error only leaves the checkpoints in place."""
    saver = getattr(graph, "checkpointer", None)
    if saver is None or not settled(record):
        return False
    try:
        prune_thread(saver, record.thread_id, graph)
    except Exception:  # another saver's error: the thread keeps its checkpoints, and that is all
        return False
    return True


def close_connection(conn: Any) -> None:
    """Close the checkpoint connection at the end of a run. A SQLite file is compacted first
    when pruning freed much of it; closing folds its WAL back into the database."""
    if isinstance(conn, sqlite3.Connection):
        try:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            if pages and free / pages >= VACUUM_FREE_SHARE:
                conn.execute("VACUUM")
        except sqlite3.Error:  # compaction is an optimisation; the close below still folds
            pass
    conn.close()
