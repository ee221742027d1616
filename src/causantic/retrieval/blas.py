"""Run retrieval's small matrix products on one BLAS thread.

numpy's BLAS (OpenBLAS) splits even the reranker's 100 × 384 product across every core, and its
idle worker threads then spin for about 0.1 s waiting for more work, taking a core from whatever
runs next. On a 2-core machine that doubled the CPU time of every search (SQLite, LanceDB and the
embedder all ran slower beside the spinning thread). These products take microseconds on one
thread, so retrieval limits BLAS to one thread while it runs; batch work such as clustering keeps
every core.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_lock = threading.Lock()
_active = 0  # retrieval calls running now, in any thread
_limit: Any = None  # threadpoolctl's limiter while any run


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Limit BLAS to one thread for the duration; nested and concurrent uses share one limit,
    lifted when the last of them ends (threadpoolctl's limit is process-wide)."""
    global _active, _limit
    with _lock:
        if _active == 0:
            _limit = _controller().limit(limits=1, user_api="blas")
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                _limit.restore_original_limits()
                _limit = None


_cached_controller: Any = None


def _controller() -> Any:
    """threadpoolctl's view of the loaded BLAS libraries, built once (it scans loaded libraries);
    numpy is imported first so its BLAS is among them."""
    global _cached_controller
    if _cached_controller is None:
        import numpy  # noqa: F401
        from threadpoolctl import ThreadpoolController

        _cached_controller = ThreadpoolController()
    return _cached_controller
