"""Faults of the machine under a run (issue 20, points 6, 7 and 9), made for real: a tmpfs that
fills up and a read-only mount (each in a private mount namespace made by `unshare`, so the
mount goes away with the script even if the test dies), a runner killed with SIGKILL while its
worker's command runs, a model server nobody listens on."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support.chat_server import ChatServer, answer, tool_call

GOAL = "Does learning-rate warmup help a small MLP?"
PYTHON = sys.executable


def in_mount_namespace(script: str, *args: str, timeout: float = 300) -> None:
    """Run a bash `script` in a private mount namespace (root: `unshare --mount`; otherwise
    with a user namespace mapping us to root), failing the test when it fails."""
    prefix = ["unshare", "--mount"] if os.geteuid() == 0 else ["unshare", "-rm"]
    proc = subprocess.run(
        [*prefix, "bash", "-c", script, "script", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "LIGHTSCIENTIST_MODEL": ""},
    )
    assert proc.returncode == 0, (proc.stdout, proc.stderr)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ------------------------------------------------------------------ 6: disk full


DISK_FULL = f"""
set -u
cd "$1"; mkdir mnt; mount -t tmpfs -o size=$2 tmpfs mnt
{PYTHON} -m lightscientist_jupyter research "{GOAL}" --mode auto --workspace mnt/ws \
    > out1 2> err1; echo $? > rc1
cp mnt/ws/.lightscientist/state.json state1.json
cat /dev/zero > mnt/filler 2> /dev/null   # still full: not a byte left
{PYTHON} -m lightscientist_jupyter resume --workspace mnt/ws > out_full 2> err_full
echo $? > rc_full
cp mnt/ws/.lightscientist/state.json state_full.json
rm mnt/filler; mount -o remount,size=512m mnt   # space freed
{PYTHON} -m lightscientist_jupyter resume --workspace mnt/ws > out2 2> err2; echo $? > rc2
cp mnt/ws/.lightscientist/state.json state2.json
ls mnt/ws/paper > paper2
"""


@pytest.mark.slow
def test_a_full_disk_stops_the_run_with_one_line_and_resume_goes_on(tmp_path):
    in_mount_namespace(DISK_FULL, str(tmp_path), "3m")
    err = read(tmp_path / "err1")
    assert read(tmp_path / "rc1").strip() == "1", err
    assert "Traceback" not in err and "Errno" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert re.match(
        r"lightscientist research: disk full while writing (the checkpoint database )?/", lines[0]
    ), err
    assert lines[0].endswith(": free space and run `lightscientist resume`"), err
    first = json.loads(read(tmp_path / "state1.json"))
    assert first["status"] == "stopped", first
    assert first["reason"] == lines[0].removeprefix("lightscientist research: ")
    assert f" at stage {first['stage']}: " in first["reason"]

    # resumed while the disk is still full: one line again, and the project as it was
    err = read(tmp_path / "err_full")
    assert read(tmp_path / "rc_full").strip() == "1", err
    assert "Traceback" not in err and "Errno" not in err and len(err.splitlines()) == 1, err
    assert err.startswith("lightscientist resume: disk full while writing /"), err
    assert err.rstrip().endswith(": free space and run `lightscientist resume`"), err
    assert json.loads(read(tmp_path / "state_full.json")) == first

    # nothing was lost: once there is room, resume carries the project to its end
    assert read(tmp_path / "rc2").strip() == "0", read(tmp_path / "err2")
    assert "Traceback" not in read(tmp_path / "err2")
    assert read(tmp_path / "out2").strip().splitlines()[-1] == "done"
    second = json.loads(read(tmp_path / "state2.json"))
    assert (
        second["status"] == "done"
        and second["history"][: len(first["history"])] == (first["history"])
    )
    assert "paper.tex" in read(tmp_path / "paper2").split()


# ------------------------------------------------------------------ 7: read-only workspace


READ_ONLY = f"""
set -u
cd "$1"; mkdir mnt; mount -t tmpfs -o size=64m tmpfs mnt
{PYTHON} -m lightscientist_jupyter research "{GOAL}" --workspace mnt/ws > out0 2> err0
mount -o remount,ro mnt
for c in research resume status; do
    if [ $c = research ]; then args=(research "{GOAL}"); else args=($c); fi
    {PYTHON} -m lightscientist_jupyter "${{args[@]}}" --workspace mnt/ws > out_$c 2> err_$c
    echo $? > rc_$c
done
{PYTHON} -m lightscientist_jupyter research "{GOAL}" --workspace mnt/other > out_new 2> err_new
echo $? > rc_new
"""


@pytest.mark.slow
def test_a_read_only_workspace_is_one_line_and_exit_2(tmp_path):
    in_mount_namespace(READ_ONLY, str(tmp_path))
    for name in ("resume", "research"):
        err = read(tmp_path / f"err_{name}")
        assert read(tmp_path / f"rc_{name}").strip() == "2", err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert "cannot be written (a read-only file system)" in err, err
    err_new = read(tmp_path / "err_new")  # checked before anything is made
    assert len(err_new.strip().splitlines()) == 1, err_new
    assert f"{tmp_path}/mnt cannot be written (a read-only file system)" in err_new, err_new
    assert read(tmp_path / "rc_new").strip() == "2"
    # reading still works: status shows the project as it was
    assert read(tmp_path / "rc_status").strip() == "0", read(tmp_path / "err_status")
    assert read(tmp_path / "out_status").strip().splitlines()[-1] == "waiting_user"


# ------------------------------------------------------------------ 7: unreachable server


def test_an_unreachable_model_server_is_named_in_the_last_line(tmp_path):
    ws = tmp_path / "project"
    proc = subprocess.run(
        [PYTHON, "-m", "lightscientist_jupyter", "research", GOAL, "--model", "some-model"]
        + ["--base-url", "http://127.0.0.1:9/v1", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "OPENAI_API_KEY": "not-a-real-key"},
    )
    assert proc.returncode in (1, 2), (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    last = (proc.stdout + proc.stderr).strip().splitlines()[-1]
    assert "http://127.0.0.1:9/v1" in last and "onnect" in last, last


# ------------------------------------------------------------------ 9: after a SIGKILL


def _scripted(body: dict[str, Any]) -> dict[str, Any]:
    """Supervisor: start one worker, then wait. Worker: start a long command group, then hang
    (the runner is killed meanwhile). A one-tool request (the model check) calls its tool."""
    tools = [t["function"] for t in body.get("tools") or []]
    names = {t["name"] for t in tools}
    last = body["messages"][-1]
    if "start_worker" in names:
        if last["role"] == "tool":
            return answer("continue")
        return tool_call("start_worker", label="sleeper", instructions="run the long job")
    if "execute" in names:
        if last["role"] == "tool":
            time.sleep(30)  # the model "thinks" until the runner is killed
            return answer("still thinking")
        return tool_call("execute", command="(sleep 300; echo late) & sleep 300 & echo started")
    if len(tools) == 1:
        props = tools[0].get("parameters", {}).get("properties", {})
        return tool_call(tools[0]["name"], **{k: "ok" for k in props})
    return answer("ok")


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2 :].split()
            if fields[0] != "Z" and int(fields[2]) == pgid:
                members.append(int(entry))
    return members


@pytest.mark.slow
def test_resume_after_a_sigkill_ends_the_dead_runs_commands_first(tmp_path):
    server = ChatServer().answer_with(_scripted)
    ws = tmp_path / "project"
    args = ["--model", "some-model", "--base-url", server.base_url, "--workspace", str(ws)]
    env = {**os.environ, "OPENAI_API_KEY": "not-a-real-key"}
    runner = subprocess.Popen(
        [PYTHON, "-m", "lightscientist_jupyter", "research", GOAL, "--mode", "auto", *args]
        + ["--sandbox", "none"],  # a sandbox (bwrap --die-with-parent) would end them itself
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    groups: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not groups:
            markers = list((ws / ".lightscientist" / "workers").glob("*/commands/*.pgid"))
            groups = [int(m.read_text().split()[0]) for m in markers]
            time.sleep(0.1)
        assert groups, "the worker's command never started"
        time.sleep(0.5)  # the shell has returned; its two sleeps live on in the group
        runner.send_signal(signal.SIGKILL)
        runner.wait(10)
    finally:
        runner.kill()
        runner.wait()
    (pgid,) = groups
    assert len(_group_members(pgid)) >= 2  # orphaned, still running
    stray = ws / ".lightscientist" / ".supervisor.json.k1ll3d.tmp"  # as a killed write leaves it
    stray.write_text('{"task_id": "half')

    shown = subprocess.run(
        [PYTHON, "-m", "lightscientist_jupyter", "workers", "--json", "--workspace", str(ws)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    statuses = {r["id"]: r["status"] for r in json.loads(shown.stdout)}
    assert statuses.get("w1") == "interrupted", statuses

    resume = subprocess.Popen(
        [PYTHON, "-m", "lightscientist_jupyter", "resume", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        line = resume.stdout.readline()  # printed before the run starts anything
        assert f"ended 1 process group(s) a killed run left running: {pgid}" in line, line
        assert _group_members(pgid) == []
        assert not stray.exists()
    finally:
        resume.send_signal(signal.SIGTERM)
        try:
            resume.wait(30)
        except subprocess.TimeoutExpired:
            resume.kill()
            resume.wait()
        resume.stdout.close()
        resume.stderr.close()
        server.close()
        for leftover in [pgid, *_leftover_groups(ws)]:
            if _group_members(leftover):
                os.killpg(leftover, signal.SIGKILL)


def _leftover_groups(ws: Path) -> list[int]:
    markers = (ws / ".lightscientist" / "workers").glob("*/commands/*.pgid")
    return [int(m.read_text().split()[0]) for m in markers]


HELD_SAVE = f"""
set -u
cd "$1"; mkdir mnt; mount -t tmpfs -o size=2m tmpfs mnt
{PYTHON} - mnt/ws > out 2> err <<'PY'
import sys, time
from lightscientist_jupyter._faults import watch_storage_faults
from lightscientist_jupyter.controller import ResearchController
from lightscientist_jupyter.workspace import Workspace
c = ResearchController.create(Workspace.at(sys.argv[1]), "A goal", mode="manual")
heard = []
watch_storage_faults(heard.append)
line = {{"worker": "w1", "task_id": c.task_id, "run": "r1", "run_s": 0.1, "model_calls": 1,
         "input_tokens": 10, "output_tokens": 5}}
c.charge(line)  # within 0.5 s of the last save: held back, for a timer to write
with open(sys.argv[1] + "/filler", "wb") as fh:  # meanwhile the disk fills up
    try:
        while True:
            fh.write(b"x" * 65536)
            fh.flush()
    except OSError:
        pass
time.sleep(1.5)
print(len(heard), heard[0] if heard else "")
PY
echo $? > rc
"""


@pytest.mark.slow
def test_usage_totals_held_back_meet_a_full_disk_with_one_report_not_a_traceback(tmp_path):
    """The totals of a model call wait up to 0.5 s to reach state.json; the timer that writes
    them found the disk full and printed its thread's traceback (a CI run of the disk-full
    test above). It reports the fault instead, which stops the run with one line."""
    in_mount_namespace(HELD_SAVE, str(tmp_path))
    assert read(tmp_path / "rc").strip() == "0", read(tmp_path / "err")
    assert "Traceback" not in read(tmp_path / "err"), read(tmp_path / "err")
    count, fault = read(tmp_path / "out").split(" ", 1)
    assert count == "1" and "disk full while writing" in fault and "state.json" in fault, fault
