"""The seal of a recording: each line chained to the one before it, each answer hashed.

A recording's lines are written through a `Chain`. Every line after a file's first (the run
line) carries `prev`, the hash of the line before it — its bytes as written — and a call line
carries `answer`, the hash of its response, kept with the request it answers. A response
changed after the run, by hand or by a tool that rewrote a line, no longer matches its
`answer`; a line changed together with its `answer`, or a line removed, no longer matches the
`prev` of the line after it. `problems` finds both, naming the line, so a strict replay refuses
the file before it answers anything (and so before any edited `write_file` content or
`execute` command is carried out).

The hashes hold no key: they show that a recording is still as it was written, not who wrote
it. A file rewritten whole, every hash recomputed, is a new recording and reads as one — review
a committed recording's changes as you review code. Files written before the seal (format 1)
carry none of these hashes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence

from lightscientist_jupyter.vocab import RecordingLine

SEALED = 2
"""The first recording format whose lines are sealed."""


def digest(data: bytes) -> str:
    """The hash of a line's bytes (or of a response's canonical form)."""
    return hashlib.sha256(data).hexdigest()[:32]


def answer_hash(response: object) -> str:
    """The hash of a call's response: its canonical JSON (sorted keys, no spaces), so that it
    is the same whether computed before the line was written or after it was read."""
    text = json.dumps(response, sort_keys=True, separators=(",", ":"))
    return digest(text.encode())


class Chain:
    """Seals the lines of one recording file, in the order written (the caller serialises
    writes: the recorder holds its lock)."""

    def __init__(self) -> None:
        self.last: str | None = None
        """The hash of the line written last (None before the first)."""

    def seal(self, line: Mapping[str, object]) -> bytes:
        """`line` (a `lines.Line`) as the bytes to append (newline included), with `prev`
        and, for a call line, `answer` (over the response as it will read back)."""
        sealed = dict(line)
        if sealed.get("kind") == RecordingLine.CALL:
            response = json.loads(json.dumps(sealed.get("response"), default=str))
            sealed["answer"] = answer_hash(response)
        if self.last is not None:
            sealed["prev"] = self.last
        data = json.dumps(sealed, ensure_ascii=False, default=str).encode()
        self.last = digest(data)
        return data + b"\n"


def problems(raw: Sequence[bytes], lines: Sequence[Mapping[str, object]]) -> list[tuple[int, str]]:
    """(line number, what is wrong) for each seal a sealed file's lines break, in order.

    Args:
        raw: the file's lines as read (bytes, no newline).
        lines: the same lines parsed (`lines.Line`s).
    """
    found: list[tuple[int, str]] = []
    for n, line in enumerate(lines, 1):
        if n > 1:
            before = digest(raw[n - 2])
            if "prev" not in line:
                found.append((n, "no hash of the line before it (a line added by hand)"))
            elif line["prev"] != before:
                found.append(
                    (
                        n - 1,
                        f"changed after it was recorded, or a line after it removed (line {n} "
                        "holds another hash of it)",
                    )
                )
        if line.get("kind") == RecordingLine.CALL and line.get("answer") != answer_hash(
            line.get("response")
        ):
            what = "the response was changed after it was recorded (it does not match the hash "
            found.append((n, what + "kept with its request)"))
    return found
