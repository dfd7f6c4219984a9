"""What snapshots leave out (`history/ignore.py`): the secrets' defaults, a workspace's
`.lightscientistignore` read like a `.gitignore`, and a snapshot that names what it left out."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lightscientist_jupyter.history.ignore import DEFAULT, IGNORE_FILE, IgnoreRules
from lightscientist_jupyter.history.snapshots import History
from tests.history.test_snapshots import project


@pytest.mark.parametrize(
    "rel", [".env", "keys/server.pem", "id_rsa", "deploy/id_ed25519.pub", ".netrc", "tls/a.key"]
)
def test_files_that_hold_secrets_are_left_out_by_default(rel):
    assert IgnoreRules.of_text(None).why(rel) == DEFAULT


@pytest.mark.parametrize("rel", ["results.csv", "env.py", "notes/.envrc", "keyboard.md"])
def test_other_files_are_kept(rel):
    assert IgnoreRules.of_text(None).why(rel) is None


def test_the_workspaces_file_adds_patterns_and_takes_defaults_back():
    rules = IgnoreRules.of_text(
        "# scratch work\n*.bin\nscratch/\n/top.txt\ndata/raw/*.csv\n!id_map.csv\n"
    )
    assert rules.why("models/a.bin") == IGNORE_FILE
    assert rules.why("scratch/") == IGNORE_FILE and rules.why("scratch") is None  # a folder
    assert rules.why("top.txt") == IGNORE_FILE and rules.why("sub/top.txt") is None  # anchored
    assert rules.why("data/raw/x.csv") == IGNORE_FILE and rules.why("x.csv") is None
    assert rules.why("id_map.csv") is None and rules.why("id_rsa") == DEFAULT  # the last match
    assert rules.excludes("scratch/deep/file.txt") and rules.excludes("out/__pycache__/m.pyc")
    assert not rules.excludes("out/model.py")


def test_a_snapshot_leaves_secrets_out_and_names_them(tmp_path: Path):
    ws = project(tmp_path)
    (tmp_path / ".env").write_text("OPENAI_API_KEY=sk-abcdefghijklmnopqrstuv\n")
    (tmp_path / "id_map.csv").write_text("id,name\n")
    (tmp_path / "id_keys").mkdir()
    (tmp_path / "id_keys" / "a.txt").write_text("x")
    (tmp_path / IGNORE_FILE).write_text("!id_map.csv\n")
    history = History(ws)
    history.take("a", 1, "start", time.time())

    (snap,) = history.log()
    assert set(snap.added) == {
        ".lightscientist/state.json", IGNORE_FILE, "PROCESS.md", "id_map.csv", "out/a.md"
    }  # fmt: skip
    assert snap.skipped == ("id_keys/ (secret, by default)", ".env (secret, by default)")
    assert history.read(history.head() or "", ".env") is None
