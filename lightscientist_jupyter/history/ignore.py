"""What the history leaves out: files that hold secrets by default, and `.lightscientistignore`.

The snapshots commit the workspace's files to `.lightscientist/history.git`, and a fork
copies them into another folder; a key the user keeps beside the project must reach
neither. So the names secrets usually go by (`SECRET_DEFAULTS`: `.env`, `*.pem`, `id_*`,
`.netrc`, `*.key`) are left out of every snapshot, and so is what the workspace's own
`.lightscientistignore` names. Its lines are gitignore-like: one pattern a line, `#` for a
comment; a pattern with a slash matches the path from the workspace's root, one without any
name at any depth; `dir/` matches a folder (with everything in it); `!pattern` takes a name
back (`!id_map.csv` keeps a data file that `id_*` would leave out). The last pattern that
matches decides. What is left out is named in the snapshot's message, with why.

Python's byte code and JupyterLab's autosave copies (`BUILT_IN`) are left out too, unlisted:
they are not worth a line in a message, and not the user's to take back.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from pathlib import Path, PurePosixPath

from lightscientist_jupyter._fs import read_text
from lightscientist_jupyter.beneath import PathRefused

IGNORE_FILE = ".lightscientistignore"
SECRET_DEFAULTS = (".env", "*.pem", "id_*", ".netrc", "*.key")
"""Left out of every snapshot and fork unless `.lightscientistignore` takes them back."""
BUILT_IN = ("__pycache__/", "*.pyc", ".ipynb_checkpoints/")
"""Left out of every snapshot, unlisted."""
DEFAULT = "secret, by default"
"""Why a file matching `SECRET_DEFAULTS` is left out, as the snapshot's message says."""


@dataclasses.dataclass(frozen=True)
class Rule:
    pattern: str
    """Without its `!` and its slashes at either end."""
    negated: bool
    anchored: bool
    """A slash in the pattern: it matches the path from the root, not any name."""
    folders_only: bool
    why: str
    """What the snapshot's message says of a file this rule leaves out."""

    def matches(self, rel: str, is_dir: bool) -> bool:
        if self.folders_only and not is_dir:
            return False
        return fnmatch.fnmatchcase(rel if self.anchored else rel.rsplit("/", 1)[-1], self.pattern)


def _rule(line: str, why: str) -> Rule:
    negated = line.startswith("!")
    pattern = line[1:] if negated else line
    anchored = "/" in pattern.rstrip("/")
    return Rule(pattern.strip("/"), negated, anchored, pattern.endswith("/"), why)


@dataclasses.dataclass(frozen=True)
class IgnoreRules:
    """The defaults, then a workspace's `.lightscientistignore`, in order."""

    rules: tuple[Rule, ...]

    @classmethod
    def of_text(cls, text: str | None) -> IgnoreRules:
        """The rules of a `.lightscientistignore` holding `text` (None: no such file)."""
        lines = [ln.strip() for ln in (text or "").splitlines()]
        own = [_rule(ln, IGNORE_FILE) for ln in lines if ln and not ln.startswith("#")]
        return cls((*(_rule(p, DEFAULT) for p in SECRET_DEFAULTS), *own))

    @classmethod
    def at(cls, root: Path) -> IgnoreRules:
        """The rules of the workspace at `root` (a file that cannot be read: the defaults)."""
        try:
            text: str | None = read_text(root / IGNORE_FILE)
        except (OSError, UnicodeDecodeError, PathRefused):  # none, or a link a command left
            text = None
        return cls.of_text(text)

    def why(self, rel: str) -> str | None:
        """Why the path `rel` (`/`-separated, from the root; a folder ends in `/`) is left
        out, or None when it is kept. Its folders are not looked at (see `excludes`)."""
        is_dir = rel.endswith("/")
        rel = rel.strip("/")
        for rule in reversed(self.rules):
            if rule.matches(rel, is_dir):
                return None if rule.negated else rule.why
        return None

    def excludes(self, rel: str) -> bool:
        """Whether a snapshot leaves the file `rel` out, by itself or by one of its folders."""
        parts = PurePosixPath(rel).parts
        folders = ["/".join(parts[:n]) + "/" for n in range(1, len(parts))]
        return any(built_in(p) or self.why(p) for p in (*folders, rel))


def built_in(rel: str) -> bool:
    """Whether `rel` (a folder ends in `/`) is one of the unlisted `BUILT_IN` leftovers."""
    is_dir = rel.endswith("/")
    return any(rule.matches(rel.strip("/"), is_dir) for rule in _BUILT_IN_RULES)


_BUILT_IN_RULES = tuple(_rule(p, "") for p in BUILT_IN)
