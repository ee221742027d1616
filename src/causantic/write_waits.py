"""A write that waits for another process's lock, told to whoever listens.

Only one process writes memory at a time; another writer waits for it, up to
``storage.busyTimeoutMs``. The store knows when a write waits (:func:`causantic.store.sqlite.begin`);
which process holds the lock SQLite does not say, so :func:`waiting` names it from what this home
records (:func:`causantic.ingest_runs.lock_holder`). An interface that wants its user told installs a
listener with :func:`listen`: the CLI does, on stderr. Hooks and servers install none, so their
writes wait as before, silently (a hook's output would reach the agent's context).

What is recorded: a process that says what it is (:func:`named`: each CLI command, each hook) is
recorded as a writer the first time it takes the write lock (:func:`holding`), so that a process
waiting for it can name it ("the `causantic forget` started at 10:02 UTC (pid 4242)"). A process that
only reads never takes the lock and is never named as its holder. A server (the MCP server, the
dashboard), which mostly reads, says what it is with :func:`serving` instead, and each of its writes
is recorded while it runs (:func:`write`: "the MCP server's forget started at 10:02 UTC (pid 4242)",
"the dashboard's upgrade of memory's database", "the MCP server's clean-up of memory's log").
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

NOTICE_AFTER_MS = 1_000
"""How long a write waits for another process's lock before the listener hears of it."""

OWN, SPACE, LOG, EMBED, UNINDEX = "own", "space", "log", "embed", "unindex"
"""What a wait is for: the command's own write; upkeep after it that gives free pages back to the
disk; upkeep that cuts the write-ahead log back, which waits for readers on older snapshots too (a
log checkpoint); embedding, which waits for another process's embedding with no time limit (the
vector index's lock, ``store/vectors.py``); upkeep after a forget that takes its chunks out of the
ANN index file, under that lock. Ctrl-C skips upkeep (:func:`causantic.store.sqlite.upkeep`), not
the command's own write."""

Listener = Callable[[str, float, str], None]
"""Called once per wait with what holds the lock, in words, the seconds the write waits at most, and
what the wait is for (:data:`OWN`, :data:`SPACE`, :data:`LOG`, :data:`EMBED` or :data:`UNINDEX`);
the embedding lock's waits have no limit (0 s)."""

_listener: Listener | None = None
_name: str | None = None
_serving: list[str] = []  # what this process serves as (serving), once per block running
_named_at = 0.0  # when named: the process's start, near enough (a CLI command names itself first)
_recorded = False


def listen(listener: Listener | None) -> None:
    """Tell ``listener`` of each write of this process that waits past :data:`NOTICE_AFTER_MS`
    (None: tell no one)."""
    global _listener
    _listener = listener


def listening() -> bool:
    return _listener is not None


def named(words: str) -> None:
    """Say what this process is, as a person would ("`causantic forget`", "Claude Code's session-end
    hook"): named to whoever waits for its writes, and as what started its ingests."""
    global _name, _named_at
    _name, _named_at = words, time.time()


def name() -> str | None:
    """What this process said it is (:func:`named`); None when it said nothing (a program using the API)."""
    return _name


@contextmanager
def serving(words: str) -> Iterator[None]:
    """While the block runs, this process is a server that keeps memory open and mostly reads ("the
    MCP server", "the dashboard"): never recorded as a writer for its life, as a command is
    (:func:`holding`), since a process waiting for the lock would name it while it only reads; each of
    its writes is recorded while it runs instead (:func:`write`)."""
    _serving.append(words)
    try:
        yield
    finally:
        _serving.remove(words)  # blocks may end in any order (an SDK entering the lifespan per HTTP session)


@contextmanager
def write(what: str) -> Iterator[None]:
    """One write of this process while the block runs ("forget", "upgrade of memory's database"): in a
    server (:func:`serving`), recorded as "<server>'s <what>" (:func:`causantic.ingest_runs.writing`)
    so that a process waiting for it names it ("the MCP server's forget started at 10:02 UTC (pid
    4242)"); elsewhere nothing, as a named command records itself at its first write (:func:`holding`)."""
    if not _serving:
        yield
        return
    from causantic.home import causantic_home
    from causantic.ingest_runs import writing

    with writing(causantic_home(), f"{_serving[-1]}'s {what}"):
        yield


def holding() -> None:
    """This process has taken memory's write lock: the first time, if it is :func:`named`, record it
    as a writer (:func:`causantic.ingest_runs.record_writer`) until it exits."""
    global _recorded
    if _recorded or _name is None:
        return
    _recorded = True
    from causantic.home import causantic_home
    from causantic.ingest_runs import record_writer

    record_writer(causantic_home(), _name, _named_at)


def waiting(timeout_ms: int, *, why: str = OWN) -> str:
    """A write has waited :data:`NOTICE_AFTER_MS` and waits on, up to ``timeout_ms`` in all: tell the
    listener; what holds the lock, in words (for the error if the wait times out). ``why``: what the
    wait is for (:data:`OWN`, :data:`SPACE`, :data:`LOG`)."""
    from causantic.home import causantic_home
    from causantic.ingest_runs import lock_holder

    holder = lock_holder(causantic_home())
    if _listener is not None:
        _listener(holder, timeout_ms / 1000, why)
    return holder
