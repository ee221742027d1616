"""Opening SQLite the one way Causantic does it, and the one transaction mechanism.

Many processes share one database (an MCP server per Claude Code session, hooks ingesting in the
background, the CLI). WAL lets readers run beside a writer; ``busy_timeout`` makes a second writer
wait instead of failing; write transactions start with ``BEGIN IMMEDIATE`` so two writers never
deadlock on a read-to-write lock upgrade (which busy_timeout cannot resolve).

Bounded files. A reader holding an old snapshot keeps SQLite's automatic checkpoints from emptying
the write-ahead log, which then grows with every write and, by default, never shrinks while any
connection stays open (an MCP server always does). So every writer sets ``journal_size_limit``
(the log is cut back to :data:`JOURNAL_SIZE_LIMIT` whenever a checkpoint empties it), and the
store calls :func:`settle` after an ingest or a deletion: it gives free pages back to the file
system where the file allows it (``auto_vacuum = INCREMENTAL``, set on every new file) and
checkpoints the log with ``TRUNCATE``, waiting at most :data:`CHECKPOINT_WAIT_MS` for readers
(then it checkpoints what they allow, as ``PASSIVE`` does). What such a reader kept, a long-lived
process (MCP server, dashboard) empties once the log stops changing (:func:`checkpoint_if_quiet`),
not only the next writer. A file made before keeps its deleted rows' pages as free space inside it
until :func:`vacuum` rebuilds it (``causantic vacuum``).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import math
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from causantic import write_waits
from causantic.errors import StoreError, store_failure
from causantic.store.records import DiskShortfall, StoreSpace

# Generated columns (the keyword index's scope column, migration m004) arrived in SQLite 3.31.
MIN_SQLITE = (3, 31, 0)
JOURNAL_SIZE_LIMIT = 16 * 1024 * 1024
"""Bytes of write-ahead log a checkpoint that empties it leaves on disk (SQLite's default keeps all
of it: the log stays as large as it ever grew until the last connection closes)."""
CHECKPOINT_WAIT_MS = 2_000
"""How long :func:`settle` waits for readers on older snapshots before it checkpoints only what they
allow (the log is cut back later, when a checkpoint empties it)."""
WAIT_SLICE_MS = 250
"""Once a waiting write has been told (:func:`begin`), it waits on in slices this long: Python
handles Ctrl-C only between SQLite calls, and one call would wait out the whole timeout first."""
VACUUM_STEP_PAGES = 2_560
"""Free pages :func:`settle` gives back per transaction (10 MB of 4 KB pages): another writer waits
for one step, not for the whole release."""


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
            # The first read of the file: damage shows here. auto_vacuum takes only on a file
            # with no page yet (journal_mode = WAL writes the first).
            if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                conn.execute("PRAGMA auto_vacuum = INCREMENTAL")
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA journal_size_limit = {JOURNAL_SIZE_LIMIT}")
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
        name = f"sp_{id(conn)}_{next(_savepoint_numbers)}"
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
    begin(conn)
    try:
        yield conn
    except BaseException:
        if conn.in_transaction:
            with suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class LockHeld(sqlite3.OperationalError):
    """Another process held the write lock for the whole busy timeout; ``holder`` says which, in words."""

    def __init__(self, message: str, holder: str, waited_s: float) -> None:
        super().__init__(message)
        self.holder = holder
        self.waited_s = waited_s


def begin(conn: sqlite3.Connection) -> None:
    """``BEGIN IMMEDIATE``: take the write lock, waiting up to the connection's busy timeout for
    another writer (told to a listener, :func:`run_waiting`)."""
    run_waiting(conn, "BEGIN IMMEDIATE")


def run_waiting(conn: sqlite3.Connection, statement: str) -> None:
    """Run ``statement``, which takes the write lock first (``BEGIN IMMEDIATE``, ``VACUUM``, a script
    that begins with ``BEGIN IMMEDIATE``: run whole, by ``executescript``), waiting up to the
    connection's busy timeout for another writer; then this process counts as a writer of memory
    (:func:`causantic.write_waits.holding`).

    Trigger: another process writes memory (an ingest, a vacuum) while a command wants to write.
    Why: a command that waits in silence looks frozen, for up to ``storage.busyTimeoutMs``.
    Outcome: when someone listens (:mod:`causantic.write_waits`, the CLI), a wait past
    :data:`~causantic.write_waits.NOTICE_AFTER_MS` is told to them with what holds the lock (and,
    inside :func:`upkeep`, that it is upkeep), the rest of it runs in slices Ctrl-C can stop, and a
    timeout raises :class:`LockHeld` naming the holder. Otherwise (hooks, servers) the wait is one
    call, as SQLite makes it."""
    run = conn.executescript if ";" in statement else conn.execute
    if not write_waits.listening():
        run(statement)
        write_waits.holding()
        return
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    deadline = time.monotonic() + timeout / 1000
    holder = None
    conn.execute(f"PRAGMA busy_timeout = {min(timeout, write_waits.NOTICE_AFTER_MS)}")
    try:
        while True:
            try:
                run(statement)
                write_waits.holding()
                return
            except sqlite3.OperationalError as exc:
                if not _is_busy(exc):
                    raise
                left_ms = math.ceil((deadline - time.monotonic()) * 1000)
                if left_ms <= 0 and holder is None:
                    raise
                if left_ms <= 0:
                    raise LockHeld(str(exc), holder or "", timeout / 1000) from exc
            if holder is None:
                holder = write_waits.waiting(timeout, why=write_waits.SPACE if _upkeep.get() else write_waits.OWN)
            conn.execute(f"PRAGMA busy_timeout = {min(left_ms, WAIT_SLICE_MS)}")
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout}")


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    return "locked" in str(exc) or "busy" in str(exc)


class Transactions:
    """The store's one transaction mechanism: :meth:`atomic` blocks, optionally grouped by :meth:`batch`.

    Alone, an outermost :meth:`atomic` block is one ``BEGIN IMMEDIATE`` … ``COMMIT``. Inside
    :meth:`batch`, outermost blocks become savepoints of a shared transaction that commits at most
    every ``commit_every`` seconds (one transaction per small session would spend most of a batch
    ingest committing). Each block stays all-or-nothing; a kill loses only the uncommitted blocks,
    which the caller redoes; other writers wait at most ``commit_every`` for the lock.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._commit_every: float | None = None  # set while a batch is open
        self._begun_at: float | None = None  # when the batch's current transaction began
        self._depth = 0

    @contextmanager
    def atomic(self) -> Iterator[None]:
        batching = self._commit_every is not None
        if batching and self._depth == 0 and not self.conn.in_transaction:
            begin(self.conn)
            self._begun_at = time.perf_counter()
        self._depth += 1
        try:
            with atomic(self.conn):
                yield
        finally:
            self._depth -= 1
        if (
            batching
            and self._depth == 0
            and self._begun_at is not None
            and time.perf_counter() - self._begun_at >= (self._commit_every or 0.0)
        ):
            self._commit()

    @contextmanager
    def batch(self, commit_every: float) -> Iterator[None]:
        """Group the :meth:`atomic` blocks run inside into few transactions; commit the rest on
        leaving, roll back the uncommitted ones on an error. A batch inside a batch joins it."""
        if self._commit_every is not None:
            yield
            return
        self._commit_every = commit_every
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:
                with suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")
            raise
        else:
            self._commit()
        finally:
            self._commit_every = None
            self._begun_at = None

    def _commit(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("COMMIT")
        self._begun_at = None


_savepoint_numbers = itertools.count(1)  # a savepoint's name is unique in the process, so nested ones never clash


def _wal_path(path: Path) -> Path:
    return path.with_name(path.name + "-wal")


def space(conn: sqlite3.Connection, path: Path) -> StoreSpace:
    """The database file's size, its write-ahead log's, and the free pages inside the file."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    free = conn.execute("PRAGMA freelist_count").fetchone()[0] * page_size
    reclaims = conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2  # INCREMENTAL
    return StoreSpace(_size(path), _size(_wal_path(path)), free, reclaims)


def settle(conn: sqlite3.Connection) -> None:
    """Give free pages back to the file system (when the file allows it), then checkpoint the
    write-ahead log and truncate it (readers permitting, within :data:`CHECKPOINT_WAIT_MS`). Run
    outside any transaction, as :func:`upkeep`."""
    with upkeep(conn):
        if conn.execute("PRAGMA auto_vacuum").fetchone()[0] == 2:
            while conn.execute("PRAGMA freelist_count").fetchone()[0]:
                # sqlite3's execute steps a statement that returns no rows once, which frees one page:
                # a script steps it to the end.
                run_waiting(conn, f"BEGIN IMMEDIATE; PRAGMA incremental_vacuum({VACUUM_STEP_PAGES}); COMMIT")
        checkpoint(conn)


@contextmanager
def upkeep(conn: sqlite3.Connection) -> Iterator[None]:
    """Upkeep after a write (the keyword index rewritten, free pages given back, the log truncated).

    Trigger: another writer holds the lock, or the user presses Ctrl-C while upkeep waits for it.
    Why: what went before (an ingest, a forget) is committed and must not be reported as failed or
    interrupted; the upkeep is the next write's to do (free pages stay inside the file, reused by
    later writes, until then). Outcome: a wait is told as upkeep (:func:`run_waiting`), one that
    lasts the busy timeout gives up, and where someone listens (the CLI) Ctrl-C skips the rest of
    the upkeep and the command goes on to report; a hook or server stopped by a signal stops."""
    doing = _upkeep.set(True)
    try:
        with unless_busy():
            yield
    except KeyboardInterrupt:
        if not write_waits.listening():
            raise
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    finally:
        _upkeep.reset(doing)


_upkeep: ContextVar[bool] = ContextVar("causantic_upkeep", default=False)  # inside upkeep()


@contextmanager
def unless_busy() -> Iterator[None]:
    """Upkeep after a write: given up, not failed, when another writer holds the lock past busy_timeout."""
    try:
        yield
    except sqlite3.OperationalError as exc:
        if not _is_busy(exc):
            raise


def checkpoint(conn: sqlite3.Connection, wait_ms: int = CHECKPOINT_WAIT_MS) -> bool:
    """Copy the write-ahead log into the database and truncate it; whether it is now empty. Readers
    on older snapshots (and another writer) are waited for at most ``wait_ms``; then what they allow
    is copied, as ``PASSIVE`` does, and the log is cut back when a later checkpoint empties it
    (``journal_size_limit``).

    Trigger: a reader on an older snapshot (a search of the MCP server, the dashboard, another command)
    or another writer, when a command's write is done. Why: the command sat silent for up to
    :data:`CHECKPOINT_WAIT_MS` after its work, the only wait the CLI did not tell. Outcome: where
    someone listens, a wait past :data:`~causantic.write_waits.NOTICE_AFTER_MS` is told as upkeep
    (:data:`~causantic.write_waits.LOG`) and the rest runs in slices Ctrl-C can stop (inside
    :func:`upkeep`, Ctrl-C skips it); otherwise it is one call, as before."""
    timeout = conn.execute("PRAGMA busy_timeout").fetchone()[0]
    wait = min(timeout, wait_ms)
    tell = write_waits.listening() and wait > write_waits.NOTICE_AFTER_MS
    deadline = time.monotonic() + wait / 1000
    conn.execute(f"PRAGMA busy_timeout = {min(wait, write_waits.NOTICE_AFTER_MS) if tell else wait}")
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        if busy and tell:
            write_waits.waiting(wait, why=write_waits.LOG)
            while busy and (left_ms := math.ceil((deadline - time.monotonic()) * 1000)) > 0:
                conn.execute(f"PRAGMA busy_timeout = {min(left_ms, WAIT_SLICE_MS)}")
                busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        conn.execute(f"PRAGMA busy_timeout = {timeout}")
    return not busy


LogMark = tuple[int, int]
"""The write-ahead log's size and modification time: a write since changes it."""


def checkpoint_if_quiet(conn: sqlite3.Connection, path: Path, seen: LogMark | None) -> LogMark | None:
    """A long-lived process's upkeep while it waits for requests (an MCP server, the dashboard):
    when the log holds pages and has not changed since ``seen`` (no process wrote in between),
    checkpoint and truncate it, waiting for no one. What to pass as ``seen`` next time.

    Trigger: an ingest's :func:`settle` met a reader on an older snapshot and left the log as large as
    the ingest made it. Why: nothing else checkpoints until the next write, and this process's
    connection keeps the file open, so SQLite does not delete the log either. Outcome: the log is
    emptied within two calls of the last reader letting go."""
    try:
        stat = os.stat(_wal_path(path))
    except OSError:
        return None
    mark = (stat.st_size, stat.st_mtime_ns)
    if not stat.st_size:
        return None
    if mark != seen:  # written since the last look: writers may be mid-batch, look again later
        return mark
    # Copying a large log holds the write lock: named to a command that waits for it meanwhile.
    with write_waits.write("clean-up of memory's log"):
        if checkpoint(conn, wait_ms=0):
            return None
    return mark


def vacuum(conn: sqlite3.Connection, path: Path) -> tuple[StoreSpace, StoreSpace]:
    """Rebuild the file without its free pages, with incremental auto-vacuum from now on (so
    :func:`settle` gives back what later deletions free); the space before and after. Needs free
    disk of about the file's used size twice (:func:`vacuum_shortfalls`); readers carry on, writers
    wait for it. Killed midway, the file stays as it was (the copy is in a transaction)."""
    before = space(conn, path)
    conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # applies at the VACUUM
    run_waiting(conn, "VACUUM")
    with upkeep(conn):  # the rebuilt file is committed: Ctrl-C while the log waits for readers skips the rest
        checkpoint(conn)
    return before, space(conn, path)


def temp_folder() -> Path:
    """Where SQLite writes its temporary files (``VACUUM``'s copy of the database). On Unix the first
    writable folder of ``SQLITE_TMPDIR``, ``TMPDIR``, /var/tmp, /usr/tmp and /tmp, else the current
    one (``unixTempFileDir`` in SQLite's os_unix.c); elsewhere the system's temporary folder."""
    if os.name != "posix":
        return Path(tempfile.gettempdir())
    for folder in (os.environ.get("SQLITE_TMPDIR"), os.environ.get("TMPDIR"), "/var/tmp", "/usr/tmp", "/tmp"):
        if folder and os.path.isdir(folder) and os.access(folder, os.W_OK | os.X_OK):
            return Path(folder)
    return Path.cwd()


def vacuum_shortfalls(conn: sqlite3.Connection, path: Path) -> list[DiskShortfall]:
    """The disks without room for what :func:`vacuum` writes: a copy of the file's used pages in
    SQLite's temporary folder (unless temporary files are kept in memory), then each page again, in
    the write-ahead log beside the file, before the checkpoint copies them back. Both on one disk
    need twice the room."""
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0] - conn.execute("PRAGMA freelist_count").fetchone()[0]
    writes = [("the rebuilt file's write-ahead log", path.parent, pages * (page_size + _WAL_FRAME_HEADER))]
    if conn.execute("PRAGMA temp_store").fetchone()[0] != 2:  # 2: MEMORY
        writes.insert(0, ("SQLite's temporary copy", temp_folder(), pages * page_size))
    by_disk: dict[int, list[tuple[str, Path, int]]] = {}
    for write in writes:
        by_disk.setdefault(os.stat(write[1]).st_dev, []).append(write)
    shortfalls = []
    for on_disk in by_disk.values():
        free = shutil.disk_usage(on_disk[0][1]).free
        if free < sum(size for _, _, size in on_disk):
            shortfalls.append(DiskShortfall(path, tuple(on_disk), free))
    return shortfalls


_WAL_FRAME_HEADER = 24  # bytes before each page in the write-ahead log


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        conn.execute("DROP TABLE temp.fts5_probe")
        return True
    except sqlite3.OperationalError:
        return False


T = TypeVar("T")


Translate = Callable[[BaseException, object], Exception]


def raising_store_errors(
    location: Callable[[Any], object],
    errors: type[BaseException] | tuple[type[BaseException], ...] = sqlite3.Error,
    translate: Translate = store_failure,
) -> Callable[[type[T]], type[T]]:
    """Class decorator: every public method (inherited ones too) turns an SQLite failure into a
    :class:`~causantic.errors.StoreError` naming ``location(self)`` and what to do, so no caller
    above the store sees (or imports) ``sqlite3``. Covers results read lazily (generators) and
    context managers (a COMMIT that fails on leaving ``atomic``). Another backend passes its
    driver's ``errors`` and its own ``translate``."""

    def decorate(cls: type[T]) -> type[T]:
        for name in dir(cls):  # its own methods and those it inherits (store.base.SqlStore's)
            member = inspect.getattr_static(cls, name)
            if not name.startswith("_") and inspect.isfunction(member):
                setattr(cls, name, _translating(member, location, errors, translate))
        return cls

    return decorate


def _translating(
    method: Callable[..., Any],
    location: Callable[[Any], object],
    errors: type[BaseException] | tuple[type[BaseException], ...],
    translate: Translate,
) -> Callable[..., Any]:
    if inspect.isgeneratorfunction(method):

        @functools.wraps(method)
        def lazily(self: Any, *args: Any, **kwargs: Any) -> Iterator[Any]:
            try:
                yield from method(self, *args, **kwargs)
            except errors as exc:
                raise translate(exc, location(self)) from exc

        return lazily

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            result = method(self, *args, **kwargs)
        except errors as exc:
            raise translate(exc, location(self)) from exc
        if isinstance(result, AbstractContextManager):
            return _TranslatingContext(result, location(self), errors, translate)
        return result

    return call


class _TranslatingContext(AbstractContextManager[Any]):
    def __init__(
        self,
        inner: AbstractContextManager[Any],
        where: object,
        errors: type[BaseException] | tuple[type[BaseException], ...],
        translate: Translate,
    ) -> None:
        self._inner = inner
        self._where = where
        self._errors = errors
        self._translate = translate

    def __enter__(self) -> Any:
        try:
            return self._inner.__enter__()
        except self._errors as exc:
            raise self._translate(exc, self._where) from exc

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> bool | None:
        try:
            return self._inner.__exit__(exc_type, exc, tb)
        except self._errors as error:
            raise self._translate(error, self._where) from error
