"""The network of a sandboxed command that may use it (`network = true`): the internet, not
the host.

Sharing the host's network would hand the command the host's loopback services (a database,
a Jupyter server), its abstract unix sockets (a session bus) and, on a cloud machine, the
link-local metadata address (169.254.169.254, the machine's credentials). Instead the command
keeps a network namespace of its own (bwrap's `--unshare-net`), wired to the outside by
`pasta` (Debian's package `passt`), a user-mode network stack: the command's packets reach
pasta on a tap device, and pasta carries each connection on with an ordinary socket of the
host. So:

- the namespace has its own loopback and its own abstract socket names: none of the host's;
- pasta maps nothing to the host: no port forwarded either way (`-t/-u/-T/-U none`), and the
  gateway's address is the real gateway, not the host's loopback (`--no-map-gw`);
- an nftables table in the namespace rejects what pasta would otherwise reach from the host
  itself: link-local addresses (169.254.0.0/16, fe80::/10), the host's own addresses and
  loopback. A rule, not a route: a socket bound to the device (`SO_BINDTODEVICE`, which
  needs no privilege) is sent past a `prohibit` route. The command holds no capability in
  the namespace, so it cannot change the table.

bwrap says its sandbox's pid; once the sandbox is made, the command's wrapper says so and
waits (`Handshake`); `attach` loads the table (`nsenter … nft`), attaches pasta, and only then
lets the command start; if a step fails, the sandbox is ended and the command's output says
why. pasta lives as long as the sandbox: a small watcher ends it when the pipe the sandbox's
PID 1 holds (bwrap's `--sync-fd`) is closed, which is when the sandbox has gone (also after
the kernel died, for a job that outlived it).
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import ipaddress
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

TOOLS = {"pasta": "passt", "nft": "nftables", "nsenter": "util-linux", "setsid": "util-linux"}
"""The programs a command's network needs, and the Debian package of each."""
SETUP_TIMEOUT_S = 10.0
NS_GET_USERNS = 0xB701
"""ioctl(2) on a namespace's file: a file of the user namespace that owns it."""
METADATA_V6 = "fd00:ec2::254"
"""The IPv6 metadata address of one cloud (the IPv4 one is in 169.254.0.0/16)."""
# no port forwarded either way, and the gateway's address not mapped to the host's loopback
_PASTA_OPTIONS = (
    "--config-net --quiet --no-map-gw --tcp-ports none --udp-ports none --tcp-ns none --udp-ns none"
).split()
# $1: pasta's pid. Waits for the end of the pipe the sandbox holds, then ends pasta (unless
# the pid is now another process's: pasta's command line names its own pid file).
_WATCHER = """
line() { tr '\\0' ' ' < "/proc/$1/cmdline" 2>/dev/null; }
was=$(line "$1")
read -r _
[ -n "$was" ] && [ "$(line "$1")" = "$was" ] && kill "$1"
"""


class NetstackError(Exception):
    """A step of wiring a sandbox to its network failed (the message says which)."""


def _which(name: str) -> str | None:
    path = os.environ.get("PATH", os.defpath) + ":/usr/sbin:/sbin"
    return shutil.which(name, path=path)


def missing() -> str | None:
    """The first program the network needs that is not installed, as a line, or None."""
    for tool, package in TOOLS.items():
        if _which(tool) is None:
            return f"{tool} is not installed; install the '{package}' package"
    return None


def host_addresses() -> list[str]:
    """The host's own addresses and local ranges (`/proc/net/fib_trie`, `/proc/net/if_inet6`)."""
    found = {"127.0.0.0/8", "::1/128"}
    try:
        lines = Path("/proc/net/fib_trie").read_text().splitlines()
    except OSError:
        lines = []
    for before, line in zip(lines, lines[1:], strict=False):
        fields = line.split()
        if before.strip().startswith("|--") and fields[1:] == ["host", "LOCAL"]:
            found.add(f"{before.split()[-1]}{fields[0]}")
    try:
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            raw = line.split()[0]
            found.add(f"{ipaddress.IPv6Address(int(raw, 16))}/128")
    except (OSError, ValueError, IndexError):
        pass
    return sorted(found)


def ruleset(addresses: list[str]) -> str:
    """The nftables table loaded in a command's namespace: what it may not reach."""
    v4 = {"169.254.0.0/16"} | {a for a in addresses if ":" not in a}
    v6 = {"fe80::/10", f"{METADATA_V6}/128"} | {a for a in addresses if ":" in a}

    def members(nets: set[str]) -> str:  # nftables refuses overlapping intervals
        parsed = [ipaddress.ip_network(a, strict=False) for a in nets]
        return ", ".join(str(n) for n in ipaddress.collapse_addresses(parsed))  # type: ignore[type-var]

    return (
        "table inet lightscientist {\n"
        "  chain output {\n"
        "    type filter hook output priority filter; policy accept;\n"
        '    oifname "lo" accept\n'
        f"    ip daddr {{ {members(v4)} }} reject with icmpx type admin-prohibited\n"
        # ICMPv6 to link-local addresses stays: neighbour discovery with pasta needs it
        f"    ip6 daddr {{ {members(v6)} }} meta l4proto {{ tcp, udp }} "
        "reject with icmpx type admin-prohibited\n"
        "  }\n"
        "}\n"
    )


@dataclasses.dataclass(frozen=True)
class Handshake:
    """The descriptors between bwrap, the sandbox's wrapper and `attach`: bwrap writes its
    sandbox's pid to `info`, and its PID 1 holds `sync` open as long as the sandbox lives (so
    its reading end tells the watcher when to end pasta); the wrapper, once running in the
    finished sandbox, says so on `talk` (a socket pair) and waits there for the word to go
    before it runs the command."""

    info_r: int
    info_w: int
    sync_r: int
    sync_w: int
    talk: int
    talk_sandbox: int

    @classmethod
    def open(cls) -> Handshake:
        info_r, info_w = os.pipe()
        sync_r, sync_w = os.pipe()
        talk, talk_sandbox = socket.socketpair()
        return cls(info_r, info_w, sync_r, sync_w, talk.detach(), talk_sandbox.detach())

    @property
    def sandbox_fds(self) -> tuple[int, int, int]:
        """The ends bwrap's process gets (closed here once it has them)."""
        return (self.info_w, self.sync_w, self.talk_sandbox)

    @property
    def own_fds(self) -> tuple[int, int, int]:
        return (self.info_r, self.sync_r, self.talk)

    def bwrap_options(self) -> list[str]:
        return ["--info-fd", str(self.info_w), "--sync-fd", str(self.sync_w)]

    def sandbox_argv(self, prefix: Sequence[str]) -> list[str]:
        """`prefix` (a `bwrap` argv up to its final `--`) with this handshake's options
        before that `--`: the process started with it (given `sandbox_fds`) is then wired
        by `attach`."""
        return [*prefix[:-1], *self.bwrap_options(), prefix[-1]]

    def wait_script(self) -> str:
        """The wrapper's first lines: it is running; no command without the word to go."""
        fd = self.talk_sandbox
        return f"echo ready >&{fd}; read -r _ <&{fd} || exit 111; exec {fd}<&-"

    def close(self, fds: tuple[int, ...]) -> None:
        for fd in fds:
            os.close(fd)

    def close_all(self) -> None:
        """Close every end (the sandbox's process could not be started)."""
        self.close(dataclasses.astuple(self))


def attach(bwrap_pid: int, handshake: Handshake) -> str | None:
    """Give the sandbox of the `bwrap` process `bwrap_pid` (started with the handshake's
    options and its `sandbox_fds`) its network, and let its command start; this process's
    copies of the sandbox's ends are closed first. Returns None, or a line saying why the
    sandbox got no network; it is ended then, and its command never runs."""
    handshake.close(handshake.sandbox_fds)
    try:
        _wire(bwrap_pid, handshake)
    except NetstackError as exc:
        return f"the sandbox's network could not be set up: {exc}"
    return None


def _wire(bwrap_pid: int, handshake: Handshake) -> None:
    pid = None
    owned: list[int] = []
    try:
        pid = _sandbox_pid(handshake.info_r)
        _await_ready(handshake.talk)
        # the namespace's owner: bwrap may nest a second user namespace in it, where the
        # sandbox then runs and which holds no power over the network namespace
        net = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        owned.append(net)
        owner = fcntl.ioctl(net, NS_GET_USERNS)
        owned.append(owner)
        join = [f"--user=/proc/self/fd/{owner}", f"--net=/proc/self/fd/{net}"]
        nft = [_tool("nsenter"), *join, "--preserve-credentials", _tool("nft"), "-f", "-"]
        _run(nft, ruleset(host_addresses()), fds=(owner, net))
        pasta = _start_pasta(owner, net)
        # `setsid --fork`: the watcher is nobody's child here, and outlives this process
        watcher = [_tool("setsid"), "--fork", "/bin/sh", "-c", _WATCHER, "ls-netstack", str(pasta)]
        subprocess.run(
            watcher,
            stdin=handshake.sync_r,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=SETUP_TIMEOUT_S,
        )
        os.write(handshake.talk, b"go\n")
    except (NetstackError, OSError) as exc:
        # the sandbox's init first: its end takes the whole PID namespace along, and a
        # job's sandbox (no --die-with-parent) would not follow bwrap's; and were either
        # to live on, its wrapper finds `talk` closed without the word to go, and exits
        for target in filter(None, (pid, bwrap_pid)):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
        raise exc if isinstance(exc, NetstackError) else NetstackError(str(exc)) from exc
    finally:
        handshake.close((*handshake.own_fds, *owned))


def _tool(name: str) -> str:
    path = _which(name)
    if path is None:
        raise NetstackError(f"{name} is not installed; install the '{TOOLS[name]}' package")
    return path


def _sandbox_pid(info_r: int) -> int:
    """The pid of the sandbox's init, from bwrap's `--info-fd` (a JSON object)."""
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    data = b""
    while True:
        try:
            return int(json.loads(data)["child-pid"])
        except (ValueError, KeyError, TypeError):
            pass
        chunk = _read(info_r, deadline)
        if not chunk:  # bwrap failed (its error is in the output) or hangs
            raise NetstackError("bubblewrap did not start the sandbox")
        data += chunk


def _await_ready(talk: int) -> None:
    if not _read(talk, time.monotonic() + SETUP_TIMEOUT_S).startswith(b"ready"):
        raise NetstackError("the sandbox ended before its command could start")


def _read(fd: int, deadline: float) -> bytes:
    ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
    return os.read(fd, 4096) if ready else b""


def _run(argv: list[str], stdin: str = "", fds: tuple[int, ...] = ()) -> None:
    try:
        proc = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT_S,
            pass_fds=fds,
        )
    except subprocess.TimeoutExpired:
        name = Path(argv[0]).name
        raise NetstackError(f"{name} did not finish in {SETUP_TIMEOUT_S:g} s") from None
    if proc.returncode != 0:
        raise NetstackError(f"{Path(argv[0]).name}: {_last_line(proc.stderr, proc.returncode)}")


def _last_line(stderr: str, code: int) -> str:
    lines = [x for x in stderr.splitlines() if x.strip() and "to syslog" not in x]
    return lines[-1].strip() if lines else f"exit status {code}"


def _start_pasta(userns: int, netns: int) -> int:
    """Attach pasta to the namespaces open as `userns`, `netns`; returns pasta's pid once
    the network is up (pasta then runs on as a daemon)."""
    with tempfile.TemporaryDirectory(prefix="ls-netstack-") as folder:
        pidfile = Path(folder) / "pasta.pid"
        # pasta run as root drops to `nobody`, who may not open the namespaces; as root it
        # still runs in a user namespace of its own, without capabilities on the host
        runas = ["--runas", "0"] if os.geteuid() == 0 else []
        target = ["--userns", f"/proc/self/fd/{userns}", "--netns", f"/proc/self/fd/{netns}"]
        _run(
            [_tool("pasta"), *_PASTA_OPTIONS, *runas, *target, "--pid", str(pidfile)],
            fds=(userns, netns),
        )
        try:
            return int(pidfile.read_text().strip())
        except (OSError, ValueError):
            raise NetstackError("pasta started but left no pid") from None


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    handshake = Handshake.open()
    argv = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-user", "--unshare-pid"]
    argv += ["--unshare-net", *handshake.bwrap_options(), "--die-with-parent"]
    argv += ["--", "/bin/bash", "-c", handshake.wait_script()]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=handshake.sandbox_fds,
        )
    except OSError as exc:
        handshake.close_all()
        return f"{bwrap} cannot run ({exc})"
    handshake.close(handshake.sandbox_fds)
    try:
        _wire(proc.pid, handshake)
    except NetstackError as exc:
        return str(exc)
    finally:
        proc.wait()
    return None


def problem(bwrap: str) -> str | None:
    """Why a sandbox made with `bwrap` cannot get its own network here, or None when it can
    (checked once per process, with a real sandbox)."""
    return missing() or _probe(bwrap)
