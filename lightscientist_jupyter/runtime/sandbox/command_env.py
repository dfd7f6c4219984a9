"""The environment of a worker's commands: allow-listed variables, the worker's own home, and
the project's tool cache (a copy of the user's matplotlib font list seeded into it).

No key, token or proxy setting of the kernel's environment reaches a command. The cache is
writable from the sandbox, so the kernel writes into it only through the guarded path.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from pathlib import Path

from lightscientist_jupyter._fs import NO_LINKS, mkdirs, write_text_atomic
from lightscientist_jupyter.beneath import PathRefused

_SAFE_ENV_KEYS = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "MPLBACKEND",
    "OPENBLAS_CORETYPE",
    "OPENBLAS_L2_SIZE",
    "OMP_NUM_THREADS",
    "PYTHONHASHSEED",
)


def tool_cache(workspace: Path) -> Path:
    """The project's cache folder for the tools workers run (`XDG_CACHE_HOME`): matplotlib's
    font list, fontconfig's cache, pip's downloads. Each worker has a home of its own, and in
    a fresh one the first figure rebuilt matplotlib's font list (0.4 s here); the workers of
    one project share their workspace already, so sharing its caches exposes nothing new."""
    return workspace / ".lightscientist" / "cache"


def user_font_lists() -> list[Path]:
    """Matplotlib's font lists in the user's own cache (where matplotlib looks for it:
    `MPLCONFIGDIR`, else `$XDG_CACHE_HOME/matplotlib`, else `~/.cache/matplotlib`): the
    user's own files, outside any workspace, read as any program of the user would."""
    folder = os.environ.get("MPLCONFIGDIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "matplotlib"
    )
    try:
        return sorted(Path(folder).glob("fontlist-v*.json"))
    except OSError:
        return []


def seed_font_list(cache: Path) -> None:
    """Start a new project's matplotlib cache with a copy of the user's font list: without
    one, a project's first figure scans the machine's fonts again (0.2-0.4 s here). The list
    names the system's font files and nothing else; the project writes to its own copy.

    The cache is writable from the sandbox: a link planted in it is refused, never written
    through (the copy is then left out; matplotlib builds its own list)."""
    own = cache / "matplotlib"
    try:
        if any(fnmatch.fnmatch(e.name, "fontlist-v*.json") for e in NO_LINKS.scandir(own)):
            return
    except FileNotFoundError:
        pass
    except OSError:  # a link or a file where the folder should be: nothing is written
        return
    for source in user_font_lists():
        try:  # a cache: a power loss may leave no copy, and matplotlib builds one then
            text = source.read_text(encoding="utf-8")
            write_text_atomic(own / source.name, text, durable=False)
        except (OSError, ValueError):  # unreadable or vanished: matplotlib builds its own
            continue


def worker_env(workspace: Path, home: Path) -> dict[str, str]:
    """The allow-listed environment of worker commands: no keys, no tokens, no proxies."""
    bindir = str(Path(sys.executable).parent)
    cache = tool_cache(workspace)
    try:
        mkdirs(cache)
        seed_font_list(cache)
    except PathRefused:  # a link where the cache should be: the kernel writes nothing there
        pass
    env = {k: os.environ[k] for k in _SAFE_ENV_KEYS if k in os.environ}
    env.update(
        {
            "PATH": f"{bindir}:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "XDG_CACHE_HOME": str(cache),
            "PWD": str(workspace),
            "MPLBACKEND": "Agg",
            "PYTHONUNBUFFERED": "1",
            "LIGHTSCIENTIST_WORKSPACE": str(workspace),
        }
    )
    env.setdefault("LANG", "C.UTF-8")
    return env
