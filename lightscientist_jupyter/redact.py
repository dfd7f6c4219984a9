"""Keep secrets and bulk out of what is stored: redact key-like strings, clip long text.

`redact` runs on every tool result before it enters a session's checkpoints, so it is kept
cheap: each pattern runs only when one of its literal texts is in the text. `redact_file`
does the same to a command's log at rest, a bounded piece at a time.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from lightscientist_jupyter._fs import NO_LINKS

_CODE = r"(?![A-Za-z_][\w.]*[(\[])(?![A-Za-z_]\w*(?:\.\w+)+(?:[\s,;)\]}]|$))"
"""Not a value but code: a call or a subscript (`tokenizer(x)`, `os.environ["X"]`), or an
attribute (`args.token`). Tool results are redacted before the model sees them, so a file
the worker reads keeps its code readable."""
_PATTERNS = [
    re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_\-]{12,}"),  # OpenAI/Anthropic style keys
    re.compile(r"\b(ghp|gho|ghs|github_pat)_[A-Za-z0-9_]{16,}"),  # GitHub tokens
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),  # Slack tokens
    re.compile(r"\bAKIA[0-9A-Z]{16}\b"),  # AWS access keys
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{5,}"),  # JWTs
    re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._\-]{16,}"),
    re.compile(
        r"(?i)((?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*)"
        + _CODE
        + r"['\"]?[^\s'\"]{6,}"
    ),
    # a setting named like a secret environment variable (`AWS_SECRET_ACCESS_KEY=…` in a
    # `.env` file, `DB_PASSWORD: …`): upper case, so that code's `sort_key = …` stays,
    # and a whole word of the name, so that `MONKEY` and `AUTHOR` stay too
    re.compile(
        r"\b((?:[A-Z0-9]+_)*(?:KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)"
        r"(?:_[A-Z0-9]+)*\s*[=:]\s*)" + _CODE + r"['\"]?[^\s'\"]{6,}"
    ),
]
_LITERALS = [
    ("sk-", "pk-", "rk-"),
    ("ghp_", "gho_", "ghs_", "github_pat_"),
    ("xox",),
    ("AKIA",),
    ("eyJ",),
    ("bearer",),
    ("api", "token", "secret", "passw"),
    ("KEY", "TOKEN", "SECRET", "PASSW", "CREDENTIAL", "AUTH"),
]
"""For each pattern, the texts one of which any match contains: a pattern whose texts are all
absent is not run, which keeps redaction of long texts cheap. A text in lower case is looked
for in the text lowered (its pattern ignores case), any other as it is."""
_ALL_LITERALS = frozenset(literal for texts in _LITERALS for literal in texts)
SECRET_ENV = re.compile(r"(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)")


_SECRET_NAMES: dict[str, bool] = {}
"""Whether each environment variable's name looks secret (names seldom change; their values
are read each time)."""


def _env_secrets() -> list[str]:
    found = []
    for name, value in os.environ.items():
        secret = _SECRET_NAMES.get(name)
        if secret is None:
            secret = _SECRET_NAMES[name] = SECRET_ENV.search(name) is not None
        if secret and len(value) >= 8:
            found.append(value)
    return found


def redact(text: str, secrets: list[str] | None = None) -> str:
    """Replace anything that looks like a key or token with `[REDACTED]` (`secrets`: the
    environment's secret values, when the caller read them once for many texts)."""
    for value in _env_secrets() if secrets is None else secrets:
        text = text.replace(value, "[REDACTED]")
    low = text.lower()
    present = {lit for lit in _ALL_LITERALS if lit in (low if lit.islower() else text)}
    if not present:
        return text
    for pattern, literals in zip(_PATTERNS, _LITERALS, strict=True):
        if present.isdisjoint(literals):
            continue
        if pattern.groups and pattern.pattern.endswith("{6,}"):  # a name, then its value
            text = pattern.sub(lambda m: m.group(1) + "[REDACTED]", text)
        else:
            text = pattern.sub("[REDACTED]", text)
    return text


def redactor() -> Callable[[str], str]:
    """`redact` with the environment's secrets read once, for many texts in a row."""
    secrets = _env_secrets()
    return lambda text: redact(text, secrets)


def clip(text: str, limit: int = 2000) -> str:
    """Cut `text` to `limit` characters, keeping head and tail."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head - 40
    return f"{text[:head]}\n… [{len(text) - head - tail} characters cut] …\n{text[-tail:]}"


def safe(value: Any, limit: int = 2000) -> str:
    """A redacted, clipped string form of a tool argument or result."""
    if not isinstance(value, str):
        try:
            value = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            value = str(value)
    return clip(redact(value), limit)


PIECE_BYTES = 1 << 20
"""`redact_file` reads a log this much at a time (up to the end of a line)."""
LONGEST_LINE = 16 * PIECE_BYTES
"""A line longer than this is redacted in pieces (a secret across a cut may stay)."""


def redact_file(path: Path, scrub: Callable[[str], str] | None = None) -> bool:
    """Redact the log at `path` in place: replaced atomically by its redacted copy (same
    mode) when it held a secret, untouched otherwise; returns whether it was replaced.

    Read a piece at a time, cut at line ends, so a log of any size takes bounded memory;
    bytes that are not UTF-8 are kept as they were. Its folder is reached through no link
    (`_fs.NO_LINKS`) and `path` itself is not followed when it is a link (`OSError`,
    ELOOP): the copy is written in the folder that was opened. On an error nothing is replaced.
    """
    scrub = scrub or redactor()
    folder = NO_LINKS.open_fd(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        with open(os.open(path.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder), "rb") as src:
            return _rewrite(src, path.name, folder, scrub)
    finally:
        os.close(folder)


def _rewrite(src: IO[bytes], name: str, folder: int, scrub: Callable[[str], str]) -> bool:
    out: IO[bytes] | None = None
    tmp = f".{name}.{uuid.uuid4().hex[:8]}.redacting"
    try:
        done = 0
        for piece in _pieces(src):
            text = piece.decode("utf-8", "surrogateescape")
            clean = scrub(text)
            if out is None and clean != text:  # the first secret: copy what came before
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                mode = os.fstat(src.fileno()).st_mode & 0o777
                out = open(os.open(tmp, flags, mode, dir_fd=folder), "wb")  # noqa: SIM115
                os.fchmod(out.fileno(), mode)  # as it was, whatever the umask
                _copy_head(src.fileno(), out, done)
            if out is not None:
                out.write(clean.encode("utf-8", "surrogateescape"))
            done += len(piece)
        if out is None:
            return False
        out.close()
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
        return True
    except BaseException:
        if out is not None:
            out.close()
            os.unlink(tmp, dir_fd=folder)
        raise


def _pieces(src: IO[bytes]) -> Iterator[bytes]:
    while piece := src.read(PIECE_BYTES):
        if not piece.endswith(b"\n"):
            piece += src.readline(LONGEST_LINE)
        yield piece


def _copy_head(fd: int, out: IO[bytes], size: int) -> None:
    """Copy the first `size` bytes of `fd` (already read, unchanged) to `out`."""
    offset = 0
    while offset < size:
        data = os.pread(fd, min(PIECE_BYTES, size - offset), offset)
        if not data:
            break
        out.write(data)
        offset += len(data)
