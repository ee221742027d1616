"""A process killed (SIGKILL: a crash, a closed laptop) while it builds, extends or saves the ANN
index leaves memory that answers correctly, and the next ``causantic embed`` leaves the index as an
uninterrupted one: every vector in it once (a forgotten one in no file), its scope map whole, no
temporary file left.

Real processes on real files: ``causantic embed`` (nothing to embed: it brings the index up to date,
as after an ingest) or ``causantic forget`` (which takes the forgotten rows out of the index file)
kills itself with SIGKILL at one point of the index's writing each run (a forget also just after its
chunk deletion commits, before anything else of it runs). The store
holds 10,500 chunks in three projects (the index is built from 10,000 vectors), with random unit
vectors written through the store's API instead of the embedding model: the index's files, build
and reads are the same whatever computed the vectors, and each stored vector is its own nearest
neighbour, which says whether a search still answers.
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from chunk_records import chunk_record
from process_support import causantic, subprocess_env

from causantic.config import load_config
from causantic.embedding.models import get_spec
from causantic.store.memory import MemoryStore
from causantic.store.vectors import ANN_INDEX_MIN_ROWS, VectorIndex, VectorRecord

faiss = pytest.importorskip("faiss", reason="the ANN index needs faiss-cpu (a default dependency)")
pytestmark = pytest.mark.slow

PROJECTS = 3
FIRST = 10_500  # chunks before the index is built
ADDED = 2_500  # chunks embedded since: more than ANN_TAIL_MAX_ROWS, so the next run extends the index
FORGET = ("forget", "p1", "--session", f"s1-{FIRST}", "--yes")  # 833 of the chunks added (FIRST + 1, + 4, ...)
FORGOTTEN = {f"c{i}" for i in range(FIRST + 1, FIRST + ADDED, PROJECTS)}
# `causantic ARGS`, killed (SIGKILL, nothing of Python's shutdown runs) when it reaches POINT:
# "training" (the index trained in memory, nothing written), or the rename of a temporary file it
# wrote in full: "scopes" (the scope map), "index" (the faiss file), "sidecar" (the JSON naming the
# rows the index holds); or "deleted": a forget's chunk deletion committed, nothing after it run.
KILLED_AT = """
import os, signal, sys
import faiss

point = sys.argv[1]
suffix = {"scopes": ".tmp.npz", "index": ".faiss.tmp", "sidecar": ".json.tmp"}.get(point)

def die(*_):
    os.kill(os.getpid(), signal.SIGKILL)

if point == "training":
    faiss.IndexIVFScalarQuantizer.train = die
if point == "deleted":
    from causantic.store.memory import MemoryStore

    delete_chunks = MemoryStore.delete_chunks

    def deleted(self, *args, **kwargs):
        delete_chunks(self, *args, **kwargs)
        die()

    MemoryStore.delete_chunks = deleted
real_replace = os.replace

def replace(src, dst, *args, **kwargs):
    if suffix and str(src).endswith(suffix):
        die()
    return real_replace(src, dst, *args, **kwargs)

os.replace = replace
from causantic.cli.main import main
sys.argv = ["causantic", *sys.argv[2:]]
main()
"""


def _index(home: Path) -> VectorIndex:
    spec = get_spec(load_config().embedding.model)
    return VectorIndex(home / "memory.db", home / "vectors", spec.id, spec.dims)


def _vector(i: int, dims: int) -> np.ndarray:
    row = np.random.default_rng(i).normal(size=dims).astype(np.float32)
    return row / np.linalg.norm(row)


def _add(home: Path, first: int, last: int) -> None:
    """Chunks ``c{first}``..``c{last - 1}``, spread over the projects, each with its random unit vector."""
    store, index = MemoryStore(home / "memory.db"), _index(home)
    try:
        with store.atomic():
            for p in range(PROJECTS):
                project = store.resolve_project(f"/work/p{p}", f"/work/p{p}")
                chunks = [chunk_record(i, session_id=f"s{p}-{first}") for i in range(first + p, last, PROJECTS)]
                store.save_session(project, f"s{p}-{first}", chunks)
        index.upsert([VectorRecord(f"c{i}", f"h{i}", _vector(i, index.dims)) for i in range(first, last)])
    finally:
        index.close()
        store.close()


def _embed(home: Path) -> subprocess.CompletedProcess[str]:
    return causantic("embed", env=subprocess_env(CAUSANTIC_HOME=str(home)), timeout=300)


def _killed(home: Path, point: str, *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_AT, point, *args],
        env=subprocess_env(CAUSANTIC_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == -signal.SIGKILL, f"{args} ended ({done.returncode}) before {point}: {done.stderr}"


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """'unindexed': chunks and vectors, no index yet; 'grown': an index of the first 10,500 and 2,500
    vectors added since; 'indexed': all 13,000 in the index."""
    root = tmp_path_factory.mktemp("ann-kills")
    unindexed = root / "unindexed"
    _add(unindexed, 0, FIRST)
    assert FIRST >= ANN_INDEX_MIN_ROWS
    grown = root / "grown"
    shutil.copytree(unindexed, grown)
    assert _embed(grown).returncode == 0
    assert (grown / "vectors").exists()
    _add(grown, FIRST, FIRST + ADDED)
    indexed = root / "indexed"
    shutil.copytree(grown, indexed)
    assert _embed(indexed).returncode == 0
    return {"unindexed": unindexed, "grown": grown, "indexed": indexed}


def _answers_correctly(home: Path, forgotten: set[str]) -> None:
    """Each of a spread of stored vectors is its own nearest neighbour, in all memory and in its
    project; a forgotten one is found nowhere."""
    store, index = MemoryStore(home / "memory.db"), _index(home)
    try:
        for i in range(7, FIRST + ADDED, (FIRST + ADDED) // 29):
            query = _vector(i, index.dims)
            if i >= index.count() + len(forgotten):
                break  # not stored in this memory
            project = store.find_projects(f"p{i % PROJECTS}")[0].id
            everywhere, in_project = index.search(query, limit=5), index.search(query, limit=5, project_ids=[project])
            if f"c{i}" in forgotten:
                assert forgotten.isdisjoint(hit.chunk_id for hit in [*everywhere, *in_project])
            else:
                assert everywhere[0].chunk_id == in_project[0].chunk_id == f"c{i}", (i, everywhere[:2], in_project[:2])
    finally:
        index.close()
        store.close()


def _as_built_whole(home: Path, total: int) -> None:
    """What an uninterrupted run leaves: an index holding every vector once, a scope map of every
    row, no temporary file."""
    index = _index(home)
    try:
        assert index.health(fresh=True).ann == "ready"
        assert int(faiss.read_index(str(index.ann_path)).ntotal) == total
        scopes = np.load(index.folder / f"{index.table_name}.scopes.npz")
        assert len(scopes["seqs"]) == total
    finally:
        index.close()
    assert [p.name for p in (home / "vectors").iterdir() if ".tmp" in p.name] == []


@pytest.mark.parametrize(
    ("store", "point"),
    [
        ("unindexed", "training"),
        ("unindexed", "index"),
        ("unindexed", "sidecar"),
        ("grown", "scopes"),
        ("grown", "index"),
        ("grown", "sidecar"),
        ("indexed", "deleted"),
        ("indexed", "index"),
        ("indexed", "scopes"),
        ("indexed", "sidecar"),
    ],
)
def test_an_index_write_killed_midway_answers_correctly_and_the_next_run_repairs_it(
    tmp_path: Path, stores: dict[str, Path], store: str, point: str
) -> None:
    """'indexed': a forget of 833 chunks, killed once their deletion is committed or while it takes
    their rows out of the index file."""
    home = tmp_path / "home"
    shutil.copytree(stores[store], home)
    forgotten = FORGOTTEN if store == "indexed" else set()
    total = FIRST + (0 if store == "unindexed" else ADDED) - len(forgotten)

    _killed(home, point, *(FORGET if forgotten else ("embed",)))

    _answers_correctly(home, forgotten)
    done = _embed(home)
    assert done.returncode == 0, done.stderr
    _as_built_whole(home, total)
    _answers_correctly(home, forgotten)
