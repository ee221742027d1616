"""Serving the dashboard on the loopback interface until stopped.

The socket is bound here, before the server starts, so the port (a free one by default) is known
for the printed URL and for the Host check. Only ``127.0.0.1`` is ever bound: there is no option
to listen on another interface.
"""

from __future__ import annotations

import socket
from collections.abc import Callable

from causantic.dashboard.security import Secrets
from causantic.errors import CausanticError

HOST = "127.0.0.1"


def bind(port: int) -> socket.socket:
    """A listening loopback socket on ``port`` (0: a free port chosen by the system)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        raise CausanticError(
            f"Cannot listen on {HOST}:{port} ({exc.strerror}). Choose another --port, "
            "or leave it out to use a free one."
        ) from exc
    sock.listen(64)
    return sock


def serve(port: int, on_ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``on_ready`` gets the full URL (with its token) once listening."""
    import uvicorn

    from causantic.dashboard.app import create_app

    sock = bind(port)
    secrets = Secrets(sock.getsockname()[1])
    config = uvicorn.Config(
        create_app(secrets),
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        proxy_headers=False,
    )
    server = uvicorn.Server(config)
    # The socket already listens: a browser opening the URL now waits in its backlog until the
    # server accepts, so printing before the event loop starts loses nothing.
    on_ready(secrets.url())
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
