"""A damaged or full store reaches the user as one sentence, and reads never write (issue 18)."""

from __future__ import annotations

import json
import os
import resource
import signal
import stat
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env

from causantic.examples import SESSIONS_DIR


def _ingest() -> None:
    done = causantic("ingest", "--no-embed", str(SESSIONS_DIR))
    assert done.returncode == 0, done.stderr


def _one_sentence(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("command", [("stats",), ("search", "Safari redirect"), ("ingest", "--no-embed")])
def test_a_damaged_database_is_one_clear_sentence_for_every_command(
    causantic_home: Path, command: tuple[str, ...]
) -> None:
    _ingest()
    db = causantic_home / "memory.db"
    for extra in ("memory.db-wal", "memory.db-shm"):
        (causantic_home / extra).unlink(missing_ok=True)
    data = bytearray(db.read_bytes())
    data[100:4096] = b"\xff" * (4096 - 100)  # the header page: "database disk image is malformed"
    db.write_bytes(bytes(data))
    args = [*command, str(SESSIONS_DIR)] if command[0] == "ingest" else list(command)
    done = causantic(*args)
    assert done.returncode == 1
    line = _one_sentence(done.stderr)
    assert str(db) in line and "damaged" in line and "restore it from a backup" in line


def test_a_file_that_is_not_a_database_is_one_clear_sentence(causantic_home: Path) -> None:
    causantic_home.mkdir(parents=True)
    (causantic_home / "memory.db").write_bytes(b"this is not sqlite" * 512)
    done = causantic("stats")
    assert done.returncode == 1 and "damaged" in _one_sentence(done.stderr)


def test_reads_never_create_the_vector_table(causantic_home: Path) -> None:
    _ingest()
    assert not (causantic_home / "vectors").exists()
    for command in (("stats",), ("search", "Safari redirect loop"), ("search", "--json", "login")):
        done = causantic(*command)
        assert done.returncode == 0, done.stderr
    assert not (causantic_home / "vectors").exists()


def _limit_file_size() -> None:  # the child's files cannot grow past 64 KB: a full disk, for it alone
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))


def test_a_full_disk_stops_ingest_with_one_sentence_and_a_consistent_store(
    causantic_home: Path, corpus_dir: Path
) -> None:
    import subprocess
    import sys

    _ingest()
    before = causantic("stats", "--json")
    big = corpus_dir / "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--no-embed", str(big)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
        preexec_fn=_limit_file_size,
    )
    assert done.returncode == 1
    line = _one_sentence(done.stderr)
    assert "Ingest stopped with 0 of 1 changed file stored (the next run reads the 1 left)" in line, line
    assert "memory.db" in line and "intact" in line, line
    # The store is whole: SQLite finds no damage, exactly what was there before still reads (the
    # session that hit the full disk left no part of itself), and the next ingest completes.
    import sqlite3

    with sqlite3.connect(causantic_home / "memory.db") as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    stats = causantic("stats", "--json")
    assert stats.returncode == 0, stats.stderr
    assert json.loads(stats.stdout)["chunk_count"] == json.loads(before.stdout)["chunk_count"]
    again = causantic("ingest", "--no-embed", str(big))
    assert again.returncode == 0, again.stderr


@pytest.mark.slow
def test_vector_files_are_owner_only(causantic_home: Path) -> None:
    done = causantic("ingest", str(SESSIONS_DIR))
    assert done.returncode == 0, done.stderr
    files = list((causantic_home / "vectors").rglob("*"))
    assert files
    loose = [str(p) for p in files if stat.S_IMODE(p.stat().st_mode) & 0o077]
    assert loose == []
    assert os.stat(causantic_home / "memory.db").st_mode & 0o077 == 0


def test_a_failing_store_method_raises_store_error_never_a_driver_error(tmp_path: Path) -> None:
    """Callers above the store catch StoreError (one sentence, what to do), never sqlite3.Error."""
    import sqlite3

    from causantic.errors import StoreError
    from causantic.store.memory import MemoryStore

    path = tmp_path / "memory.db"
    with MemoryStore(path, busy_timeout_ms=50) as store:
        blocker = sqlite3.connect(path, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")  # another process is writing and keeps the lock
        try:
            with pytest.raises(StoreError, match="stayed busy") as raised:
                store.set_meta("k", "v")
            assert str(path) in str(raised.value)
            with pytest.raises(StoreError, match="stayed busy"), store.atomic():
                pass
            with pytest.raises(StoreError, match="stayed busy"), store.batch(), store.atomic():
                pass
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        store.set_meta("k", "v")  # the lock gone, the same call works
        assert store.meta_value("k") == "v"


def _limit_file_size_to_8_mb() -> None:  # memory.db fits; the model's optimised graph (~23 MB) does not
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (8 << 20, 8 << 20))


@pytest.mark.slow
def test_a_disk_too_full_for_the_models_cache_still_embeds_and_leaves_no_half_written_copy(
    causantic_home: Path, tmp_path: Path
) -> None:
    """The optimised graph is kept beside memory to start faster; on a full disk it could not be
    written, and ingest stopped: "Cannot load the model (Protobuf serialization failed). Reinstall
    Causantic". A copy half written by a process killed while writing it (minutes ago) is removed."""
    import subprocess
    import sys
    import time

    from causantic.embedding import Embedder
    from causantic.embedding.models import get_spec, locate

    spec = get_spec("all-minilm-l6-v2")
    Embedder(spec, locate(spec), cache_dir=tmp_path).embed_query("a warm-up")  # the cache's file name
    [optimised] = tmp_path.glob("*.onnx")
    killed = causantic_home / "cache" / f"{optimised.name}.4242.tmp"
    killed.parent.mkdir(parents=True)
    killed.write_bytes(optimised.read_bytes()[:3_000_000])
    an_hour_ago = time.time() - 3600
    os.utime(killed, (an_hour_ago, an_hour_ago))

    done = subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--json", str(SESSIONS_DIR)],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=300,
        preexec_fn=_limit_file_size_to_8_mb,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["vectors_added"] == report["chunks_added"] > 0
    assert list((causantic_home / "cache").glob("*.onnx*")) == []  # no copy, no half-written one
