"""Run inside a sandboxed command (copied into the workspace): tries each target given and
prints one line per target, `TARGET ok REPLY` or `TARGET ERRNO` (ECONNREFUSED, EHOSTUNREACH…).

Targets: `tcp:HOST:PORT`, `bound:HOST:PORT` (the socket bound to the default route's device
first, `SO_BINDTODEVICE`, which goes past a `prohibit` route), `abstract:NAME` (a unix
socket in the abstract namespace), `route` (the default route's device, or `none`) and
`dns` (the nameservers of /etc/resolv.conf).
"""

from __future__ import annotations

import errno
import socket
import sys


def default_device() -> str | None:
    with open("/proc/net/route") as fh:
        for line in fh.readlines()[1:]:
            fields = line.split()
            if fields[1] == "00000000":
                return fields[0]
    return None


def connect(kind: str, rest: str) -> str:
    if kind == "abstract":
        sock = socket.socket(socket.AF_UNIX)
        address: object = "\0" + rest
    else:
        host, _, port = rest.rpartition(":")
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        address = (host, int(port))
        if kind == "bound":
            device = default_device() or "eth0"
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, device.encode())
    sock.settimeout(5)
    try:
        sock.connect(address)
        return "ok " + sock.recv(64).decode()
    except OSError as exc:
        return errno.errorcode.get(exc.errno or 0, type(exc).__name__)
    finally:
        sock.close()


def main() -> None:
    for target in sys.argv[1:]:
        kind, _, rest = target.partition(":")
        if kind == "route":
            print(target, default_device() or "none")
        elif kind == "dns":
            with open("/etc/resolv.conf") as fh:
                servers = [x.split()[1] for x in fh if x.startswith("nameserver")]
            print(target, " ".join(servers) or "none")
        else:
            print(target, connect(kind, rest))


if __name__ == "__main__":
    main()
