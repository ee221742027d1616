"""Opening SQLite the one way Causantic does it, and the transaction helper.

Many processes share one database (an MCP server per Claude Code session, hooks ingesting in the
background, the CLI). WAL lets readers run beside a writer; ``busy_timeout`` makes a second writer
wait instead of failing; write transactions start with ``BEGIN IMMEDIATE`` so two writers never
deadlock on a read-to-write lock upgrade (which busy_timeout cannot resolve).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from causantic.errors import StoreError, store_failure

# Generated columns (the keyword index's scope column, migration m004) arrived in SQLite 3.31.
MIN_SQLITE = (3, 31, 0)


def connect(path: Path, *, busy_timeout_ms: int = 30_000, read_only: bool = False) -> sqlite3.Connection:
    """Open (creating the folder, owner-only) and configure a connection in autocommit mode."""
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise StoreError(
            f"Causantic needs SQLite {'.'.join(map(str, MIN_SQLITE))} or newer; this Python links "
            f"SQLite {sqlite3.sqlite_version}. Use a Python build with a newer SQLite (3.11 from "
            "python.org or a current distribution has one)."
        )
    try:
        if not read_only:
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        uri = f"file:{path}?mode=ro" if read_only else f"file:{path}"
        conn = sqlite3.connect(
            uri, uri=True, isolation_level=None, timeout=busy_timeout_ms / 1000, check_same_thread=False
        )
    except (OSError, sqlite3.Error) as exc:
        raise StoreError(
            f"Cannot open the memory database at {path}: {exc}. "
            "Check that the folder exists and is writable, or set CAUSANTIC_HOME."
        ) from exc
    conn.row_factory = sqlite3.Row
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        conn.execute("PRAGMA foreign_keys = ON")
        if not read_only:
            conn.execute("PRAGMA journal_mode = WAL")  # the first read of the file: damage shows here
            conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.Error as exc:  # DatabaseError (malformed, not a database) is not an OperationalError
        conn.close()
        raise store_failure(exc, f"at {path}") from exc
    if not read_only:
        try:
            path.chmod(0o600)
        except OSError:
            pass
    return conn


@contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """All statements inside commit together or not at all; nested calls become savepoints."""
    if conn.in_transaction:
        name = f"sp_{id(conn)}_{_depth(conn)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            # After an I/O error or a full disk SQLite may have rolled back the whole transaction
            # already; the original error is the one to report, not "no such savepoint".
            with suppress(sqlite3.Error):
                conn.execute(f"ROLLBACK TO {name}")
                conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


_savepoint_counter = 0


def _depth(conn: sqlite3.Connection) -> int:
    global _savepoint_counter
    _savepoint_counter += 1
    return _savepoint_counter


def fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.fts5_probe")
        return True
    except sqlite3.OperationalError:
        return False
