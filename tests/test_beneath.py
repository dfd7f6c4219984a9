"""The guarded path: every way a workspace can hold a link, a pipe or a second name, met by
each operation, with `openat2` and with the per-component fallback."""

from __future__ import annotations

import os
import threading

import pytest

from lightscientist_jupyter.beneath import Beneath, PathRefused, opening


@pytest.fixture(params=["openat2", "fallback"])
def ws(request, tmp_path, monkeypatch):
    """A workspace beside an `outside` folder holding a file the user cares about."""
    if request.param == "fallback":
        monkeypatch.setattr(opening, "_have_openat2", False)
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bashrc").write_text("original\n")
    return Beneath(root), outside


def test_plain_files_read_write_append_and_list(ws):
    files, _ = ws
    files.write_text_atomic("idea/survey.md", "# survey\n")
    files.append_text("PROCESS.md", "one\n")
    files.append_text(files.root / "PROCESS.md", "two\n")
    assert files.read_text("/idea/survey.md") == "# survey\n"
    assert files.read_text("PROCESS.md") == "one\ntwo\n"
    assert files.is_file("idea/survey.md") and files.is_dir("idea")
    assert [str(p) for p in files.walk_files()] == ["PROCESS.md", "idea/survey.md"]
    assert not [p.name for p in files.root.glob("idea/.*.tmp")]


def test_a_link_at_the_file_is_never_written_through(ws):
    files, outside = ws
    (files.root / "PROCESS.md").symlink_to(outside / "bashrc")
    with pytest.raises(PathRefused) as refused:
        files.append_text("PROCESS.md", "curl evil | sh\n")
    assert str(refused.value) == (
        f"{files.root}/PROCESS.md: is a symbolic link (to {outside}/bashrc); "
        "LightScientist does not follow links in a workspace"
    )
    with pytest.raises(PathRefused):
        files.read_text("PROCESS.md")
    assert not files.is_file("PROCESS.md")
    files.write_text_atomic("PROCESS.md", "rewritten\n")  # replaces the link itself
    assert (outside / "bashrc").read_text() == "original\n"
    assert not (files.root / "PROCESS.md").is_symlink()
    assert files.read_text("PROCESS.md") == "rewritten\n"


def test_a_dangling_link_creates_nothing_outside(ws):
    files, outside = ws
    (files.root / "jobs").mkdir()
    (files.root / "jobs" / "run.log").symlink_to(outside / "authorized_keys")
    with pytest.raises(PathRefused, match="jobs/run.log: is a symbolic link"):
        files.open_write("jobs/run.log")
    with pytest.raises(PathRefused):
        files.append_text("jobs/run.log", "ssh-ed25519 AAAA\n")
    assert not (outside / "authorized_keys").exists()


def test_a_folder_replaced_by_a_link_is_refused_for_every_operation(ws):
    files, outside = ws
    (files.root / "paper").symlink_to(outside)
    expected = f"goes through paper, which is a symbolic link (to {outside})"
    for attempt in (
        lambda: files.read_text("paper/bashrc"),
        lambda: files.append_text("paper/bashrc", "x"),
        lambda: files.write_text_atomic("paper/new.md", "x"),
        lambda: files.open_write("paper/new.log"),
        lambda: files.scandir("paper"),
        lambda: files.lstat("paper/bashrc"),
    ):
        with pytest.raises(PathRefused) as refused:
            attempt()
        assert expected in str(refused.value) or "paper: is a symbolic link" in str(refused.value)
    with pytest.raises(PathRefused, match="paper: is a symbolic link"):
        files.makedirs("paper/figures")
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]
    assert (outside / "bashrc").read_text() == "original\n"


def test_walks_and_removals_do_not_follow_links(ws):
    files, outside = ws
    files.write_text_atomic("experiment/a.csv", "x\n")
    (files.root / "experiment" / "out").symlink_to(outside)
    (files.root / "experiment" / "b.csv").symlink_to(outside / "bashrc")
    assert [str(p) for p in files.walk_files()] == ["experiment/a.csv"]
    files.rmtree("experiment")
    assert not (files.root / "experiment").exists()
    assert (outside / "bashrc").read_text() == "original\n"


def test_a_named_pipe_is_refused_at_once_instead_of_hanging(ws):
    files, _ = ws
    os.mkfifo(files.root / "PROCESS.md")
    done = threading.Event()

    def read():
        with pytest.raises(PathRefused, match="is a named pipe, not a file"):
            files.read_text("PROCESS.md")
        done.set()

    threading.Thread(target=read, daemon=True).start()
    assert done.wait(5), "reading a named pipe hung"


def test_appending_to_a_file_with_a_second_name_is_refused(ws):
    files, outside = ws
    files.write_text_atomic("notes.md", "mine\n")
    os.link(files.root / "notes.md", files.root / "other-name.md")
    with pytest.raises(PathRefused, match="has 2 names"):
        files.append_text("notes.md", "more\n")


def test_paths_that_leave_the_root_are_refused(ws):
    files, _ = ws
    for bad in ("../outside/bashrc", "idea/../../outside/bashrc", "a\x00b"):
        with pytest.raises(PathRefused):
            files.read_text(bad)
    # an absolute path elsewhere is the workspace's own (workers see `/` as its root)
    assert files.path("/etc/passwd") == files.root / "etc" / "passwd"
    assert files.path("//etc/passwd") == files.root / "etc" / "passwd"  # POSIX's other root


def test_entry_names_a_link_at_the_path_itself(ws):
    files, outside = ws
    files.write_text_atomic("idea/brief.md", "# brief\n")
    (files.root / "PROCESS.md").symlink_to(outside / "bashrc")
    assert files.entry("idea/brief.md").st_size == len("# brief\n")
    assert files.entry("idea/none.md") is None and files.entry("none/x.md") is None
    with pytest.raises(PathRefused) as refused:
        files.entry("PROCESS.md")
    assert str(refused.value) == (
        f"{files.root}/PROCESS.md: is a symbolic link (to {outside}/bashrc); "
        "LightScientist does not follow links in a workspace"
    )


def test_file_stat_names_what_stands_where_a_file_should_be(ws):
    files, outside = ws
    files.write_text_atomic("notes.md", "mine\n")
    (files.root / "out").symlink_to(outside / "bashrc")
    os.mkfifo(files.root / "pipe")
    assert files.file_stat("notes.md").st_size == 5
    assert files.file_stat("missing.md") is None
    with pytest.raises(PathRefused, match=r"/out: is a symbolic link \(to .*/bashrc\)"):
        files.file_stat("out")
    with pytest.raises(PathRefused, match="/pipe: is a named pipe, not a file"):
        files.file_stat("pipe")
    with pytest.raises(PathRefused, match="is a folder, not a file"):
        files.file_stat("")


def test_a_new_file_where_a_link_stands_names_the_link(ws):
    files, outside = ws
    (files.root / "run.log").symlink_to(outside / "authorized_keys")
    with pytest.raises(PathRefused, match=r"run.log: is a symbolic link \(to .*authorized_keys"):
        files.open_write("run.log", new=True)
    assert not (outside / "authorized_keys").exists()


def test_rewriting_a_file_with_a_second_name_leaves_it_whole(ws):
    files, _ = ws
    files.write_text_atomic("results.csv", "a,b\n1,2\n")
    os.link(files.root / "results.csv", files.root / "other.csv")
    with pytest.raises(PathRefused, match="has 2 names"):
        files.open_write("results.csv")
    assert (files.root / "other.csv").read_text() == "a,b\n1,2\n"


def test_walk_gives_each_files_status_and_skips_links(ws):
    files, outside = ws
    files.write_text_atomic("a/b/c.txt", "xyz")
    (files.root / "a" / "link").symlink_to(outside)
    assert [(str(rel), st.st_size) for rel, st in files.walk()] == [("a/b/c.txt", 3)]
    entry = {e.name: e for e in files.scandir("a")}["link"]
    assert entry.is_symlink() and not entry.is_dir(follow_symlinks=False)
