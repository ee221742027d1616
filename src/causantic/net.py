"""The loopback socket the HTTP interfaces listen on (``serve --http`` and the dashboard).

Bound before a server starts, so the port (a free one when 0 is asked for) is known for the URL
printed and the Host check, and a taken port is one clear sentence rather than a server's
traceback. Only 127.0.0.1 is ever bound: there is no option to listen on another interface.
"""

from __future__ import annotations

import errno
import socket

from causantic.errors import CausanticError

LOCALHOST = "127.0.0.1"
BACKLOG = 128  # connections a listening socket holds before the server accepts them


class PortInUse(CausanticError):
    """The port is taken by another process."""


def bind_loopback(port: int) -> socket.socket:
    """A socket listening on ``127.0.0.1:port``; :class:`CausanticError` saying what to do when it cannot."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((LOCALHOST, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(
                f"Port {port} on {LOCALHOST} is already in use by another program; choose another with --port."
            ) from exc
        if exc.errno == errno.EACCES:  # not taken: the system keeps ports below 1024 for administrators
            raise CausanticError(
                f"Port {port} on {LOCALHOST} is not open to this user ({exc.strerror}; ports below 1024 need "
                "administrator rights); choose another with --port."
            ) from exc
        raise CausanticError(f"Cannot listen on {LOCALHOST}:{port} ({exc.strerror}); choose another --port.") from exc
    sock.listen(BACKLOG)
    return sock
