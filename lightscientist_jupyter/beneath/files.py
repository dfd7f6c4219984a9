"""`Beneath`: reading, writing, listing and removing files under one root, every path opened
through `opening.open_beneath` (no link, nothing outside)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from lightscientist_jupyter.beneath.opening import (
    O_PATH_DIR,
    PathRefused,
    kind_of,
    open_beneath,
    what_is_there,
)


class Beneath:
    """Files and folders under one workspace root, opened as the package docstring says.

    Paths are workspace-relative (`idea/survey.md`, a leading `/` being the root, as workers
    see it) or absolute paths under the root (`ws.process_md`).
    """

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)

    # ------------------------------------------------------------------ paths

    def rel(self, path: str | os.PathLike[str]) -> PurePosixPath:
        """`path` relative to the root, or PathRefused when it cannot be beneath it."""
        text = os.fspath(path)
        if "\x00" in text:
            raise PathRefused(f"{text!r} contains a NUL byte")
        pure = PurePosixPath(text)
        if pure.is_absolute():
            root = PurePosixPath(self.root)
            if pure == root or root in pure.parents:
                pure = pure.relative_to(root)
            else:  # "/x" and "//x" (POSIX's other root) alike: the workspace's x
                pure = PurePosixPath(*pure.parts[1:])
        if ".." in pure.parts:
            raise PathRefused(f"{text} leaves the workspace {self.root} ('..')")
        return pure

    def path(self, path: str | os.PathLike[str]) -> Path:
        """The absolute path of `path` under the root (for messages and for other programs)."""
        return self.root / self.rel(path)

    # ------------------------------------------------------------------ opening

    def open_fd(self, path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
        """An fd for `path` opened with `flags` beneath the root, or PathRefused."""
        rel = self.rel(path)
        if not rel.parts:
            flags |= os.O_DIRECTORY
        root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            try:
                fd = open_beneath(root_fd, rel, flags, mode)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR):
                    found = what_is_there(root_fd, rel)
                    if found:
                        raise PathRefused(f"{self.path(rel)}: {found}") from None
                exc.filename = str(self.path(rel))
                raise
            return fd
        finally:
            os.close(root_fd)

    def _open_file(self, path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
        """`open_fd` of a regular file: a pipe, socket or device found there is refused
        (opened non-blocking, so a named pipe cannot hang the kernel)."""
        fd = self.open_fd(path, flags | os.O_NONBLOCK, mode)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise PathRefused(f"{self.path(path)}: is {kind_of(st.st_mode)}, not a file")
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @contextlib.contextmanager
    def open_dir(self, path: str | os.PathLike[str] = "") -> Iterator[int]:
        """An fd of the folder `path` (for `os.*(..., dir_fd=)` and `os.scandir`)."""
        fd = self.open_fd(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            yield fd
        finally:
            os.close(fd)

    # ------------------------------------------------------------------ reading

    def read_bytes(self, path: str | os.PathLike[str], *, limit: int | None = None) -> bytes:
        """The file's bytes (at most `limit` of them)."""
        with os.fdopen(self._open_file(path, os.O_RDONLY), "rb") as fh:
            return fh.read() if limit is None else fh.read(limit)

    def read_text(self, path: str | os.PathLike[str], *, errors: str = "strict") -> str:
        return self.read_bytes(path).decode("utf-8", errors=errors)

    def open_read(self, path: str | os.PathLike[str]) -> BinaryIO:
        """A binary file object to read `path` from (for streaming)."""
        return os.fdopen(self._open_file(path, os.O_RDONLY), "rb")

    def lstat(self, path: str | os.PathLike[str]) -> os.stat_result | None:
        """The entry at `path` itself (a link is not followed), None when nothing is there;
        PathRefused when a folder on the way is a link."""
        rel = self.rel(path)
        if not rel.parts:
            return os.stat(self.root)
        try:
            parent = self.open_fd(rel.parent, os.O_PATH | os.O_DIRECTORY)
        except (FileNotFoundError, NotADirectoryError):
            return None
        try:
            return os.lstat(rel.name, dir_fd=parent)
        except (FileNotFoundError, NotADirectoryError):
            return None
        finally:
            os.close(parent)

    def is_file(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is a regular file reached through no link (a link is not a file)."""
        try:
            st = self.lstat(path)
        except PathRefused:
            return False
        return st is not None and stat.S_ISREG(st.st_mode)

    def is_dir(self, path: str | os.PathLike[str]) -> bool:
        try:
            st = self.lstat(path)
        except PathRefused:
            return False
        return st is not None and stat.S_ISDIR(st.st_mode)

    def entry(self, path: str | os.PathLike[str]) -> os.stat_result | None:
        """`lstat` of a path that must be reached through no link: a link at `path` is
        refused as one on its way is (PathRefused naming it and where it points)."""
        st = self.lstat(path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            rel = self.rel(path)
            with self.open_dir() as root_fd:
                found = what_is_there(root_fd, rel) or "is a symbolic link"
            raise PathRefused(f"{self.path(rel)}: {found}")
        return st

    def scandir(self, path: str | os.PathLike[str] = "") -> list[os.DirEntry[str]]:
        """The entries of folder `path`, sorted by name (an entry's `path` is its name; ask
        it `is_dir(follow_symlinks=False)`)."""
        with self.open_dir(path) as fd, os.scandir(fd) as entries:
            return sorted(entries, key=lambda e: e.name)

    def walk_files(
        self, path: str | os.PathLike[str] = "", *, skip_hidden: bool = False
    ) -> Iterator[PurePosixPath]:
        """The regular files under folder `path`, workspace-relative, depth first in name
        order; links and special files are not followed and not listed (`skip_hidden`:
        nor names starting with a dot, nor what hidden folders hold)."""
        base = self.rel(path)
        for entry in self.scandir(base):
            if skip_hidden and entry.name.startswith("."):
                continue
            if entry.is_dir(follow_symlinks=False):
                yield from self.walk_files(base / entry.name, skip_hidden=skip_hidden)
            elif entry.is_file(follow_symlinks=False):
                yield base / entry.name

    # ------------------------------------------------------------------ writing

    def makedirs(self, path: str | os.PathLike[str], mode: int = 0o755) -> None:
        """Create the folder `path` and its parents as needed, through no link."""
        rel = self.rel(path)
        fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for i, name in enumerate(rel.parts):
                try:
                    inner = os.open(name, O_PATH_DIR, dir_fd=fd)
                except FileNotFoundError:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, mode, dir_fd=fd)
                    inner = self._enter(fd, rel, i)
                except OSError as exc:
                    if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    inner = self._enter(fd, rel, i)  # refuses, naming what is there
                os.close(fd)
                fd = inner
        finally:
            os.close(fd)

    def _enter(self, fd: int, rel: PurePosixPath, i: int) -> int:
        """The folder `rel.parts[i]` in `fd` (just made, or being made by another thread),
        or PathRefused naming what stands there instead."""
        try:
            return os.open(rel.parts[i], O_PATH_DIR, dir_fd=fd)
        except OSError as exc:
            if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                raise
            where = PurePosixPath(*rel.parts[: i + 1])
            target = None
            with contextlib.suppress(OSError):
                if stat.S_ISLNK(os.lstat(rel.parts[i], dir_fd=fd).st_mode):
                    target = os.readlink(rel.parts[i], dir_fd=fd)
            if target is not None:
                raise PathRefused(
                    f"{self.path(where)}: is a symbolic link (to {target}); "
                    "LightScientist does not follow links in a workspace"
                ) from None
            raise PathRefused(f"{self.path(where)}: is a file, not a folder") from None

    def write_atomic(
        self,
        path: str | os.PathLike[str],
        data: str | bytes,
        *,
        mode: int = 0o644,
        durable: bool = True,
    ) -> None:
        """Replace `path` so that readers see the old file or the new one, never half: the
        data goes to a new temporary file in the same folder (flushed to disk unless not
        `durable`), which is then renamed over `path` (a link there is replaced, not
        followed)."""
        rel = self.rel(path)
        if not rel.parts:
            raise PathRefused(f"{self.root}: is the workspace itself, not a file")
        try:
            parent = self.open_fd(rel.parent, os.O_PATH | os.O_DIRECTORY)
        except FileNotFoundError:
            self.makedirs(rel.parent)
            parent = self.open_fd(rel.parent, os.O_PATH | os.O_DIRECTORY)
        tmp = f".{rel.name}.{secrets.token_hex(4)}.tmp"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, 0o600, dir_fd=parent)
            try:
                text = not isinstance(data, bytes)
                with os.fdopen(fd, "w" if text else "wb", encoding="utf-8" if text else None) as fh:
                    fh.write(data)
                    fh.flush()
                    if durable:
                        os.fsync(fh.fileno())
                    os.fchmod(fh.fileno(), mode)
                os.replace(tmp, rel.name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException as exc:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp, dir_fd=parent)
                if isinstance(exc, OSError) and exc.filename is None:
                    exc.filename = str(self.path(rel))
                raise
        finally:
            os.close(parent)

    def write_text_atomic(
        self, path: str | os.PathLike[str], text: str, *, mode: int = 0o644, durable: bool = True
    ) -> None:
        self.write_atomic(path, text, mode=mode, durable=durable)

    def append_bytes(self, path: str | os.PathLike[str], data: bytes) -> None:
        """Append `data` in one write, then fsync; a write the disk cuts short is taken back,
        so the file never ends in half an entry. A file with another name elsewhere (a hard
        link) is refused."""
        rel = self.rel(path)
        if len(rel.parts) > 1:
            self.makedirs(rel.parent)
        fd = self._open_file(rel, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            st = os.fstat(fd)
            if st.st_nlink > 1:
                raise PathRefused(
                    f"{self.path(rel)}: has {st.st_nlink} names (a hard link); "
                    "LightScientist appends only to a file of its own"
                )
            try:
                if os.write(fd, data) < len(data):
                    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.path(rel)))
                os.fsync(fd)
            except OSError as exc:
                os.ftruncate(fd, st.st_size)
                if exc.filename is None:
                    exc.filename = str(self.path(rel))
                raise
        finally:
            os.close(fd)

    def append_text(self, path: str | os.PathLike[str], text: str) -> None:
        self.append_bytes(path, text.encode("utf-8"))

    def open_write(self, path: str | os.PathLike[str], *, new: bool = False) -> BinaryIO:
        """A binary file object writing `path` from its start (`new`: it must not exist:
        `O_EXCL`), for output streamed by another process or written in parts."""
        rel = self.rel(path)
        if len(rel.parts) > 1:
            self.makedirs(rel.parent)
        flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else os.O_TRUNC)
        return os.fdopen(self._open_file(rel, flags), "wb")

    def unlink(self, path: str | os.PathLike[str], *, missing_ok: bool = True) -> None:
        """Remove the entry at `path` itself (a link is removed, never what it points to)."""
        rel = self.rel(path)
        try:
            with self.open_dir(rel.parent) as parent:
                os.unlink(rel.name, dir_fd=parent)
        except (FileNotFoundError, NotADirectoryError):
            if not missing_ok:
                raise

    def rmdir(self, path: str | os.PathLike[str]) -> None:
        """Remove the empty folder `path` (a link there is refused, not followed)."""
        rel = self.rel(path)
        with self.open_dir(rel.parent) as parent:
            os.rmdir(rel.name, dir_fd=parent)

    def rmtree(self, path: str | os.PathLike[str]) -> None:
        """Remove folder `path` and what it holds; links inside are removed, not followed."""
        rel = self.rel(path)
        if not rel.parts:
            raise PathRefused(f"{self.root}: is the workspace itself")
        try:
            with self.open_dir(rel.parent) as parent:
                st = os.lstat(rel.name, dir_fd=parent)
                if stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(rel.name, dir_fd=parent)
                else:
                    os.unlink(rel.name, dir_fd=parent)
        except (FileNotFoundError, NotADirectoryError):
            return

    def replace(self, src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        """Rename `src` to `dst` inside the workspace (each through no link)."""
        a, b = self.rel(src), self.rel(dst)
        with self.open_dir(a.parent) as src_fd, self.open_dir(b.parent) as dst_fd:
            os.replace(a.name, b.name, src_dir_fd=src_fd, dst_dir_fd=dst_fd)
