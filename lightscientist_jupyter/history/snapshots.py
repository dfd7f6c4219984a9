"""The workspace's history: one git commit per snapshot, in `.lightscientist/history.git`.

The repository is bare and private to LightScientist: every git command runs with `GIT_DIR`
set to it, `GIT_WORK_TREE` set to the workspace, its own index file and no system or global
configuration, with a fixed author — so a `.git` of the user's in the workspace, and the
user's git settings, are never touched or used. A snapshot holds the workspace's files
(stage outputs, scripts, data, `PROCESS.md`) and `.lightscientist/state.json`; the rest of
`.lightscientist/` (checkpoints, events, inbox, workers) stays out, and so do files over the
size bound, files that hold secrets by default (`.env`, `*.pem`…) and those matching
`.lightscientistignore` (see `ignore`) — those are listed in the commit message, with the
stage, the visit and the event (trailers that `log` reads back).

A kill in the middle of a snapshot leaves at worst a stale index or an unreferenced object:
the next snapshot rebuilds the index from the files and moves the branch only once its
commit exists, so the history is continued, never damaged.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, BinaryIO

from lightscientist_jupyter.errors import ControllerError
from lightscientist_jupyter.history import files as snapshot_files
from lightscientist_jupyter.history import git_objects
from lightscientist_jupyter.history.files import MAX_BYTES
from lightscientist_jupyter.workspace import Workspace

BRANCH = "refs/heads/main"
"""The only files of `.lightscientist/` a snapshot holds."""
IDENTITY = ("LightScientist", "lightscientist@localhost")
_FIELD, _RECORD = "\x1f", "\x1e"


@dataclasses.dataclass(frozen=True)
class Snapshot:
    """One snapshot as `log` reads it back."""

    id: str
    """The commit's hash, 12 characters."""
    stage: str
    visit: int
    event: str
    """start, finish, approved, rejected, rewound or forked."""
    at: float
    parent: str | None
    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    note: str = ""

    @property
    def ref(self) -> str:
        return f"{self.stage}#{self.visit}"


class History:
    """The snapshot repository of one workspace."""

    def __init__(self, workspace: Workspace, *, max_bytes: int | None = None):
        self.workspace = workspace
        self.git_dir = workspace.state_dir / "history.git"
        self.index = workspace.state_dir / "history.index"
        env_bound = os.environ.get("LIGHTSCIENTIST_SNAPSHOT_MAX_BYTES")
        self.max_bytes = max_bytes or (int(env_bound) if env_bound else MAX_BYTES)
        self._warned = False
        self._indexed: set[str] | None = None
        """What the index holds, once known (this object's snapshots keep it up to date)."""
        self._trees = git_objects.Trees(
            self.git_dir,
            workspace.state_dir / "history.stat",
            self._hash_stream,
        )

    # ------------------------------------------------------------------ git

    def _env(self) -> dict[str, str]:
        name, email = IDENTITY
        keep = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TMPDIR")}
        return {
            **keep,
            "HOME": str(self.git_dir),  # no ~/.gitconfig of the user's
            "XDG_CONFIG_HOME": str(self.git_dir),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_DIR": str(self.git_dir),
            "GIT_WORK_TREE": str(self.workspace.root),
            "GIT_INDEX_FILE": str(self.index),
            "GIT_AUTHOR_NAME": name,
            "GIT_AUTHOR_EMAIL": email,
            "GIT_COMMITTER_NAME": name,
            "GIT_COMMITTER_EMAIL": email,
            "GIT_TERMINAL_PROMPT": "0",
        }

    def _hash_stream(self, fh: BinaryIO) -> str:
        """Store the bytes of `fh` as a blob (git streams them); its hash."""
        return self.git("hash-object", "-w", "--no-filters", "--stdin", stdin=fh).strip()

    def git(self, *args: str, stdin: str | BinaryIO | None = None, check: bool = True) -> str:
        """Run one git command on the history (`stdin`: a text, or an open file git reads
        itself); its standard output."""
        feed: dict[str, Any] = {"input": stdin} if isinstance(stdin, str) else {"stdin": stdin}
        proc = subprocess.run(
            ["git", "-c", "core.quotepath=off", "-c", "gc.auto=0", "-c", "core.bare=false", *args],
            **feed,
            capture_output=True,
            text=True,
            env=self._env(),
            cwd=self.workspace.root,
        )
        if check and proc.returncode != 0:
            raise ControllerError(
                f"the history in {self.git_dir} failed on `git {args[0]}`: "
                f"{proc.stderr.strip() or proc.returncode}"
            )
        out: str = proc.stdout
        return out

    def read(self, commit: str, rel: str) -> bytes | None:
        """The bytes of `rel` in a snapshot, or None when it holds no such file."""
        proc = subprocess.run(
            ["git", "cat-file", "blob", f"{commit}:{rel}"],
            capture_output=True,
            env=self._env(),
            cwd=self.workspace.root,
        )
        return proc.stdout if proc.returncode == 0 else None

    def exists(self) -> bool:
        return (self.git_dir / "HEAD").is_file()

    def ensure(self) -> None:
        """Create the repository if it is missing (an older project starts one here)."""
        if self.exists():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in self._env().items() if not k.startswith(("GIT_WORK", "GIT_IN"))}
        proc = subprocess.run(
            ["git", "init", "-q", "--bare", "--initial-branch=main", str(self.git_dir)],
            capture_output=True,
            env=env,
        )
        if proc.returncode != 0:
            raise ControllerError(f"cannot create the history {self.git_dir}: {proc.stderr!r}")

    def head(self) -> str | None:
        loose = self.git_dir / BRANCH
        if loose.is_file():  # no git process for the common case
            return loose.read_text().strip() or None
        out = self.git("rev-parse", "-q", "--verify", BRANCH, check=False).strip()
        return out or None

    # ------------------------------------------------------------------ taking one

    def files(self) -> tuple[list[str], list[str]]:
        """The workspace's files a snapshot holds, and those left out (with why)."""
        return snapshot_files.listing(self.workspace.root, self.max_bytes)

    def _stage_files(self, kept: list[str]) -> None:
        """Stage `kept` in the history's own index. The index is only a cache: a damaged
        one is rebuilt from the files."""
        try:
            self._stage(kept)
        except ControllerError:  # a stale lock or a torn index from a killed snapshot
            for stale in (self.index, self.index.with_name(self.index.name + ".lock")):
                stale.unlink(missing_ok=True)
            self._indexed = None
            self._stage(kept)

    def tree_now(self) -> str:
        """The tree of the workspace's files now, for a reader (`diff`, the gate card's and
        the panel's diff). Where git must stage it, it stages in a private copy of the index,
        so that a reader in another process (the server extension, a terminal) never writes
        the index the run's snapshots and rewinds are using at that moment."""
        fd, name = tempfile.mkstemp(prefix=".history-index-", dir=self.workspace.state_dir)
        os.close(fd)
        scratch = Path(name)
        try:
            try:
                shutil.copyfile(self.index, scratch)
            except FileNotFoundError:
                scratch.unlink()  # git starts an index of its own
            view = copy.copy(self)
            view.index, view._indexed = scratch, None
            return view.write_tree()[0]
        finally:
            scratch.unlink(missing_ok=True)
            scratch.with_name(scratch.name + ".lock").unlink(missing_ok=True)

    def write_tree(self) -> tuple[str, list[str]]:
        """The tree of the workspace's files now, and what was left out: written without
        a git process (`git_objects.Trees`), or staged in the index and written by git
        where only git can (another object format, a `.gitattributes`)."""
        self.ensure()
        kept, skipped = self.files()
        native = git_objects.plain_sha1(self.git_dir)
        tree = self._trees.write(self.workspace.root, kept) if native else None
        if tree is None:
            self._stage_files(kept)
            tree = self.git("write-tree").strip()
        return tree, skipped

    def _stage(self, kept: list[str]) -> None:
        if self._indexed is None or not self.index.exists():
            self._indexed = set(filter(None, self.git("ls-files", "-z").split("\0")))
        gone = self._indexed - set(kept)
        self._indexed = None  # until this staging is through
        if gone:
            self.git(
                "rm",
                "-q",
                "--cached",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin="\0".join(sorted(gone)),
            )
        if kept:
            self.git(
                "add", "-f", "--pathspec-from-file=-", "--pathspec-file-nul", stdin="\0".join(kept)
            )
        self._indexed = set(kept)

    def take(
        self,
        stage: str,
        visit: int,
        event: str,
        at: float,
        *,
        note: str = "",
        parent: str | None = None,
    ) -> str:
        """Record the workspace as one snapshot (on top of `parent`, else of the branch's
        tip) and move the branch to it; returns its id."""
        return self._commit([(stage, visit, event)], at, note, parent)[0]

    def take_all(self, marks: Sequence[tuple[str, int, str]], at: float) -> list[str]:
        """Record the workspace once for each of `marks` (stage, visit, event): snapshots
        that one step of layer 1 made due, such as a stage's finish and the next stage's
        start, hold the same files, so they are staged once and each is a commit of that
        tree on the one before; the branch moves once, to the last. Returns their ids."""
        return self._commit(marks, at, "", None)

    def _commit(
        self, marks: Sequence[tuple[str, int, str]], at: float, note: str, parent: str | None
    ) -> list[str]:
        tree, skipped = self.write_tree()
        if parent and len(parent) != 40:  # a snapshot's id, as `log` gives it
            parent = self.git("rev-parse", "--verify", f"{parent}^{{commit}}").strip()
        parent = parent or self.head()
        native = git_objects.plain_sha1(self.git_dir)  # no process per commit (see there)
        ids = []
        for stage, visit, event in marks:
            message = _message(stage, visit, event, at, note, skipped)
            if native:
                parent = git_objects.write_commit(
                    self.git_dir, tree, [parent] if parent else [], message, IDENTITY, at
                )
            else:
                on = ("-p", parent) if parent else ()
                parent = self.git("commit-tree", tree, *on, "-F", "-", stdin=message).strip()
            ids.append(parent[:12])
        if parent and native:
            git_objects.set_ref(self.git_dir, BRANCH, parent)
        elif parent:  # (another object format)
            self.git("update-ref", BRANCH, parent)
        return ids

    def record(self, marks: Sequence[tuple[str, int, str]]) -> list[str]:
        """`take_all`, for the controller: a history that cannot be written (git missing, a
        damaged repository) warns once and leaves the run going; a full disk stops it."""
        try:
            return self.take_all(marks, time.time())
        except (ControllerError, FileNotFoundError, PermissionError) as exc:
            if not self._warned:
                self._warned = True
                where = ", ".join(f"{stage}#{visit}" for stage, visit, _ in marks)
                print(f"lightscientist: warning: no snapshot of {where}: {exc}", file=sys.stderr)
            return []

    # ------------------------------------------------------------------ reading

    def log(self) -> list[Snapshot]:
        """Every snapshot of every line (rewound-over ones too), oldest first."""
        if not self.exists() or self.head() is None:
            return []
        fmt = _RECORD + _FIELD.join(("%H", "%P", "%B")) + _FIELD
        out = self.git(
            "log",
            "--branches",
            "--glob=refs/kept/*",
            "--root",
            "--no-renames",
            "--topo-order",
            "--reverse",
            "--name-status",
            f"--format={fmt}",
        )
        snaps = [s for s in (_parse(chunk) for chunk in out.split(_RECORD)) if s]
        # parents first, so snapshots of one moment (a finish and the next start) keep
        # their order under the stable sort
        return sorted(snaps, key=lambda s: s.at)

    def keep(self, commit: str, name: str) -> None:
        """Keep a line of snapshots reachable under `refs/kept/<name>` (a rewound-over one)."""
        self.git("update-ref", f"refs/kept/{name}", commit)


def _message(
    stage: str, visit: int, event: str, at: float, note: str, skipped: Sequence[str]
) -> str:
    lines = [f"{stage}#{visit} {event}", ""]
    if note:
        lines += [note, ""]
    lines += [f"Stage: {stage}", f"Visit: {visit}", f"Event: {event}", f"At: {at!r}"]
    lines += [f"Skipped: {s}" for s in skipped]
    return "\n".join(lines) + "\n"


def _parse(chunk: str) -> Snapshot | None:
    parts = chunk.split(_FIELD)
    if len(parts) < 4:
        return None
    commit, parents, body, names = parts[0], parts[1].split(), parts[2], parts[3]
    trailers: dict[str, list[str]] = {}
    for line in body.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in ("Stage", "Visit", "Event", "At", "Skipped"):
            trailers.setdefault(key, []).append(value)
    if "Stage" not in trailers:
        return None
    changes: dict[str, list[str]] = {"A": [], "M": [], "D": []}
    for line in names.strip().splitlines():
        code, _, path = line.partition("\t")
        changes.setdefault(code[:1], []).append(path)
    head_line = body.split("\n\n")
    note = head_line[1].strip() if len(head_line) > 2 and "Stage:" not in head_line[1] else ""
    return Snapshot(
        id=commit[:12],
        stage=trailers["Stage"][0],
        visit=int(trailers.get("Visit", ["0"])[0]),
        event=trailers.get("Event", ["?"])[0],
        at=float(trailers.get("At", ["0"])[0]),
        parent=parents[0][:12] if parents else None,
        added=tuple(changes["A"]),
        changed=tuple(changes["M"]),
        removed=tuple(changes["D"]),
        skipped=tuple(trailers.get("Skipped", ())),
        note=note,
    )
