"""Chunks saved as they are made (issue 18): a pasted line of megabytes is never held as chunks
all at once, and the store ends exactly as when a worker planned the group and it was written whole.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from causantic.config import Config
from causantic.ingest import pipeline
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

REPO = Path(__file__).resolve().parents[2]
REAL_FOLDER = "randlee__claude-history"
# One real session with its sub-agents (964 KB), ingested before the huge line in the kill test.
REAL_SESSION_FOLDER = f"{REAL_FOLDER}/docs/examples/claude-history-subagents"
REAL_TEXT = "marot__spotter/test/fixtures/transcripts/258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def _long_line_session(folder: Path, corpus_dir: Path, size: int, session_id: str = "s-long-line") -> Path:
    """A session whose first prompt is one line of ``size`` characters of real transcript text,
    answered, then a second short turn: chunks before and after the long ones, edges across."""
    text = " ".join((corpus_dir / REAL_TEXT).read_text(encoding="utf-8").split())
    line = (text * (size // len(text) + 1))[:size]
    common = {"sessionId": session_id, "cwd": "/tmp/long-line"}
    records = [
        {"type": "user", "uuid": "u1", "timestamp": "2026-01-01T10:00:00Z", **common,
         "message": {"role": "user", "content": f"Why does this bundle fail?\n{line}"}},
        {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-01-01T10:01:00Z", **common,
         "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "The loader."}]}},
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2026-01-01T10:02:00Z", **common,
         "message": {"role": "user", "content": "And how do I fix the loader?"}},
        {"type": "assistant", "uuid": "a2", "parentUuid": "u2", "timestamp": "2026-01-01T10:03:00Z", **common,
         "message": {"id": "m2", "role": "assistant", "content": [{"type": "text", "text": "Pin its version."}]}},
    ]  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{session_id}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _store_rows(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Everything a user can get back from a store, in insertion order (``created_at``, the time
    of writing, left out)."""
    conn = sqlite3.connect(db)
    try:
        chunk_columns = [r[1] for r in conn.execute("PRAGMA table_info(chunks)") if r[1] not in ("rowid", "created_at")]
        return {
            "chunks": conn.execute(f"SELECT {', '.join(chunk_columns)} FROM chunks ORDER BY rowid").fetchall(),
            "sessions": conn.execute(
                "SELECT s.id, p.path, s.started_at, s.ended_at, s.team_name, s.source, s.title"
                " FROM sessions s JOIN projects p ON p.id = s.project_id ORDER BY s.id"
            ).fetchall(),
            "edges": conn.execute(
                "SELECT source_chunk_id, target_chunk_id, reference_type, initial_weight FROM edges"
                " ORDER BY source_chunk_id, target_chunk_id, reference_type"
            ).fetchall(),
            "keyword": conn.execute(
                "SELECT c.id FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid"
                " WHERE chunks_fts MATCH 'loader OR quokka OR session' ORDER BY c.id"
            ).fetchall(),
        }
    finally:
        conn.close()


def test_sessions_saved_as_their_chunks_are_made_are_stored_as_when_written_whole(
    corpus_dir: Path, tmp_path: Path, causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Real sessions and a 2 MB pasted line. One worker: every group is planned by the writer, its
    # chunks saved every 5,000 characters (so nearly every real session too is saved in several
    # batches). Two workers, no group large enough to stream: each is planned by a worker and
    # written whole, as before. Same chunks, ids, order, sessions (titles, times), edges, index.
    folder = tmp_path / "sessions"
    _long_line_session(folder, corpus_dir, 2_000_000)
    targets = [corpus_dir / REAL_FOLDER, folder]
    monkeypatch.setattr(pipeline, "STREAM_BATCH_CHARS", 5_000)
    with open_services(Config()) as streamed:
        report = ingest_paths(streamed, targets, embed=False, workers=1)
    assert report.errors == [] and report.chunks_added > 1_500
    monkeypatch.setattr(pipeline, "STREAM_FILE_BYTES", 1 << 40)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "whole"))
    with open_services(Config()) as whole:
        written_whole = ingest_paths(whole, targets, embed=False, workers=2)
    assert written_whole.chunks_added == report.chunks_added
    assert written_whole.edges_added == report.edges_added
    assert sorted(written_whole.new_chunk_ids) == sorted(report.new_chunk_ids)
    streamed_rows, whole_rows = _store_rows(causantic_home / "memory.db"), _store_rows(tmp_path / "whole" / "memory.db")
    for table, rows in whole_rows.items():
        assert streamed_rows[table] == rows, f"{table} differ"


def test_a_streamed_session_read_again_after_it_grew_keeps_its_chunks_and_links_the_new_turn(
    corpus_dir: Path, tmp_path: Path, causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The long session is read again when lines are appended: the chunks saved in batches the first
    # time are found unchanged, the new turn (one chunk) is added and linked, as a fresh ingest of the grown file.
    monkeypatch.setattr(pipeline, "STREAM_BATCH_CHARS", 20_000)
    path = _long_line_session(tmp_path / "sessions", corpus_dir, 1_500_000)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    path.write_text("".join(lines[:2]), encoding="utf-8")
    with open_services(Config()) as services:
        first = ingest_paths(services, [path], embed=False, workers=1)
        path.write_text("".join(lines), encoding="utf-8")
        grown = ingest_paths(services, [path], embed=False, workers=1)
    assert first.chunks_added > 1_000 and (grown.chunks_added, grown.chunks_updated) == (1, 0)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    with open_services(Config()) as fresh:
        ingest_paths(fresh, [path], embed=False, workers=1)
    assert _store_rows(causantic_home / "memory.db") == _store_rows(tmp_path / "fresh" / "memory.db")


@pytest.mark.slow
def test_an_ingest_killed_while_saving_a_huge_line_leaves_nothing_half_written_and_the_next_run_completes_it(
    corpus_dir: Path, tmp_path: Path, causantic_home: Path
) -> None:
    # A 9 MB pasted line beside a real session (a file of STREAM_FILE_BYTES, 8 MiB, or more is saved
    # as it is chunked, whatever the workers). The ingest is killed once the huge line's chunks
    # are being saved (the write-ahead log grows past 4 MB): the store holds none of them (its file
    # unmarked), and the next run ingests it, ending as one uninterrupted ingest in a fresh store.
    folder = tmp_path / "sessions"
    shutil.copytree(corpus_dir / REAL_SESSION_FOLDER, folder / REAL_FOLDER)
    _long_line_session(folder, corpus_dir, 9_000_000, session_id="z-long-line")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    command = [sys.executable, "-m", "causantic", "batch-ingest", str(folder), "--no-embed", "--json"]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wal = causantic_home / "memory.db-wal"
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline and not (wal.exists() and wal.stat().st_size > 4 << 20):
        time.sleep(0.02)
    assert proc.poll() is None, "the ingest ended before its huge line was being saved"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    conn = sqlite3.connect(causantic_home / "memory.db")
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert conn.execute("SELECT COUNT(*) FROM chunks WHERE session_id = 'z-long-line'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE id = 'z-long-line'").fetchone()[0] == 0
    assert conn.execute("SELECT COUNT(*) FROM files WHERE path LIKE '%z-long-line%'").fetchone()[0] == 0
    conn.close()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout)["errors"] == []
    os.environ["CAUSANTIC_HOME"] = str(tmp_path / "clean")
    with open_services(Config()) as clean:
        ingest_paths(clean, [folder], embed=False, workers=2)
    resumed, uninterrupted = _store_rows(causantic_home / "memory.db"), _store_rows(tmp_path / "clean" / "memory.db")
    assert pipeline.STREAM_FILE_BYTES < (folder / "z-long-line.jsonl").stat().st_size
    assert len(resumed["chunks"]) > 6_000
    # Row order may differ: the killed run committed the real session's groups before the line.
    assert {k: sorted(v, key=repr) for k, v in resumed.items()} == {
        k: sorted(v, key=repr) for k, v in uninterrupted.items()
    }
