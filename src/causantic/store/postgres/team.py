"""Setting up and inspecting a team database: what `causantic team init` and `team status` ask of it."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

from causantic.errors import StoreError, TeamUnavailable
from causantic.store.postgres.connection import (
    MIN_PGVECTOR,
    MIN_SERVER_VERSION,
    connect,
    describe,
    failure,
    psycopg_module,
)
from causantic.store.postgres.migrations import (
    MIGRATIONS,
    WORKS_WITHOUT,
    migrate,
    missing_versions,
    schema_version,
    tables_owner,
)


@dataclass(frozen=True, slots=True)
class ServerCheck:
    server: str  # host/database, never the URL
    version: str  # e.g. "16.2"
    version_ok: bool
    pgvector_available: str | None  # version the server can install, None when it has none
    pgvector_installed: str | None  # version installed in this database
    schema_version: int  # migrations applied (0 before init)
    ann_indexes_made: tuple[str, ...] = ()  # models whose HNSW index `team init` made (services.team_init)

    @property
    def missing(self) -> list[str]:
        """What stops the team database from working, each as an instruction."""
        out: list[str] = []
        if not self.version_ok:
            out.append(f"PostgreSQL {self.version} is too old: Causantic needs {MIN_SERVER_VERSION // 10000} or newer.")
        vector = self.pgvector_installed or self.pgvector_available
        if vector is None:
            out.append(
                "The server has no pgvector (the vector extension): its admin installs it (Debian/Ubuntu: "
                f"postgresql-{self.version.split('.')[0]}-pgvector; a managed service: enable the 'vector' "
                "extension), then `causantic team init` runs again."
            )
        elif _version(vector) < MIN_PGVECTOR:
            out.append(
                f"pgvector {vector} is too old: Causantic needs {'.'.join(map(str, MIN_PGVECTOR))} or newer "
                "(HNSW indexes); upgrade it, then run `ALTER EXTENSION vector UPDATE`."
            )
        return out


@dataclass(frozen=True, slots=True)
class MemberStatus:
    user: str
    sessions: int
    chunks: int
    text_bytes: int
    last_ingest: str | None


@dataclass(frozen=True, slots=True)
class TeamStatus:
    server: str
    schema_version: int
    database_bytes: int
    members: tuple[MemberStatus, ...]
    schema_missing: tuple[int, ...] = ()  # migrations of this release the database lacks
    schema_note: str | None = None  # what members go without until the tables' owner applies them


P = ParamSpec("P")
R = TypeVar("R")


def _one_sentence(command: Callable[P, R]) -> Callable[P, R]:
    """A psycopg error after connecting (the server restarted or failed over mid-command) as the
    StoreError :func:`failure` words, as the store's methods do: one sentence, not a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except psycopg_module().Error as exc:
            raise failure(exc, args[0]) from exc

    return run


@_one_sentence
def check(url: str, *, connect_timeout: int | None = None) -> ServerCheck:
    """The server's version and pgvector, and the schema version, without changing anything."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        return _check(conn, url)


@_one_sentence
def init(url: str, *, connect_timeout: int | None = None) -> ServerCheck:
    """Check the server, then create or upgrade the schema; a StoreError says what is missing."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        found = _check(conn, url)
        if found.missing:
            raise StoreError(f"The team database at {found.server} is not ready: " + " ".join(found.missing))
        try:
            migrate(conn)
        except psycopg_module().Error as exc:
            refused = schema_refused(conn, url, exc)
            if refused is None:
                raise
            raise refused from exc
        return _check(conn, url)


def schema_refused(conn: Any, url: str, exc: BaseException) -> TeamUnavailable | None:
    """Why creating or upgrading the schema on ``conn`` failed, as what to do and whom to ask; None
    for a failure of another kind. For `team init` and a member's first connect alike: a server
    without pgvector, a role that may not create its extension, a member's role that may not migrate."""
    found = _check(conn, url)
    if found.missing:
        return TeamUnavailable(
            f"The team database at {found.server} is not ready: " + " ".join(found.missing), "schema"
        )
    if not isinstance(exc, psycopg_module().errors.InsufficientPrivilege):
        return None
    # The primary message alone: the rest (HINT, CONTEXT, the statement with a caret) is lines of SQL.
    reason = exc.diag.message_primary or str(exc).strip().splitlines()[0]
    database = psycopg_module().conninfo.conninfo_to_dict(url.strip()).get("dbname") or "this database"
    if 'extension "vector"' in reason:
        return TeamUnavailable(
            f"The team database at {found.server} needs the vector extension (pgvector {found.pgvector_available} "
            f"is on the server), and only a superuser may create it ({reason}). Ask the server's admin to run "
            f"`CREATE EXTENSION vector;` in database {database} (a managed service: as its admin role), then run "
            "`causantic team init` again as the database's owner with CREATEROLE (it creates the roles "
            "causantic_member and causantic_admin), or as a superuser.",
            "schema",
        )
    if found.schema_version:
        missing = missing_versions(conn)
        return TeamUnavailable(
            f"The team database at {found.server} lacks schema {_changes(missing)} this causantic needs, and only"
            f" {owner_named(conn)} may make {'it' if len(missing) == 1 else 'them'} ({reason}). Ask them to run"
            " `causantic team init` (it upgrades the schema), then connect again.",
            "schema",
        )
    return TeamUnavailable(
        f"The team database at {found.server} holds no team memory yet, and the role in the URL may not create "
        f"it ({reason}). `causantic team init` creates the roles causantic_member and causantic_admin "
        "(CREATEROLE), and the vector extension unless a superuser already ran `CREATE EXTENSION vector` in this "
        "database. Run it once as a superuser (a managed service: its admin role), or as the database owner with "
        "CREATEROLE after that; members then connect with their own roles.",
        "schema",
    )


def migrated(conn: Any, url: str) -> tuple[int, ...]:
    """Bring the schema up to date on ``conn`` where this role may; return the migrations it lacks
    and works without (:func:`schema_gap`). Every connection a member opens (the store's, the vector
    index's) comes through here, so none fails where another works: a StoreError says what to do."""
    try:
        migrate(conn)
    except psycopg_module().Error as exc:
        return schema_gap(conn, url, exc)
    return ()


def schema_gap(conn: Any, url: str, exc: BaseException) -> tuple[int, ...]:
    """The migrations a member's connection was refused (``exc``) and can do without
    (:data:`~causantic.store.postgres.migrations.WORKS_WITHOUT`): the store opens without them. Any
    other failure raises the StoreError that says what to do and whom to ask."""
    missing = missing_versions(conn)
    if isinstance(exc, psycopg_module().errors.InsufficientPrivilege) and all(v in WORKS_WITHOUT for v in missing):
        return tuple(missing)
    raise (schema_refused(conn, url, exc) or failure(exc, url)) from exc


def gap_note(conn: Any, url: str, missing: Sequence[int]) -> str:
    """What a member goes without while the team database lacks ``missing`` (see :func:`schema_gap`;
    local memory alone, for a migration members cannot do without), and who runs what to end it."""
    lacks = f"team memory at {describe(url)} lacks schema {_changes(missing)} of this causantic"
    owner = owner_named(conn)
    if not all(v in WORKS_WITHOUT for v in missing):
        return f"{lacks}, so members on it answer from local memory until {owner} runs `causantic team init`"
    without = "; and ".join(WORKS_WITHOUT[v] for v in missing)
    return f"{lacks} (members may not change its tables), so {without} until {owner} runs `causantic team init`"


def _changes(missing: Sequence[int]) -> str:
    """'change 8' or 'changes 3 and 6': the schema versions a database lacks."""
    numbers = [str(v) for v in missing]
    return f"change {numbers[0]}" if len(numbers) == 1 else f"changes {', '.join(numbers[:-1])} and {numbers[-1]}"


def owner_named(conn: Any) -> str:
    """Who may migrate the team's tables, by role name."""
    owner = tables_owner(conn)
    return f"the role that owns its tables ({owner})" if owner else "the role that owns its tables"


@_one_sentence
def status(url: str, *, connect_timeout: int | None = None) -> TeamStatus:
    """Members with their sessions, chunks, text size and last ingest; the database's size."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        version = schema_version(conn)
        if version == 0:
            raise StoreError(f"{describe(url)} holds no team memory yet: run `causantic team init` first.")
        members = conn.execute(
            "SELECT c.member, COUNT(DISTINCT c.session_id), COUNT(*), COALESCE(SUM(octet_length(c.content)), 0),"
            " (SELECT MAX(f.ingested_at) FROM files f WHERE f.member = c.member)"
            " FROM chunks c GROUP BY c.member ORDER BY c.member"
        ).fetchall()
        size = _scalar(conn, "SELECT pg_database_size(current_database())")
        missing = tuple(missing_versions(conn))
        return TeamStatus(
            describe(url),
            version,
            int(size),
            tuple(MemberStatus(r[0], int(r[1]), int(r[2]), int(r[3]), r[4]) for r in members),
            missing,
            gap_note(conn, url, missing) if missing else None,
        )


@dataclass(frozen=True, slots=True)
class JoinCheck:
    """What `causantic team join` found on the server, connected as the member will be."""

    server: str  # host/database, never the URL
    role: str  # the login role the URL names (the server's current_user)
    schema_version: int
    members: tuple[str, ...]  # the members with rows there, by name
    schema_note: str | None = None  # schema changes this member goes without (gap_note)


@_one_sentence
def join_check(url: str, *, connect_timeout: int | None = None) -> JoinCheck:
    """Check team memory at ``url`` as a member's every command will open it: reachable, its login
    accepted, pgvector there, the schema made (`team init`), neither behind this release in a way
    members cannot do without nor ahead of it, and the role granted a member's rights. A
    TeamUnavailable says which of these failed and who does what about it."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        role = str(_scalar(conn, "SELECT current_user"))
        # Before anything reads the tables: a role not granted causantic_member was told "permission
        # denied for table schema_migrations".
        granted = "SELECT to_regclass('chunks') IS NULL OR has_table_privilege('chunks', 'SELECT, INSERT')"
        if not _scalar(conn, granted):
            raise TeamUnavailable(
                f"The team memory at {describe(url)} let role {role} log in but not read or write its tables: the "
                f"team's admin runs `GRANT causantic_member TO {role};` there, then join again.",
                "refused",
            )
        found = _check(conn, url)
        if found.missing:
            raise TeamUnavailable(
                f"The team database at {found.server} is not ready: " + " ".join(found.missing), "schema"
            )
        if found.schema_version == 0:
            raise TeamUnavailable(
                f"{found.server} holds no team memory yet: whoever set up the server runs `causantic team init` "
                "there first (a superuser, or the database's owner with CREATEROLE), then grants you causantic_member.",
                "schema",
            )
        if found.schema_version > len(MIGRATIONS):
            raise TeamUnavailable(
                f"The team database at {found.server} has schema version {found.schema_version}, newer than this "
                f"causantic knows ({len(MIGRATIONS)}): a newer release ran `causantic team init` there. Upgrade "
                "causantic (`pip install -U 'causantic[postgres]'`), then join again.",
                "schema",
            )
        gap = migrated(conn, url)
        names = tuple(r[0] for r in conn.execute("SELECT DISTINCT member FROM chunks ORDER BY member"))
        return JoinCheck(found.server, role, schema_version(conn), names, gap_note(conn, url, gap) if gap else None)


@_one_sentence
def members(url: str, *, connect_timeout: int | None = None) -> list[str]:
    """The members with rows in team memory, by name."""
    with connect(url, connect_timeout=connect_timeout) as conn:
        return [r[0] for r in conn.execute("SELECT DISTINCT member FROM chunks ORDER BY member")]


def _check(conn: Any, url: str) -> ServerCheck:
    number = int(conn.execute("SHOW server_version_num").fetchone()[0])
    version = conn.execute("SHOW server_version").fetchone()[0].split()[0]
    row = conn.execute(
        "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'vector'"
    ).fetchone()
    return ServerCheck(
        describe(url),
        version,
        number >= MIN_SERVER_VERSION,
        row[0] if row else None,
        row[1] if row else None,
        schema_version(conn),
    )


def _scalar(conn: Any, sql: str) -> Any:
    return conn.execute(sql).fetchone()[0]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split(".") if p.isdigit())
