"""Opening the team's PostgreSQL the one way Causantic does it, and what a failure says.

psycopg (the ``postgres`` extra) is imported here only, on first use, so the default install and
every SQLite command never load it. The URL goes to libpq as it is (TLS, passwords, service files
and ``PG*`` variables work as libpq documents them) and is never printed: messages name the server
by :func:`describe` (host, port and database, never the user's password).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from causantic.errors import StoreError, TeamDownReason, TeamUnavailable, raise_if_interrupted

if TYPE_CHECKING:
    import psycopg

# pgvector's HNSW index arrived in 0.5; PostgreSQL 13 is the oldest release still supported upstream.
MIN_SERVER_VERSION = 130000
MIN_PGVECTOR = (0, 5, 0)
INSTALL_HINT = "Install the PostgreSQL backend with `pip install 'causantic[postgres]'`."


def psycopg_module() -> Any:
    """The psycopg package, or a StoreError saying how to install it."""
    try:
        import psycopg
    except ImportError as exc:
        raise_if_interrupted(exc)
        raise StoreError(f"storage.backend is 'postgres' but psycopg is not installed. {INSTALL_HINT}") from exc
    return psycopg


def describe(url: str) -> str:
    """``host:port/database`` of a libpq URL or key=value string, without user or password."""
    psycopg = psycopg_module()
    try:
        parts = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "the configured PostgreSQL server (its URL does not parse)"
    host = str(parts.get("host") or "localhost")
    if host.startswith("/"):
        host = f"socket {host}"
    port = f":{parts['port']}" if parts.get("port") else ""
    return f"PostgreSQL {host}{port}/{parts.get('dbname') or parts.get('user') or 'postgres'}"


def connect(url: str, *, connect_timeout: int | None = None) -> psycopg.Connection[Any]:
    """An autocommit connection whose rows read by name or position; a StoreError naming the server (not the URL)
    and what to check when it cannot be reached.

    ``connect_timeout`` (team.connectTimeoutSeconds) bounds the wait for a server that never answers, unless
    the URL or ``PGCONNECT_TIMEOUT`` sets libpq's own ``connect_timeout``: those win, as libpq documents."""
    pg = psycopg_module()
    from causantic.store.postgres.rows import row_factory

    # A URL pasted into config.json or the environment often keeps a space or newline at an end, and
    # libpq reads " postgresql://…" as key=value words: refused, quoting the URL.
    url = url.strip()
    try:
        own = pg.conninfo.conninfo_to_dict(url).get("connect_timeout") or os.environ.get("PGCONNECT_TIMEOUT")
        timeout = {} if own or connect_timeout is None else {"connect_timeout": connect_timeout}
        conn: psycopg.Connection[Any] = pg.connect(url, autocommit=True, row_factory=row_factory, **timeout)
    except pg.ProgrammingError as exc:
        raise StoreError(f"storage.postgresUrl is not a valid libpq URL: {_without_url(exc, url)}") from exc
    except pg.OperationalError as exc:
        waited = own or connect_timeout
        silent = (
            f" (no answer within {waited} s: team.connectTimeoutSeconds, or connect_timeout in the URL)"
            if isinstance(exc, pg.errors.ConnectionTimeout) and waited
            else ""
        )
        reason = _without_url(exc, url)
        kind, advice = _advice(reason, url)
        head = (
            "Cannot reach the team memory at {}"
            if kind == "unreachable"
            else "The team memory at {} refused the connection"
        )
        raise TeamUnavailable(f"{head.format(describe(url))}: {reason}{silent}. {advice}", kind) from exc
    return conn


def _advice(reason: str, url: str) -> tuple[TeamDownReason, str]:
    """What to do about a connection that failed, told by libpq's message (it gives no error code
    for them): a server that answered but has no such database, or refused the login, needs
    something else done than one out of reach (:class:`TeamUnavailable`'s reason, then the advice)."""
    if 'database "' in reason and "does not exist" in reason:
        name = psycopg_module().conninfo.conninfo_to_dict(url).get("dbname")
        return "refused", (
            f"The server answered, but holds no database {name}: check its name in storage.postgresUrl, or have "
            f"it created (`createdb {name}`, by a role allowed to), then run `causantic team init`."
        )
    refused = ("password authentication failed", "no pg_hba.conf entry", "is not permitted to log in")
    if any(words in reason for words in refused) or ('role "' in reason and "does not exist" in reason):
        return "refused", (
            "The server answered, but refused the login: check the user and password in storage.postgresUrl (or "
            "~/.pgpass). Each member logs in with a role of their own that the team's admin created and granted "
            "causantic_member."
        )
    return "unreachable", (
        "Check that the server is up and reachable from here, and the user and password in storage.postgresUrl; "
        "`causantic team status` tries again."
    )


def failure(exc: BaseException, url: object) -> StoreError:
    """A psycopg error met mid-command as one sentence naming the server, never the URL, and what
    to do (``url`` is the store's; the decorator that calls this passes it as an object)."""
    text = str(url)
    psycopg = psycopg_module()
    # Class 40, transaction rollback (deadlock detected, serialization failure): OperationalErrors
    # too, but the server answered; psycopg's classes for them do not derive from TransactionRollback.
    if str(getattr(exc, "sqlstate", None) or "").startswith("40"):
        return StoreError(
            f"The team memory at {describe(text)} rolled this command back ({_without_url(exc, text)}): another "
            "write at the same moment (another member's, or another causantic process) held rows it needed. "
            "Nothing of it was kept; run the command again."
        )
    if isinstance(exc, psycopg.OperationalError):
        return TeamUnavailable(
            f"The team memory at {describe(text)} stopped answering ({_without_url(exc, text)}). Nothing "
            "half-written is kept: the server rolls back the open transaction, and the next run completes it.",
            "unreachable",
        )
    return StoreError(f"The team memory at {describe(text)} failed: {_without_url(exc, text)}")


def _without_url(exc: BaseException, url: str) -> str:
    """libpq messages can quote the connection string, or the one word of it they failed to read
    (``missing "=" after "postgresql//alice:pw@host/db"``); either may hold the password."""
    # One line, its runs of spaces made one (libpq writes "FATAL:  database ...").
    text = " ".join(str(exc).strip().splitlines()[0].split()) if str(exc).strip() else type(exc).__name__
    secret = [w for w in url.split() if "@" in w or "password" in w.lower()]
    for quoted in sorted({url, url.strip(), *secret}, key=len, reverse=True):
        text = text.replace(quoted, "<storage.postgresUrl>")
    return text
