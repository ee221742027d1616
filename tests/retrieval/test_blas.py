"""A process that searches keeps numpy's BLAS on one thread, so no idle BLAS worker spins beside
the next search's SQLite, LanceDB and ONNX work."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_a_search_limits_blas_to_one_thread_for_the_process() -> None:
    script = textwrap.dedent("""
        import threading
        from threadpoolctl import threadpool_info
        from causantic.config import Config
        from causantic.retrieval.search import SearchRequest
        from causantic.services import open_services

        def blas_threads():
            return sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"})

        import numpy
        before = blas_threads()
        with open_services(Config()) as services:
            # MCP tools run in worker threads: the limit must hold for the whole process.
            worker = threading.Thread(
                target=lambda: services.searcher.search(SearchRequest("anything", mode="keyword")))
            worker.start()
            worker.join()
        print(before, blas_threads())
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    before, after = out.stdout.strip().split("] [")
    assert before.strip("[") and after.strip("]") == "1", out.stdout


def test_a_search_before_numpy_loads_also_runs_blas_on_one_thread() -> None:
    # The cold CLI path: numpy is first imported by the search itself, and the limit comes from the
    # environment OpenBLAS reads when it loads (no threadpoolctl scan).
    script = textwrap.dedent("""
        import sys
        from causantic.config import Config
        from causantic.retrieval.search import SearchRequest
        from causantic.services import open_services

        assert "numpy" not in sys.modules
        with open_services(Config()) as services:
            services.searcher.search(SearchRequest("anything", mode="keyword"))
        import numpy
        from threadpoolctl import threadpool_info
        print(sorted({lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[1]", out.stdout + out.stderr
