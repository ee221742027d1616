"""Serving the dashboard on the loopback interface until stopped.

The socket is bound before the server starts (:func:`~causantic.net.bind_loopback`), so the
port (a free one by default) is known for the printed URL and for the Host check. Only
``127.0.0.1`` is ever bound: there is no option to listen on another interface.
"""

from __future__ import annotations

from collections.abc import Callable

from causantic.dashboard.security import Secrets
from causantic.net import bind_loopback


def serve(port: int, on_ready: Callable[[str], None]) -> None:
    """Serve until interrupted; ``on_ready`` gets the full URL (with its token) once listening."""
    import uvicorn

    from causantic.dashboard.app import create_app

    sock = bind_loopback(port)
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
