"""Ingest rate into PostgreSQL from concurrent writers: the same chunks written by 1, then by N processes.

Each writer is its own process (as each member's machine is), with its own connection: it saves
its share of synthetic sessions (``_data.synthetic_sessions``: real corpus pieces and vectors)
the way ingest does after parsing and embedding, one session per transaction
(``PostgresStore.save_session``) and then its vectors (``PgVectorIndex.upsert``, HNSW kept current
by the server). Parsing and embedding are left out: they run on each member's own machine and do
not contend in the database. Every run writes into a new database; the rate is all chunks over the
time from the moment every writer is ready to the last one's end, and the database must then hold
every chunk exactly once.

Run by ``search_latency.py --backend postgres`` (``--writer-chunks``); a writer is
``python benchmarks/_writers.py URL SESSIONS_PICKLE MEMBER``.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEED = 20_251_124
MODEL = "all-minilm-l6-v2"


def compare(
    pieces: Sequence[str],
    vectors: Any,
    chunks: int,
    writer_counts: Sequence[int],
    database: Callable[[str], tuple[str, bool]],
) -> dict[str, Any]:
    """Chunks/s for each number of concurrent writers, on the same ``chunks`` chunks."""
    import _data
    import _postgres

    sessions = list(_data.synthetic_sessions(chunks, pieces, vectors, seed=SEED))
    out: dict[str, Any] = {"chunks": sum(len(s.chunks) for s in sessions), "sessions": len(sessions)}
    out["load_before"] = round(os.getloadavg()[0], 2)
    out["writers"] = {}
    exactly_once = True
    with tempfile.TemporaryDirectory(prefix="causantic-writers-") as folder:
        for n in writer_counts:
            url, _ = database(f"bench_writers_{n}_{os.getpid()}")
            try:
                result = _run(url, [sessions[i::n] for i in range(n)], Path(folder))
                exactly_once &= result["stored"] == out["chunks"]
            finally:
                _postgres.drop(url)
            out["writers"][str(n)] = result
            print(
                f"  {n} writer{'s' if n > 1 else ''}: {result['chunks_per_s']} chunks/s ({result['seconds']} s, "
                f"{result['stored']:,} chunks stored; load {round(os.getloadavg()[0], 2)})",
                flush=True,
            )
    out["exactly_once"] = exactly_once
    out["load_after"] = round(os.getloadavg()[0], 2)
    return out


def _run(url: str, shares: list[list[Any]], folder: Path) -> dict[str, Any]:
    from causantic.store.postgres.store import PostgresStore

    with PostgresStore(url, member="bench"):
        pass  # the schema made once, before the writers race to it
    env = dict(os.environ, PYTHONPATH=str(REPO / "src"))
    procs = []
    for i, share in enumerate(shares):
        data = folder / f"writer-{len(shares)}-{i}.pickle"
        data.write_bytes(pickle.dumps(share))
        procs.append(
            subprocess.Popen(
                [sys.executable, __file__, url, str(data), f"writer{i}"],
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
        )
    for proc in procs:  # every writer loaded and connected
        assert proc.stdout is not None and proc.stdout.readline().strip() == "READY"
    started = time.time()
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("GO\n")
        proc.stdin.close()
    ends = []
    for proc in procs:
        assert proc.stdout is not None
        ends.append(float(proc.stdout.read().split("END ")[1].split()[0]))
        if proc.wait() != 0:
            raise SystemExit(f"a writer failed (exit {proc.returncode})")
    seconds = max(ends) - started
    with PostgresStore(url, member="bench") as store:
        stored = int(store.counts()["chunks"])
    total = sum(len(s.chunks) for share in shares for s in share)
    return {"seconds": round(seconds, 2), "chunks_per_s": round(total / seconds, 1), "stored": stored}


def write(url: str, data: Path, member: str) -> None:
    from causantic.store.postgres.store import PostgresStore
    from causantic.store.postgres.vectors import PgVectorIndex
    from causantic.store.vectors import VectorRecord

    sessions = pickle.loads(data.read_bytes())
    store = PostgresStore(url, member=member)
    index = PgVectorIndex(url, MODEL, len(sessions[0].vectors[0]))
    index.count()  # connected (and the HNSW index made) before the start
    print("READY", flush=True)
    sys.stdin.readline()
    for s in sessions:
        project = store.resolve_project(s.project_path, s.project_path)
        with store.atomic():
            store.save_session(project, s.session_id, s.chunks)
        index.upsert([VectorRecord(c.id, c.content_hash, v) for c, v in zip(s.chunks, s.vectors, strict=True)])
    print(f"END {time.time()}", flush=True)
    index.close()
    store.close()


if __name__ == "__main__":
    sys.path.insert(0, str(REPO / "src"))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    write(sys.argv[1], Path(sys.argv[2]), sys.argv[3])
