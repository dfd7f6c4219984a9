"""Opening a path beneath a folder's file descriptor through no link, and saying why not.

`open_beneath` is the one call: Linux's `openat2(2)` with `RESOLVE_BENEATH |
RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS` where the kernel has it, else one component at a
time with `O_NOFOLLOW` and `dir_fd`. `what_is_there` turns a refusal into words.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import stat
from pathlib import Path, PurePosixPath

from lightscientist_jupyter.errors import LightScientistError

O_PATH_DIR = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_RESOLVE = 0x02 | 0x04 | 0x08
"""RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH (linux/openat2.h)."""
_SYS_OPENAT2 = 437
"""The same number on every architecture (it came after the tables were unified)."""


class PathRefused(LightScientistError, PermissionError):
    """A workspace path the kernel will not open: outside the root, through a link, or not a
    plain file or folder. The message is one line naming the path and what is there."""


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_syscall = None
_have_openat2 = True


def _openat2(dir_fd: int, rel: str, flags: int, mode: int) -> int | None:
    """`openat2` beneath `dir_fd` with no link allowed; None when the call is not available."""
    global _syscall, _have_openat2
    if not _have_openat2:
        return None
    if _syscall is None:
        libc = ctypes.CDLL(None, use_errno=True)
        _syscall = libc.syscall
        _syscall.restype = ctypes.c_long
        _syscall.argtypes = [
            ctypes.c_long,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.POINTER(_OpenHow),
            ctypes.c_size_t,
        ]
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    fd = _syscall(_SYS_OPENAT2, dir_fd, os.fsencode(rel), ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        return int(fd)
    err = ctypes.get_errno()
    if err == errno.ENOSYS or (err == errno.EPERM and _probe_blocked(dir_fd)):
        _have_openat2 = False
        return None
    raise OSError(err, os.strerror(err), rel)


def _probe_blocked(dir_fd: int) -> bool:
    """Whether `openat2` is refused as such (a seccomp filter answers EPERM), rather than the
    path: `.` beneath a folder we hold is always allowed."""
    how = _OpenHow(os.O_PATH | os.O_CLOEXEC, 0, _RESOLVE)
    assert _syscall is not None
    fd = _syscall(_SYS_OPENAT2, dir_fd, b".", ctypes.byref(how), ctypes.sizeof(how))
    if fd >= 0:
        os.close(fd)
        return False
    return True


def _walk_open(dir_fd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    """The fallback: each folder opened with `O_NOFOLLOW` beneath the one before."""
    fd = os.dup(dir_fd)
    try:
        for name in parts[:-1]:
            inner = os.open(name, O_PATH_DIR, dir_fd=fd)
            os.close(fd)
            fd = inner
        found = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=fd)
    finally:
        os.close(fd)
    if flags & os.O_PATH and stat.S_ISLNK(os.fstat(found).st_mode):
        os.close(found)  # `O_PATH | O_NOFOLLOW` opens a link itself; openat2 refuses it
        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), parts[-1])
    return found


def open_beneath(root_fd: int, parts: tuple[str, ...], flags: int, mode: int) -> int:
    """An fd for the path of `parts` (no `..`, no empty or `.` part: see `Beneath.rel`)
    opened with `flags` beneath `root_fd`."""
    fd = _openat2(root_fd, "/".join(parts) or ".", flags, mode)
    if fd is None:
        fd = _walk_open(root_fd, parts or (".",), flags, mode)
    return fd


def what_is_there(root_fd: int, rel: PurePosixPath) -> str | None:
    """Why `rel` was refused: the first link on its way, named with its target."""
    fd = os.dup(root_fd)
    try:
        for i, name in enumerate(rel.parts):
            try:
                st = os.lstat(name, dir_fd=fd)
            except OSError:
                return None
            if stat.S_ISLNK(st.st_mode):
                where = PurePosixPath(*rel.parts[: i + 1])
                try:
                    target = os.readlink(name, dir_fd=fd)
                except OSError:
                    target = "?"
                what = "is" if i == len(rel.parts) - 1 else f"goes through {where}, which is"
                return (
                    f"{what} a symbolic link (to {target}); "
                    "LightScientist does not follow links in a workspace"
                )
            if i < len(rel.parts) - 1:
                if not stat.S_ISDIR(st.st_mode):
                    return None
                inner = os.open(name, O_PATH_DIR, dir_fd=fd)
                os.close(fd)
                fd = inner
        return None
    finally:
        os.close(fd)


def kind_of(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def make_dirs(root_fd: int, root: Path, rel: PurePosixPath, mode: int) -> None:
    """Create the folder `rel` beneath `root_fd` (the folder `root`, for messages) and its
    parents as needed, entering each with `O_NOFOLLOW`: a link or a file in the way is
    PathRefused naming it."""
    fd = os.dup(root_fd)
    try:
        for i, name in enumerate(rel.parts):
            try:
                inner = os.open(name, O_PATH_DIR, dir_fd=fd)
            except FileNotFoundError:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(name, mode, dir_fd=fd)
                inner = _enter(fd, root, rel, i)
            except OSError as exc:
                if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
                    raise
                inner = _enter(fd, root, rel, i)  # refuses, naming what is there
            os.close(fd)
            fd = inner
    finally:
        os.close(fd)


def _enter(fd: int, root: Path, rel: PurePosixPath, i: int) -> int:
    """The folder `rel.parts[i]` in `fd` (just made, or being made by another thread), or
    PathRefused naming what stands there instead."""
    try:
        return os.open(rel.parts[i], O_PATH_DIR, dir_fd=fd)
    except OSError as exc:
        if exc.errno not in (errno.ENOTDIR, errno.ELOOP):
            raise
        where = root / PurePosixPath(*rel.parts[: i + 1])
        target = None
        with contextlib.suppress(OSError):
            if stat.S_ISLNK(os.lstat(rel.parts[i], dir_fd=fd).st_mode):
                target = os.readlink(rel.parts[i], dir_fd=fd)
        if target is not None:
            raise PathRefused(
                f"{where}: is a symbolic link (to {target}); "
                "LightScientist does not follow links in a workspace"
            ) from None
        raise PathRefused(f"{where}: is a file, not a folder") from None
