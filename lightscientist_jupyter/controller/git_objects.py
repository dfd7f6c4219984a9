"""Commits and the branch of the history, written into its repository without a git process.

A stage's end makes two snapshots due (its finish and the next stage's start). Through git
that was five processes of about 5 ms each on the supervisor's path: `add`, `write-tree`, two
`commit-tree` and `update-ref`. The tree still comes from git (the index is git's own
format); the commits and the branch are written here, in git's documented loose formats:

- an object is `<type> <size>\\0<body>`, deflated with zlib, stored under
  `objects/<first 2 hex digits>/<other 38>` of its SHA-1;
- a loose ref is a file holding the commit's hash and a newline.

Like git by default, neither is fsynced: a process killed midway leaves at worst an object
nothing refers to. The branch is replaced atomically, once its commit exists. A repository
using another hash (`extensions.objectFormat`) is left to git's own commands.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import zlib
from collections.abc import Sequence
from pathlib import Path

from lightscientist_jupyter._fs import write_text_atomic


def plain_sha1(git_dir: Path) -> bool:
    """Whether the repository stores SHA-1 objects (every history LightScientist creates)."""
    try:
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    return "objectformat" not in config.lower()


def commit_body(
    tree: str, parents: Sequence[str], message: str, identity: tuple[str, str], at: float
) -> bytes:
    """A commit's body as `git commit-tree` writes it, dated `at` in UTC."""
    name, email = identity
    who = f"{name} <{email}> {int(at)} +0000"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines += [f"author {who}", f"committer {who}", "", message]
    return "\n".join(lines).encode("utf-8")


def write_commit(
    git_dir: Path,
    tree: str,
    parents: Sequence[str],
    message: str,
    identity: tuple[str, str],
    at: float,
) -> str:
    """Store one commit object; returns its hash."""
    return write_object(git_dir, "commit", commit_body(tree, parents, message, identity, at))


def write_object(git_dir: Path, kind: str, body: bytes) -> str:
    data = f"{kind} {len(body)}\0".encode() + body
    digest = hashlib.sha1(data).hexdigest()  # git's object name, not a security measure
    folder = git_dir / "objects" / digest[:2]
    target = folder / digest[2:]
    if target.exists():
        return digest
    folder.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix="tmp_obj_", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(zlib.compress(data))
        os.chmod(tmp, 0o444)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return digest


def set_ref(git_dir: Path, ref: str, commit: str) -> None:
    """Point `ref` (`refs/heads/main`) at `commit`, replacing the loose ref atomically."""
    write_text_atomic(git_dir / ref, commit + "\n", durable=False)
