"""The bubblewrap sandbox of workers' commands, with real bwrap and real processes: what a
command inside cannot do (leave the workspace, read planted secrets, see or write the state
folder beyond its own home and the tool cache, reach a loopback server, see the test's
processes), the resource limits that stop it with a tool result naming the limit (memory for
the whole command, with a real memory cgroup), and the background job that does not outlive
its deadline. A command's own network (`network = true`) is tested in test_netstack.py.

Without a working bubblewrap these tests are skipped, except under CI (`CI=true`), where
they fail: CI installs it (scripts/setup).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from lightscientist_jupyter.runtime.sandbox.bwrap import program_binds
from lightscientist_jupyter.runtime.sandbox.cgroups import CommandCgroups
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups, group_alive
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.values.limits import Limits, parse_spec

pytestmark = pytest.mark.usefixtures("needs_bwrap")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / ".lightscientist").mkdir(parents=True)
    (root / ".lightscientist" / "state.json").write_text('{"status": "running"}\n')
    return root


@pytest.fixture
def groups():
    groups = ProcessGroups()
    yield groups
    groups.kill_all()


@pytest.fixture
def shell(root: Path, groups: ProcessGroups):
    """Makes a sandboxed worker's backend (its `execute` is the model's tool)."""
    cgroups = CommandCgroups()

    def make(*, limits: str = "", network: bool = False, **kw) -> WorkspaceBackend:
        policy = ShellPolicy(sandbox=True, overrides=parse_spec(limits), cgroups=cgroups)
        return WorkspaceBackend(
            root,
            worker_id=kw.pop("worker_id", "w1"),
            cancel=threading.Event(),
            groups=groups,
            policy=policy.for_stage(network, {}),
            **kw,
        )

    yield make
    groups.kill_all()
    cgroups.close()


def cmdlines() -> str:
    """Every process's command line on the machine, one per line."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                out.append((entry / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except OSError:
                continue
    return "\n".join(out)


class LoopbackServer:
    """A TCP server on 127.0.0.1 outside the sandbox; counts the connections it took."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            with conn:
                conn.sendall(b"hello-from-outside")

    def close(self) -> None:
        self._stop = True
        self.thread.join(2)
        self.sock.close()


@pytest.fixture
def server():
    srv = LoopbackServer()
    yield srv
    srv.close()


def connect_command(port: int) -> str:
    return (
        "python -c \"import socket; s = socket.create_connection(('127.0.0.1', "
        f'{port}), timeout=3); print(s.recv(64).decode())"'
    )


# ---------------------------------------------------------------- the file system


def test_a_command_cannot_write_outside_the_workspace(root, groups, shell, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    sh = shell()
    commands = [
        f"mkdir -p {outside} && echo x > {outside}/absolute.txt",
        "mkdir -p ../outside && echo x > ../outside/dotdot.txt",
        f"ln -s {outside} link && mkdir -p link && echo x > link/symlink.txt",
        "echo x > /usr/ls-sandbox-probe.txt",
        "echo x > /etc/ls-sandbox-probe.txt",
    ]
    for command in commands:
        sh.execute(command)
    assert sorted(p.name for p in outside.iterdir()) == []
    assert not Path("/usr/ls-sandbox-probe.txt").exists()
    assert not Path("/etc/ls-sandbox-probe.txt").exists()
    result = sh.execute("echo x > /usr/ls-sandbox-probe.txt")
    assert result.exit_code == 1
    assert "Read-only file system" in result.output
    assert (root / "link").is_symlink()  # it made the link; writing through it went nowhere


def test_a_command_writes_the_workspace_but_not_the_state_folder(root, groups, shell):
    sh = shell()
    result = sh.execute(
        "echo data > results.txt && echo x > .lightscientist/evil.txt; "
        "echo x >> .lightscientist/state.json; echo done"
    )
    assert (root / "results.txt").read_text() == "data\n"
    assert not (root / ".lightscientist" / "evil.txt").exists()
    assert (root / ".lightscientist" / "state.json").read_text() == '{"status": "running"}\n'
    assert result.output.count("Read-only file system") == 2


@pytest.mark.slow
def test_a_command_cannot_read_a_secret_planted_in_home_or_root(root, groups, shell):
    secret = f"TOPSECRET-{uuid.uuid4().hex}"
    planted = []
    for folder in {Path.home(), Path("/root")}:
        path = folder / f".ls-sandbox-secret-{uuid.uuid4().hex[:8]}"
        try:
            path.write_text(secret)
        except OSError:
            continue
        planted.append(path)
    assert planted, "no home folder to plant a secret in"
    try:
        sh = shell()
        reads = " ; ".join(f"cat {p}" for p in planted)
        result = sh.execute(f"{reads} ; cat ~/{planted[0].name} ; grep -rs TOPSECRET /root /home")
        assert secret not in result.output
        assert "No such file or directory" in result.output
    finally:
        for path in planted:
            path.unlink()


def test_of_the_state_folder_a_command_sees_only_its_home_and_the_tool_cache(root, shell):
    state = root / ".lightscientist"
    secret = f"SECRET-{uuid.uuid4().hex}"
    planted = [
        "checkpoints.sqlite",
        "checkpoints.sqlite-wal",
        "events.jsonl",
        "usage.jsonl",
        "supervisor.json",
        "recordings/run-0001.jsonl",
        "inbox/reply-1.json",
        "jobs/j1.json",
        "workers/w2/home/notes.txt",  # another worker's home
        "workers/w2/worker.json",
        "workers/w1/commands/3.log",  # its own command logs too
        "workers/w1/worker.json",
    ]
    for name in planted:
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_text(f"{secret}\n")
    sh = shell(worker_id="w1")
    reads = "; ".join(f"cat .lightscientist/{name}" for name in [*planted, "state.json"])
    result = sh.execute(f"{reads}; grep -rs SECRET .lightscientist; ls -A .lightscientist")
    assert secret not in result.output and '"status"' not in result.output
    assert result.output.count("No such file or directory") == len(planted) + 1, result.output
    assert result.output.strip().splitlines()[-2:] == ["cache", "workers"], result.output
    assert sh.execute("ls -A .lightscientist/workers").output.strip() == "w1"
    # its own home and the tool cache are there and writable; nothing else is
    wrote = sh.execute(
        "echo mine > $HOME/kept.txt && echo shared > $XDG_CACHE_HOME/kept.txt && echo ok; "
        "echo x > .lightscientist/new.txt; echo x > .lightscientist/workers/w2.txt; "
        "mkdir .lightscientist/workers/w2"
    )
    assert wrote.output.startswith("ok\n"), wrote.output
    assert wrote.output.count("Read-only file system") == 3, wrote.output
    assert (state / "workers" / "w1" / "home" / "kept.txt").read_text() == "mine\n"
    assert (state / "cache" / "kept.txt").read_text() == "shared\n"
    assert not (state / "new.txt").exists() and not (state / "workers" / "w2.txt").exists()
    assert (state / "state.json").read_text() == '{"status": "running"}\n'  # untouched
    for name in planted:
        assert (state / name).read_text() == f"{secret}\n"


def test_the_venv_python_runs_with_the_clean_environment(root, groups, shell, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-must-not-leak")
    sh = shell()
    result = sh.execute(
        "python -c \"import numpy, pandas, matplotlib, sys; print('ok', sys.prefix)\"; env"
    )
    assert result.exit_code == 0
    assert f"ok {sys.prefix}" in result.output
    assert "sk-test-must-not-leak" not in result.output
    assert f"HOME={root}/.lightscientist/workers/w1/home" in result.output


def test_the_workers_of_a_project_share_its_tool_cache_and_nothing_else_of_its_state(root, shell):
    first, second = shell(worker_id="w1"), shell(worker_id="w2")
    built = first.execute("python -c 'import matplotlib.font_manager'; ls $XDG_CACHE_HOME/*")
    assert built.exit_code == 0 and "fontlist-" in built.output, built.output
    # the second worker's figure finds the font list the first one built
    found = second.execute("python -c 'import matplotlib; print(matplotlib.get_cachedir())'")
    assert found.output.startswith(f"{root}/.lightscientist/cache/matplotlib\n"), found.output
    assert not (root / ".lightscientist" / "workers" / "w2" / "home" / ".cache").exists()
    escape = second.execute("echo x > $XDG_CACHE_HOME/../evil.txt; echo done")
    assert "done" in escape.output and not (root / ".lightscientist" / "evil.txt").exists()


def test_a_python_environment_under_tmp_is_not_hidden_by_the_private_tmp(
    root, groups, shell, monkeypatch, tmp_path_factory
):
    # as in a Binder replay or a CI job, whose virtual environment is made under /tmp
    env = tmp_path_factory.mktemp("venv-under-tmp")
    assert str(env).startswith("/tmp/"), env
    (env / "marker.txt").write_text("the environment is mounted\n")
    monkeypatch.setattr(sys, "exec_prefix", str(env))
    result = shell().execute(f"cat {env}/marker.txt; ls /tmp | wc -l")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("the environment is mounted\n"), result.output


# ---------------------------------------------------------------- network and processes


def test_a_loopback_server_outside_is_unreachable(root, groups, shell, server):
    result = shell().execute(connect_command(server.port))
    assert result.exit_code == 1
    assert "hello-from-outside" not in result.output
    assert "Connection refused" in result.output or "Network is unreachable" in result.output
    assert server.accepted == 0


def test_a_command_cannot_see_the_tests_processes(root, groups, shell):
    marker = f"ls-visible-{uuid.uuid4().hex[:8]}"
    outside = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)", marker], start_new_session=True
    )
    try:
        result = shell().execute(
            "for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; "
            f"kill -0 {outside.pid} && echo SIGNALLED-$((40 + 2))"
        )
        assert marker not in result.output
        assert "SIGNALLED-42" not in result.output
        assert "/bin/bash -c" in result.output  # it does see its own processes
    finally:
        outside.kill()
        outside.wait()


# ---------------------------------------------------------------- limits and lifetime


@pytest.mark.slow
def test_a_fork_bomb_is_stopped_by_the_process_limit(root, groups, shell):
    sh = shell(limits="procs=40", timeout=20)
    # the command's own shell waits with builtins only: once the bomb holds every process
    # slot, a `sleep` of its own would wait for one too (bash retries a fork for up to half a
    # minute), and on a busy machine the timeout came first
    wait_3s = "start=$SECONDS; while (( SECONDS - start < 3 )); do :; done"
    # and the bomb's own "fork: retry" lines go nowhere: they once filled the output's cap,
    # and the line after the bomb was cut away with the rest
    quiet_bomb = "bomb() { bomb | bomb & }; bomb 2>/dev/null"
    result = sh.execute(f"{quiet_bomb}; {wait_3s}; echo after-the-bomb")
    assert "[stopped by the process limit: procs=40;" in result.output
    assert "after-the-bomb" in result.output
    groups.kill_all()
    assert sh.execute("echo the worker goes on").output.strip() == "the worker goes on"


def test_a_memory_hog_is_stopped_by_the_memory_limit(root, groups, shell):
    result = shell(limits="mem=1G").execute('python -c "x = bytearray(3 << 30); print(len(x))"')
    assert result.exit_code == 1
    assert "MemoryError" in result.output
    assert "[stopped by the memory limit (address space): mem=1G;" in result.output


HOLD_300M = "python -c \"import time; x = b'x' * (300 << 20); time.sleep(2); print('held')\""


@pytest.fixture
def memory_cgroup() -> None:
    cgroups = CommandCgroups()
    try:
        if "memory" not in cgroups.controllers:
            pytest.skip("no memory cgroup can be made here (cgroup v1 or v2 memory controller)")
    finally:
        cgroups.close()


def test_the_memory_limit_binds_the_command_s_processes_together(root, shell, memory_cgroup):
    sh = shell(limits="mem=400M", timeout=30)
    four = sh.execute(f"for i in 1 2 3 4; do {HOLD_300M} & done; wait; echo after")
    held = [line for line in four.output.splitlines() if line == "held"]
    assert len(held) <= 1, four.output  # all four held their 300 MB before
    assert "after" in four.output  # the command's shell itself is not what was ended
    assert (
        "[stopped by the memory limit of the whole command, which ended 3 of its processes: "
        "mem=400M;" in four.output
    ) or "which ended 4 of its processes: mem=400M;" in four.output, four.output
    one = sh.execute(HOLD_300M)
    assert one.exit_code == 0 and one.output.strip() == "held", one.output


def test_cpu_and_file_size_limits_name_themselves(root, groups, shell):
    sh = shell(limits="cpu=1,fsize=1M")
    spin = sh.execute("python -c 'while True: pass'")
    assert spin.exit_code == 128 + 24  # SIGXCPU
    assert "[stopped by the CPU-time limit: cpu=1 s;" in spin.output
    big = sh.execute("head -c 5000000 /dev/zero > big.bin")
    assert (root / "big.bin").stat().st_size == 1 << 20
    assert "[stopped by the file-size limit: fsize=1M;" in big.output


def test_a_background_job_is_gone_after_the_timeout(root, groups, shell):
    started = time.monotonic()
    result = shell(timeout=2).execute("sleep 987.654 & echo started")
    assert result.output.strip() == "started"
    assert time.monotonic() - started < 1.5  # the command itself returned at once
    assert "987.654" in cmdlines()  # the job runs on, as it does unsandboxed ...
    deadline = time.monotonic() + 6
    while "987.654" in cmdlines() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "987.654" not in cmdlines()  # ... until the command's deadline
    assert not any(group_alive(g) for g in groups.owned_by("w1"))


def test_a_command_s_new_cgroup_outlives_another_command_s_sweep():
    """Two commands starting at once (two search nodes): making the second one's cgroups
    swept the first one's before its shell had joined them, and that command ran without its
    limits, an error line of the shell's at the head of its output."""
    cgroups = CommandCgroups()
    try:
        if not cgroups.parents:
            pytest.skip("no cgroup can be made here (no writable pids or memory hierarchy)")
        first = cgroups.make(Limits())
        second = cgroups.make(Limits())  # each make sweeps the ended commands' cgroups
        assert first is not None and second is not None
        assert all(path.is_dir() for path in first.paths + second.paths)
        folders = list(cgroups.parents)
    finally:
        cgroups.close()
    assert not any(path.exists() for path in first.paths + second.paths)
    assert not any(folder.exists() for folder in folders)


def test_an_agents_program_files_outside_the_sandboxs_folders_are_bound_read_only(tmp_path):
    script = tmp_path / "agents" / "my-agent.py"
    script.parent.mkdir()
    script.write_text("print()\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "tool.py").write_text("print()\n")
    named = [sys.executable, str(script), "--flag", str(workspace / "tool.py"), "/usr/bin/env"]
    assert program_binds(named, workspace) == ["--ro-bind", str(script), str(script)]


def test_an_npm_packages_program_brings_its_node_modules_folder(tmp_path):
    modules = tmp_path / "agents" / "node_modules"
    launcher = modules / "@acme" / "agent" / "bin" / "agent.js"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("// an npm package's launcher\n")
    (modules / ".bin").mkdir()
    (modules / ".bin" / "agent").symlink_to(launcher)
    (tmp_path / "ws").mkdir()
    named = [str(modules / ".bin" / "agent"), str(launcher)]
    assert program_binds(named, tmp_path / "ws") == ["--ro-bind", str(modules), str(modules)]
