"""The workers' file tools see only the workspace, through no link: `confine`,
`WorkspaceBackend`, and a real worker that tries to get out."""

from __future__ import annotations

import os
import threading
from pathlib import Path, PurePosixPath

import pytest
from langchain_core.messages import ToolMessage
from support.runtime import answer, checkpoint_messages, finish, plain_spec, tool_call

from lightscientist_jupyter.runtime.sandbox.sandbox import PathRefused, WorkspaceBackend, confine
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "data").mkdir(parents=True)
    (root / "data" / "a.txt").write_text("alpha\n")
    return root.resolve()


@pytest.fixture
def backend(root: Path):
    groups = ProcessGroups()
    yield WorkspaceBackend(
        root, worker_id="w1", cancel=threading.Event(), groups=groups, timeout=20
    )
    groups.kill_all()


# ----------------------------------------------------------------------------- confine


@pytest.mark.parametrize(
    "key, expected",
    [
        ("report..final.md", "report..final.md"),
        ("/report..final.md", "report..final.md"),
        ("/data/v1..v2/notes...md", "data/v1..v2/notes...md"),
        ("data/a.txt", "data/a.txt"),
        ("/data/a.txt", "data/a.txt"),
        ("./data/a.txt", "data/a.txt"),
        ("/", ""),
        ("/not-a-system-folder/x.md", "not-a-system-folder/x.md"),  # '/' is the workspace root
    ],
)
def test_confine_maps_paths_into_the_workspace(root, key, expected):
    assert confine(root, key) == PurePosixPath(expected)


def test_confine_accepts_real_absolute_paths_inside(root):
    assert confine(root, str(root / "data" / "a.txt")) == PurePosixPath("data/a.txt")
    assert confine(root, str(root)) == PurePosixPath("")


@pytest.mark.parametrize(
    "key, reason",
    [
        ("..", "uses '..'"),
        ("../x", "uses '..'"),
        ("/../x", "uses '..'"),
        ("data/../../x", "uses '..'"),
        (
            "/etc/passwd",
            "outside the workspace; '/' is the workspace root, so use a path like '/passwd'",
        ),
        ("/tmp", "outside the workspace"),
        ("~/secrets", "home folder"),
        ("", "empty path"),
        ("   ", "empty path"),
    ],
)
def test_confine_refuses_paths_that_leave(root, key, reason):
    with pytest.raises(PathRefused, match=reason.replace("(", r"\(").replace(".", r"\.")):
        confine(root, key)


def test_a_workspace_folder_named_like_a_system_folder_wins(root):
    (root / "etc").mkdir()
    assert confine(root, "/etc/passwd") == PurePosixPath("etc/passwd")


# ----------------------------------------------------------------------------- the backend


def test_names_with_double_dots_work_through_the_backend(backend, root):
    assert backend.write("/report..final.md", "final\n").error is None
    assert backend.read("/report..final.md").file_data["content"] == "final\n"
    assert backend.edit("/report..final.md", "final", "FINAL").error is None
    assert (root / "report..final.md").read_text() == "FINAL\n"
    assert backend.write("/v1..v2/a..b.txt", "x").error is None
    assert (root / "v1..v2" / "a..b.txt").is_file()


@pytest.mark.parametrize(
    "path",
    [
        "../escape.txt",
        "/../escape.txt",
        "/data/../../escape.txt",
        "/etc/passwd",
        "{outside}/escape.txt",
    ],
)
def test_paths_outside_are_refused_by_every_file_tool(backend, root, tmp_path, path):
    outside = tmp_path / "outside"  # a real folder beside the workspace, not the shared /tmp
    outside.mkdir()
    path = path.format(outside=outside)
    passwd = Path("/etc/passwd").read_bytes()
    assert "workspace" in backend.read(path).error
    assert "workspace" in backend.write(path, "x").error
    assert "workspace" in backend.edit(path, "root", "toor").error
    assert "workspace" in backend.delete(path).error
    assert "workspace" in backend.ls(path).error
    assert backend.download_files([path])[0].error == "permission_denied"
    assert backend.upload_files([(path, b"x")])[0].error == "permission_denied"
    assert Path("/etc/passwd").read_bytes() == passwd
    assert not (root.parent / "escape.txt").exists() and list(outside.iterdir()) == []


def test_a_symlink_made_with_the_shell_does_not_open_a_way_out(backend, root):
    made = backend.execute("ln -s /etc leak && ln -s /etc/hostname host && ls -l")
    assert made.exit_code == 0 and "leak -> /etc" in made.output

    for path in ("/leak/passwd", "leak/passwd"):
        refused = backend.read(path)
        assert refused.file_data is None
        assert refused.error.endswith(
            "goes through leak, which is a symbolic link (to /etc); "
            "LightScientist does not follow links in a workspace"
        )
    assert "/host: is a symbolic link (to /etc/hostname)" in backend.read("/host").error
    assert "/leak: is a symbolic link (to /etc)" in backend.ls("/leak").error
    assert "/leak: is a symbolic link (to /etc)" in backend.glob("*", path="/leak").error
    assert "/leak: is a symbolic link (to /etc)" in backend.grep("root", path="/leak").error
    assert "which is a symbolic link" in backend.write("/leak/evil.conf", "x").error
    assert "which is a symbolic link" in backend.edit("/leak/passwd", "root", "toor").error
    assert not Path("/etc/evil.conf").exists()

    # Searching the whole workspace does not wander through the link either.
    assert not [m for m in backend.grep("root", path="/").matches if "leak" in m["path"]]
    assert backend.glob("**/passwd").matches == []
    listed = [e["path"] for e in backend.ls("/").entries]
    assert "/data/" in listed and not [p for p in listed if "passwd" in p or "leak" in p]


def test_links_pointing_inside_are_refused_too(backend, root):
    """Changed with the guarded path: a link that stays inside the workspace is not followed
    either (a command can swap one for a link out at any moment); the file is used by its own
    path."""
    assert backend.execute("ln -s data inside && ln -s data/a.txt alias").exit_code == 0
    refused = backend.read("/inside/a.txt").error
    assert "goes through inside, which is a symbolic link (to data)" in refused
    assert "/alias: is a symbolic link (to data/a.txt)" in backend.write("/alias", "x").error
    assert backend.read("/data/a.txt").file_data["content"] == "alpha\n"
    assert [m["path"] for m in backend.grep("alpha").matches] == ["/data/a.txt"]
    assert (root / "data" / "a.txt").read_text() == "alpha\n"


def test_a_dangling_symlink_pointing_out_is_refused(backend, root, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink(outside / "created.txt", root / "dangling")
    for result in (
        backend.write("/dangling", "x"),
        backend.read("/dangling"),
        backend.edit("/dangling", "a", "b"),
    ):
        assert f"/dangling: is a symbolic link (to {outside}/created.txt)" in result.error
    assert backend.upload_files([("/dangling", b"x")])[0].error == "permission_denied"
    assert not (outside / "created.txt").exists()
    # Changed with the guarded path: delete removes the link itself (never what it points to)
    assert backend.delete("/dangling").error is None
    assert not os.path.lexists(root / "dangling") and list(outside.iterdir()) == []


@pytest.mark.parametrize(
    "path, reason",
    [
        ("/a\x00b.txt", "contains a NUL byte"),
        ("/" + "x" * 300, "File name too long"),
        ("/loop/a.txt", "a symbolic link (to loop2); LightScientist does not follow links"),
    ],
)
def test_odd_paths_are_tool_errors_not_exceptions(backend, root, path, reason):
    assert backend.execute("ln -s loop2 loop && ln -s loop loop2").exit_code == 0
    for result in (
        backend.read(path),
        backend.write(path, "x"),
        backend.edit(path, "a", "b"),
        backend.delete(path),
        backend.ls(path),
    ):
        assert reason in result.error


def test_the_state_folder_is_readable_but_not_writable(backend, root):
    state = root / ".lightscientist"
    (state / "skills").mkdir(parents=True)
    (state / "skills" / "a.md").write_text("# skill\n")
    (state / "state.json").write_text("{}")

    assert backend.read("/.lightscientist/skills/a.md").file_data["content"] == "# skill\n"
    for result in (
        backend.write("/.lightscientist/state.json", '{"hacked": 1}'),
        backend.write("/.lightscientist/new.txt", "x"),
        backend.write(str(state / "new.txt"), "x"),
        backend.edit("/.lightscientist/state.json", "{}", "[]"),
        backend.delete("/.lightscientist/state.json"),
        backend.delete("/.lightscientist"),
    ):
        assert "inside .lightscientist/, which belongs to LightScientist" in result.error
    assert (state / "state.json").read_text() == "{}"
    assert not (state / "new.txt").exists()


# ----------------------------------------------------------------------------- a real worker


def test_a_real_worker_trying_to_get_out_gets_tool_errors(
    chat_server, chat_model, make_runtime, ws
):
    chat_server.play(
        tool_call("execute", command="ln -s /etc leak"),
        tool_call("read_file", file_path="/leak/passwd"),
        tool_call("write_file", file_path="/../escape.txt", content="out"),
        tool_call("write_file", file_path="/.lightscientist/state.json", content="{}"),
        tool_call("write_file", file_path="/report..final.md", content="final\n"),
        tool_call("read_file", file_path="/odd\x00name.md"),
        tool_call("execute", command="echo a\x00b"),
        answer("I stayed inside."),
    )
    runtime = make_runtime(chat_model, retries=0)
    worker = runtime.start(plain_spec("Try the file tools."))
    record = finish(runtime, worker)

    assert record["status"] == "completed", record
    assert record["result"] == {"kind": "final_message", "text": "I stayed inside."}
    results = {
        m.tool_call_id: m.content
        for m in checkpoint_messages(runtime, record["thread_id"])
        if isinstance(m, ToolMessage)
    }
    assert "goes through leak, which is a symbolic link (to /etc)" in results["call_1"]
    assert "root:" not in results["call_1"]
    assert "traversal not allowed" in results["call_2"]  # deepagents' own check comes first
    assert "belongs to LightScientist" in results["call_3"]
    assert "report..final.md" in results["call_4"] and "rror" not in results["call_4"]
    assert "contains a NUL byte" in results["call_5"]
    assert "the command could not be started" in results["call_6"]
    assert (ws.root / "report..final.md").read_text() == "final\n"
    assert not (ws.root.parent / "escape.txt").exists()
    assert not ws.state_file.exists()
    # The refusals went back to the model as tool results, in its next requests.
    sent = [m.get("content") for m in chat_server.requests[2]["messages"] if m["role"] == "tool"]
    assert any("which is a symbolic link (to /etc)" in (c or "") for c in sent)
