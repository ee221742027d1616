"""`causantic serve --http`: streamable HTTP on 127.0.0.1, behind a bearer token.

Loopback alone does not keep other accounts on the same machine out, and the tools read every
stored session and can forget chunks. So by default each request must carry
``Authorization: Bearer <token>``; the token is generated once, kept owner-only (0600) in the data
directory, and compared in constant time. ``--no-auth`` turns the check off, explicitly. The SDK's
own Host/Origin checks (DNS rebinding) stay in place behind it.

The socket is bound before the server starts, so a taken port is one clear sentence, and the
server gives open streams at most half a second on SIGTERM.
"""

from __future__ import annotations

import hmac
import json
import secrets
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from causantic.config import causantic_home
from causantic.files import atomic_write, secure_dir
from causantic.net import LOCALHOST, bind_loopback

TOKEN_FILE = "http-token"
_SHUTDOWN_GRACE_S = 0.5

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def token_path() -> Path:
    return causantic_home() / TOKEN_FILE


def load_or_create_token() -> tuple[str, bool]:
    """(token, created): the stored token, or a new one written owner-only."""
    path = token_path()
    try:
        token = path.read_text(encoding="ascii").strip()
        if token:
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)
            return token, False
    except FileNotFoundError:
        pass
    secure_dir(path.parent)
    token = secrets.token_urlsafe(32)
    atomic_write(path, token + "\n", 0o600)  # created 0600: never readable by others, even briefly
    return token, True


class BearerAuth:
    """ASGI middleware: HTTP requests without the right bearer token get 401."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Send) -> None:
    body = json.dumps(
        {
            "error": "unauthorized",
            "message": (
                f"Send 'Authorization: Bearer <token>'; the token is in {token_path()} (readable by its owner only)."
            ),
        }
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="causantic"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def serve(app: ASGIApp, port: int, *, auth: bool, out: Any = None) -> None:
    """Bind, say where to connect and how to authenticate, and serve until SIGINT/SIGTERM."""
    import uvicorn

    out = out or sys.stdout
    sock = bind_loopback(port)
    sock.set_inheritable(True)
    url = f"http://{LOCALHOST}:{sock.getsockname()[1]}/mcp"
    lines = [f"Causantic MCP server: {url}"]
    if auth:
        token, created = load_or_create_token()
        app = BearerAuth(app, token)
        if created:
            lines.append(f"New token (shown once): {token}")
        lines.append(f"Token: {token_path()} (send 'Authorization: Bearer <token>')")
    else:
        lines.append("Authentication: off (--no-auth); any local user can call it.")
    print("\n".join(lines), file=out, flush=True)
    print("Press Ctrl-C to stop.", file=sys.stderr, flush=True)  # as the dashboard says it: beside, not in, the banner
    # uvicorn annotates the grace as int but only hands it to asyncio.wait_for, which takes seconds as a float.
    config = uvicorn.Config(
        app,
        log_level="warning",
        timeout_graceful_shutdown=_SHUTDOWN_GRACE_S,  # type: ignore[arg-type]
        lifespan="on",
    )
    uvicorn.Server(config).run(sockets=[sock])
