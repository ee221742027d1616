"""Two members ingesting into team memory at the same moment, as two real `causantic ingest`
processes: one embeds every chunk still without a vector (the other's too, under the embedding lock
every member's process takes), and the other then finds none left. Each one's "vectors added" line
says whose vectors it wrote, and that its own chunks got theirs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from postgres_server import new_database
from process_support import subprocess_env
from transcript_files import write_session

from causantic.config import Config

pytestmark = pytest.mark.slow


def test_two_members_ingesting_at_once_are_told_whose_chunks_each_embedded(
    postgres_server: Any, tmp_path: Path
) -> None:
    url = new_database(postgres_server)
    files = {
        member: write_session(tmp_path / member, folder, f"0000000{n}-0000-4000-8000-00000000000{n}", [(ask, "ok")])
        for n, (member, folder, ask) in enumerate(
            (("alice", "/work/shop", "retry the upload"), ("bob", "/work/blog", "cache the thumbnails")), start=1
        )
    }
    key = f"causantic-embed:{Config().embedding.model}"
    with psycopg.connect(url, autocommit=True) as holder:
        # Held by the test: both ingests store their chunks, then wait here for the embedding lock.
        holder.execute("SELECT pg_advisory_lock(hashtext(%s))", (key,))
        runs = {}
        for member, path in files.items():
            env = subprocess_env(
                CAUSANTIC_HOME=str(tmp_path / member / "home"),
                CAUSANTIC_STORAGE_BACKEND="postgres",
                CAUSANTIC_STORAGE_POSTGRES_URL=url,
                CAUSANTIC_TEAM_USER=member,
                CAUSANTIC_TEAM_SHARE_PROJECTS="all",
                COLUMNS="200",
            )
            args = [sys.executable, "-m", "causantic", "ingest", str(path)]
            runs[member] = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        waiting = (
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND objid = (hashtext(%s)::bigint & 4294967295)::oid"
        )
        while holder.execute(waiting, (key,)).fetchone()[0] < len(runs):
            assert time.monotonic() < deadline, "the two ingests never both waited to embed"
            assert all(run.poll() is None for run in runs.values()), [run.communicate() for run in runs.values()]
            time.sleep(0.05)
        holder.execute("SELECT pg_advisory_unlock(hashtext(%s))", (key,))
    said = {}
    for member, run in runs.items():
        out, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
        [line] = [line for line in out.splitlines() if "vectors added" in line]
        said[member] = " ".join(line.split("│")[1].split())
    with psycopg.connect(url) as conn:
        missing = "SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.chunk_id = c.id)"
        assert conn.execute(missing).fetchone()[0] == 0
    by_count = {line.split()[0]: member for member, line in said.items()}
    assert said[by_count["2"]] == "2 (1 for a chunk this run did not store)"
    assert said[by_count["0"]] == "0 (this run's chunk was embedded by another ingest running at the same time)"
