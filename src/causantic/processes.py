"""How worker processes are started: the one rule the ingest pool and the store's feature worker share.

Below every layer, so both can use it; it starts nothing itself.
"""

from __future__ import annotations

import multiprocessing
import sys


def worker_context() -> multiprocessing.context.BaseContext:
    """Fork while this process runs no threads of faiss (OpenMP) or onnxruntime; spawn once it may.

    Trigger: a long-lived process (MCP server, hook worker) that already searched or embedded. Why:
    forking a process holding those libraries' threads can deadlock the child. Outcome: such a
    process pays the slower start of spawned workers; a plain batch ingest forks and starts at once.
    """
    threaded = any(name in sys.modules for name in ("faiss", "onnxruntime", "lancedb", "lance"))
    return multiprocessing.get_context("spawn" if threaded else "fork")
