"""Keep numpy's BLAS on one thread in a process that searches.

OpenBLAS splits even the reranker's 100 × 384 product across every core, and its idle worker
threads then spin for about 0.1 s waiting for more work, taking a core from whatever runs next. On a
2-core machine that doubled the CPU time of every search (SQLite, LanceDB and the embedder all ran
slower beside the spinning thread). Retrieval's products take microseconds on one thread.

The limit is process-wide and for good: OpenBLAS honours lowering its thread count from any
thread, but not reliably raising it again from a thread other than the one that lowered it, and
MCP tools run in worker threads. Processes that cluster (ingest, ``causantic cluster``) do not
search, so they keep every core.
"""

from __future__ import annotations

import os
import sys
import threading

_lock = threading.Lock()
_limited = False


def use_one_blas_thread() -> None:
    """Limit BLAS to one thread for the rest of the process (idempotent, cheap after the first call)."""
    global _limited
    if _limited:
        return
    with _lock:
        if not _limited:
            if "numpy" not in sys.modules:
                # Before numpy loads, OpenBLAS takes its thread count from the environment: free,
                # where threadpoolctl's scan of the loaded libraries costs 0.1-0.5 s of a cold CLI search.
                os.environ["OPENBLAS_NUM_THREADS"] = "1"
                os.environ["MKL_NUM_THREADS"] = "1"
            else:
                from threadpoolctl import threadpool_limits

                threadpool_limits(limits=1, user_api="blas")
            _limited = True
