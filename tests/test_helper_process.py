"""A worker process started beside an ingest ends with it, however the ingest ends (issue 18)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from process_support import subprocess_env

# Starts a helper, prints its process id, then waits to be killed.
_PARENT = """
import os, time
from causantic.processes import helper_process
pool = helper_process()
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(120)
"""


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting to be reaped has ended)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "State:\tZ" not in status


def test_a_helper_process_ends_when_its_parent_is_killed() -> None:
    with subprocess.Popen(
        [sys.executable, "-c", _PARENT], stdout=subprocess.PIPE, text=True, env=subprocess_env()
    ) as parent:
        try:
            assert parent.stdout is not None
            helper = int(parent.stdout.readline())
            assert _running(helper)
            parent.send_signal(signal.SIGKILL)  # no clean-up runs: kill -9, the OOM killer
            parent.wait(timeout=10)
            deadline = time.monotonic() + 10
            while _running(helper) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not _running(helper), "the helper outlived its killed parent"
        finally:
            parent.kill()
