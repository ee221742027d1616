"""How worker processes are started: the one rule the ingest pool and the store's feature worker share.

Below every layer, so both can use it; it starts nothing itself until asked.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any


def worker_context() -> multiprocessing.context.BaseContext:
    """Fork while this process runs no threads of faiss (OpenMP) or onnxruntime; spawn once it may.

    Trigger: a long-lived process (MCP server, hook worker) that already searched or embedded. Why:
    forking a process holding those libraries' threads can deadlock the child. Outcome: such a
    process pays the slower start of spawned workers; a plain batch ingest forks and starts at once.
    """
    threaded = any(name in sys.modules for name in ("faiss", "onnxruntime", "lancedb", "lance"))
    return multiprocessing.get_context("spawn" if threaded else "fork")


def worker_pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """Worker processes that compute beside this one, and end when this process ends however it
    ends: a worker left behind by a killed ingest (``kill -9``, the OOM killer) would otherwise wait
    for work forever, since it holds the task queue's pipe open itself. ``initializer(*initargs)``
    runs in each first."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=worker_context(),
        initializer=_watching_parent,
        initargs=(os.getpid(), initializer, initargs),
    )


def helper_process(
    initializer: Callable[..., None] | None = None, initargs: tuple[Any, ...] = ()
) -> ProcessPoolExecutor:
    """One such worker (:func:`worker_pool`)."""
    return worker_pool(1, initializer, initargs)


_PARENT_POLL_SECONDS = 0.2


def _watching_parent(parent: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]) -> None:
    # Ctrl-C reaches the terminal's whole process group: a worker stopped by it printed a traceback
    # of its own ('Process ForkProcess-2: … KeyboardInterrupt') under the command's message. The
    # parent alone handles it; a worker ends with it (below) or when the pool shuts down.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_exit_when_orphaned, args=(parent,), daemon=True).start()
    if initializer is not None:
        initializer(*initargs)


def _exit_when_orphaned(parent: int) -> None:
    """Exit at once when the parent is gone (this process is handed to another parent then)."""
    while os.getppid() == parent:
        time.sleep(_PARENT_POLL_SECONDS)
    os._exit(1)
