"""How a session's model calls are named, so that a replay finds them in a recording.

A session's key is `worker/<stage>/<n>` — it is the n-th worker session started for that stage,
in the order of the workspace's worker ids — or `supervisor/<n>` for the supervisor agent,
whose one session spans stages. Worker ids themselves may differ between two workspaces; the
order in which sessions start does not. A call's index counts the session's model answers over
all its turns and runs: each turn carries, in its config metadata, how many answers the
session's checkpoint already holds, and `CallCounter` numbers the turn's calls from there.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any, TypedDict

from lightscientist_jupyter._fs import list_dir, read_text

META = "ls_session"
"""The config-metadata key that marks a session's model calls (see `tape_metadata`)."""


def session_key(role: str, stage: str | None, worker_id: str, workers_dir: Path) -> str:
    """`worker/<stage>/<n>`: this is the n-th session started for the stage (in the order of
    the workspace's worker ids); `supervisor/<n>` for supervisor sessions."""
    order = _id_number(worker_id)
    earlier = 0
    for entry in list_dir(workers_dir):
        if _id_number(entry.name) >= order or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            raw = json.loads(read_text(workers_dir / entry.name / "worker.json"))
        except (OSError, ValueError):
            continue
        if raw.get("role") == role and (role == "supervisor" or raw.get("stage") == stage):
            earlier += 1
    return f"supervisor/{earlier}" if role == "supervisor" else f"{role}/{stage}/{earlier}"


def _id_number(name: str) -> int:
    digits = name[1:]
    return int(digits) if name.startswith("w") and digits.isdigit() else 0


class TapeMetadata(TypedDict):
    """The config metadata of a session's turn (`tape_metadata`). The recorder and the replay
    model read it back from LangChain's run metadata, among LangChain's own keys."""

    ls_session: str
    """The session's key (`META`, `session_key`)."""
    ls_worker: str
    ls_role: str
    ls_stage: str | None
    ls_root: str
    """The workspace's path (`<workspace>` in the recording)."""
    ls_calls: int
    """The index of the turn's first call."""
    ls_turn: str
    """The turn, for `CallCounter`."""


def tape_metadata(
    *, key: str, worker_id: str, role: str, stage: str | None, root: str, calls_before: int
) -> TapeMetadata:
    """The config metadata a session's turn carries for the recorder and the replay model.

    `calls_before` is the number of model answers the session's checkpoint already holds: the
    index of the turn's first call."""
    return TapeMetadata(
        ls_session=key,
        ls_worker=worker_id,
        ls_role=role,
        ls_stage=stage,
        ls_root=root,
        ls_calls=calls_before,
        ls_turn=f"{worker_id}:{time.monotonic_ns()}",
    )


class CallCounter:
    """The next call index of each turn (thread-safe): the turn's first call gets the index
    its metadata names, each later one the next."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._next: dict[str, int] = {}

    def take(self, meta: dict[str, Any]) -> int:
        """The next call index of the turn whose run metadata (LangChain's, holding the
        `TapeMetadata`) is `meta`."""
        with self._lock:
            turn = str(meta.get("ls_turn"))
            index = self._next.get(turn, int(meta.get("ls_calls") or 0))
            self._next[turn] = index + 1
            return index
