"""Human replies in recordings: a recording run keeps each reply, a replay can give them again.

With `--record`, every reply to a gate (approve / reject, its comment and target) is written to
the run's recording beside the model calls. `--replies recorded` (only with `--model
replay:PATH`) answers each gate the replay reaches with the next recorded reply, in order — the
n-th decision of the project gets the n-th recorded reply — so a manual-mode run replays to its
end with nobody at the keyboard; past the recorded replies, gates wait as usual. A replayed
reply keeps the recorded `source` (`cli`, `magic`…), so PROCESS.md reads as it did.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lightscientist_jupyter.errors import BadInput
from lightscientist_jupyter.events import Event
from lightscientist_jupyter.runtime.recording.lines import ReplyLine
from lightscientist_jupyter.runtime.recording.recorded import Tape
from lightscientist_jupyter.runtime.recording.recorder import Recorder
from lightscientist_jupyter.vocab import EventType

RECORDED = "recorded"


def check(replies: str | None, model: str | None) -> None:
    """`BadInput` for `--replies` values that cannot work, before any file is written."""
    if replies is None:
        return
    if replies != RECORDED:
        raise BadInput(f"--replies takes 'recorded', not '{replies}'")
    if not (model or "").strip().startswith("replay:"):
        raise BadInput(
            "--replies recorded needs --model replay:PATH (the replies come from that recording)"
        )


def recorder_hook(recorder: Recorder) -> Callable[[Event], None]:
    """A bus subscriber that writes each `user.decision` to `recorder`."""

    def hook(event: Event) -> None:
        if event.type == EventType.USER_DECISION:
            recorder.write_reply(event.stage, event.data)

    return hook


def recorded_replies(model: Any) -> list[ReplyLine]:
    """The replies of the recording a replay model answers from (none for another model)."""
    tape = getattr(model, "tape", None)
    return list(tape.replies) if isinstance(tape, Tape) else []


def next_reply(recorded: list[ReplyLine], decisions_so_far: int) -> ReplyLine | None:
    """The recorded reply for the project's next decision, or None past the recorded ones."""
    return recorded[decisions_so_far] if decisions_so_far < len(recorded) else None
