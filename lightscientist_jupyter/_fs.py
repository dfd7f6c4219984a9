"""Small file helpers shared by every layer: atomic replace and safe appends."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def write_text_atomic(path: str | os.PathLike[str], text: str, *, mode: int = 0o644) -> None:
    """Write `text` to `path` so that readers see the old file or the new one, never half.

    The content goes to a temporary file in the same folder, is flushed to disk, and
    replaces the target with `os.replace`.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_json_atomic(path: str | os.PathLike[str], obj: Any, **kwargs: Any) -> None:
    """`write_text_atomic` of `obj` as indented JSON."""
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", **kwargs)


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append `text` with one write on a file opened for appending, then fsync."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def missing_files(paths: Iterable[str], root: Path, *, dirs_ok: bool = False) -> list[str]:
    """Of `paths` (workspace-relative; a leading `/` is the workspace root, as workers see
    it), those that are not a non-empty file (or, with `dirs_ok`, a folder holding
    something), as `path (missing|empty)`."""
    problems = []
    for rel in dict.fromkeys(p for p in paths if p):
        path = root / rel.lstrip("/")
        if ".." in Path(rel).parts:
            problems.append(f"{rel} (outside the workspace)")
        elif dirs_ok and path.is_dir():
            if not any(path.iterdir()):
                problems.append(f"{rel} (empty)")
        elif not path.is_file():
            problems.append(f"{rel} (missing)")
        elif path.stat().st_size == 0:
            problems.append(f"{rel} (empty)")
    return problems
