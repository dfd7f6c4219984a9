"""Links a sandboxed command plants in the workspace, met by what the kernel reads and writes
there: the job runner, `cite`, the library, the tool cache, the worker's home, the command
logs and their markers, and the workers' file tools while a command swaps a folder for a link.

Each link is made by a real command in a real bubblewrap sandbox (the workspace is writable
from it, and so are the tool cache and the worker's home), except in the command logs' folder,
which a sandboxed command cannot write: there the link comes from an unsandboxed command (the
`--sandbox none` mode). The kernel then does its part for real; nothing outside the workspace
may be read or written, and a refusal is one line naming the file and the link.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from support.literature_servers import ENV, LiteratureServer, Work

from lightscientist_jupyter.beneath import PathRefused
from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.literature import config as settings
from lightscientist_jupyter.literature.service import Literature
from lightscientist_jupyter.runtime.jobs.manager import JobManager, JobRefused
from lightscientist_jupyter.runtime.literature_tools import literature_tools
from lightscientist_jupyter.runtime.sandbox import command_env, shell
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.workspace import Workspace

NO_LINKS = "LightScientist does not follow links in a workspace"
_RUNS = itertools.count(1)


pytestmark = pytest.mark.usefixtures("needs_bwrap")


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    """A project workspace (its state folder made, as a run makes it)."""
    (tmp_path / "ws" / ".lightscientist").mkdir(parents=True)
    return Workspace.at(tmp_path / "ws")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder of the user's beside the workspace, holding a file they care about."""
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "bashrc").write_text("original\n")
    return folder


def home_of(ws: Workspace, worker: str = "w1") -> Path:
    home = ws.workers_dir / worker / "home"
    home.mkdir(parents=True, exist_ok=True)
    return home


def sandboxed(ws: Workspace, command: str, worker: str = "w1") -> shell.CommandResult:
    """Run `command` as a worker's command in the bubblewrap sandbox (through the command
    runner the tools use) and check that it worked."""
    home = home_of(ws, worker)
    result = shell.run_command(
        command,
        cwd=ws.root,
        env=command_env.worker_env(ws.root, home),
        log_path=ws.workers_dir / worker / "commands" / f"plant-{next(_RUNS)}.log",
        timeout=60,
        confinement=ShellPolicy(sandbox=True).confinement(ws.root, home),
    )
    assert result.exit_code == 0, result.output
    return result


def one_line(text: str) -> str:
    assert "\n" not in text.strip() and "Traceback" not in text, text
    return text


def jobs_of(ws: Workspace) -> JobManager:
    return JobManager(ws, EventBus(), shell.ProcessGroups())


def refused_job(jobs: JobManager, ws: Workspace, name: str) -> str:
    """The line a sandboxed job of worker w1 is refused with."""
    conf = ShellPolicy(sandbox=True).confinement(ws.root, home_of(ws))
    with pytest.raises(JobRefused) as refused:
        jobs.submit("w1", "echo ssh-ed25519 AAAA attacker", name, confinement=conf)
    return one_line(str(refused.value))


# ---------------------------------------------------------------- the job runner


def test_a_dangling_job_log_link_refuses_the_job_and_creates_nothing(ws, outside):
    sandboxed(ws, f"mkdir -p jobs && ln -s {outside}/authorized_keys jobs/train.log")
    jobs = jobs_of(ws)
    assert refused_job(jobs, ws, "train") == (
        f"{ws.root}/jobs/train.log: is a symbolic link (to {outside}/authorized_keys); {NO_LINKS}"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]
    assert jobs.all() == [] and (ws.root / "jobs" / "train.log").is_symlink()

    # the whole `jobs/` folder swapped for a link: refused too, and nothing lands outside
    sandboxed(ws, f"rm -r jobs && ln -s {outside} jobs")
    assert refused_job(jobs, ws, "again") == (
        f"{ws.root}/jobs: is a symbolic link (to {outside}); {NO_LINKS}"
    )
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]


def test_a_link_in_the_workers_home_is_not_followed_by_the_job_runner(ws, outside):
    """The job's exit status goes to `<home>/.jobs/<id>.exit`; the home is writable from the
    sandbox. The kernel used to remove the status file through a planted `.jobs` link."""
    (outside / "j1.exit").write_text("keep me\n")
    sandboxed(ws, f"ln -s {outside} ~/.jobs")
    jobs = jobs_of(ws)
    assert refused_job(jobs, ws, "quick") == (
        f"{home_of(ws)}/.jobs: is a symbolic link (to {outside}); {NO_LINKS}"
    )
    assert (outside / "j1.exit").read_text() == "keep me\n"
    assert jobs.all() == []


# ---------------------------------------------------------------- cite and the library

RADAM = Work(
    "On the Variance of the Adaptive Learning Rate and Beyond",
    ["Liyuan Liu", "Jiawei Han"],
    2020,
    doi="10.5555/radam.2020",
    arxiv="1908.03265",
    openalex="W2970971581",
)


@pytest.fixture
def servers(monkeypatch):
    started = {kind: LiteratureServer(kind, [RADAM]) for kind in ENV}
    for kind, server in started.items():
        monkeypatch.setenv(ENV[kind], server.url)
    monkeypatch.setenv("LIGHTSCIENTIST_LITERATURE_PACE", "0")
    monkeypatch.delenv("LIGHTSCIENTIST_LIBRARY", raising=False)
    yield started
    for server in started.values():
        server.close()


def test_cite_does_not_copy_a_file_a_references_link_points_to(ws, outside, servers):
    (outside / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY----- TOPSECRET\n")
    sandboxed(ws, f"mkdir -p paper && ln -s {outside}/id_ed25519 paper/references.bib")
    cite = {t.name: t for t in literature_tools(ws.root, "t1")}["cite"]
    answer = cite.invoke({"id": "10.5555/radam.2020"})
    assert one_line(answer) == (
        f"Error: cannot cite into {ws.root}/paper/references.bib: is a symbolic link "
        f"(to {outside}/id_ed25519); {NO_LINKS}"
    )
    assert (ws.root / "paper" / "references.bib").is_symlink()
    found = subprocess.run(["grep", "-rl", "TOPSECRET", str(ws.root)], capture_output=True)
    assert found.stdout == b"", found.stdout  # nothing of the key was copied in
    # once the link is gone, cite writes its own file
    sandboxed(ws, "rm paper/references.bib")
    assert json.loads(cite.invoke({"id": "10.5555/radam.2020"}))["added"] is True
    assert "doi = {10.5555/radam.2020}" in (ws.root / "paper" / "references.bib").read_text()


def test_a_library_in_the_workspace_reads_no_linked_file(ws, outside):
    (outside / "private.bib").write_text("@article{x, title = {TOPSECRET private notes}}\n")
    sandboxed(
        ws,
        "mkdir -p refs && printf '@article{a, title = {Warmup for small networks}}\\n' "
        f"> refs/mine.bib && ln -s {outside}/private.bib refs/planted.bib && "
        f"ln -s {outside} refs/more",
    )
    settings.save(ws.root, [str(ws.root / "refs")], None)  # `--library refs`
    library = Literature(ws.root).library
    assert library is not None
    assert [paper.title for paper, _ in library.records] == ["Warmup for small networks"]


# ---------------------------------------------------------------- the tool cache


def test_the_kernel_never_writes_the_font_cache_through_a_link(ws, outside, tmp_path, monkeypatch):
    user_cache = tmp_path / "user-mpl"
    user_cache.mkdir()
    (user_cache / "fontlist-v390.json").write_text('{"ttflist": []}\n')
    monkeypatch.setenv("MPLCONFIGDIR", str(user_cache))
    (outside / "mpl").mkdir()
    cache = ws.state_dir / "cache"
    sandboxed(ws, f"rm -rf {cache}/matplotlib && ln -s {outside}/mpl {cache}/matplotlib")

    env = command_env.worker_env(ws.root, home_of(ws))  # what the next command's start does
    assert env["XDG_CACHE_HOME"] == str(cache)
    assert list((outside / "mpl").iterdir()) == []
    assert (cache / "matplotlib").is_symlink()
    sandboxed(ws, "echo the next command runs")  # and the run goes on


# ---------------------------------------------------------------- command logs and markers


@pytest.fixture
def groups():
    groups = shell.ProcessGroups()
    yield groups
    groups.kill_all()


def test_command_logs_and_markers_are_never_written_through_a_link(ws, outside, groups):
    commands = ws.workers_dir / "w1" / "commands"
    # a sandboxed command cannot reach the command logs' folder at all …
    sandboxed(ws, "echo first")
    tried = shell.run_command(
        f"ln -s {outside}/profile {commands}/0002.log",
        cwd=ws.root,
        env=command_env.worker_env(ws.root, home_of(ws)),
        log_path=commands / "try.log",
        confinement=ShellPolicy(sandbox=True).confinement(ws.root, home_of(ws)),
    )
    assert tried.exit_code != 0 and "No such file or directory" in tried.output  # not there
    # … an unsandboxed one (`--sandbox none`) can: the kernel still follows none of its links
    backend = WorkspaceBackend(ws.root, worker_id="w1", groups=groups, policy=ShellPolicy())
    planted = backend.execute(
        f"ln -s {outside}/profile {commands}/0002.log && "
        f"ln -s {outside}/bashrc {commands}/0003.pgid"
    )
    assert planted.exit_code == 0, planted.output
    refused = backend.execute("echo hello")  # its log would be 0002.log
    assert refused.exit_code == 126
    assert one_line(refused.output).endswith(
        f"{commands}/0002.log: is a symbolic link (to {outside}/profile); {NO_LINKS}."
    )
    assert backend.execute("echo again").output.strip() == "again"  # its marker: 0003.pgid
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]
    assert (outside / "bashrc").read_text() == "original\n"


def test_a_cache_or_home_link_left_unsandboxed_is_never_bound_into_a_sandbox(ws, outside, groups):
    """bwrap follows a link it is asked to bind: a cache (or a home) that a `--sandbox none`
    command turned into a link to the user's folder would hand that folder, writable, to the
    next sandboxed worker's commands. Its sandbox is refused instead, in one line, when the
    worker's shell is made (a sandboxed command cannot replace either: both are mount
    points inside its sandbox)."""
    cache = ws.state_dir / "cache"
    backend = WorkspaceBackend(ws.root, worker_id="w1", groups=groups, policy=ShellPolicy())
    planted = backend.execute(f"rm -rf {cache} && ln -s {outside} {cache} && echo planted")
    assert planted.exit_code == 0, planted.output
    with pytest.raises(PathRefused) as refused:
        WorkspaceBackend(ws.root, worker_id="w2", groups=groups, policy=ShellPolicy(sandbox=True))
    assert str(refused.value) == f"{cache}: is a symbolic link (to {outside}); {NO_LINKS}"
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]


def test_a_marker_link_cannot_make_the_next_run_kill_a_process(ws, outside):
    """`end_recorded` (a run starting after a killed one) ends the process groups its markers
    name; a marker planted as a link to a file naming another process is not read."""
    victim = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        start = shell._start_time(victim.pid)
        (outside / "pgid").write_text(f"{victim.pid} {start}\n")
        commands = ws.workers_dir / "w1" / "commands"
        commands.mkdir(parents=True)
        unsandboxed = shell.run_command(
            f"ln -s {outside}/pgid {commands}/0001.pgid",
            cwd=ws.root,
            env=command_env.worker_env(ws.root, home_of(ws)),
            log_path=commands / "plant.log",
        )
        assert unsandboxed.exit_code == 0
        assert shell.end_recorded(ws.workers_dir) == []
        assert victim.poll() is None, "a process named by a planted link was killed"
        assert not (commands / "0001.pgid").exists() and (outside / "pgid").exists()
    finally:
        os.killpg(victim.pid, signal.SIGKILL)
        victim.wait()


# ---------------------------------------------------------------- the file tools, racing


SWAPPER = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
for _ in range(10**7):  # `data` and the link `d.link` change places, atomically
    libc.renameat2(-100, b"data", -100, b"d.link", 2)  # AT_FDCWD, RENAME_EXCHANGE
"""


def test_a_folder_swapped_for_a_link_mid_call_is_never_followed(ws, outside, groups):
    """deepagents' backend resolved a path, then opened what it resolved: a command swapping
    a folder for a link in between made the kernel read and write outside."""
    (ws.root / "data").mkdir()
    (ws.root / "data" / "a.txt").write_text("inside\n")
    (outside / "a.txt").write_text("OUTSIDE\n")
    policy = ShellPolicy(sandbox=True)
    backend = WorkspaceBackend(ws.root, worker_id="w1", groups=groups, policy=policy, timeout=60)
    (ws.root / "swap.py").write_text(SWAPPER)
    assert backend.execute(f"ln -s {outside} d.link && python swap.py &").exit_code == 0
    seen: dict[str, int] = {"inside": 0, "refused": 0}
    deadline = time.monotonic() + 4.0
    while time.monotonic() < deadline:
        read = backend.read("/data/a.txt")
        if read.file_data is not None:
            assert read.file_data["content"] == "inside\n"
            seen["inside"] += 1
        else:
            seen["refused"] += 1
        backend.write("/data/new.txt", "x\n")
    groups.kill_all()
    assert seen["inside"] > 0 and seen["refused"] > 0, seen  # the race did happen
    assert sorted(p.name for p in outside.iterdir()) == ["a.txt", "bashrc"]
    assert (outside / "a.txt").read_text() == "OUTSIDE\n"
