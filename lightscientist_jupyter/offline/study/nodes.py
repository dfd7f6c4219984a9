"""The experiment search's variants as text: a node's settings, its moves, its bug and its fix.

Every node of the search runs `scripts/search_node.py` with the four settings at its top
(learning rate, warmup length, schedule after the warmup, epochs) set to the node's values. The
offline worker writes a draft from `DRAFTS`, improves a node by one move of `MOVES` (an edit
of one setting line) and fixes a failed node by an edit of the line its traceback names. These
functions are pure: they take and give text, so the same files give the same edits.
"""

from __future__ import annotations

import dataclasses
import difflib
import re

from lightscientist_jupyter.offline.study.files import script_text

SCRIPT = "search_node.py"
"""The node's script, in the node's folder beside `study_design.py`."""
SETTINGS = ("LR", "WARMUP", "SCHEDULE", "EPOCHS")

_SETTING = re.compile(
    r"^(?P<name>LR|WARMUP|SCHEDULE|EPOCHS) = (?P<value>[^#\n]+?)(?P<rest>\s+#.*)?$"
)


@dataclasses.dataclass(frozen=True)
class Settings:
    """One point of the study's space."""

    lr: float
    warmup: int
    schedule: str
    epochs: int

    def describe(self) -> str:
        return (
            f"lr {self.lr:g}, warmup {self.warmup} epochs, {self.schedule} schedule, "
            f"{self.epochs} epochs"
        )


DRAFTS = (
    Settings(0.2, 50, "constant", 300),
    Settings(0.1, 0, "cosine", 300),
    Settings(0.1, 0, "constant", 300),
)
"""The drafts, by the node's number (the first two start together; a later draft, when every
branch is stuck, is the last one)."""
BUGGY_DRAFT = 2
"""The node number whose draft carries a bug (a typo'd name in the cosine schedule): its job
fails with a traceback, and a debug node fixes the line."""
BUG = ("max(1, EPOCHS - WARMUP)", "max(1, EPOCH - WARMUP)")
"""The right text of the buggy line and the typo that replaces it."""

MAX_EPOCHS = 600
MAX_LR = 0.4
"""Where the study's data says the moves stop helping: at lr 0.4 a longer run climbs again
(the edge of stability), and at 0.8 every run diverges."""


@dataclasses.dataclass(frozen=True)
class Move:
    """One change of one setting, and why it should help."""

    name: str
    setting: str
    why: str


MOVES = (
    Move("more epochs", "EPOCHS", "training loss falls further with more steps while stable"),
    Move("higher lr", "LR", "a larger stable step size reaches a lower loss in the same time"),
    Move("constant schedule", "SCHEDULE", "cosine decay shrinks late steps that still help"),
    Move("warmup", "WARMUP", "at the largest rate a warmup steadies the first steps"),
)
"""The improvements, in the order an improve node tries them."""
LAST_RESORT = Move(
    "longer warmup", "WARMUP", "nothing else is left to try; a longer warmup may steady it"
)
"""The move of a node no move of `MOVES` applies to (it may not help: the search keeps the
better of the two)."""


def moved(s: Settings, move: Move) -> Settings | None:
    """`s` after `move`, or None where the move does not apply (a bound reached)."""
    if move.setting == "EPOCHS" and s.epochs < MAX_EPOCHS:
        return dataclasses.replace(s, epochs=min(MAX_EPOCHS, s.epochs * 2))
    if move.setting == "LR" and s.lr < MAX_LR:
        return dataclasses.replace(s, lr=min(MAX_LR, round(s.lr * 2, 6)))
    if move.setting == "SCHEDULE" and s.schedule != "constant":
        return dataclasses.replace(s, schedule="constant")
    if move.setting == "WARMUP" and s.warmup == 0 and s.lr >= MAX_LR:
        return dataclasses.replace(s, warmup=50)
    return None


def choose_move(s: Settings, siblings_before: int) -> tuple[Move, Settings]:
    """The move an improve node makes from its parent's settings `s`: the applicable moves in
    `MOVES` order, the first for the parent's first improvement, the next for its second (two
    improvements of one node running at once try different moves), and `LAST_RESORT` once
    they are used up (a longer warmup for each later sibling)."""
    options = [(m, t) for m in MOVES if (t := moved(s, m)) is not None]
    if siblings_before < len(options):
        return options[siblings_before]
    longer = 50 * (1 + siblings_before - len(options))  # each later sibling a longer one
    return LAST_RESORT, dataclasses.replace(s, warmup=s.warmup + longer)


def value_text(setting: str, s: Settings) -> str:
    value = {"LR": s.lr, "WARMUP": s.warmup, "SCHEDULE": s.schedule, "EPOCHS": s.epochs}
    return repr(value[setting])


def setting_line(text: str, setting: str) -> str:
    """The line of the script that sets `setting` (ValueError when there is none)."""
    for line in text.splitlines():
        found = _SETTING.match(line)
        if found and found["name"] == setting:
            return line
    raise ValueError(f"{SCRIPT} sets no {setting}")


def with_value(line: str, setting: str, s: Settings) -> str:
    """A setting line with the value `s` gives it (its comment kept)."""
    found = _SETTING.match(line)
    if not found:
        raise ValueError(f"not a setting line: {line!r}")
    return f"{setting} = {value_text(setting, s)}{found['rest'] or ''}"


def settings_of(text: str) -> Settings:
    """The settings a node's script sets (ValueError naming a setting it lacks)."""
    values = {}
    for setting in SETTINGS:
        raw = _SETTING.match(setting_line(text, setting))
        assert raw is not None
        values[setting] = raw["value"].strip().strip("\"'")
    return Settings(
        float(values["LR"]), int(values["WARMUP"]), values["SCHEDULE"], int(values["EPOCHS"])
    )


def draft_text(number: int) -> tuple[Settings, str]:
    """The settings and script text of the draft that is the tree's `number`-th node."""
    s = DRAFTS[min(number, len(DRAFTS)) - 1]
    text = script_text(SCRIPT)
    for setting in SETTINGS:
        line = setting_line(text, setting)
        text = text.replace(line, with_value(line, setting, s), 1)
    if number == BUGGY_DRAFT:
        text = text.replace(*BUG, 1)
    return s, text


_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_NAME_ERROR = re.compile(r"NameError: name '(?P<name>\w+)' is not defined")
_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")


def fix_for(log: str, text: str) -> tuple[str, str, str] | None:
    """The fix of a script that failed with `log`: `(old line, new line, what was wrong)`,
    or None when the log shows no error this model can fix. It fixes an undefined name: on
    the line of the script the traceback's last frame in `SCRIPT` names (found by the source
    the traceback quotes, so lines a shell printed before the file do not shift it), the name
    becomes the closest name the script defines or imports."""
    error = _NAME_ERROR.search(log)
    log_lines = log.splitlines()
    frames = [
        (int(found["line"]), log_lines[i + 1].strip() if i + 1 < len(log_lines) else "")
        for i, line in enumerate(log_lines)
        if (found := _FRAME.search(line)) and found["file"].endswith(SCRIPT)
    ]
    if error is None or not frames:
        return None
    number, quoted = frames[-1]
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if quoted and line.strip() == quoted]
    if not at and not 1 <= number <= len(lines):
        return None
    index = min(at, key=lambda i: abs(i + 1 - number)) if at else number - 1
    old, name = lines[index], error["name"]
    known = set(_IDENTIFIER.findall(text)) - {name}
    close = difflib.get_close_matches(name, sorted(known), n=1)
    if not close or not re.search(rf"\b{re.escape(name)}\b", old):
        return None
    new = re.sub(rf"\b{re.escape(name)}\b", close[0], old)
    return old, new, f"line {number} used the undefined name {name} (meant {close[0]})"
