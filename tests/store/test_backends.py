"""The two backends behave alike: SQLite and PostgreSQL give the same memory from the same transcripts.

Every test here runs on both (``backend_config``); the corpus tests also compare the two directly.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from chunk_records import chunk_record
from postgres_server import backend_settings, drop_ann_indexes

from causantic.config import Config
from causantic.ingest.pipeline import remove_chunks
from causantic.ingest.service import ingest_paths
from causantic.retrieval.search import SearchRequest
from causantic.services import Services, open_services
from causantic.store.fts import identifier_terms
from causantic.store.records import ChunkRecord, ChunkScope

DOCS = [
    "def parse_config(path): raise ValueError('E0425 missing field')",
    "const getUserName = () => user.name",
    "edit src/auth/session.ts to set sameSite lax",
    "the weather is nice today",
]
# Corpus projects with several sessions each, small enough to ingest in seconds.
PROJECTS = ("Entrolution__causantic", "ai4curation__ai-blame", "ConfabulousDev__confab-web")
QUERIES = (
    "how are chunks linked into a causal graph",
    "blame annotations for AI generated lines",
    "session sharing web upload",
    "pytest fixture failing",
    "README installation instructions",
)


@pytest.fixture
def services(backend_config: Config) -> Iterator[Services]:
    with open_services(backend_config) as opened:
        yield opened


def _chunk(i: int, text: str) -> ChunkRecord:
    at = f"2026-01-01T00:00:0{i}.000000Z"
    return chunk_record(
        i,
        start_time=at,
        end_time=at,
        content=text,
        search_terms=identifier_terms(text),
        approx_tokens=10,
        message_uuids=(f"m{i}",),
    )


def _saved(services: Services) -> dict[str, str]:
    store = services.store
    with store.atomic():
        project = store.resolve_project("/work/demo", "/work/demo")
        store.save_session(project, "s1", [_chunk(i, d) for i, d in enumerate(DOCS)])
    return {f"c{i}": d for i, d in enumerate(DOCS)}


def test_snake_case_camel_case_paths_and_error_codes_are_found(services: Services) -> None:
    texts = _saved(services)

    def first(query: str) -> str:
        hits = services.store.keyword_search(query, limit=5)
        assert hits, query
        return texts[hits[0][0]]

    assert first("parse_config").startswith("def parse_config")
    assert first("getUserName").startswith("const getUserName")
    assert first("user name").startswith("const getUserName")
    assert first("session.ts").startswith("edit src/auth")
    assert first("auth/session").startswith("edit src/auth")
    assert first("E0425").startswith("def parse_config")
    assert services.store.keyword_search("weather forecast tomorrow", limit=5)[0][0] == "c3"


@pytest.mark.parametrize(
    "query",
    ['foo-bar "x', "AND", "NEAR(", "ünïcödé 日本語", "src/auth/session.ts", "'; DROP TABLE chunks; --", "a:b & c | !d"],
)
def test_hostile_queries_are_words_never_errors(services: Services, query: str) -> None:
    _saved(services)
    services.store.keyword_search(query, limit=5)
    assert services.store.counts()["chunks"] == len(DOCS)


def test_saving_a_session_twice_stores_every_chunk_once(services: Services) -> None:
    _saved(services)
    _saved(services)
    assert services.store.counts()["chunks"] == len(DOCS)
    assert services.store.counts()["sessions"] == 1


def test_a_session_whose_chunks_were_all_forgotten_stays_gone_when_its_transcript_is_read_again(
    services: Services,
) -> None:
    """An ingest reading a forgotten session's transcript again (`--force`, or beside the forget) brought
    its row back without a chunk: `stats` said 'sessions 3, chunks 0' after forgetting the project."""
    remove_chunks(services.store, services.vectors, list(_saved(services)))
    _saved(services)
    assert (services.store.counts()["sessions"], services.store.counts()["chunks"]) == (0, 0)


def test_a_topic_whose_chunks_were_all_forgotten_leaves_the_topic_count(services: Services) -> None:
    """On PostgreSQL `stats` went on counting it, sized 0, until the next clustering."""
    ids = list(_saved(services))
    centroid = bytes(8)
    services.store.replace_clusters(
        "m", [(None, "parsing", centroid, [(ids[0], 0.1), (ids[1], 0.2)]), (None, "weather", centroid, [(ids[3], 0.1)])]
    )
    assert services.store.counts()["clusters"] == 2
    remove_chunks(services.store, services.vectors, [ids[3]])
    assert services.store.counts()["clusters"] == 1


def test_chunks_an_ingest_no_longer_makes_leave_their_topics_sizes(services: Services) -> None:
    """An ingest that drops a session's superseded chunks (new ingest rules, a turn's text shrank) took
    them out of their topics but not out of the topics' sizes: `stats` and the topics map counted a topic
    whose chunks were all gone, and a topic at its old size, until the next clustering."""
    ids = list(_saved(services))
    centroid = bytes(8)
    store = services.store
    store.replace_clusters(
        "m", [(None, "parsing", centroid, [(ids[0], 0.1), (ids[1], 0.2)]), (None, "weather", centroid, [(ids[3], 0.1)])]
    )
    with store.atomic():
        assert store.drop_superseded("s1", [ids[1], ids[3]]) == 2
    assert store.counts()["clusters"] == 1
    assert [(label, size) for _, label, size in store.topic_sizes("m")] == [("parsing", 1)]


def test_a_session_prefix_matches_its_case_exactly_on_both_backends(services: Services) -> None:
    """ChunkScope matches values literally: a forget by "S1" must not take session "s1" on SQLite
    (whose LIKE ignores ASCII case) when PostgreSQL would leave it."""
    _saved(services)
    [project] = services.store.find_projects("demo")
    in_scope = {"project_ids": (project.id,)}
    assert len(list(services.store.chunks_in(ChunkScope(**in_scope, session_prefix="s")))) == len(DOCS)
    assert list(services.store.chunks_in(ChunkScope(**in_scope, session_prefix="S"))) == []
    assert services.store.count_chunks(ChunkScope(**in_scope, session_prefix="S1")) == 0


def test_a_project_is_found_by_the_end_of_its_path_in_any_case_on_both_backends(services: Services) -> None:
    """`--project Demo` names /work/demo, and `--project über` names /work/Über, on both backends
    alike (SQLite's LIKE folds ASCII letters only, PostgreSQL's ILIKE every letter)."""
    _saved(services)
    services.store.resolve_project("/work/Über", "/work/Über")
    assert [p.path for p in services.store.find_projects("Demo")] == ["/work/demo"]
    assert [p.path for p in services.store.find_projects("WORK/DEMO")] == ["/work/demo"]
    assert [p.path for p in services.store.find_projects("work/über")] == ["/work/Über"]
    assert services.store.find_projects("dem") == []  # the end of the path, whole segments only
    assert services.store.find_projects("50%") == []  # a LIKE wildcard is a plain character


def _corpus_files(corpus_dir: Path) -> list[Path]:
    return sorted(p for project in PROJECTS for p in (corpus_dir / project).rglob("*.jsonl"))


def test_the_corpus_gives_the_same_memory_on_both_backends(
    backend_config: Config, corpus_dir: Path, tmp_path: Path
) -> None:
    files = _corpus_files(corpus_dir)
    with open_services(Config()) as reference:  # SQLite, in this test's CAUSANTIC_HOME
        ingest_paths(reference, files, embed=False, workers=1)
        expected = reference.store.counts()
    os.environ["CAUSANTIC_HOME"] = str(tmp_path / "other-home")  # restored by the autouse fixture
    with open_services(backend_config) as services:
        report = ingest_paths(services, files, embed=False, workers=1)
        counts = services.store.counts()
        for key in ("chunks", "edges", "sessions", "projects", "agents", "files", "sources"):
            assert counts[key] == expected[key], key
        assert report.chunks_added == expected["chunks"]
        again = ingest_paths(services, files, embed=False, workers=1)
        assert again.files_unchanged == len(files) and again.chunks_added == 0

        # Forgotten chunks stay forgotten when their transcript is read again.
        session = services.store.session_summaries(services.store.projects_with_chunks()[0])[0].session_id
        gone = services.store.session_chunk_ids(session)
        assert remove_chunks(services.store, services.vectors, gone) == len(gone)
        ingest_paths(services, files, embed=False, workers=1, force=True)
        assert services.store.counts()["chunks"] == expected["chunks"] - len(gone)
        assert not services.store.get_chunks(gone)


@pytest.fixture(scope="module")
def searched_corpus(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, corpus_dir: Path
) -> dict[str, dict[str, list[str]]]:
    """Top-5 sessions of each query, hybrid search, per backend, over the same corpus projects."""
    files = _corpus_files(corpus_dir)
    out: dict[str, dict[str, list[str]]] = {}
    for backend in ("sqlite", "postgres"):
        config = backend_settings(request, backend)
        previous = os.environ.get("CAUSANTIC_HOME")
        os.environ["CAUSANTIC_HOME"] = str(tmp_path_factory.mktemp(backend))
        try:
            with open_services(config) as services:
                ingest_paths(services, files, workers=1)
                out[backend] = {}
                for query in QUERIES:
                    hits = services.searcher.search(SearchRequest(query, limit=10, floor=0.0)).hits
                    out[backend][query] = list(dict.fromkeys(h.chunk.session_id for h in hits))[:5]
        finally:
            if previous is not None:
                os.environ["CAUSANTIC_HOME"] = previous
    return out


@pytest.mark.slow
@pytest.mark.shared
@pytest.mark.parametrize("query", QUERIES)
def test_hybrid_search_finds_the_same_top_sessions_on_both_backends(
    searched_corpus: dict[str, dict[str, list[str]]], query: str
) -> None:
    # The keyword lists are not identical (FTS5's budgeted bm25 against PostgreSQL's bounded ranking
    # keep a few different weak candidates), and query feedback leans on the best candidates, so two
    # close sessions may swap places; the session one backend puts first must still be the other's
    # first or second, and the first three must mostly agree.
    sqlite, postgres = searched_corpus["sqlite"][query], searched_corpus["postgres"][query]
    assert sqlite, query
    assert postgres[0] in sqlite[:2] and sqlite[0] in postgres[:2]
    assert len(set(postgres[:3]) & set(sqlite[:3])) >= min(2, len(sqlite))


def test_a_vector_search_within_a_project_returns_its_nearest_chunks_as_many_as_asked(services: Services) -> None:
    # pgvector 0.6 applies a WHERE filter after its HNSW walk, which keeps hnsw.ef_search rows: on
    # PostgreSQL a search within a project holding a tenth of a store large enough for the planner
    # to walk the index came back with fewer hits than asked.
    import dataclasses

    import numpy as np

    from causantic.store.vectors import VectorRecord

    chunks, projects = 5000, 10
    rng = np.random.default_rng(5)
    matrix = rng.normal(size=(chunks, services.embedder.dims)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    store, index = services.store, services.vectors
    members: dict[int, list[int]] = {}
    for p in range(projects):
        project = store.resolve_project(f"/work/p{p}", f"/work/p{p}")
        rows = list(range(p, chunks, projects))
        with store.atomic():
            store.save_session(
                project, f"s{p}", [dataclasses.replace(_chunk(i, f"text {i}"), session_id=f"s{p}") for i in rows]
            )
        members[project.id] = rows
    if services.config.storage.backend == "postgres":
        drop_ann_indexes(index.conn)  # built again over all 5,000 below, in one pass
    index.upsert([VectorRecord(f"c{i}", f"h{i}", matrix[i]) for i in range(chunks)])
    index.ensure_ann_index()
    for limit in (10, 100):
        for project_id, rows in list(members.items())[:3]:
            query = matrix[rows[0]] + rng.normal(scale=0.3, size=matrix.shape[1]).astype(np.float32)
            query /= np.linalg.norm(query)
            exact = sorted(rows, key=lambda i: -float(matrix[i] @ query))[:limit]
            hits = index.search(query, limit=limit, project_ids=[project_id])
            assert [h.chunk_id for h in hits] == [f"c{i}" for i in exact]
            assert all(abs(h.similarity - float(matrix[int(h.chunk_id[1:])] @ query)) < 1e-5 for h in hits)
