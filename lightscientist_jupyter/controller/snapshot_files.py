"""What a snapshot of a workspace holds: its files, less what is left out and why.

Left out, and named in the snapshot's message: what `.lightscientistignore` lists, links (a
snapshot keeps files, and never reads through a link a command left), files over the size
bound. Left out unnamed: Python's byte code, JupyterLab's autosave copies, `.git/` and
`.lightscientist/` (but for the state, which a rewind puts back).
"""

from __future__ import annotations

import fnmatch
import os
from collections.abc import Iterable
from pathlib import Path

from lightscientist_jupyter._fs import read_text
from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.workspace import STATE_DIR

MAX_BYTES = 50 * 1024 * 1024
"""Files larger than this are left out of a snapshot (and named in its message)."""
IGNORE_FILE = ".lightscientistignore"
BUILT_IN_IGNORES = ("__pycache__/", "*.pyc", ".ipynb_checkpoints/")
"""Left out of every snapshot, unlisted: Python's byte code and JupyterLab's autosave copies."""
KEPT = (f"{STATE_DIR}/state.json",)


def listing(root: Path, max_bytes: int) -> tuple[list[str], list[str]]:
    """The files under `root` a snapshot holds (`/`-separated, relative), and those left out,
    each as `path (why)`."""
    patterns = _ignore_patterns(root / IGNORE_FILE)
    kept: list[str] = [p for p in KEPT if (root / p).is_file()]
    skipped: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(folder, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        links = [d for d in dirs if os.path.islink(os.path.join(folder, d))]
        skipped += [f"{rel_dir}{d} (a symbolic link)" for d in sorted(links)]
        dirs[:] = sorted(
            d
            for d in dirs
            if d != ".git"
            and d not in links
            and not (rel_dir == "" and d == STATE_DIR)
            and not _ignored(rel_dir + d + "/", (*BUILT_IN_IGNORES, *patterns))
        )
        for name in sorted(names):
            rel = rel_dir + name
            path = Path(folder, name)
            if _ignored(rel, BUILT_IN_IGNORES):
                continue  # not worth a line in the commit's message
            if _ignored(rel, patterns):
                skipped.append(f"{rel} ({IGNORE_FILE})")
            elif path.is_symlink():
                skipped.append(f"{rel} (a symbolic link)")
            elif not path.is_file():
                continue
            elif path.stat().st_size > max_bytes:
                skipped.append(f"{rel} (over {_size(max_bytes)})")
            else:
                kept.append(rel)
    return kept, skipped


def _size(n: int) -> str:
    return f"{n / (1024 * 1024):g} MB" if n >= 1024 * 1024 else f"{n} bytes"


def _ignore_patterns(path: Path) -> list[str]:
    try:
        text = read_text(path)
    except (FileNotFoundError, UnicodeDecodeError, PathRefused):
        return []
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]


def _ignored(rel: str, patterns: Iterable[str]) -> bool:
    """A `.lightscientistignore` match: a pattern with a slash matches the path from the
    workspace's root, one without matches any name; `dir/` matches a folder."""
    is_dir = rel.endswith("/")
    rel = rel.rstrip("/")
    name = rel.rsplit("/", 1)[-1]
    for pattern in patterns:
        if pattern.endswith("/"):
            if not is_dir:
                continue
            pattern = pattern.rstrip("/")
        pattern = pattern.lstrip("/")
        if ("/" in pattern and fnmatch.fnmatch(rel, pattern)) or fnmatch.fnmatch(name, pattern):
            return True
    return False
