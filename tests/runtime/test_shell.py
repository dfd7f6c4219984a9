"""The workers' shell: own process group, nothing left alive, no stdin, capped output, a clean
environment, and cancellation that stops a long command."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.runtime import plain_spec, tool_call
from support.waiting import wait_for

from lightscientist_jupyter.errors import RuntimeLayerError
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.sandbox import command_env, shell
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups, group_alive, run_command
from lightscientist_jupyter.runtime.session.lifecycle import CANCEL_NOTICE


def gone(pgid: int, within: float = 5.0) -> bool:
    """Whether no live process of group `pgid` is left within `within` seconds."""
    deadline = time.monotonic() + within
    while group_alive(pgid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root.resolve()


@pytest.fixture
def groups():
    groups = ProcessGroups()
    yield groups
    groups.kill_all()


def run(root: Path, command: str, **options) -> shell.CommandResult:
    options.setdefault("timeout", 20)
    return run_command(
        command,
        cwd=root,
        env=command_env.worker_env(root, root / "home"),
        log_path=root / "logs" / "cmd.log",
        **options,
    )


def first_line_pgid(result: shell.CommandResult) -> int:
    return int(result.output.splitlines()[0])


# ----------------------------------------------------------------------------- run_command


def test_a_command_runs_in_the_workspace_and_its_output_is_logged(root):
    result = run(root, "pwd; echo out; echo err >&2; exit 3")
    assert result.exit_code == 3
    assert result.output.splitlines() == [str(root), "out", "err"]
    assert result.log_path.read_text() == f"{root}\nout\nerr\n"
    assert not (result.truncated or result.timed_out or result.cancelled)


def test_a_command_runs_in_its_own_process_group(root):
    result = run(root, "echo $$; ps -o pgid= -p $$")
    pgid = first_line_pgid(result)
    assert int(result.output.splitlines()[1]) == pgid != os.getpgid(0)


def test_a_background_job_lives_until_the_deadline_then_its_group_is_killed(root, groups):
    started = time.monotonic()
    result = run(root, "echo $$; sleep 1000 &", timeout=2, groups=groups, owner="w1")
    assert time.monotonic() - started < 2, "the command returns when its shell exits"
    pgid = first_line_pgid(result)
    assert group_alive(pgid) and groups.owned_by("w1") == [pgid]
    assert gone(pgid, within=7), "sleep 1000 & outlived its command's timeout"
    assert time.monotonic() - started >= 2
    # The reaper forgets the group once its log is settled, a moment after the kill.
    wait_for(lambda: not groups.owned_by("w1"), "the reaper to forget the group", within=5)


def test_without_a_group_registry_a_background_job_is_killed_at_once(root):
    result = run(root, "echo $$; sleep 1000 &")
    assert gone(first_line_pgid(result), within=3)


def test_a_command_past_its_timeout_is_stopped_with_its_whole_group(root):
    started = time.monotonic()
    result = run(root, "echo $$; sleep 1000 & sleep 1000", timeout=1)
    assert time.monotonic() - started < 5
    assert result.timed_out and "[command timed out after 1 s" in result.output
    assert gone(first_line_pgid(result), within=3)


def test_a_group_that_ignores_sigterm_gets_sigkill(root):
    started = time.monotonic()
    result = run(root, "trap '' TERM; echo $$; sleep 1000", timeout=0.5)
    assert result.timed_out
    assert gone(first_line_pgid(result), within=3)
    assert time.monotonic() - started < shell.GRACE_S + 4


def test_a_command_waiting_for_input_returns_at_once(root):
    started = time.monotonic()
    result = run(
        root, "read x; echo got:$x; cat; python -c 'import sys; print(len(sys.stdin.read()))'"
    )
    assert time.monotonic() - started < 5
    assert result.output.splitlines() == ["got:", "0"]


def test_a_huge_output_is_capped_for_the_model_and_kept_whole_on_disk(root):
    result = run(root, "python -c \"print('BEGIN' + 'x' * 2_000_000 + 'END')\"")
    assert result.exit_code == 0 and result.truncated
    assert len(result.output) < shell.HEAD_CHARS + shell.TAIL_CHARS + 300
    assert result.output.startswith("BEGIN") and result.output.rstrip().endswith("END")
    assert "characters not shown; full output in logs/cmd.log" in result.output
    kept = result.log_path.read_text()
    assert len(kept) == len("BEGIN") + 2_000_000 + len("END") + 1
    assert kept.startswith("BEGIN") and kept.endswith("END\n")


def test_a_cancel_flag_stops_a_running_command(root):
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    started = time.monotonic()
    result = run(root, "echo $$; sleep 30", cancel=cancel)
    assert time.monotonic() - started < 4
    assert result.cancelled and "the worker is being cancelled" in result.output
    assert gone(first_line_pgid(result), within=3)


def test_kill_owner_stops_only_that_workers_groups(root, groups):
    a = first_line_pgid(run(root, "echo $$; sleep 1000 &", groups=groups, owner="a"))
    b = first_line_pgid(run(root, "echo $$; sleep 1000 &", groups=groups, owner="b"))
    groups.kill_owner("a")
    assert gone(a, within=3) and group_alive(b)
    groups.kill_all()
    assert gone(b, within=3)
    shell.kill_group(a)  # a group already gone is fine


# ----------------------------------------------------------------------------- the environment


def test_the_worker_environment_has_no_keys_and_the_project_python_first(root, groups, monkeypatch):
    secrets = {
        "OPENAI_API_KEY": "sk-test-abcdefghijklmnop1234",
        "ANTHROPIC_API_KEY": "sk-ant-test-abcdefghijklmn",
        "GITHUB_TOKEN": "ghp_testtesttesttesttesttest",
        "HTTPS_PROXY": "http://proxy:3128",
        "LIGHTSCIENTIST_MODEL": "openai:gpt-4.1-mini",
    }
    for key, value in secrets.items():
        monkeypatch.setenv(key, value)
    backend = WorkspaceBackend(root, worker_id="w7", cancel=threading.Event(), groups=groups)

    env_output = backend.execute("env").output
    env = dict(line.split("=", 1) for line in env_output.splitlines() if "=" in line)
    for key, value in secrets.items():
        assert key not in env and value not in env_output
    bindir = str(Path(sys.executable).parent)
    assert env["PATH"].split(":")[0] == bindir
    assert env["HOME"] == str(root / ".lightscientist" / "workers" / "w7" / "home")
    assert env["MPLBACKEND"] == "Agg"
    assert backend.execute("command -v python").output.strip() == f"{bindir}/python"
    assert backend.execute("pwd").output.strip() == str(root)
    logs = sorted((root / ".lightscientist" / "workers" / "w7" / "commands").iterdir())
    assert [p.name for p in logs] == ["0001.log", "0002.log", "0003.log"]


def test_the_backend_caps_output_and_keeps_the_log(root, groups):
    backend = WorkspaceBackend(root, worker_id="w2", cancel=threading.Event(), groups=groups)
    response = backend.execute("head -c 2000000 /dev/zero | tr '\\0' 'a'")
    assert response.exit_code == 0 and response.truncated
    assert len(response.output) < shell.HEAD_CHARS + shell.TAIL_CHARS + 300
    log = root / ".lightscientist" / "workers" / "w2" / "commands" / "0001.log"
    assert log.stat().st_size == 2_000_000
    assert f"full output in {log.relative_to(root)}" in response.output


def test_a_command_that_cannot_start_is_a_tool_error(root, groups):
    backend = WorkspaceBackend(root, worker_id="w4", cancel=threading.Event(), groups=groups)
    too_long = backend.execute("cat > big.txt <<'EOF'\n" + "x" * 200_000 + "\nEOF\n")
    assert too_long.exit_code == 126
    assert "Argument list too long" in too_long.output
    assert "Write long content with write_file" in too_long.output
    nul = backend.execute("echo a\x00b")
    assert nul.exit_code == 126 and "could not be started" in nul.output
    assert backend.execute("echo still fine").output == "still fine\n"


def test_the_backend_timeout_argument_bounds_a_command(root, groups):
    backend = WorkspaceBackend(
        root, worker_id="w3", cancel=threading.Event(), groups=groups, timeout=30
    )
    started = time.monotonic()
    response = backend.execute("sleep 1000", timeout=1)
    assert time.monotonic() - started < 5
    assert "timed out after 1 s" in response.output


# ----------------------------------------------------------------------------- cancelling a worker


def test_cancelling_a_worker_during_a_long_command_stops_it(
    chat_server, chat_model, make_runtime, updates, ws
):
    chat_server.play(
        tool_call("execute", command="echo $$ > pgid.txt; sleep 30"),
        tool_call(
            "finalize_cancel", notes="stopped during the long sleep; pgid.txt is worth keeping"
        ),
    )
    events = []
    bus = EventBus()
    bus.subscribe(events.append)
    runtime = make_runtime(chat_model, retries=0, bus=bus)
    worker = runtime.start(plain_spec("Run a long command."))
    marker = ws.root / "pgid.txt"
    deadline = time.monotonic() + 20
    while not (marker.exists() and marker.read_text().strip()):
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    pgid = int(marker.read_text())
    assert group_alive(pgid)

    started = time.monotonic()
    record = runtime.cancel(worker, timeout=10)
    assert time.monotonic() - started < 5
    assert gone(pgid, within=2)

    assert record.status == "cancelled"
    assert record.result == {
        "kind": "finalize_cancel",
        "notes": "stopped during the long sleep; pgid.txt is worth keeping",
    }
    assert updates.of(worker)[-1].status == "cancelled"
    assert updates.of(worker)[-1].result == record.result
    assert [e.type for e in events if e.worker_id == worker].count("worker.cancelled") == 1
    second = chat_server.requests[1]["messages"]
    assert any(
        m["role"] == "tool" and "the worker is being cancelled" in (m["content"] or "")
        for m in second
    )
    assert second[-1] == {"role": "user", "content": CANCEL_NOTICE}
    delivery = (ws.workers_dir / worker / "agent-run.md").read_text()
    assert "**cancelled**" in delivery and "pgid.txt is worth keeping" in delivery
    with pytest.raises(
        RuntimeLayerError, match="is cancelled; a finished session cannot be resumed"
    ):
        runtime.resume(worker, message="go on")


def test_a_worker_that_ignores_the_cancel_notice_gets_a_fallback_result(
    chat_server, chat_model, make_runtime, ws
):
    chat_server.play(
        tool_call("execute", command="echo $$ > pgid.txt; sleep 30"),
        tool_call("execute", command="sleep 30"),
    )
    runtime = make_runtime(chat_model, retries=0)
    worker = runtime.start(plain_spec("Run long commands."))
    deadline = time.monotonic() + 20
    while not (ws.root / "pgid.txt").exists():
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)

    started = time.monotonic()
    record = runtime.cancel(worker, timeout=1)
    assert time.monotonic() - started < 5
    assert record.status == "cancelled"
    assert record.result["kind"] == "cancel_fallback"
    assert "did not finalize within 1 s" in record.result["notes"]
    assert runtime.wait(worker, 5), "the worker's turn kept running after the cancel"


# ----------------------------------------------------------------------------- tool caches

FONT_PROBE = "import matplotlib.font_manager as fm; print(fm.findfont('DejaVu Sans'))"


def test_a_new_projects_first_figure_uses_the_users_font_list(root, tmp_path, monkeypatch):
    user = tmp_path / "user-mpl"  # the user's own matplotlib cache, built by matplotlib itself
    built = subprocess.run(
        [sys.executable, "-c", FONT_PROBE],
        env={**os.environ, "MPLCONFIGDIR": str(user)},
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (font_list,) = user.glob("fontlist-v*.json")
    monkeypatch.setenv("MPLCONFIGDIR", str(user))

    command_env.worker_env(root, root / "home")  # what every worker command of the project gets
    copy = root / ".lightscientist" / "cache" / "matplotlib" / font_list.name
    assert copy.read_bytes() == font_list.read_bytes()
    copied = copy.stat().st_mtime_ns
    result = run(root, f'python -c "{FONT_PROBE}"')

    assert result.exit_code == 0, result.output
    assert result.output.strip() == built.stdout.strip()
    assert copy.stat().st_mtime_ns == copied  # matplotlib read the copy: no scan, no rewrite


def test_a_projects_own_font_list_is_kept_and_no_user_list_is_no_error(root, tmp_path, monkeypatch):
    own = root / ".lightscientist" / "cache" / "matplotlib"
    own.mkdir(parents=True)
    (own / "fontlist-v1.json").write_text("{}")
    user = tmp_path / "user-mpl"
    user.mkdir()
    (user / "fontlist-v2.json").write_text('{"user": 1}')
    monkeypatch.setenv("MPLCONFIGDIR", str(user))
    command_env.worker_env(root, root / "home")
    assert sorted(p.name for p in own.iterdir()) == ["fontlist-v1.json"]

    other = tmp_path / "other-ws"
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "nothing-here"))
    command_env.worker_env(other, other / "home")
    assert not (other / ".lightscientist" / "cache" / "matplotlib").exists()
