"""`Beneath`: reading, writing, listing and removing files under one root, every path opened
through `opening.open_beneath` (no link, nothing outside)."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from lightscientist_jupyter.beneath.opening import (
    PathRefused,
    kind_of,
    make_dirs,
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
        self._prefix = str(PurePosixPath(self.root)).rstrip("/")
        """The root as text, without a trailing `/` (`''` for `/`)."""

    # ------------------------------------------------------------------ paths

    def rel(self, path: str | os.PathLike[str]) -> PurePosixPath:
        """`path` relative to the root, or PathRefused when it cannot be beneath it: an
        absolute path under the root loses the root, any other absolute path is taken from
        `/` of the workspace."""
        parts = self._parts(path)
        if isinstance(path, PurePosixPath) and not path.is_absolute():
            return path
        return PurePosixPath(*parts)

    def _parts(self, path: str | os.PathLike[str]) -> tuple[str, ...]:
        """`rel(path).parts`, worked out on the text: this runs at every call, and pathlib's
        parsing and comparisons cost several times the system call they prepare."""
        if isinstance(path, PurePosixPath) and not path.is_absolute():
            parts = path.parts  # already parsed: no empty or `.` component
        else:
            text = os.fspath(path)
            if "\x00" in text:
                raise PathRefused(f"{text!r} contains a NUL byte")
            if text == self._prefix or text.startswith(self._prefix + "/"):
                text = text[len(self._prefix) :]
            parts = tuple(p for p in text.split("/") if p and p != ".")
        if ".." in parts:
            raise PathRefused(f"{os.fspath(path)} leaves the workspace {self.root} ('..')")
        return parts

    def path(self, path: str | os.PathLike[str]) -> Path:
        """The absolute path of `path` under the root (for messages and for other programs)."""
        return self.root / self.rel(path)

    # ------------------------------------------------------------------ opening

    def open_fd(self, path: str | os.PathLike[str], flags: int, mode: int = 0o644) -> int:
        """An fd for `path` opened with `flags` beneath the root, or PathRefused."""
        parts = self._parts(path)
        if not parts:
            flags |= os.O_DIRECTORY
        root_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            try:
                fd = open_beneath(root_fd, parts, flags, mode)
            except OSError as exc:
                rel = PurePosixPath(*parts)
                # EEXIST: a new file (`O_EXCL`) where a link already stands
                if exc.errno in (errno.ELOOP, errno.EXDEV, errno.ENOTDIR, errno.EEXIST):
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

    def file_stat(self, path: str | os.PathLike[str]) -> os.stat_result | None:
        """The status of the regular file `path`, None when nothing is there; PathRefused
        naming what stands there instead (a link, a folder, a pipe) or on the way."""
        rel = self.rel(path)
        try:
            fd = self.open_fd(rel, os.O_PATH)
        except FileNotFoundError:
            return None
        try:
            st = os.fstat(fd)
        finally:
            os.close(fd)
        if not stat.S_ISREG(st.st_mode):
            raise PathRefused(f"{self.path(rel)}: is {kind_of(st.st_mode)}, not a file")
        return st

    def is_file(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is a regular file reached through no link (a link is not a file)."""
        return self._kind_is(path, stat.S_ISREG)

    def is_dir(self, path: str | os.PathLike[str]) -> bool:
        """Whether `path` is a folder reached through no link (a link is not a folder)."""
        return self._kind_is(path, stat.S_ISDIR)

    def _kind_is(self, path: str | os.PathLike[str], test: Callable[[int], bool]) -> bool:
        try:
            st = self.lstat(path)
        except PathRefused:
            return False
        return st is not None and test(st.st_mode)

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
        """The entries of folder `path`, sorted by name (an entry's `path` is its name). Each
        entry's own status is read while the folder is open: ask it `is_dir`, `is_file` or
        `stat` with `follow_symlinks=False` (following would leave the workspace)."""
        with self.open_dir(path) as fd, os.scandir(fd) as entries:
            found = sorted(entries, key=lambda e: e.name)
            for entry in found:  # cached in the entry: the folder's fd closes now
                with contextlib.suppress(FileNotFoundError):
                    entry.stat(follow_symlinks=False)
            return found

    def walk(
        self, path: str | os.PathLike[str] = "", *, skip_hidden: bool = False
    ) -> Iterator[tuple[PurePosixPath, os.stat_result]]:
        """The regular files under folder `path` with their status, workspace-relative, depth
        first in name order. Links and special files are neither followed nor listed; a
        folder inside that vanished or became a link meanwhile is not walked (`skip_hidden`:
        nor names starting with a dot, nor what hidden folders hold)."""
        base = self.rel(path)
        for entry in self.scandir(base):
            if skip_hidden and entry.name.startswith("."):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                try:
                    yield from self.walk(base / entry.name, skip_hidden=skip_hidden)
                except (FileNotFoundError, NotADirectoryError, PathRefused):
                    continue
            elif stat.S_ISREG(st.st_mode):
                yield base / entry.name, st

    def walk_files(
        self, path: str | os.PathLike[str] = "", *, skip_hidden: bool = False
    ) -> Iterator[PurePosixPath]:
        """`walk` without the status: the regular files' workspace-relative paths."""
        for rel, _ in self.walk(path, skip_hidden=skip_hidden):
            yield rel

    # ------------------------------------------------------------------ writing

    def makedirs(self, path: str | os.PathLike[str], mode: int = 0o755) -> None:
        """Create the folder `path` and its parents as needed, through no link."""
        fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            make_dirs(fd, self.root, self.rel(path), mode)
        finally:
            os.close(fd)

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

    def _create(self, rel: PurePosixPath, flags: int) -> int:
        """`_open_file` with `O_CREAT`, making the folders on the way when they are missing."""
        try:
            return self._open_file(rel, flags)
        except FileNotFoundError:
            if len(rel.parts) < 2:
                raise
        self.makedirs(rel.parent)
        return self._open_file(rel, flags)

    def append_bytes(self, path: str | os.PathLike[str], data: bytes) -> None:
        """Append `data` in one write, then fsync; a write the disk cuts short is taken back,
        so the file never ends in half an entry. A file with another name elsewhere (a hard
        link) is refused."""
        rel = self.rel(path)
        fd = self._create(rel, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
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
        `O_EXCL`), for output streamed by another process or written in parts. An existing
        file with a second name (a hard link) is refused before it is emptied."""
        rel = self.rel(path)
        fd = self._create(rel, os.O_WRONLY | os.O_CREAT | (os.O_EXCL if new else 0))
        try:
            links = os.fstat(fd).st_nlink
            if links > 1:
                raise PathRefused(
                    f"{self.path(rel)}: has {links} names (a hard link); "
                    "LightScientist writes only to a file of its own"
                )
            os.ftruncate(fd, 0)
        except BaseException:
            os.close(fd)
            raise
        return os.fdopen(fd, "wb")

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
