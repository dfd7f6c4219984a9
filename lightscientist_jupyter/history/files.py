"""What a snapshot of a workspace holds: its files, less what is left out and why.

Left out, and named in the snapshot's message: files that hold secrets by default and what
`.lightscientistignore` lists (see `ignore`), links (a snapshot keeps files, and never reads
through a link a command left), files over the size bound. Left out unnamed: Python's byte
code, JupyterLab's autosave copies, `.git/` and `.lightscientist/` (but for the state, which
a rewind puts back).
"""

from __future__ import annotations

import os
from pathlib import Path

from lightscientist_jupyter.history.ignore import IgnoreRules, built_in
from lightscientist_jupyter.workspace import STATE_DIR

MAX_BYTES = 50 * 1024 * 1024
"""Files larger than this are left out of a snapshot (and named in its message)."""
KEPT = (f"{STATE_DIR}/state.json",)


def listing(root: Path, max_bytes: int) -> tuple[list[str], list[str]]:
    """The files under `root` a snapshot holds (`/`-separated, relative), and those left out,
    each as `path (why)`."""
    rules = IgnoreRules.at(root)
    kept: list[str] = [p for p in KEPT if (root / p).is_file()]
    skipped: list[str] = []
    for folder, dirs, names in os.walk(root):
        rel_dir = os.path.relpath(folder, root)
        rel_dir = "" if rel_dir == "." else rel_dir + "/"
        entered = []
        for d in sorted(dirs):
            rel = rel_dir + d + "/"
            if d == ".git" or rel == STATE_DIR + "/" or built_in(rel):
                continue
            why = rules.why(rel)
            if why:
                skipped.append(f"{rel} ({why})")
            elif os.path.islink(os.path.join(folder, d)):
                skipped.append(f"{rel_dir}{d} (a symbolic link)")
            else:
                entered.append(d)
        dirs[:] = entered
        for name in sorted(names):
            rel = rel_dir + name
            path = Path(folder, name)
            if built_in(rel):
                continue  # not worth a line in the commit's message
            why = rules.why(rel)
            if why:
                skipped.append(f"{rel} ({why})")
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
