"""The dashboard's door: loopback names only, a per-run token, CSRF on every state change.

A local web server is reachable by any page the user's browser opens, so every request must prove
it comes from the dashboard's own pages:

- **Host** must name the loopback address and our port (``127.0.0.1:N`` or ``localhost:N``): a DNS
  rebinding page reaches us under its own host name and is refused.
- **Origin**, when the browser sends one, must be ours; a state-changing request must send one.
- **Token**: the URL printed at start carries a random token; the first visit trades it for an
  HttpOnly, SameSite=Strict cookie and is redirected to the same URL without it (so the token is
  not left in history or a Referer). Any request without the cookie or token is refused.
- **CSRF**: every request other than GET/HEAD must carry the per-run CSRF token in its form body
  (field ``csrf``); pages put it in every form.

Responses carry a strict Content-Security-Policy (our own scripts and styles only), no caching of
pages, and no Referer to other sites. This module is pure ASGI; it knows nothing of the pages behind it.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = frozenset({"GET", "HEAD"})
MAX_FORM_BYTES = 1_000_000
HEADERS = [
    (
        b"content-security-policy",
        b"default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
        b" form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    # same-origin, not no-referrer: with no-referrer a browser sends "Origin: null" on our own forms.
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


@dataclass(frozen=True, slots=True)
class Secrets:
    """What one run of the dashboard trusts: its port, access token and CSRF token."""

    port: int
    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(24))

    @property
    def cookie(self) -> str:
        # Cookies are shared by every port of a host, so two dashboards must not share a name.
        return f"causantic_dashboard_{self.port}"

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{host}" for host in self.hosts)

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}{path}?{urlencode({'token': self.token})}"


class Guard:
    """ASGI middleware enforcing the rules of the module docstring in front of ``app``."""

    def __init__(self, app: ASGIApp, secrets_: Secrets) -> None:
        self.app = app
        self.secrets = secrets_

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":
            await _plain(send, 403, "Only HTTP requests are served.")
            return
        headers = _headers(scope)
        if headers.get("host") not in self.secrets.hosts:
            await _plain(send, 403, "Host not allowed: open the dashboard at the 127.0.0.1 URL it printed.")
            return
        origin = headers.get("origin")
        method = scope["method"]
        if origin is not None and origin not in self.secrets.origins:
            await _plain(send, 403, "Cross-origin request refused.")
            return
        if method not in SAFE_METHODS and origin is None:
            await _plain(send, 403, "A state-changing request must come from the dashboard's own pages.")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if not self._has_cookie(headers.get("cookie", "")):
            offered = (query.get("token") or [""])[0]
            if method == "GET" and offered and hmac.compare_digest(offered, self.secrets.token):
                await self._trade_token_for_cookie(scope, query, send)
                return
            await _plain(
                send,
                401,
                "This dashboard needs its access token: open the full URL that `causantic dashboard` printed.",
            )
            return
        if method not in SAFE_METHODS:
            body = await _read_body(receive)
            if body is None:
                await _plain(send, 413, "Form too large.")
                return
            fields = parse_qs(body.decode("utf-8", "replace"))
            if not hmac.compare_digest((fields.get("csrf") or [""])[0], self.secrets.csrf):
                await _plain(send, 403, "Missing or wrong CSRF token: reload the page and try again.")
                return
            receive = _replay(body)
        await self.app(scope, receive, _with_headers(send))

    def _has_cookie(self, cookie_header: str) -> bool:
        for part in cookie_header.split(";"):
            name, _, value = part.strip().partition("=")
            if name == self.secrets.cookie and hmac.compare_digest(value, self.secrets.token):
                return True
        return False

    async def _trade_token_for_cookie(self, scope: Scope, query: dict[str, list[str]], send: Send) -> None:
        rest = urlencode({k: v for k, v in query.items() if k != "token"}, doseq=True)
        location = scope["path"] + (f"?{rest}" if rest else "")
        cookie = f"{self.secrets.cookie}={self.secrets.token}; Path=/; HttpOnly; SameSite=Strict"
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [
                    (b"location", location.encode("latin-1")),
                    (b"set-cookie", cookie.encode("latin-1")),
                    (b"cache-control", b"no-store"),
                    *HEADERS,
                ],
            }
        )
        await send({"type": "http.response.body", "body": b""})


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _read_body(receive: Receive) -> bytes | None:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_FORM_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", [])}
            extra = [(k, v) for k, v in HEADERS if k not in names]
            if b"cache-control" not in names:
                extra.append((b"cache-control", b"no-store"))
            message["headers"] = [*message.get("headers", []), *extra]
        await send(message)

    return wrapped


async def _plain(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"cache-control", b"no-store"), *HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})
