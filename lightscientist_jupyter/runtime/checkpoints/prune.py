"""Lighter checkpoints: a settled session's thread is carried over to a new thread that holds
only its final state, the supervisor agent's thread is renewed every few turns, and the SQLite
file is compacted and closed when the run ends.

LangGraph's savers store every step's checkpoint with the whole state in it (but for a
`DeltaChannel`, deepagents' messages, whose older values are rebuilt from the ancestors'
writes), so a session's thread grows with the square of its length. Once a session reaches a
final state (and when the supervisor agent's runtime closes between two decisions) no turn
will ever resume from an intermediate step: its final state is all a later read needs (the
history, time travel, a recording's call numbers, all through `get_state`). What resumes
after a crash is a turn still running, and a running thread is never carried over.

Only LangGraph's public API does it, the same way for SQLite and PostgreSQL (`carry_over`):
`get_state` reads the whole state (rebuilding a `DeltaChannel`'s value), `update_state`
writes it as the first checkpoint of a new thread (a fresh thread's checkpoint stores whole
values, so it stands alone), and the saver's `delete_thread` drops the old thread once the
session's record points at the new one.
"""

from __future__ import annotations

import sqlite3
import time
import weakref
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END

from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord, new_thread_id
from lightscientist_jupyter.vocab import FINAL_WORKER_STATUSES, Role, WorkerStatus

VACUUM_FREE_SHARE = 0.25
"""At close, the file is rewritten without its free pages when they are this share or more."""


def settled(record: WorkerRecord) -> bool:
    """Whether the session's thread has no turn left to resume mid-way: a worker in a final
    state, or the supervisor agent between two decisions."""
    if record.status in FINAL_WORKER_STATUSES:
        return True
    return record.role == Role.SUPERVISOR and record.status != WorkerStatus.RUNNING


def carry_over(graph: Any, record: WorkerRecord) -> dict[str, Any] | None:
    """If the session is settled, write its thread's final state as the one checkpoint of a
    new thread; returns the record's changes that point it there (`{"thread_id": …}`), or None
    and nothing changed: not settled, no checkpoint, an interrupt waiting for its answer, a
    saver's error, or a copy that does not read back exactly the state it was made from.

    The record must be saved with the changes before the old thread is dropped
    (`drop_thread`): a crash in between leaves an unused thread, never a record pointing at
    a deleted one.

    The copy is at rest: it is written as the node whose exit edge ends the graph
    (`_closing`), so it has no next step, as a settled thread has none; a later turn's input
    starts from it as from the old thread's end, and a crash before that turn wrote anything
    is not taken for a turn cut half-way (`ExecutionRuntime.has_unfinished_turn`)."""
    if getattr(graph, "checkpointer", None) is None or not settled(record):
        return None
    thread_id = ""
    try:
        state = graph.get_state(_config(record.thread_id))
        as_node = _closing(graph)
        if not state.values or state.interrupts or as_node is None:
            return None
        thread_id = _unused_thread(graph, record)
        graph.update_state(_config(thread_id), state.values, as_node=as_node)
        copy = graph.get_state(_config(thread_id))
        if copy.values != state.values or copy.next:
            drop_thread(graph, thread_id)
            return None
    except Exception:  # a saver's error: the thread keeps its checkpoints, and that is all
        if thread_id:
            drop_thread(graph, thread_id)
        return None
    return {"thread_id": thread_id}


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def _unused_thread(graph: Any, record: WorkerRecord) -> str:
    """A new thread id for the session, neither its current thread nor one with checkpoints."""
    at = time.time()
    for _ in range(1000):
        thread_id = new_thread_id(record.id, at)
        if (
            thread_id != record.thread_id
            and graph.checkpointer.get_tuple(_config(thread_id)) is None
        ):
            return thread_id
        at += 0.001
    raise RuntimeError(f"no unused thread id for {record.id}")


_CLOSING: weakref.WeakKeyDictionary[Any, str | None] = weakref.WeakKeyDictionary()


def _closing(graph: Any) -> str | None:
    """The node to write a settled state as, so that the graph has no step left after it:
    the node the graph always ends after (deepagents' last `after_agent` hook), else a plain
    `create_agent`'s model node, whose exit edge is the agent's own test that its loop is
    over (a `jump_to: "end"` in the state, or a model answer with no tool call). None for a
    graph with neither. Read from the graph's drawing (`get_graph`), once per graph."""
    try:
        return _CLOSING[graph]
    except KeyError:
        pass
    into_end = {
        (edge.source, edge.conditional) for edge in graph.get_graph().edges if edge.target == END
    }
    always = sorted(source for source, conditional in into_end if not conditional)
    closing = always[0] if always else "model" if ("model", True) in into_end else None
    _CLOSING[graph] = closing
    return closing


SUPERVISOR_EVERY = 8
"""The supervisor agent's thread is renewed before its 9th turn: each turn starts from one
event and its model sees only that turn, yet every turn's checkpoint reads and writes the
thread's whole message list (its graph has no `DeltaChannel`), which grew with the project
(46 KB by the end of the default offline run, read back at the start of every turn)."""


def renewal(graph: Any, record: WorkerRecord, turns: int) -> dict[str, Any] | None:
    """The record's changes that start the supervisor agent's next turn on a new, empty
    thread (after `SUPERVISOR_EVERY` turns in one), or None. Nothing in the old thread is
    read again; its answers are counted into `answers_before` (a recording's call numbers).
    The record must be saved before the old thread is dropped (`drop_thread`): a crash in
    between leaves an unused thread, never a record pointing at a deleted one."""
    if record.role != Role.SUPERVISOR or turns < SUPERVISOR_EVERY or not settled(record):
        return None
    values = graph.get_state(_config(record.thread_id)).values or {}
    answers = sum(isinstance(m, AIMessage) for m in values.get("messages") or [])
    thread_id = new_thread_id(record.id, time.time())
    return {"thread_id": thread_id, "answers_before": record.answers_before + answers}


def drop_thread(graph: Any, thread_id: str) -> None:
    """Delete a thread no record points at (renewed or carried away, or a copy that failed);
    a saver's error leaves it (unused) in place."""
    saver = getattr(graph, "checkpointer", None)
    try:
        if saver is not None:
            saver.delete_thread(thread_id)
    except Exception:  # a leftover thread is harmless: no record points at it
        pass


def close_connection(conn: Any) -> None:
    """Close the checkpoint connection at the end of a run. A SQLite file is compacted first
    when the threads dropped during the run freed much of it; closing folds its WAL back into
    the database."""
    if isinstance(conn, sqlite3.Connection):
        try:
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            if pages and free / pages >= VACUUM_FREE_SHARE:
                conn.execute("VACUUM")
        except sqlite3.Error:  # compaction is an optimisation; the close below still folds
            pass
    conn.close()
