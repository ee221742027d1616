"""Ctrl-C in the middle of a batch ingest, as a terminal sends it: to the command's whole process
group, its parsing workers included. The user reads one sentence, and the next run completes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from process_support import subprocess_env, wait_for
from transcript_files import write_session

pytestmark = pytest.mark.slow  # two real ingests of a few hundred sessions

SESSIONS = 200


def _children(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return []


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="finds the parsing workers in /proc")
def test_ctrl_c_during_a_batch_ingest_says_what_is_kept_and_the_next_run_completes(
    tmp_path: Path, causantic_home: Path
) -> None:
    """It printed 'Aborted!' (exit 1) under a worker's traceback ('Process ForkProcess-2: Traceback …
    KeyboardInterrupt')."""
    projects = tmp_path / "projects"
    for n in range(SESSIONS):
        turns = [
            (f"question {t} about widget {n}, module {t * n}", "lorem ipsum dolor sit amet " * 40) for t in range(30)
        ]
        write_session(projects, f"/home/dev/proj{n % 7}", f"{n:08d}-aaaa-4bbb-8ccc-000000000000", turns)
    command = [sys.executable, "-m", "causantic", "batch-ingest", str(projects), "--no-embed", "--workers", "2"]
    run = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    # Both workers started (a signal during a fork is lost in Python's own at-fork handlers), parsing.
    wait_for(lambda: len(_children(run.pid)) >= 2 or run.poll() is not None, timeout=120, interval=0.01)
    time.sleep(0.3)
    assert run.poll() is None, "the ingest ended before its workers could be interrupted"
    os.killpg(run.pid, signal.SIGINT)
    out, err = run.communicate(timeout=120)

    assert run.returncode == 130, out + err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and "Aborted" not in err
    assert err.startswith(
        "Interrupted. What was read and embedded so far is kept: run the same command again to finish"
    )

    again = subprocess.run([*command, "--json"], capture_output=True, text=True, env=subprocess_env(), timeout=300)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["files"] == SESSIONS and not report["errors"]
    stats = subprocess.run(
        [sys.executable, "-m", "causantic", "stats", "--json"], capture_output=True, text=True, env=subprocess_env()
    )
    assert json.loads(stats.stdout)["session_count"] == SESSIONS


@pytest.mark.parametrize("command", ["embed", "reindex"])
def test_ctrl_c_during_embedding_says_what_is_kept_and_how_to_finish(
    command: str, tmp_path: Path, causantic_home: Path
) -> None:
    """Both said 'Aborted!' (exit 1); reindex drops every vector first, so what to run next matters."""
    projects = tmp_path / "projects"
    for n in range(40):
        turns = [
            (f"question {t} about widget {n}, module {t * n}", "lorem ipsum dolor sit amet " * 20) for t in range(30)
        ]
        write_session(projects, "/home/dev/proj", f"{n:08d}-aaaa-4bbb-8ccc-000000000000", turns)
    ingested = subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--no-embed", str(projects)],
        capture_output=True,
        env=subprocess_env(),
    )
    assert ingested.returncode == 0, ingested.stderr
    run = subprocess.Popen(
        [sys.executable, "-m", "causantic", command, *(["--yes"] if command == "reindex" else [])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    time.sleep(3)  # loading the model or embedding: either way interrupted before 1,200 chunks are done
    assert run.poll() is None, "the embedding ended before it could be interrupted"
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 130, out + err
    assert "Interrupted. The vectors made so far are kept: `causantic embed` makes the rest." in err
    assert "Aborted" not in err and "Traceback" not in err
