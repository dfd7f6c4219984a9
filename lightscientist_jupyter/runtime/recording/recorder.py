"""Recordings of model calls: what a session asked the model and what it answered.

A recording is `.lightscientist/recordings/run-NNNN.jsonl`, one per run (a `research` or a
`resume`), append-only, one JSON line per successful model call (a call that failed and was
retried is not recorded). The first line describes the run (`"kind": "run"`: the model's
label, and `price`, the price its calls were charged at — `values.prices.Price.to_dict`,
null when unknown — so that a replay costs what the run did); each call line (`"kind": "call"`)
holds:

- the session: `session` (the key the replay matches: `worker/<stage>/<n>`, the n-th worker
  session started for that stage, or `supervisor/<n>` for the supervisor agent, whose one
  session spans stages), `worker`, `role`, `stage`, and `call`, the call's index within the
  session (0-based, counted over every turn and every run of the session);
- the request: `messages` and `tools`, each a list of hashes; a message's or a tool schema's
  text is written once per file, under `defs`, the first time it appears;
- the response: `response` (`content`, `tool_calls`, `usage`: what the call was charged, an
  estimate flagged `estimated` for a model that reports none) and `answer`, its hash.

A human's reply (a gate's approve / reject, in manual mode) is a line of its own
(`"kind": "reply"`: `stage`, `approve`, `comment`, `to`, `source`), in the order they came. So
is each worker update layer 2 takes in that changes what the supervisor agent is told
(`"kind": "update"`: `session`, `worker`, `stage`, `status`), written by layer 2's loop between
the supervisor's calls: a replay takes them in in that order again (`update_order`).
Every line after the run line carries `prev`, the hash of the line before it: the file is
sealed (`seal`), so a strict replay refuses a response edited after the run (`recorded`).

Everything written goes through the event stream's redaction (`redact.redact`: key-like strings
and the values of secret-looking environment variables become `[REDACTED]`), and the
workspace's absolute path becomes `<workspace>`, so a recording made in one folder replays in
another.
The stored and compared forms of messages are `recording.forms`'; each line's schema is in
`recording.lines`.
"""

from __future__ import annotations

import fnmatch
import json
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

from lightscientist_jupyter._fs import NO_LINKS, list_dir, mkdirs
from lightscientist_jupyter.redact import redactor
from lightscientist_jupyter.runtime.recording.forms import (
    MessageView,
    ToolView,
    portable,
    response_view,
    tool_views,
    views,
)
from lightscientist_jupyter.runtime.recording.lines import CallLine, ReplyLine, RunLine, UpdateLine
from lightscientist_jupyter.runtime.recording.seal import Chain
from lightscientist_jupyter.runtime.recording.tape import META, CallCounter
from lightscientist_jupyter.vocab import RecordingLine, ReplySource, WorkerStatus

FORMAT = 3
"""The format written: 1 had no seal; 2 chains the lines and hashes each answer (`SEALED`); 3
adds the update lines."""
RECORD_ENV = "LIGHTSCIENTIST_RECORD"


def recording_requested(flag: bool | None = None) -> bool:
    """`flag` when given, else whether `LIGHTSCIENTIST_RECORD` is set to a true value."""
    if flag:
        return True
    return os.environ.get(RECORD_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def is_replay(model: Any) -> bool:
    """Whether `model` answers from a recording (`replay.ReplayChatModel`, whose class
    attribute `replays` is True): no retries, no model check."""
    return bool(getattr(model, "replays", False))


def model_label(model: Any) -> str:
    """`<llm type>:<model name>`, for a recording's run line."""
    name = getattr(model, "model_name", None) or getattr(model, "model", None)
    kind = getattr(model, "_llm_type", type(model).__name__)
    return f"{kind}:{name}" if isinstance(name, str) else str(kind)


# ----------------------------------------------------------------------------- the recorder


class Recorder(BaseCallbackHandler):
    """A callback that appends each of a session's successful model calls to a recording.

    Args:
        folder: `.lightscientist/recordings` (created when the first call is written).
        root: the workspace's path (written as `<workspace>`).
        model: a label of the model, for the run line.
        price: the price the run's calls are charged at (`Price.to_dict()`; None: unknown).
    """

    raise_error = False

    def __init__(
        self, folder: Path, root: Path, model: str = "", price: dict[str, object] | None = None
    ):
        self.folder = folder
        self.root = str(root)
        self.model = model
        self.price = price
        self.path: Path | None = None
        self.counter = CallCounter()
        self._lock = threading.Lock()
        self._defined: set[str] = set()
        self._pending: dict[UUID, tuple[list[Any], list[Any], dict[str, Any]]] = {}
        self._fd: int | None = None
        self._chain = Chain()

    @classmethod
    def of(cls, workspace: Any, model: Any, meter: Any = None) -> Recorder:
        """The recorder of a run of `model` in `workspace` (a `Workspace`), whose calls
        `meter` (a `runtime.metering.meter.UsageMeter`) prices."""
        price = getattr(meter, "price", None)
        return cls(
            workspace.state_dir / "recordings",
            workspace.root,
            model_label(model),
            price.to_dict() if price is not None else None,
        )

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[Any]],
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        invocation_params: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if metadata and META in metadata:
            tools = list((invocation_params or {}).get("tools") or [])
            self._pending[run_id] = (messages[0] if messages else [], tools, dict(metadata))

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._pending.pop(run_id, None)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        pending = self._pending.pop(run_id, None)
        if pending is None:
            return
        try:
            message = response.generations[0][0].message
        except (AttributeError, IndexError):
            return
        messages, tools, meta = pending
        index = self.counter.take(meta)
        scrub = redactor()
        seen = [views(m, self.root, scrub) for m in messages]
        schemas = [tool_views(t, "") for t in tools]
        line = CallLine(
            kind=RecordingLine.CALL,
            session=meta[META],
            worker=meta.get("ls_worker"),
            role=meta.get("ls_role"),
            stage=meta.get("ls_stage"),
            call=index,
            messages=[h for h, _ in seen],
            tools=[h for h, _ in schemas],
            response=response_view(message, messages, self.root, scrub),
        )
        with self._lock:
            defs: dict[str, MessageView | ToolView] = {}
            named: list[tuple[str, MessageView | ToolView]] = [*seen, *schemas]
            for h, view in named:
                if h not in self._defined:
                    self._defined.add(h)
                    defs[h] = view
            line["defs"] = defs
            self._write(line)

    def write_reply(self, stage: str | None, decision: Mapping[str, object]) -> None:
        """Append a human reply (the data of a `user.decision` event) to the recording."""
        to = decision.get("to")
        line = ReplyLine(
            kind=RecordingLine.REPLY,
            stage=stage,
            approve=bool(decision.get("approve")),
            comment=portable(str(decision.get("comment") or ""), self.root),
            to=to if isinstance(to, str) else None,
            source=ReplySource.read(decision.get("source")),
        )
        with self._lock:
            self._write(line)

    def write_update(
        self, session: str, worker: str, stage: str | None, status: WorkerStatus
    ) -> None:
        """Append an update layer 2 took in (worker `worker`, whose session is `session`, is
        now `status`)."""
        line = UpdateLine(
            kind=RecordingLine.UPDATE,
            session=session,
            worker=worker,
            stage=stage,
            status=status,
        )
        with self._lock:
            self._write(line)

    def _write(self, line: CallLine | ReplyLine | UpdateLine) -> None:
        if self._fd is None:
            self.path = new_recording(self.folder)
            self._fd = NO_LINKS.open_fd(self.path, os.O_WRONLY | os.O_APPEND)
            header = RunLine(
                kind=RecordingLine.RUN,
                v=FORMAT,
                at=time.time(),
                model=self.model,
                price=self.price,
            )
            os.write(self._fd, self._chain.seal(header))
        os.write(self._fd, self._chain.seal(line))  # one write per line: none interleave

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def new_recording(folder: Path) -> Path:
    """Create the next free `run-NNNN.jsonl` in `folder` (names sort in run order), through
    no link."""
    mkdirs(folder)
    stems = [e.name[4:-6] for e in list_dir(folder) if fnmatch.fnmatch(e.name, "run-*.jsonl")]
    n = max([0, *(int(s) for s in stems if s.isdigit())]) + 1
    while True:
        path = folder / f"run-{n:04d}.jsonl"
        try:
            os.close(NO_LINKS.open_fd(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
            return path
        except FileExistsError:
            n += 1


def recording_files(path: str) -> list[Path] | None:
    """The recording files at `path` — a file, a folder of `*.jsonl`, or a workspace that
    recorded — in run order; None when `path` does not exist. A workspace's recordings are
    those reached through no link (`path` itself is the user's own)."""
    target = Path(path).expanduser()
    if (target / ".lightscientist" / "recordings").is_dir():
        folder = target.resolve() / ".lightscientist" / "recordings"
        return [
            folder / e.name
            for e in list_dir(folder)
            if e.name.endswith(".jsonl") and e.is_file(follow_symlinks=False)
        ]
    if target.is_file():
        return [target]
    if target.is_dir():
        return sorted(target.glob("*.jsonl"))
    return None


def run_headers(files: list[Path]) -> list[RunLine]:
    """The run lines (`"kind": "run"`) of recording files, in order (each file's first). A
    file whose first line is no run line is left out, a key of the wrong type left out of
    its line (a `price` of the wrong type reads as null: unknown)."""
    headers = []
    for path in files:
        try:
            with path.open(encoding="utf-8") as f:
                raw = json.loads(f.readline() or "{}")
        except (OSError, ValueError):
            continue
        if isinstance(raw, dict) and raw.get("kind") == RecordingLine.RUN:
            headers.append(_run_line(raw))
    return headers


def _run_line(raw: Mapping[str, object]) -> RunLine:
    header = RunLine(kind=RecordingLine.RUN)
    v, at, model, price = raw.get("v"), raw.get("at"), raw.get("model"), raw.get("price")
    if isinstance(v, int) and not isinstance(v, bool):
        header["v"] = v
    if isinstance(at, int | float) and not isinstance(at, bool):
        header["at"] = float(at)
    if isinstance(model, str):
        header["model"] = model
    if "price" in raw:
        header["price"] = {str(k): p for k, p in price.items()} if isinstance(price, dict) else None
    return header
