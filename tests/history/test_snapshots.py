"""The workspace's history (history/snapshots.py): real git, a real folder."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from pathlib import Path

from dulwich.objects import Blob

from lightscientist_jupyter.controller import actions, machine
from lightscientist_jupyter.history import git_objects
from lightscientist_jupyter.history.snapshots import History
from lightscientist_jupyter.workspace import Workspace
from tests.controller.test_machine import TABLE, at, finish, gate_waiting, reply


def project(root: Path) -> Workspace:
    ws = Workspace.at(root)
    ws.state_dir.mkdir(parents=True)
    ws.state_file.write_text('{"stage": "a"}\n')
    ws.events_file.write_text("{}\n")
    (ws.state_dir / "checkpoints.sqlite").write_bytes(b"db")
    ws.process_md.write_text("# Research process\n")
    (root / "out").mkdir()
    (root / "out" / "a.md").write_text("first\n")
    return ws


def test_a_snapshot_holds_the_outputs_process_md_and_state_but_not_the_rest(tmp_path: Path):
    ws = project(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    (tmp_path / "out" / "a.md").write_text("second\n")
    (tmp_path / "out" / "b.csv").write_text("x\n1\n")
    history.take("a", 1, "finish", time.time())

    first, second = history.log()
    assert (first.ref, first.event) == ("a#1", "start")
    assert set(first.added) == {".lightscientist/state.json", "PROCESS.md", "out/a.md"}
    assert (second.event, second.added, second.changed) == ("finish", ("out/b.csv",), ("out/a.md",))
    assert second.parent == first.id


def test_snapshots_due_at_one_moment_are_one_tree_listed_in_their_order(tmp_path: Path):
    """A stage's finish and the next stage's start, made due by one step of layer 1: both
    hold the same files, and the history lists them in that order although they share a
    time (and git's commit dates are whole seconds)."""
    ws = project(tmp_path)
    history = History(ws)
    history.record([("a", 1, "start")])
    (tmp_path / "out" / "a.md").write_text("second\n")
    history.record([("a", 1, "finish"), ("b", 1, "start")])
    history.record([("b", 1, "finish"), ("c", 1, "start")])

    snaps = history.log()
    assert [(s.ref, s.event) for s in snaps] == [
        ("a#1", "start"), ("a#1", "finish"), ("b#1", "start"), ("b#1", "finish"), ("c#1", "start"),
    ]  # fmt: skip
    assert snaps[1].changed == ("out/a.md",) and snaps[2].changed == snaps[2].added == ()
    assert [s.parent for s in snaps[1:]] == [s.id for s in snaps[:-1]]
    assert history.read(snaps[2].id, "out/a.md") == b"second\n"
    assert history.head() is not None and history.head().startswith(snaps[-1].id)


def test_ignored_and_oversized_files_are_left_out_and_named(tmp_path: Path):
    ws = project(tmp_path)
    (tmp_path / ".lightscientistignore").write_text("*.bin\nscratch/\n")
    (tmp_path / "model.bin").write_bytes(b"0" * 10)
    (tmp_path / "scratch").mkdir()
    (tmp_path / "scratch" / "tmp.txt").write_text("t")
    (tmp_path / "big.dat").write_bytes(b"0" * 2000)
    history = History(ws, max_bytes=1000)
    history.take("a", 1, "start", time.time())

    (snap,) = history.log()
    assert "big.dat (over 1000 bytes)" in snap.skipped
    assert "model.bin (.lightscientistignore)" in snap.skipped
    assert not any(p.startswith(("scratch", "model.bin", "big.dat")) for p in snap.added)


def test_byte_code_and_notebook_autosaves_are_left_out_unlisted(tmp_path: Path):
    ws = project(tmp_path)
    for rel in ("out/__pycache__/a.cpython-311.pyc", "out/.ipynb_checkpoints/n-checkpoint.ipynb"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    (tmp_path / "out" / "stray.pyc").write_text("x")
    History(ws).take("a", 1, "start", time.time())

    (snap,) = History(ws).log()
    assert set(snap.added) == {".lightscientist/state.json", "PROCESS.md", "out/a.md"}
    assert snap.skipped == ()


def test_the_users_own_git_repository_and_config_are_untouched(tmp_path: Path, monkeypatch):
    ws = project(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    home = tmp_path.parent / "home"
    home.mkdir(exist_ok=True)
    (home / ".gitconfig").write_text("[user]\n\tname = Someone Else\n[core]\n\tbare = true\n")
    monkeypatch.setenv("HOME", str(home))
    before = sorted(p.name for p in (tmp_path / ".git").iterdir())
    History(ws).take("a", 1, "start", time.time())

    user = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain"], capture_output=True, text=True
    )
    assert "?? out/" in user.stdout  # still untracked in the user's repository
    assert sorted(p.name for p in (tmp_path / ".git").iterdir()) == before
    author = History(ws).git("log", "-1", "--format=%an")
    assert author.strip() == "LightScientist"


def test_a_snapshot_killed_midway_is_repaired_by_the_next(tmp_path: Path):
    ws = project(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    # what a SIGKILL during `git add` leaves: a stale index lock and a torn index
    history.index.with_name(history.index.name + ".lock").write_bytes(b"")
    history.index.write_bytes(b"DIRC torn")
    (tmp_path / "out" / "c.md").write_text("c\n")
    history.take("a", 1, "finish", time.time())

    assert [s.event for s in history.log()] == ["start", "finish"]
    assert history.log()[-1].added == ("out/c.md",)


def test_the_machine_asks_for_snapshots_at_start_finish_and_gate_decisions():
    def snaps(effects):
        return [(e.stage, e.visit, e.event) for e in effects if isinstance(e, actions.TakeSnapshot)]

    _, started = machine.step(at("a", came_from=None), TABLE, actions.Start(0.0))
    assert [e for _, _, e in snaps(started)] == ["start"]
    _, finished = machine.step(at("a", came_from=None), TABLE, finish())
    assert [e for _, _, e in snaps(finished)] == ["finish", "start"]
    _, approved = machine.step(gate_waiting(), TABLE, reply(True))
    assert [e for _, _, e in snaps(approved)] == ["approved", "start"]
    _, rejected = machine.step(gate_waiting(), TABLE, reply(False))
    assert [e for _, _, e in snaps(rejected)] == ["rejected", "start"]


def test_an_empty_history_reads_as_no_snapshots(tmp_path: Path):
    assert History(project(tmp_path)).log() == []


def test_a_reader_stages_in_a_copy_and_leaves_the_runs_index_alone(tmp_path: Path):
    """`diff` and the panel's gate diff (often another process) see the files now without
    writing the index the run's snapshots and rewinds use."""
    ws = project(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    history.git("read-tree", history.head() or "")  # as a rewind leaves it
    before = history.index.read_bytes()
    (tmp_path / "out" / "new.md").write_text("new\n")
    tree = history.tree_now()
    assert "out/new.md" in history.git("ls-tree", "-r", "--name-only", tree)
    (tmp_path / ".gitattributes").write_text("*.md text\n")  # a tree only git writes
    assert ".gitattributes" in history.git("ls-tree", "-r", "--name-only", history.tree_now())
    assert history.index.read_bytes() == before
    assert not list(ws.state_dir.glob(".history-index-*"))  # its copy is gone


def test_commits_written_without_git_are_the_ones_git_writes(tmp_path: Path):
    """The two snapshots of a stage's end are committed without a git process per commit
    (git_objects.py): each commit has the hash `git commit-tree` gives for the same tree,
    parent, identity, date and message, and the repository passes `git fsck --strict`."""
    ws = project(tmp_path)
    history = History(ws)
    at_ = 1_764_590_400.75
    first = history.take_all([("a", 1, "start")], at_)
    (tmp_path / "out" / "a.md").write_text("second\n")
    finish_, start_ = history.take_all([("a", 1, "finish"), ("b", 1, "start")], at_ + 1)

    full = history.git("rev-parse", history.head() or "").strip()
    assert full.startswith(start_) and history.git("rev-parse", "main").strip() == full
    date = f"@{int(at_ + 1)} +0000"
    env = {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
    for commit in (finish_, start_):
        tree = history.git("rev-parse", f"{commit}^{{tree}}").strip()
        parent = history.git("rev-parse", f"{commit}^").strip()
        message = history.git("cat-file", "commit", commit).split("\n\n", 1)[1]
        by_git = subprocess.run(
            ["git", "commit-tree", tree, "-p", parent, "-F", "-"],
            input=message, capture_output=True, text=True, check=True,
            env={**history._env(), **env}, cwd=tmp_path,
        ).stdout.strip()  # fmt: skip
        assert by_git.startswith(commit)
    fsck = history.git("fsck", "--strict", "--no-dangling", check=False)
    assert fsck.strip() == "", fsck
    assert [s.id for s in history.log()] == [*first, finish_, start_]
    assert history.read(start_, "out/a.md") == b"second\n"


def odd_workspace(root: Path) -> Workspace:
    """Names that sort differently as folders and files, a script, an empty file, UTF-8 and
    spaces in names, folders three deep."""
    ws = project(root)
    for rel, text in {
        "a.b": "dot\n",
        "a/b/c/deep.txt": "deep\n",
        "a/b.txt": "beside\n",
        "a-b/x": "dash\n",
        "données/résumé é.md": "accents\n",
        "with space/empty": "",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    script = root / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o755)
    return ws


def tree_by_git(history: History) -> str:
    kept, _ = history.files()
    history._stage_files(kept)
    return history.git("write-tree").strip()


def test_trees_written_without_git_are_the_ones_git_writes(tmp_path: Path, monkeypatch):
    """`git_objects.Trees` gives the hash `git add` + `git write-tree` give for the same
    files (modes, the folder-sorting rule, nested and non-ASCII names), a file over the
    in-process bound is hashed by git, and the repository passes `git fsck --strict`."""
    monkeypatch.setattr(git_objects, "HASH_IN_GIT", 1000)
    ws = odd_workspace(tmp_path)
    (tmp_path / "big.csv").write_text("1,2,3\n" * 500)  # over the (lowered) bound
    history = History(ws)
    history.ensure()
    native, _ = history.write_tree()
    assert native == tree_by_git(history)
    names = history.git("ls-tree", "-r", native)
    assert "100755 blob" in next(line for line in names.splitlines() if line.endswith("run.sh"))
    history.take("a", 1, "start", time.time())
    assert history.git("fsck", "--strict", "--no-dangling", check=False).strip() == ""


def test_a_changed_file_is_hashed_again_and_a_damaged_cache_is_ignored(tmp_path: Path, monkeypatch):
    """The hashes kept between snapshots never hide an edit, even one of the same size, and
    a snapshot after the cache is damaged (or another process kept it) is still right."""
    monkeypatch.setattr(git_objects, "RACY_NS", 0)  # trust every hash at once
    ws = odd_workspace(tmp_path)
    history = History(ws)
    first = history.take("a", 1, "start", time.time())
    cache = ws.state_dir / "history.stat"
    assert "a/b.txt" in cache.read_text()  # kept for the next snapshot
    (tmp_path / "a" / "b.txt").write_text("BESIDE\n")  # the same size
    second = history.take("a", 1, "finish", time.time())
    assert history.read(second, "a/b.txt") == b"BESIDE\n"
    assert history.read(first, "a/b.txt") == b"beside\n"

    cache.write_text("{not json")
    (tmp_path / "a.b").write_text("changed\n")
    third = History(ws).take("b", 1, "start", time.time())  # a new process, its cache torn
    assert history.read(third, "a.b") == b"changed\n"
    assert History(ws).write_tree()[0] == tree_by_git(History(ws))


def test_a_workspace_with_git_attributes_is_staged_by_git(tmp_path: Path):
    """Line-ending rules in a `.gitattributes` are applied as git applies them: such a
    workspace's snapshots go through git's own index."""
    ws = project(tmp_path)
    (tmp_path / ".gitattributes").write_text("*.txt text eol=lf\n")
    (tmp_path / "windows.txt").write_bytes(b"one\r\ntwo\r\n")
    history = History(ws)
    snap = history.take("a", 1, "start", time.time())
    assert history.read(snap, "windows.txt") == b"one\ntwo\n"


def test_a_cached_hash_whose_object_is_gone_is_written_again(tmp_path: Path, monkeypatch):
    """A blob the cache names but the repository no longer holds loose (packed or pruned by a
    `git gc` someone ran) is written again, and a cache entry of the wrong shape is dropped:
    the snapshot stays whole."""
    monkeypatch.setattr(git_objects, "RACY_NS", 0)
    ws = odd_workspace(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    cache = ws.state_dir / "history.stat"
    kept = json.loads(cache.read_text())
    digest = kept["files"]["a/b.txt"][5]
    (history.git_dir / "objects" / digest[:2] / digest[2:]).unlink()
    kept["files"]["a.b"] = [1, 2, 3, 4, "100644", "not a hash"]
    cache.write_text(json.dumps(kept))

    snap = History(ws).take("a", 1, "finish", time.time())
    assert history.read(snap, "a/b.txt") == b"beside\n"
    assert history.read(snap, "a.b") == b"dot\n"
    assert history.git("fsck", "--strict", "--no-dangling", check=False).strip() == ""


def _being_written(history: History, content: bytes) -> tuple[Path, Path]:
    """The lock another writer holds while it writes the blob of `content` (dulwich and git
    write a loose object into `<object>.lock` and rename it), and the object's path."""
    digest = Blob.from_string(content).id.decode()
    folder = history.git_dir / "objects" / digest[:2]
    folder.mkdir(parents=True, exist_ok=True)
    lock = folder / (digest[2:] + ".lock")
    lock.write_bytes(b"")
    return lock, folder / digest[2:]


def test_a_snapshot_waits_for_another_writer_of_the_same_object(tmp_path: Path):
    """A diff drawn while a reply takes its snapshot writes the same objects (a tree of the
    same files) in another thread or process: the snapshot waits for the other writer's
    object instead of failing on its lock (it did: `FileLocked` in a notebook's reply)."""
    ws = project(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    (tmp_path / "out" / "a.md").write_text("written by both\n")
    lock, path = _being_written(history, b"written by both\n")

    def other_writer() -> None:
        time.sleep(0.3)
        lock.write_bytes(Blob.from_string(b"written by both\n").as_legacy_object())
        lock.rename(path)

    writer = threading.Thread(target=other_writer)
    writer.start()
    snap = history.take("a", 1, "finish", time.time())
    writer.join()
    assert history.read(snap, "out/a.md") == b"written by both\n"
    assert history.git("fsck", "--strict", "--no-dangling", check=False).strip() == ""


def test_a_lock_a_killed_writer_left_is_taken_over(tmp_path: Path, monkeypatch):
    """A writer killed midway leaves its lock: the next snapshot waits a while, then
    writes the object itself."""
    monkeypatch.setattr(git_objects, "LOCK_WAIT", 0.2)
    ws = project(tmp_path)
    history = History(ws)
    history.take("a", 1, "start", time.time())
    (tmp_path / "out" / "a.md").write_text("left half-written\n")
    lock, _ = _being_written(history, b"left half-written\n")
    lock.write_bytes(b"half")

    snap = history.take("a", 1, "finish", time.time())
    assert history.read(snap, "out/a.md") == b"left half-written\n"
    assert not lock.exists()
