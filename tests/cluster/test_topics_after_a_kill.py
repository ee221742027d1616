"""An ingest killed after its chunks were embedded, before they joined the topics they are near: the
next ingest joins them, though it adds no chunk itself. It said "unchanged: no new chunks", and the
chunks stayed outside every topic until the next full clustering, unlike an ingest never killed."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env
from transcript_files import write_session

from causantic.services import open_services

pytestmark = pytest.mark.slow

TURNS = [
    ("why does the nightly billing job fail", "It ran out of memory; I raised its limit to 2 GB."),
    ("the backup upload times out on large files", "Switched the upload to multipart with retries."),
    ("the weekly report email shows last month", "The query used the server's time zone; it uses UTC now."),
]


def _members(home: Path) -> set[tuple[str, str]]:
    with sqlite3.connect(home / "memory.db") as conn:
        rows = conn.execute("SELECT c.label, m.chunk_id FROM chunk_clusters m JOIN clusters c ON c.id = m.cluster_id")
        return set(rows.fetchall())


def test_chunks_a_killed_ingest_embedded_join_their_topics_on_the_next_ingest(
    causantic_home: Path, tmp_path: Path
) -> None:
    write_session(tmp_path / "first", "/work/shop", "aaaaaaaa-0000-4000-8000-000000000001", TURNS)
    assert causantic("ingest", str(tmp_path / "first")).returncode == 0
    assert causantic("cluster").returncode == 0
    with open_services() as services:  # a topic around the billing turn
        [(chunk,)] = services.store.conn.execute("SELECT id FROM chunks WHERE content LIKE '%billing%'")
        centroid = services.vectors.vectors([chunk])[chunk].tobytes()
        services.store.replace_clusters(services.vectors.model_id, [(None, "billing", centroid, [(chunk, 0.0)])])
    calm = tmp_path / "calm"
    shutil.copytree(causantic_home, calm)
    later = tmp_path / "later"  # the same question asked again in a later session: it joins the topic
    write_session(later, "/work/shop", "bbbbbbbb-0000-4000-8000-000000000002", TURNS[:1], day=9)

    done = causantic("ingest", str(later), env=subprocess_env(CAUSANTIC_HOME=str(calm)))
    assert done.returncode == 0, done.stderr
    dies_before_joining = (
        "import os, signal, sys\n"
        "import causantic.ingest.topics as topics\n"
        "topics.assign_new_chunks = lambda *_, **__: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from causantic.cli.main import main\n"
        f"sys.argv = ['causantic', 'ingest', {str(later)!r}]\n"
        "main()\n"
    )
    killed = subprocess.run([sys.executable, "-c", dies_before_joining], env=subprocess_env(), timeout=300)
    assert killed.returncode == -signal.SIGKILL
    again = causantic("ingest", "--json", str(later))
    assert again.returncode == 0, again.stderr

    assert len([m for m in _members(calm) if m[0] == "billing"]) == 2
    assert _members(causantic_home) == _members(calm)
