"""Where things live in a project workspace; shared by every layer, imports none of them."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

STATE_DIR = ".lightscientist"


@dataclasses.dataclass(frozen=True)
class Workspace:
    """The paths of one research project.

    <root>/PROCESS.md, idea/ experiment/ paper/ (stage outputs)
    <root>/.lightscientist/state.json, events.jsonl, checkpoints.sqlite, inbox/, workers/
    """

    root: Path

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Workspace:
        return cls(Path(root).expanduser().resolve())

    @property
    def state_dir(self) -> Path:
        return self.root / STATE_DIR

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def starting_file(self) -> Path:
        """Written by a kernel that starts a project here, until the project's state is."""
        return self.state_dir / "starting.json"

    @property
    def events_file(self) -> Path:
        return self.state_dir / "events.jsonl"

    @property
    def checkpoints_file(self) -> Path:
        return self.state_dir / "checkpoints.sqlite"

    @property
    def inbox_dir(self) -> Path:
        return self.state_dir / "inbox"

    @property
    def workers_dir(self) -> Path:
        return self.state_dir / "workers"

    @property
    def lock_file(self) -> Path:
        return self.state_dir / "run.lock"

    @property
    def process_md(self) -> Path:
        return self.root / "PROCESS.md"

    def exists(self) -> bool:
        """Whether a project has been started here."""
        return self.state_file.is_file()


def folder_problem(root: Path, *, write: bool) -> str | None:
    """Why `root` cannot hold a project (to read it, or with `write` to run it), or None."""
    if root.exists() and not root.is_dir():
        return f"{root} is a file, not a folder; give a folder as --workspace"
    if not root.exists():
        if not write:
            return f"{root} does not exist"
        why = creatable_problem(root)
        return (
            f"the workspace {root} cannot be created ({why}); give another --workspace"
            if why
            else None
        )
    if write:
        target = root / STATE_DIR if (root / STATE_DIR).is_dir() else root
        if not os.access(target, os.W_OK | os.X_OK):
            reason = "a read-only file system" if _read_only(target) else "no write permission"
            return (
                f"the workspace {target} cannot be written ({reason}); "
                "pick a folder you can write or make this one writable"
            )
    return None


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


def creatable_problem(path: Path) -> str | None:
    """Why `path`, which does not exist, could not be made with the folders above it (found
    without making anything): the nearest existing one is a file or cannot be written; or
    None."""
    for above in path.parents:
        if above.is_symlink() and not above.exists():
            return f"{above} is a link to nothing"
        if not above.exists():
            continue
        if not above.is_dir():
            return f"{above} is a file, not a folder"
        if not os.access(above, os.W_OK | os.X_OK):
            reason = "a read-only file system" if _read_only(above) else "no write permission"
            return f"{above} cannot be written ({reason})"
        return None
    return None
