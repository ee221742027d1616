"""A real PostgreSQL 16 with pgvector for the tests, started from the ``pgserver`` wheel.

The ``postgres`` extra (psycopg, pgvector) and ``pgserver`` come with the ``dev`` extra. Without
them the PostgreSQL tests skip saying what to install, except on CI (``CI`` set), where a skip would
hide a broken install and they fail instead, as ``shared_data.require_shared`` does for ../shared.

PostgreSQL refuses to run as root. pgserver handles that itself: run as root (as here and on CI) it
creates a system user ``pgserver`` with ``useradd`` once, runs ``initdb`` and the server as that
user, and opens read/traverse permission on the folders above the data directory so that user can
reach it. So the data directory lives in its own /tmp folder, not under pytest's, which every
pytest run resets to owner-only. The server listens on a Unix socket in the data directory only (no
TCP port to collide with other test runs) and is stopped when the test session ends.
"""

from __future__ import annotations

import os
import threading
import time
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from causantic.config import Config

PACKAGES = ("psycopg", "pgvector", "pgserver")
BACKENDS = ("sqlite", "postgres")


def require_postgres() -> None:
    """Skip (or, on CI, fail) unless the PostgreSQL test packages are installed."""
    missing = []
    for name in PACKAGES:
        try:
            with warnings.catch_warnings():
                # platformdirs warns at pgserver's import when XDG_RUNTIME_DIR is unset (containers, CI).
                warnings.simplefilter("ignore")
                __import__(name)
        except ImportError:
            missing.append(name)
    if not missing:
        return
    message = (
        f"The PostgreSQL backend tests need {', '.join(missing)}: install them with "
        "`pip install -e '.[dev]'` (or `pip install 'causantic[postgres]' pgserver`)."
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# The server's data is thrown away when the tests end, so it need not survive a power cut: without
# flushes to disk each commit, CREATE DATABASE and the shutdown checkpoint cost no disk wait. Only
# durability against an operating-system crash goes, which no test exercises; a killed client or
# server process still leaves exactly what was committed.
THROWAWAY_SETTINGS = {"fsync": "off", "synchronous_commit": "off", "full_page_writes": "off"}


def start_server(data: Path) -> Any:
    """A running server whose data lives in ``data``; call ``.cleanup()`` to stop it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        import psycopg

        server = pgserver.get_server(data, cleanup_mode="stop")
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        for name, value in THROWAWAY_SETTINGS.items():
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
        conn.execute("SELECT pg_reload_conf()")
    return server


def start_server_without_pgvector(folder: Path) -> Any:
    """A second server, like :func:`start_server`'s, whose installation lacks pgvector: a copy of
    pgserver's (its programs and shared files, 20 MB; its libraries linked) without the extension's
    files, in ``folder``. pgserver runs the programs it finds in its module's install folder; that
    folder is pointed at the copy while this server is made and started, then back."""
    import shutil

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pgserver
        import pgserver._commands as commands
        import pgserver.postgres_server as server_module

    original = commands.POSTGRES_BIN_PATH
    install = original.parent
    # The programs find their libraries at $ORIGIN/../../../pgserver.libs: the copy keeps that layout.
    copy = folder / "site" / "pgserver" / "pginstall"
    copy.mkdir(parents=True)
    (folder / "site" / "pgserver.libs").symlink_to(install.parent.parent / "pgserver.libs")
    (copy / "lib").symlink_to(install / "lib")
    shutil.copytree(install / "bin", copy / "bin")
    shutil.copytree(install / "share", copy / "share", ignore=lambda _, names: [n for n in names if "vector" in n])
    commands.POSTGRES_BIN_PATH = server_module.POSTGRES_BIN_PATH = copy / "bin"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return pgserver.get_server(folder / "data", cleanup_mode="stop")
    finally:
        commands.POSTGRES_BIN_PATH = server_module.POSTGRES_BIN_PATH = original


def new_database(server: Any, template: str | None = None) -> str:
    """The URL of a new database on ``server`` (one per test module keeps them apart): empty, or a
    copy of the database at URL ``template`` (PostgreSQL copies its files: tables, rows and indexes
    in a moment, where filling it again would take seconds; nothing may be connected to it)."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    copied = ""
    if template is not None:
        copied = f' TEMPLATE "{psycopg.conninfo.conninfo_to_dict(template)["dbname"]}"'
    with psycopg.connect(server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"{copied}')
    return str(psycopg.conninfo.make_conninfo(server.get_uri(), dbname=name))


def backend_settings(request: pytest.FixtureRequest, backend: str | None = None) -> Config:
    """The configuration for ``backend`` (default ``request.param``); a new PostgreSQL database each call."""
    if (backend or request.param) == "sqlite":
        return Config()
    url = new_database(request.getfixturevalue("postgres_server"))
    return Config().with_overrides(
        {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": "alice", "team.shareProjects": "all"}
    )


def drop_ann_indexes(conn: Any) -> None:
    """Drop the HNSW indexes of the database ``conn`` is connected to, before a test loads thousands of
    vectors: each vector written to an indexed table is inserted into the graph one by one (84 s for
    5,000 of 384 dimensions on the 2-core test machine, loaded), where ``ensure_ann_index`` afterwards
    builds the same index over them in one pass (7 s); searches then walk it as on any store."""
    with conn.transaction():
        for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'vectors_hnsw_%'"):
            conn.execute(f'DROP INDEX "{name}"')


def interleaved(
    holder: Any, holds: list[Callable[[], object]], other: Any, step: Callable[[], object]
) -> tuple[bool, list[BaseException]]:
    """In one transaction of ``holder``: the first of ``holds``, then ``step`` started on ``other``'s
    connection, then, once ``step`` waits for a lock (or has finished), the rest of ``holds``; then
    commit. Whether ``step`` waited, and what either side raised. ``holder`` and ``other`` are the
    :class:`~causantic.services.Services` of two members on one team database."""
    import psycopg

    from causantic.errors import StoreError

    pid = other.store.conn.info.backend_pid
    failures: list[BaseException] = []

    def run() -> None:
        try:
            step()
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failures.append(exc)

    waited = False
    thread = threading.Thread(target=run)
    with psycopg.connect(other.store.url, autocommit=True) as watcher:
        try:
            with holder.store.atomic():
                holds[0]()
                thread.start()
                while thread.is_alive() and not waited:
                    locks = watcher.execute("SELECT granted FROM pg_locks WHERE pid = %s", (pid,)).fetchall()
                    waited = not all(granted for (granted,) in locks)
                    time.sleep(0.02)
                for hold in holds[1:]:
                    hold()
        except StoreError as exc:  # the holder's side rolled back (a deadlock)
            failures.append(exc)
        if thread.ident is not None:
            thread.join(60)
    assert not thread.is_alive(), "the second side is stuck"
    return waited, failures
