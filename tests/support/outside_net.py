"""Real listeners for the network tests: on the host, and on "another machine".

`Outside` is a network namespace joined to the host by a veth pair, standing for everything
beyond the host with no internet at hand: its address 198.51.100.1 plays a server on the
internet, and 169.254.169.254 on it plays a cloud's metadata service (routed from the host,
as a real one is). The host's end of the pair gets 198.51.100.2: a host address that a
sandbox's namespace does not have. Making it needs root (veth, routes); it is gone when its
namespace's processes end. Its addresses and routes are fixed, so one exists on a host at a
time: making one waits (a file lock) while another test's, in another worker, lives.
`HostListener` is a TCP server on all the host's addresses and a
unix socket server in the host's abstract namespace, counting what reached them.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")
CLONE_NEWNET = 0x40000000
_LIBC = ctypes.CDLL(None, use_errno=True)
WORLD = "198.51.100.1"
HOST_END = "198.51.100.2"
METADATA = "169.254.169.254"
ONE_AT_A_TIME = Path(tempfile.gettempdir()) / "lightscientist-tests-outside.lock"
"""Held while an `Outside` lives: the tests of every worker share the host's routes."""
_SERVE = """
import socket, sys
srv = socket.create_server(("0.0.0.0", 0))
print(srv.getsockname()[1], flush=True)
while True:
    conn, _ = srv.accept()
    here = conn.getsockname()[0]
    with open(sys.argv[1], "a") as log:
        log.write(here + "\\n")
    conn.sendall(("hello-from-" + here).encode())
    conn.close()
"""


def _ip(*args: str, netns_of: int | None = None) -> None:
    prefix = ["nsenter", "--target", str(netns_of), "--net"] if netns_of else []
    subprocess.run([*prefix, "ip", *args], check=True, capture_output=True, timeout=10)


class Outside:
    """Another machine on a veth pair; `port` is its server's (on every address it has)."""

    def __init__(self, folder: Path) -> None:
        self.log = folder / "outside-accepted.txt"
        self.log.write_text("")
        self.device = f"lsh{uuid.uuid4().hex[:8]}"
        self.lock = ONE_AT_A_TIME.open("a")
        fcntl.flock(self.lock, fcntl.LOCK_EX)  # until another worker's `Outside` is closed
        self.holder: subprocess.Popen | None = None
        self.server: subprocess.Popen | None = None
        try:
            self.holder = subprocess.Popen(["unshare", "--net", "--", "sleep", "600"])
            self._wire()
        except BaseException:
            self.close()
            raise

    def _wire(self) -> None:
        assert self.holder is not None
        pid = self.holder.pid
        deadline = time.monotonic() + 5  # until `unshare` has made the namespace
        while os.readlink(f"/proc/{pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            if time.monotonic() > deadline:
                raise RuntimeError("unshare --net made no namespace")
            time.sleep(0.01)
        _ip("link", "add", self.device, "type", "veth", "peer", "name", "world0", "netns", str(pid))
        for args in (
            ("addr", "add", f"{WORLD}/24", "dev", "world0"),
            ("addr", "add", f"{METADATA}/32", "dev", "world0"),
            ("link", "set", "world0", "up"),
            ("link", "set", "lo", "up"),
            ("route", "add", "default", "dev", "world0"),
        ):
            _ip(*args, netns_of=pid)
        _ip("addr", "add", f"{HOST_END}/24", "dev", self.device)
        _ip("link", "set", self.device, "up")
        _ip("route", "add", f"{METADATA}/32", "dev", self.device)
        self.server = subprocess.Popen(
            ["nsenter", "--target", str(pid), "--net", sys.executable, "-c", _SERVE, str(self.log)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.server.stdout is not None
        self.port = int(self.server.stdout.readline())

    def inside(self, make: Callable[[], T]) -> T:
        """`make()`, called on a thread that has joined this machine's network namespace:
        the sockets it opens are this machine's (a server of the test's own process that
        listens on `WORLD`, which a sandbox reaches as it reaches the internet)."""
        made: list[T] = []
        failed: list[BaseException] = []

        def join_and_make() -> None:
            assert self.holder is not None
            fd = os.open(f"/proc/{self.holder.pid}/ns/net", os.O_RDONLY)
            try:  # setns(2) moves this thread alone (os.setns is Python 3.12's)
                if _LIBC.setns(fd, CLONE_NEWNET) != 0:
                    raise OSError(ctypes.get_errno(), "setns into the other machine failed")
                made.append(make())
            except BaseException as exc:
                failed.append(exc)
            finally:
                os.close(fd)

        thread = threading.Thread(target=join_and_make, name="outside-net")
        thread.start()
        thread.join(10)
        if failed:
            raise failed[0]
        return made[0]

    def accepted(self) -> list[str]:
        """The addresses of this machine that connections reached, in order."""
        return self.log.read_text().split()

    def close(self) -> None:
        for proc in (self.server, self.holder):
            if proc is not None:
                proc.kill()
                proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
        subprocess.run(["ip", "link", "del", self.device], capture_output=True, timeout=10)
        self.lock.close()  # the next `Outside` may be made


def can_make_outside() -> str | None:
    """Why `Outside` cannot be made here, or None."""
    if os.geteuid() != 0:
        return "making a veth pair and routes needs root"
    probe = f"lsp{uuid.uuid4().hex[:8]}"
    made = subprocess.run(
        ["ip", "link", "add", probe, "type", "veth", "peer", "name", f"{probe}p"],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        return f"no veth pair here ({made.stderr.strip()})"
    subprocess.run(["ip", "link", "del", probe], capture_output=True)
    return None


class HostListener:
    """A TCP server on all of the host's addresses and one in its abstract unix namespace."""

    def __init__(self) -> None:
        self.tcp = socket.create_server(("0.0.0.0", 0))
        self.port = self.tcp.getsockname()[1]
        self.abstract = f"ls-test-{uuid.uuid4().hex[:12]}"
        self.unix = socket.socket(socket.AF_UNIX)
        self.unix.bind("\0" + self.abstract)
        self.unix.listen()
        self.accepted: list[str] = []
        self._stop = False
        self.threads = [
            threading.Thread(target=self._serve, args=(s,), daemon=True)
            for s in (self.tcp, self.unix)
        ]
        for thread in self.threads:
            thread.start()

    def _serve(self, server: socket.socket) -> None:
        server.settimeout(0.2)
        while not self._stop:
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                here = conn.getsockname()
                self.accepted.append(str(here[0] if isinstance(here, tuple) else "abstract"))
                conn.sendall(b"hello-from-the-host")

    def close(self) -> None:
        self._stop = True
        for thread in self.threads:
            thread.join(2)
        self.tcp.close()
        self.unix.close()


def host_address() -> str:
    """The host's address on its default route's device (a sandbox's own network copies it)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("203.0.113.5", 9))  # no packet is sent: this only picks a route
        return str(probe.getsockname()[0])
    finally:
        probe.close()
