"""Loopback ports for the servers benchforge starts (Prefect's temporary server, Label
Studio).

Prefect's own temporary server draws its port at random from 8000-8999, a range that
holds Label Studio's default 8080 and most developers' web servers; benchforge instead
asks the operating system for a free port (from its ephemeral range, 32768-60999 on
Linux) and hands it to Prefect.
"""

from __future__ import annotations

import socket

HOST = "127.0.0.1"


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on now, chosen by the operating system."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_free(port: int) -> bool:
    """True when nothing answers on 127.0.0.1:``port`` and it can be bound."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        if sock.connect_ex((HOST, port)) == 0:
            return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as servers do: a port left in TIME_WAIT by a server just stopped is usable
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True
