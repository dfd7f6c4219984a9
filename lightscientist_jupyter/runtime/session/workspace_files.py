"""The workers' file tools, on the guarded path: deepagents' file backend over `beneath`.

deepagents' own `FilesystemBackend` resolves a path (following links) and then opens what it
resolved: a background command that swaps a folder for a link between the two wins the race,
and a link that points inside the workspace is followed. Here `read`, `write`, `edit`,
`delete`, `ls`, `glob` and `grep` open every path beneath the workspace root through no link
at all (`beneath.Beneath`): a link, wherever it points and whoever made it, is a tool error
naming it and its target, never followed, so the model reads or writes the file by its own
path instead. Listings and searches leave links, pipes and sockets out. A write replaces the
file atomically (keeping its permissions), so a link swapped in meanwhile is replaced, not
written through; a delete removes a link itself, never what it points to.

Paths are the model's: `/` is the workspace root, a real absolute path inside it works too,
and `confine` turns each into a workspace-relative path or refuses it with a line saying why
(`..`, `~`, a system folder). Slicing a read, replacing a string and matching include globs
are deepagents' own helpers, so the tools behave as deepagents' other backends do.
"""

from __future__ import annotations

import base64
import mimetypes
import os
import stat
import time
from datetime import datetime
from pathlib import Path, PurePosixPath

from deepagents.backends.protocol import (
    BackendProtocol,
    DeleteResult,
    EditResult,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    WriteResult,
)
from deepagents.backends.utils import (
    MAX_VIDEO_INPUT_BYTES,
    InvalidGlobPatternError,
    compile_grep_include_glob,
    perform_string_replacement,
    slice_read_response,
)

from lightscientist_jupyter.beneath import Beneath, PathRefused

SEARCH_S = 20.0
"""How long a `glob` or `grep` walks before it answers with what it found (truncated)."""
SEARCH_MAX_BYTES = 10 * 1024 * 1024
"""Files larger than this are left out of a `grep` (as deepagents does)."""
_MEDIA = (
    "image/",
    "audio/",
    "video/",
    "application/pdf",
    "application/vnd.ms-powerpoint",
    "application/vnd.openxmlformats-officedocument.presentationml",
)
_Found = tuple[PurePosixPath, os.stat_result]


def confine(root: Path, key: str) -> PurePosixPath:
    """`key` (virtual absolute, real absolute inside `root`, or relative) as a path relative
    to `root`, or PathRefused with a line for the model. Links are judged when the path is
    opened (`Beneath`), not here."""
    raw = (key or "").strip()
    if not raw:
        raise PathRefused("empty path")
    if "\x00" in raw:
        raise PathRefused(f"{key!r} contains a NUL byte")
    if raw.startswith("~"):
        raise PathRefused(f"'{key}' points to a home folder; paths are relative to the workspace")
    pure = PurePosixPath(raw)
    if ".." in pure.parts:
        raise PathRefused(f"'{key}' uses '..'; paths must stay inside the workspace")
    root_text = str(root)
    if not pure.is_absolute():
        return pure
    if raw == root_text or raw.startswith(root_text + "/"):
        return PurePosixPath(raw[len(root_text) :].lstrip("/"))
    rel = pure.relative_to("/")
    if rel.parts and _system_folder(root, rel.parts[0]):
        raise PathRefused(
            f"'{key}' is outside the workspace; '/' is the workspace root, "
            f"so use a path like '/{rel.parts[-1]}'"
        )
    return rel


def _system_folder(root: Path, top: str) -> bool:
    """Whether `/top` names a folder of the machine that the workspace does not have (the
    model meant the machine's: the hint says `/` is the workspace)."""
    try:
        return Beneath(root).lstat(top) is None and Path("/", top).exists()
    except OSError:  # a name too long …: the opening says so
        return False


class WorkspaceFiles(BackendProtocol):
    """deepagents' file operations on one workspace, each through `Beneath(root)`."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.files = Beneath(self.root)

    # ------------------------------------------------------------------ helpers

    def _rel(self, key: str) -> PurePosixPath:
        return confine(self.root, key)

    def _why(self, exc: OSError) -> str:
        """An error for the model: the refusal's line (paths as the model sees them), or the
        system's reason."""
        text = str(exc) if isinstance(exc, PathRefused) else (exc.strerror or str(exc))
        return text.replace(f"{self.root}/", "/").replace(str(self.root), "/")

    def _info(self, rel: PurePosixPath, st: os.stat_result) -> FileInfo:
        folder = stat.S_ISDIR(st.st_mode)
        return {
            "path": f"/{rel}" + ("/" if folder else ""),
            "is_dir": folder,
            "size": 0 if folder else int(st.st_size),
            "modified_at": datetime.fromtimestamp(st.st_mtime).isoformat(),  # noqa: DTZ006
        }

    def _mode(self, rel: PurePosixPath) -> int:
        """The permissions a rewrite of `rel` keeps (0644 for a new file); PathRefused when a
        link, a folder or a pipe stands there."""
        st = self.files.file_stat(rel)
        return 0o644 if st is None else stat.S_IMODE(st.st_mode)

    # ------------------------------------------------------------------ reading

    def ls(self, path: str) -> LsResult:
        try:
            rel = self._rel(path)
            entries = self.files.scandir(rel)
        except FileNotFoundError:
            return LsResult(error=f"Path '{path}': path_not_found")
        except NotADirectoryError:
            return LsResult(error=f"Path '{path}': not_a_directory")
        except OSError as exc:
            return LsResult(error=f"Cannot list '{path}': {self._why(exc)}")
        found = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
                found.append(self._info(rel / entry.name, st))
        return LsResult(entries=found)

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        try:
            rel = self._rel(file_path)
            data = self.files.read_bytes(rel, limit=MAX_VIDEO_INPUT_BYTES + 1)
        except FileNotFoundError:
            return ReadResult(error=f"File '{file_path}' not found")
        except OSError as exc:
            return ReadResult(error=f"Error reading file '{file_path}': {self._why(exc)}")
        if _media(file_path):
            if len(data) > MAX_VIDEO_INPUT_BYTES:
                return ReadResult(
                    error=f"File '{file_path}' exceeds the {MAX_VIDEO_INPUT_BYTES} bytes a read "
                    "may hand the model"
                )
            encoded = base64.standard_b64encode(data).decode("ascii")
            return ReadResult(file_data=FileData(content=encoded, encoding="base64"))
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return ReadResult(error=f"Error reading file '{file_path}': not UTF-8 text ({exc})")
        return slice_read_response(FileData(content=text, encoding="utf-8"), offset, limit)

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        out = []
        for path in paths:
            try:
                content = self.files.read_bytes(self._rel(path))
            except OSError as exc:
                out.append(FileDownloadResponse(path=path, error=_code(exc)))
                continue
            out.append(FileDownloadResponse(path=path, content=content))
        return out

    # ------------------------------------------------------------------ writing

    def write(self, file_path: str, content: str) -> WriteResult:
        try:
            rel = self._rel(file_path)
            self.files.write_atomic(rel, content, mode=self._mode(rel), durable=False)
        except (OSError, UnicodeEncodeError) as exc:
            why = self._why(exc) if isinstance(exc, OSError) else str(exc)
            return WriteResult(error=f"Error writing file '{file_path}': {why}")
        return WriteResult(path=file_path)

    def edit(
        self, file_path: str, old_string: str, new_string: str, replace_all: bool = False
    ) -> EditResult:
        try:
            rel = self._rel(file_path)
            text = _lf(self.files.read_bytes(rel).decode("utf-8"))
        except FileNotFoundError:
            return EditResult(error=f"Error: File '{file_path}' not found")
        except (OSError, UnicodeDecodeError) as exc:
            why = self._why(exc) if isinstance(exc, OSError) else f"not UTF-8 text ({exc})"
            return EditResult(error=f"Error editing file '{file_path}': {why}")
        result = perform_string_replacement(text, _lf(old_string), _lf(new_string), replace_all)
        if isinstance(result, str):
            return EditResult(error=result)
        new_text, occurrences = result
        try:
            self.files.write_atomic(rel, new_text, mode=self._mode(rel), durable=False)
        except (OSError, UnicodeEncodeError) as exc:
            why = self._why(exc) if isinstance(exc, OSError) else str(exc)
            return EditResult(error=f"Error editing file '{file_path}': {why}")
        return EditResult(path=file_path, occurrences=int(occurrences))

    def delete(self, file_path: str) -> DeleteResult:
        try:
            rel = self._rel(file_path)
            if not rel.parts:
                return DeleteResult(error=f"Error deleting '{file_path}': it is the workspace")
            st = self.files.lstat(rel)
            if st is None:
                return DeleteResult(error=f"Error: '{file_path}' not found")
            if stat.S_ISDIR(st.st_mode):
                self.files.rmtree(rel)  # links inside are removed, never followed
            else:
                self.files.unlink(rel)  # a link is removed itself
        except OSError as exc:
            return DeleteResult(error=f"Error deleting '{file_path}': {self._why(exc)}")
        return DeleteResult(path=file_path)

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        out = []
        for path, content in files:
            try:
                rel = self._rel(path)
                self.files.write_atomic(rel, content, mode=self._mode(rel), durable=False)
            except OSError as exc:
                out.append(FileUploadResponse(path=path, error=_code(exc)))
                continue
            out.append(FileUploadResponse(path=path))
        return out

    # ------------------------------------------------------------------ searching

    def _search(self, rel: PurePosixPath) -> tuple[PurePosixPath, list[_Found]]:
        """The folder a search's globs are relative to, and the regular files at or under
        `rel` with their status (none when nothing is there; the walk stops after
        `SEARCH_S`). PathRefused when a link stands at or on the way to `rel`."""
        st = self.files.lstat(rel)
        if st is None:
            return rel, []
        if not stat.S_ISDIR(st.st_mode):
            file_st = self.files.file_stat(rel)  # refuses a link, a pipe …
            return rel.parent, [(rel, file_st)] if file_st is not None else []
        found: list[_Found] = []
        deadline = time.monotonic() + SEARCH_S
        for item in self.files.walk(rel):
            found.append(item)
            if time.monotonic() > deadline:
                break
        return rel, found

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            matches = compile_grep_include_glob(pattern)
        except InvalidGlobPatternError as exc:
            return GlobResult(error=str(exc), matches=None)
        try:
            base = self._rel(path or "/")
            top, files = self._search(base)
        except OSError as exc:
            return GlobResult(error=f"Error globbing path '{path}': {self._why(exc)}", matches=[])
        if top != base:  # a file, not a folder: nothing under it
            return GlobResult(matches=[])
        found = [self._info(rel, st) for rel, st in files if matches(_under(rel, top))]
        return GlobResult(matches=found)

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        try:
            include = compile_grep_include_glob(glob) if glob else None
        except InvalidGlobPatternError as exc:
            return GrepResult(error=str(exc), matches=[])
        try:
            top, files = self._search(self._rel(path or "/"))
        except OSError as exc:
            where = path or "/"
            return GrepResult(error=f"Error searching path '{where}': {self._why(exc)}", matches=[])
        matches: list[GrepMatch] = []
        for rel, st in files:
            if include is not None and not include(_under(rel, top)):
                continue
            if st.st_size > SEARCH_MAX_BYTES:
                continue
            try:
                text = self.files.read_bytes(rel).decode("utf-8")
            except (OSError, UnicodeDecodeError):  # binary, vanished, or now a link
                continue
            for number, line in enumerate(_lf(text).split("\n"), 1):
                if pattern not in line:
                    continue
                if max_count is not None and len(matches) >= max_count:
                    return GrepResult(matches=matches, truncated=True)
                matches.append({"path": f"/{rel}", "line": number, "text": line})
        return GrepResult(matches=matches)


def _under(rel: PurePosixPath, top: PurePosixPath) -> str:
    return rel.relative_to(top).as_posix()


def _lf(text: str) -> str:
    """Line ends as deepagents' tools see them (its local backend reads in universal newline
    mode): `\\r\\n` and `\\r` become `\\n`."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _media(path: str) -> bool:
    """Whether deepagents' `read_file` hands the file to the model as media (base64): images,
    audio, video, PDF and slides, by name."""
    kind = mimetypes.guess_type(PurePosixPath(path).name)[0] or ""
    return kind.startswith(_MEDIA) and not kind.endswith("+xml")


def _code(exc: OSError) -> str:
    """deepagents' standard error for a failed upload or download."""
    if isinstance(exc, FileNotFoundError):
        return "file_not_found"
    if isinstance(exc, IsADirectoryError) or "is a folder" in str(exc):
        return "is_directory"
    if isinstance(exc, PermissionError):  # PathRefused too
        return "permission_denied"
    return str(exc.strerror or exc)
