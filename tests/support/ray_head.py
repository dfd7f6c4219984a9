"""A real local Ray head for the Ray job tests: `ray start --head --block --num-cpus 1` in its
own process group (so ending it ends exactly this head, not another one on the machine), a
short temporary folder (Ray's socket paths must stay short), and a bounded wait for its
dashboard's Jobs API."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

START_S = 150.0
"""The longest the head may take to answer (its start-up on a loaded two-core machine)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def require_ray() -> None:
    """Skip without Ray, except on CI, where the ray extra is installed and must be there."""
    try:
        import ray.job_submission  # noqa: F401
    except ImportError:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip("Ray is not installed (pip install 'lightscientist-jupyter[ray]')")


class RayHead:
    def __init__(self) -> None:
        require_ray()
        self.tmp = Path(tempfile.mkdtemp(prefix="lsray", dir="/tmp"))
        self.port = free_port()
        self.address = f"http://127.0.0.1:{self.port}"
        ray = str(Path(sys.executable).parent / "ray")
        env = {**os.environ, "RAY_TMPDIR": str(self.tmp), "RAY_USAGE_STATS_ENABLED": "0"}
        env.pop("RAY_ADDRESS", None)
        self.log = open(self.tmp / "head.log", "wb")
        self.proc = subprocess.Popen(
            [ray, "start", "--head", "--block", "--num-cpus", "1", "--include-dashboard=true",
             "--dashboard-host", "127.0.0.1", "--dashboard-port", str(self.port),
             "--port", str(free_port()), "--temp-dir", str(self.tmp), "--disable-usage-stats"],
            stdout=self.log, stderr=subprocess.STDOUT, env=env, start_new_session=True,
        )  # fmt: skip
        self._wait()

    def _wait(self) -> None:
        from ray.job_submission import JobSubmissionClient

        deadline = time.monotonic() + START_S
        while True:
            if self.proc.poll() is not None:
                tail = self.tail()
                self.stop()
                raise AssertionError(f"the Ray head exited: {tail}")
            try:
                JobSubmissionClient(self.address).list_jobs()
                return
            except Exception:
                if time.monotonic() > deadline:
                    tail = self.tail()
                    self.stop()
                    raise AssertionError(f"no Ray head within {START_S:g} s: {tail}") from None
                time.sleep(1.0)

    def tail(self) -> str:
        return (self.tmp / "head.log").read_text(errors="replace")[-2000:]

    def stop(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(self.proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                continue
            time.sleep(1.0)  # its children (raylet, gcs) leave after the leader
        self.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)
