"""Small file helpers shared by every layer: atomic replace and safe appends, all through
the guarded path of `beneath` (no link followed, ever)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import Any

from lightscientist_jupyter.beneath import Beneath, PathRefused
from lightscientist_jupyter.values import notebook

NO_LINKS = Beneath("/")
"""Every absolute path the kernel builds under a workspace's (resolved) root, opened through
no link at all: the guarded path of `beneath`, for the helpers below. A path that comes from
a model or a person is checked against its workspace with `Beneath(root)` first."""


def write_text_atomic(
    path: str | os.PathLike[str], text: str, *, mode: int = 0o644, durable: bool = True
) -> None:
    """Write `text` to `path` so that readers see the old file or the new one, never half.

    The content goes to a new temporary file in the same folder, is flushed to disk (unless
    `durable` is False: a file rebuilt from another at every write, which a power loss may
    leave at its previous version), and replaces the target (a link there is replaced, never
    followed; a link on the way is refused: `beneath.PathRefused`).
    """
    NO_LINKS.write_text_atomic(path, text, mode=mode, durable=durable)


def write_json_atomic(path: str | os.PathLike[str], obj: Any, **kwargs: Any) -> None:
    """`write_text_atomic` of `obj` as indented JSON."""
    write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False) + "\n", **kwargs)


def append_text(path: str | os.PathLike[str], text: str) -> None:
    """Append `text` with one write on a file opened for appending, then fsync. A write the
    disk cuts short is taken back, so the file never ends in half an entry. A link at or on
    the way to `path` is refused (`beneath.PathRefused`), never written through."""
    NO_LINKS.append_text(path, text)


def read_text(path: str | os.PathLike[str], *, errors: str = "strict") -> str:
    """The text of the regular file `path`, reached through no link."""
    return NO_LINKS.read_text(path, errors=errors)


def read_bytes(path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
    """The bytes of the regular file `path` (at most `limit`), reached through no link."""
    return NO_LINKS.read_bytes(path, limit=limit)


def lexists(path: str | os.PathLike[str]) -> bool:
    """Whether anything is at `path` (a link too: reading it is then refused, with why)."""
    try:
        return NO_LINKS.lstat(path) is not None
    except PathRefused:
        return True


def read_named(path: str | os.PathLike[str], root: Path) -> str:
    """The text of a file a person named (a skill, a library file): through no link when it
    lies in the workspace `root`, where a command may have planted one; elsewhere it is the
    user's own file, read as named."""
    full = Path(path)
    if full.is_absolute() and root not in full.parents:
        return full.read_text(encoding="utf-8")
    return Beneath(root).read_text(full)


def mkdirs(path: str | os.PathLike[str]) -> None:
    """Make the folder `path` and its parents, through no link."""
    NO_LINKS.makedirs(path)


def list_dir(path: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The entries of the folder `path` reached through no link, sorted by name (see
    `Beneath.scandir`); none when it is not there. A link on the way is refused."""
    try:
        return NO_LINKS.scandir(path)
    except (FileNotFoundError, NotADirectoryError):
        return []


def missing_files(paths: Iterable[str], root: Path, *, dirs_ok: bool = False) -> list[str]:
    """Of `paths` (workspace-relative; a leading `/` is the workspace root, as workers see
    it, unless the path names the workspace itself or a folder of this machine outside it),
    those that are not a non-empty file (or, with `dirs_ok`, a folder holding something)
    reached from the workspace's root through no link, as `path (what is wrong)`: missing,
    empty, a folder, outside the workspace, or a symbolic link (the history keeps the files
    themselves, never a link)."""
    files = Beneath(root)
    problems = []
    for rel in dict.fromkeys(p for p in paths if p):
        path = _in_workspace(rel, root)
        problem = "outside the workspace" if path is None else _file_problem(files, path, dirs_ok)
        if problem:
            problems.append(f"{rel} ({problem})")
    return problems


def _in_workspace(rel: str, root: Path) -> Path | None:
    """Where `rel` is in the workspace, or None when it names a place outside it (`..`, or an
    absolute path of this machine that is not under `root`)."""
    pure = PurePosixPath(rel)
    if ".." in pure.parts:
        return None
    if not pure.is_absolute():
        return root / pure
    for base, path in ((root, pure), (root.resolve(), _parent_resolved(pure))):
        if path == PurePosixPath(base) or PurePosixPath(base) in path.parents:
            return root / path.relative_to(base)
    inner = pure.relative_to("/")
    top = inner.parts[0] if inner.parts else ""
    if top and not (root / top).exists() and Path("/", top).exists():
        return None  # '/home/me/x.csv', not the workers' '/experiment/x.csv'
    return root / inner


def _parent_resolved(path: PurePosixPath) -> PurePosixPath:
    """`path` with its folder's links resolved (the workspace named through a link to it),
    its last part kept as it is, so that a link there is still seen."""
    try:
        return PurePosixPath(Path(path.parent).resolve(), path.name)
    except (OSError, RuntimeError):
        return path


def _file_problem(files: Beneath, path: Path, dirs_ok: bool) -> str | None:
    try:
        st = files.lstat(path)
    except PathRefused:  # a folder on the way is a link
        st = None
    if st is None or stat.S_ISLNK(st.st_mode):
        link = _link_problem(path, files.root)
        if link:
            return link
    if st is None:
        return "missing"
    if stat.S_ISDIR(st.st_mode):
        if not dirs_ok:
            return "a folder, not a file"
        return None if files.scandir(path) else "empty"
    if not stat.S_ISREG(st.st_mode):
        return "not a file"
    if st.st_size == 0:
        return "empty"
    return _notebook_problem(files, path) if notebook.is_notebook(path.name) else None


def _notebook_problem(files: Beneath, path: Path) -> str | None:
    """Why a required notebook is not ready: not a valid notebook, or not run to the end
    without an error output (a notebook is a result only once it ran)."""
    try:
        nb = notebook.loads(files.read_text(path, errors="replace"), path.name)
    except notebook.NotebookProblem as exc:
        return str(exc).removeprefix(f"{path.name} ")
    except (OSError, PathRefused) as exc:
        return f"cannot be read ({exc})"
    return notebook.run_problem(nb)


def _link_problem(path: Path, root: Path) -> str | None:
    """What is wrong when `path`, or a folder on the way to it from `root`, is a symbolic
    link: where it leads when that is out of the workspace, else that it is a link."""
    step = root
    for part in path.relative_to(root).parts:
        step = step / part
        if not step.is_symlink():
            continue
        what = (
            "a symbolic link"
            if step == path
            else f"its folder {step.relative_to(root)} is a symbolic link"
        )
        try:
            target, real_root = step.resolve(), root.resolve()
        except (OSError, RuntimeError):  # a loop of links
            return f"{what} that leads nowhere"
        if target != real_root and real_root not in target.parents:
            return f"outside the workspace: {what} to {target}"
        return f"{what}, which the history does not keep: put the file itself there"
    return None


def remove_stray_tmp(*folders: Path) -> list[Path]:
    """Remove the temporary files `write_text_atomic` leaves when its process is killed
    mid-write (`.NAME.XXXX.tmp`) directly in `folders`; call it only while no other process
    writes there (under the run lock). Returns what was removed."""
    removed = []
    for folder in folders:
        try:
            entries = NO_LINKS.scandir(folder)
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            name = entry.name
            if (
                name.startswith(".")
                and name.endswith(".tmp")
                and entry.is_file(follow_symlinks=False)
            ):
                NO_LINKS.unlink(folder / name)
                removed.append(folder / name)
    return removed


RESERVE_BYTES = 256 * 1024


def reserve_space(path: Path, size: int = RESERVE_BYTES) -> None:
    """Hold `size` bytes of the disk in `path` while a run goes on, so that when the disk
    fills up, removing it leaves room to record that the run stopped (best effort)."""
    try:
        fd = NO_LINKS.open_fd(path, os.O_WRONLY | os.O_CREAT, 0o600)
    except OSError:
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError:
        os.close(fd)
        NO_LINKS.unlink(path)
        return
    os.close(fd)


def release_space(path: Path) -> None:
    NO_LINKS.unlink(path)
