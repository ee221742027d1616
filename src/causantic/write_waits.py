"""A write that waits for another process's lock, told to whoever listens.

Only one process writes memory at a time; another writer waits for it, up to
``storage.busyTimeoutMs``. The store knows when a write waits (:func:`causantic.store.sqlite.begin`);
which process holds the lock SQLite does not say, so :func:`waiting` names it from what this home
records (:func:`causantic.ingest_runs.lock_holder`). An interface that wants its user told installs a
listener with :func:`listen`: the CLI does, on stderr. Hooks and servers install none, so their
writes wait as before, silently (a hook's output would reach the agent's context).
"""

from __future__ import annotations

from collections.abc import Callable

NOTICE_AFTER_MS = 1_000
"""How long a write waits for another process's lock before the listener hears of it."""

Listener = Callable[[str, float], None]
"""Called once per wait with what holds the lock, in words, and the seconds the write waits at most."""

_listener: Listener | None = None


def listen(listener: Listener | None) -> None:
    """Tell ``listener`` of each write of this process that waits past :data:`NOTICE_AFTER_MS`
    (None: tell no one)."""
    global _listener
    _listener = listener


def listening() -> bool:
    return _listener is not None


def waiting(timeout_ms: int) -> str:
    """A write has waited :data:`NOTICE_AFTER_MS` and waits on, up to ``timeout_ms`` in all: tell the
    listener; what holds the lock, in words (for the error if the wait times out)."""
    from causantic.home import causantic_home
    from causantic.ingest_runs import lock_holder

    holder = lock_holder(causantic_home())
    if _listener is not None:
        _listener(holder, timeout_ms / 1000)
    return holder
