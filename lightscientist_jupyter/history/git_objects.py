"""Trees, commits and the branch of the history, written into its repository in process.

A stage's end makes two snapshots due (its finish and the next stage's start). Through git
that was five processes of about 5 ms each on the supervisor's path (`add`, `write-tree`,
two `commit-tree`, `update-ref`), and 15-20 ms in a busy run. The objects are written here
instead, through dulwich's object store (git's own loose format: blobs, trees with git's
folder-sorting rule, commits), and the branch as a loose ref, git's documented file holding
the commit's hash and a newline.

`Trees` hashes again only the files whose size, times, inode or mode changed since it last
saw them, or whose blob is no longer a loose object (its cache stands in for git's index,
which these snapshots no longer write). A workspace with a `.gitattributes` file, whose
filters and line-ending rules only git applies, and files over `HASH_IN_GIT` bytes are left
to git.

Like git by default, nothing here is fsynced: a process killed midway leaves at worst an
object nothing refers to. The branch is replaced atomically, once its commit exists. A
repository using another hash (`extensions.objectFormat`) is left to git's own commands.
"""

from __future__ import annotations

import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from dulwich.file import FileLocked
from dulwich.object_store import DiskObjectStore
from dulwich.objects import Blob, Commit, ObjectID, ShaFile, Tree

from lightscientist_jupyter._fs import write_text_atomic
from lightscientist_jupyter.beneath import Beneath, PathRefused

HASH_IN_GIT = 8 * 1024 * 1024
"""Files larger than this are hashed by `git hash-object` (which streams them)."""
TREE = "40000"
RACY_NS = 1_000_000_000
"""A file changed this close to when it was looked at may change again within the same
timestamp: its hash is not kept for the next snapshot (git's "racily clean" entries)."""


def plain_sha1(git_dir: Path) -> bool:
    """Whether the repository stores SHA-1 objects (every history LightScientist creates)."""
    try:
        config = (git_dir / "config").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return False
    return "objectformat" not in config.lower()


def objects(git_dir: Path) -> DiskObjectStore:
    """The repository's object store."""
    return DiskObjectStore(str(git_dir / "objects"))


def write_commit(
    git_dir: Path,
    tree: str,
    parents: Sequence[str],
    message: str,
    identity: tuple[str, str],
    at: float,
) -> str:
    """Store one commit object, as `git commit-tree` writes it dated `at` in UTC; returns
    its hash."""
    name, email = identity
    commit = Commit()
    commit.tree = ObjectID(tree.encode())
    commit.parents = [ObjectID(parent.encode()) for parent in parents]
    commit.author = commit.committer = f"{name} <{email}>".encode()
    commit.author_time = commit.commit_time = int(at)
    commit.author_timezone = commit.commit_timezone = 0
    commit.message = message.encode("utf-8")
    return _add(objects(git_dir), commit)


LOCK_WAIT = 10.0
"""How long a writer waits for another one writing the same object before taking its
lock as left behind by a writer that was killed."""


def _add(store: DiskObjectStore, obj: ShaFile) -> str:
    """Store `obj` (a loose object, left as it is when it exists); returns its hash.

    Objects are named by their content, so two writers of one object (a reply's snapshot
    and a diff drawn at the same moment, in two threads or processes) write the same
    bytes: the one that finds the other's lock waits for the object to appear instead of
    failing. A lock still there after `LOCK_WAIT` seconds is one a killed writer left;
    it is removed and the object written.
    """
    deadline = time.monotonic() + LOCK_WAIT
    while True:
        try:
            store.add_object(obj)
            return obj.id.decode()
        except FileLocked as exc:
            if obj.id in store:
                return obj.id.decode()
            if time.monotonic() >= deadline:
                Path(os.fsdecode(exc.lockfilename)).unlink(missing_ok=True)
                deadline = time.monotonic() + LOCK_WAIT
            else:
                time.sleep(0.01)


def set_ref(git_dir: Path, ref: str, commit: str) -> None:
    """Point `ref` (`refs/heads/main`) at `commit`, replacing the loose ref atomically."""
    write_text_atomic(git_dir / ref, commit + "\n", durable=False)


class Trees:
    """The tree of a workspace's files, written as objects of the repository at `git_dir`.

    Args:
        git_dir: the repository (SHA-1 objects, see `plain_sha1`).
        cache: where to keep the hashes of files between processes (a cache: lost, every
            file is hashed again); None keeps them in memory only.
        hash_in_git: `git hash-object -w --no-filters --stdin` given an open file, returning
            its hash (for files over `HASH_IN_GIT` bytes, which git streams).

    The workspace's files are read through the guarded path (`beneath`): a file a command
    replaced by a link, or a folder on its way, is left out, never read through.
    """

    def __init__(
        self,
        git_dir: Path,
        cache: Path | None,
        hash_in_git: Callable[[BinaryIO], str],
    ):
        self.git_dir = git_dir
        self.cache = cache
        self.hash_in_git = hash_in_git
        self._store = objects(git_dir)
        self._known: dict[str, list[Any]] | None = None

    def write(self, root: Path, files: Sequence[str]) -> str | None:
        """The tree of `files` (paths under `root`, `/`-separated), or None when git must
        write it (a `.gitattributes` among them). A file gone meanwhile is left out."""
        if any(rel.rsplit("/", 1)[-1] == ".gitattributes" for rel in files):
            return None
        known = self._load()
        tree = Beneath(root)
        seen: dict[str, list[Any]] = {}
        blobs: dict[str, tuple[str, str]] = {}  # rel -> (mode, hash)
        now = time.time_ns()
        for rel in files:
            try:
                st = tree.lstat(rel)
            except PathRefused:
                continue
            if st is None or not stat.S_ISREG(st.st_mode):
                continue
            mode = "100755" if st.st_mode & stat.S_IXUSR else "100644"
            key: list[Any] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, mode]
            settled = max(st.st_mtime_ns, st.st_ctime_ns) < now - RACY_NS
            old = known.get(rel)
            if old is not None and old[:5] == key and self._stored(old[5]):
                blobs[rel] = (mode, old[5])
            else:
                try:
                    if st.st_size > HASH_IN_GIT:
                        with tree.open_read(rel) as fh:
                            digest = self.hash_in_git(fh)
                    else:
                        digest = _add(self._store, Blob.from_string(tree.read_bytes(rel)))
                except (FileNotFoundError, IsADirectoryError, PathRefused):
                    continue  # gone, or replaced by a link, since it was listed
                blobs[rel] = (mode, digest)
            if settled:  # (every branch that did not set blobs[rel] went on to the next)
                seen[rel] = [*key, blobs[rel][1]]
        self._known = seen
        if self.cache is not None and seen != known:
            write_text_atomic(self.cache, json.dumps({"v": 1, "files": seen}), durable=False)
        return self._tree(blobs)

    def _load(self) -> dict[str, list[Any]]:
        if self._known is None:
            self._known = {}
            if self.cache is not None:
                try:
                    raw = json.loads(self.cache.read_text(encoding="utf-8"))
                    files = raw.get("files") if raw.get("v") == 1 else None
                    self._known = {
                        rel: entry
                        for rel, entry in (files.items() if isinstance(files, dict) else ())
                        if isinstance(entry, list) and len(entry) == 6 and _hex40(entry[5])
                    }
                except (OSError, ValueError, AttributeError):
                    pass  # no cache, or a damaged one: every file is hashed
        return self._known

    def _stored(self, digest: str) -> bool:
        """Whether the blob is still a loose object (a packed or pruned one is written again)."""
        # (the store's `contains_loose` reads and inflates the object: a stat is enough)
        return (self.git_dir / "objects" / digest[:2] / digest[2:]).is_file()

    def _tree(self, blobs: dict[str, tuple[str, str]]) -> str:
        children: dict[str, dict[str, tuple[str, str]]] = {"": {}}  # folder: name -> entry
        for rel, entry in blobs.items():
            folder, _, name = rel.rpartition("/")
            children.setdefault(folder, {})[name] = entry
            while folder:  # each folder is an entry of the one above it
                up, _, base = folder.rpartition("/")
                above = children.setdefault(up, {})
                if base in above:
                    break
                above[base] = (TREE, "")
                folder = up
        trees: dict[str, str] = {}
        for folder in sorted(children, key=lambda f: f.count("/") + (f != ""), reverse=True):
            # the deepest folders first, so a folder's own trees are written
            tree = Tree()
            for name, (mode, digest) in children[folder].items():
                if mode == TREE:
                    digest = trees[f"{folder}/{name}" if folder else name]
                tree.add(os.fsencode(name), int(mode, 8), ObjectID(digest.encode()))
            trees[folder] = _add(self._store, tree)
        return trees[""]


def _hex40(value: Any) -> bool:
    return (
        isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)
    )
