"""A command's own network (`network = true`): the internet, not the host. Real bubblewrap,
real pasta and nftables, real listeners: on the host (TCP on its loopback and its other
addresses, a unix socket in its abstract namespace) and on "another machine" (a network
namespace on a veth pair: a server standing for the internet, and 169.254.169.254 standing
for a cloud's metadata service). A command, or a job, reaches the other machine's server and
nothing of the host's, and not the metadata address even with its socket bound to the device;
its pasta ends with its sandbox; a network that cannot be set up runs nothing. A coding agent
with `network = true` (the fake agent, a real subprocess run as a worker) gets the same
network in its sandbox, and one with `network = false` none.

Without bubblewrap, pasta or nftables these tests are skipped, except under CI (`CI=true`),
where they fail: CI installs them (scripts/setup). Without root (to make the veth pair) the
tests that need the other machine are skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support import outside_net
from support.outside_net import HOST_END, METADATA, WORLD, HostListener
from support.waiting import wait_for

from lightscientist_jupyter.events import EventBus
from lightscientist_jupyter.runtime.jobs.manager import JobManager
from lightscientist_jupyter.runtime.metering.meter import UsageMeter
from lightscientist_jupyter.runtime.models.resolver import resolve_model
from lightscientist_jupyter.runtime.protocol import render_header
from lightscientist_jupyter.runtime.runtime import ExecutionRuntime
from lightscientist_jupyter.runtime.sandbox import bwrap, netstack
from lightscientist_jupyter.runtime.sandbox.sandbox import WorkspaceBackend
from lightscientist_jupyter.runtime.sandbox.shell import ProcessGroups
from lightscientist_jupyter.runtime.sandbox.spawn import ShellPolicy
from lightscientist_jupyter.runtime.session.worker_record import WorkerRecord
from lightscientist_jupyter.runtime.types import WorkerSpec
from lightscientist_jupyter.values.agents import AgentSpec
from lightscientist_jupyter.vocab import AgentPermissions, WorkerStatus
from lightscientist_jupyter.workspace import Workspace

PROBE = Path(__file__).resolve().parents[1] / "support" / "net_probe.py"
FAKE = str(Path(__file__).resolve().parents[1] / "support" / "fake_acp_agent.py")


@pytest.fixture(autouse=True)
def needs_the_stack() -> None:
    why = bwrap.problem() or netstack.problem(shutil.which("bwrap") or "bwrap")
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"bubblewrap, pasta and nftables are needed under CI: {why}")
        pytest.skip(why)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    (root / ".lightscientist").mkdir(parents=True)
    shutil.copy(PROBE, root / "net_probe.py")
    return root


@pytest.fixture
def shell(root: Path):
    groups = ProcessGroups()

    def make(*, network: bool) -> WorkspaceBackend:
        policy = ShellPolicy(sandbox=True, network=network)
        return WorkspaceBackend(
            root, worker_id="w1", cancel=threading.Event(), groups=groups, policy=policy
        )

    yield make
    groups.kill_all()


@pytest.fixture
def host():
    listener = HostListener()
    yield listener
    listener.close()


def probe(sh: WorkspaceBackend, *targets: str) -> dict[str, str]:
    result = sh.execute("python net_probe.py " + " ".join(targets))
    lines = dict(line.split(" ", 1) for line in result.output.strip().splitlines())
    assert list(lines) == list(targets), result.output
    return lines


def stacks_alive() -> list[str]:
    """The pasta processes and watchers this module's sandboxes started that still run."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "ls-netstack" in line:
            found.append(line)
    return found


def test_with_network_a_command_reaches_the_outside_but_nothing_of_the_host(shell, host, outside):
    port, there = host.port, outside.port
    # the host's listeners and the other machine's, reachable from here (the test's side)
    assert outside_net.host_address() != WORLD
    seen = probe_here(f"tcp:{WORLD}:{there}", f"tcp:{METADATA}:{there}")
    assert seen == [f"ok hello-from-{WORLD}", f"ok hello-from-{METADATA}"]
    outside.log.write_text("")

    result = probe(
        shell(network=True),
        f"tcp:127.0.0.1:{port}",  # the host's loopback
        f"tcp:{outside_net.host_address()}:{port}",  # the host's address on its main device
        f"tcp:{HOST_END}:{port}",  # a host address the sandbox's namespace does not have
        f"abstract:{host.abstract}",  # the host's abstract unix sockets
        f"tcp:{METADATA}:{there}",  # the link-local metadata address
        f"bound:{METADATA}:{there}",  # the same from a socket bound to the device
        f"bound:{HOST_END}:{port}",
        f"tcp:{WORLD}:{there}",  # a server on another machine: "the internet"
        "route",
        "dns",
    )
    assert result[f"tcp:{WORLD}:{there}"] == f"ok hello-from-{WORLD}"
    assert host.accepted == [] and outside.accepted() == [WORLD]
    assert result[f"abstract:{host.abstract}"] == "ECONNREFUSED"
    assert result[f"tcp:127.0.0.1:{port}"] == "ECONNREFUSED"  # its own loopback
    for target in (f"{HOST_END}:{port}", f"{METADATA}:{there}"):
        assert result[f"tcp:{target}"] == "EHOSTUNREACH", result  # the table's rejection
        assert result[f"bound:{target}"] == "EHOSTUNREACH", result
    # a network of its own: a default route through pasta, and the host's name servers
    assert result["route"] != "none"
    assert result["dns"] == (" ".join(nameservers()) or "none")


def test_without_network_there_is_none(shell, host):
    result = probe(shell(network=False), f"tcp:127.0.0.1:{host.port}", "route")
    assert result == {f"tcp:127.0.0.1:{host.port}": "ECONNREFUSED", "route": "none"}
    assert host.accepted == []


def test_the_network_stack_ends_with_the_sandbox(shell):
    sh = shell(network=True)
    started = sh.execute("sleep 1.5 & echo started")
    assert started.output.strip() == "started"
    assert any("pasta" in line for line in stacks_alive())  # the job in the background
    deadline = time.monotonic() + 8
    while stacks_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stacks_alive() == []


def test_a_job_with_network_gets_its_own_too_and_its_stack_ends_with_it(root, host):
    jobs = JobManager(Workspace.at(root), EventBus(), ProcessGroups())
    home = root / ".lightscientist" / "workers" / "w1" / "home"
    home.mkdir(parents=True)
    confinement = ShellPolicy(sandbox=True, network=True).confinement(root, home)
    job = jobs.submit(
        "w1",
        f"python net_probe.py tcp:127.0.0.1:{host.port} route",
        "probe",
        confinement=confinement,
    )
    wait_for(lambda: not jobs.get(job.id).running, "the job's end", within=30)
    assert jobs.get(job.id).status == "succeeded"
    lines = (root / "jobs" / "probe.log").read_text().splitlines()
    assert lines[0] == f"tcp:127.0.0.1:{host.port} ECONNREFUSED"
    assert lines[1] != "route none"
    assert host.accepted == []
    wait_for(lambda: stacks_alive() == [], "the end of the job's pasta", within=8)


def test_a_network_that_cannot_be_set_up_runs_nothing_and_says_why(shell, root, monkeypatch):
    sh = shell(network=True)  # the sandbox's argv is made with bwrap on PATH
    tools = root.parent / "bin-without-pasta"
    tools.mkdir()
    for name in ("nsenter", "setsid", "nft"):
        (tools / name).symlink_to(shutil.which(name, path="/usr/bin:/usr/sbin:/bin:/sbin"))
    monkeypatch.setenv("PATH", str(tools))
    result = sh.execute("echo ran > ran.txt")
    assert result.output.strip() == (
        "[the sandbox's network could not be set up: pasta is not installed; install the "
        "'passt' package]"
    )
    assert result.exit_code != 0
    assert not (root / "ran.txt").exists()


def agent_worker(root: Path, *targets: str, network: bool) -> WorkerRecord:
    """The record of the fake agent, with `network`, worked a stage whose task has it run
    the probe in its own terminal (into `net.txt`): a worker of a runtime whose commands are
    sandboxed without network (the agent's table alone asks for it)."""
    agent = AgentSpec("fake", (sys.executable, FAKE), (), AgentPermissions.ALLOW, network)
    fields = {"role": "worker", "stage": "a", "outputs": ["out/a.md"]}
    text = render_header(
        "LightScientist task", fields, "run net.txt: python net_probe.py " + " ".join(targets)
    )
    ws = Workspace.at(root)
    runtime = ExecutionRuntime(
        ws,
        resolve_model("offline"),
        checkpointer="memory",
        shell_policy=ShellPolicy(sandbox=True),
        meter=UsageMeter(ws.state_dir / "usage.jsonl", model="offline"),
    )
    try:
        wid = runtime.start(WorkerSpec(message=text, stage="a", task_id="a#1", agent=agent))
        assert runtime.wait(wid, 60)
        return runtime.get(wid)
    finally:
        runtime.close()


def agent_probe(root: Path, *targets: str, network: bool) -> dict[str, str]:
    """The probe's results as the agent saw them (`agent_worker`)."""
    record = agent_worker(root, *targets, network=network)
    assert record.status == WorkerStatus.COMPLETED, record.error
    output = (root / "net.txt").read_text()
    lines = dict(line.split(" ", 1) for line in output.strip().splitlines())
    assert list(lines) == list(targets), output
    return lines


def test_an_agent_with_network_reaches_the_outside_but_nothing_of_the_host(root, host, outside):
    port, there = host.port, outside.port
    result = agent_probe(
        root,
        f"tcp:127.0.0.1:{port}",
        f"tcp:{outside_net.host_address()}:{port}",
        f"tcp:{HOST_END}:{port}",
        f"abstract:{host.abstract}",
        f"tcp:{METADATA}:{there}",
        f"bound:{METADATA}:{there}",
        f"tcp:{WORLD}:{there}",
        "route",
        network=True,
    )
    assert result[f"tcp:{WORLD}:{there}"] == f"ok hello-from-{WORLD}"
    assert host.accepted == [] and outside.accepted() == [WORLD]
    assert result[f"abstract:{host.abstract}"] == "ECONNREFUSED"
    assert result[f"tcp:127.0.0.1:{port}"] == "ECONNREFUSED"
    refused = (f"tcp:{HOST_END}:{port}", f"tcp:{METADATA}:{there}", f"bound:{METADATA}:{there}")
    for target in refused:  # the table's rejection
        assert result[target] == "EHOSTUNREACH", result
    assert result["route"] != "none"
    wait_for(lambda: stacks_alive() == [], "the end of the agent's pasta", within=8)


def test_an_agent_without_network_has_none(root, host, outside):
    result = agent_probe(
        root, f"tcp:127.0.0.1:{host.port}", f"tcp:{WORLD}:{outside.port}", "route", network=False
    )
    assert result == {
        f"tcp:127.0.0.1:{host.port}": "ECONNREFUSED",
        f"tcp:{WORLD}:{outside.port}": "ENETUNREACH",
        "route": "none",
    }
    assert host.accepted == [] and outside.accepted() == []


def test_an_agents_network_that_cannot_be_set_up_fails_its_worker_with_one_line(root, monkeypatch):
    tools = root.parent / "bin-without-pasta"
    tools.mkdir()
    for name in ("bwrap", "nsenter", "setsid", "nft"):
        (tools / name).symlink_to(shutil.which(name, path="/usr/bin:/usr/sbin:/bin:/sbin"))
    monkeypatch.setenv("PATH", str(tools))
    record = agent_worker(root, "route", network=True)
    assert record.status == WorkerStatus.FAILED
    assert record.error == (
        "agent 'fake': the sandbox's network could not be set up: pasta is not installed; "
        "install the 'passt' package"
    )
    assert not (root / "net.txt").exists()
    assert stacks_alive() == []


def probe_here(*targets: str) -> list[str]:
    """The probe's results from the test's own process (the host's network)."""
    out = subprocess.run(
        [sys.executable, str(PROBE), *targets], capture_output=True, text=True, timeout=30
    ).stdout
    return [line.split(" ", 1)[1] for line in out.strip().splitlines()]


def nameservers() -> list[str]:
    text = Path("/etc/resolv.conf").read_text()
    return [line.split()[1] for line in text.splitlines() if line.startswith("nameserver")]
