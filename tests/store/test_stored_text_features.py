"""Chunks keep the text features search scores them by (stems, own-word stems, bulk share), computed
when they are written; a store from before that is filled when migrated, and searches the same.

The features are a cache of what the text gives: whatever the text, the kept ones must equal what
scoring computes from the text itself, or a search would rank differently depending on when its
chunks were written.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from chunk_records import chunk_record
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.mentions import listing_share, own_stem_words
from causantic.retrieval.relevance import QueryProfile, QueryTerm, chunk_bulk, chunk_stems
from causantic.retrieval.search import SearchRequest
from causantic.services import Services, open_services
from causantic.store import features, migrations
from causantic.store.features import bulk_share, own_word_stems, split_tool_output, word_stems
from causantic.store.fts import identifier_terms
from causantic.store.memory import MemoryStore
from causantic.store.postgres import migrations as pg_migrations
from causantic.store.records import ChunkRecord, StoredChunk

# Pieces of what chunk text holds: section markers (listing tools and others), prose, identifiers,
# JSON pairs, long runs, line breaks of every kind, and words outside ASCII.
_PIECES = st.sampled_from(
    [
        "[User] ",
        "[Assistant] ",
        "[Tool:Bash] ",
        "[Result:Bash] ",
        "[Result:Grep] ",
        "[Error:WebFetch] ",
        "[Result:Read] ",
        "\n",
        "\r\n",
        "\x0c",
        "\x1e",
        " ",
        "fixed the parsing of configs ",
        "parse_config ",
        "getUserName ",
        '"key": "value", ',
        "x" * 61,
        "café ",
        "Straße ",
        "数据库 ",
        "\u3000",
        "1a2b3c",
    ]
)
EXAMPLE = next((SESSIONS_DIR / "-home-dev-acme-shop").glob("*.jsonl"))  # any transcript: ingest runs

TEXTS = st.one_of(st.lists(_PIECES, min_size=1, max_size=40).map("".join), st.text(min_size=1, max_size=300))


def _chunk(i: int, text: str, session: str = "s1") -> ChunkRecord:
    """Chunk ``c{i}`` of ``session`` holding ``text`` (a new text, a new hash: saved again, it is rewritten)."""
    return chunk_record(
        i, session_id=session, content=text, search_terms=identifier_terms(text), content_hash=f"h{i}-{hash(text)}"
    )


def _profile(words: list[str]) -> QueryProfile:
    return QueryProfile(tuple(QueryTerm((w,), (), 1.0 + len(w) / 10, False) for w in words))


def test_features_kept_at_ingest_equal_the_ones_computed_from_the_text(tmp_path: Path) -> None:
    ids = itertools.count()
    with MemoryStore(tmp_path / "memory.db") as store:
        with store.atomic():
            project = store.resolve_project("/work/demo", "/work/demo")

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(TEXTS)
        def check(text: str) -> None:
            i = next(ids)
            with store.atomic():
                store.save_session(project, f"s{i}", [_chunk(i, text, f"s{i}")])
            kept = store.get_chunks([f"c{i}"])[f"c{i}"]
            assert kept.content == text and kept.features is not None
            fresh = _without_features(kept)
            assert chunk_stems(kept) == chunk_stems(fresh) == word_stems(text)
            assert chunk_bulk(kept) == chunk_bulk(fresh) == bulk_share(text)
            assert store.session_opening_stems([f"s{i}"]) == {f"s{i}": own_word_stems(text)}
            own = word_stems(split_tool_output(text)[0])
            for words in (sorted(word_stems(text))[:3], sorted(own)[-2:], ["parse", "config", "café"]):
                profile = _profile(words)
                stored, recomputed = chunk_stems(kept), word_stems(text)
                assert listing_share(profile, stored, own_stem_words(kept, stored)) == listing_share(
                    profile, recomputed, own_stem_words(fresh, recomputed)
                )

        check()


def test_a_session_long_enough_for_the_feature_worker_keeps_the_same_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``PARALLEL_FEATURE_CHARS`` the features are computed in another process, a batch at a
    time (lowered here, so a few thousand chunks cross it and are split into several batches):
    each chunk keeps the features of its own text, in order."""
    monkeypatch.setattr(features, "PARALLEL_FEATURE_CHARS", 10_000)
    texts = [f"[User] fix parser {i}\n[Result:Bash] commit {i:x} lexer getUserName{i}" for i in range(2_500)]
    with MemoryStore(tmp_path / "memory.db") as store, store.atomic():
        project = store.resolve_project("/work/demo", "/work/demo")
        store.save_session(project, "s1", [_chunk(i, text) for i, text in enumerate(texts)])
        kept = store.get_chunks([f"c{i}" for i in range(len(texts))])
    for i, text in enumerate(texts):
        stored = kept[f"c{i}"].features
        assert stored is not None
        assert (stored.stems, stored.own_stems, stored.bulk) == features.feature_values(text)


_PARENT = os.getpid()


def _dies_in_the_worker(chunks: list[tuple[str, str | None]]) -> list[features.TextColumns]:
    """The worker's batch function, except that the worker process dies at the third batch."""
    if os.getpid() != _PARENT and "chunk 2000" in chunks[0][0]:
        os._exit(1)
    return [features.text_columns(text, terms) for text, terms in chunks]


@pytest.mark.parametrize("worker", ["lives", "is killed"])
def test_a_huge_write_keeps_each_chunks_features_and_search_terms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: str
) -> None:
    """Past ``PARALLEL_FEATURE_CHARS`` (lowered here) the features, and the search terms of chunks
    that come without them (a huge pasted text's), are made in a worker process; if the worker dies
    (killed) in the middle, the writer makes the rest itself. Every chunk keeps those of its own text."""
    monkeypatch.setattr(features, "PARALLEL_FEATURE_CHARS", 10_000)
    if worker == "is killed":
        monkeypatch.setattr(features, "_batch_text_columns", _dies_in_the_worker)
    texts = [f"[User] chunk {i} fix parserError\n[Result:Bash] commit {i:x} getUserName{i}" for i in range(4_000)]
    texts[3999] += " parseQuokkaTree"  # "quokka" is only in its search terms (made for it: an odd chunk)
    chunks = [_chunk(i, text) for i, text in enumerate(texts)]
    chunks = [replace(c, search_terms=None) if i % 2 else c for i, c in enumerate(chunks)]
    with MemoryStore(tmp_path / "memory.db") as store, store.atomic():
        project = store.resolve_project("/work/demo", "/work/demo")
        store.save_session(project, "s1", chunks)
        kept = store.get_chunks([f"c{i}" for i in range(len(texts))])
        terms = dict(store.conn.execute("SELECT id, search_terms FROM chunks"))
    with MemoryStore(tmp_path / "memory.db") as store:
        found = store.keyword_search("quokka")
    for i, text in enumerate(texts):
        stored = kept[f"c{i}"].features
        assert stored is not None and (stored.stems, stored.own_stems, stored.bulk) == features.feature_values(text)
        assert terms[f"c{i}"] == identifier_terms(text)
    assert [hit for hit, _ in found] == ["c3999"]  # its camelCase parts are searchable


def test_a_rewritten_chunk_keeps_the_features_of_its_new_text(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "memory.db") as store, store.atomic():
        project = store.resolve_project("/work/demo", "/work/demo")
        store.save_session(project, "s1", [_chunk(1, "[User] fix the parser\n[Result:Bash] commit 1a2b lexer")])
        store.save_session(project, "s1", [_chunk(1, '{"svg": "' + "M0 0L1 1" * 40 + '"}')])
        chunk = store.get_chunks(["c1"])["c1"]
        assert chunk.features is not None
        assert chunk_stems(chunk) == word_stems(chunk.content) and "parser" not in chunk_stems(chunk)
        assert chunk.features.own_stems is None and chunk_bulk(chunk) == bulk_share(chunk.content) > 0.9


def _without_features(chunk: StoredChunk) -> StoredChunk:
    from dataclasses import replace

    return replace(chunk, features=None)


# ---- an old store, migrated, searches the same (both backends) -------------------------------------

# Sessions whose openings state the task, chunks whose match is only in listing output, payloads.
SESSIONS = {
    "s-retry": [
        "[User] retry failed uploads with exponential backoff",
        "[Assistant] I will add a retry loop to the uploader.\n[Tool:Edit] src/upload.py",
        "[Tool:Bash] git commit -m 'retry uploads with backoff'\n[Result:Bash] 1 file changed",
    ],
    "s-log": [
        "[User] what changed this week?",
        "[Tool:Bash] git log --oneline\n[Result:Bash] a1b2 retry failed uploads with exponential backoff\n"
        "c3d4 parse_config raises E0425 on a missing field",
    ],
    "s-payload": [
        "[User] the logo renders blurry",
        '[Result:Read] <svg><path d="' + "M10 10L20 20Z" * 30 + '"/></svg> logo upload',
        '{"request": {"url": "https://x/upload", "method": "POST"}, "response": {"status": 500}}',
    ],
    "s-config": [
        "[User] parse_config fails on an empty file",
        "[Assistant] getUserName is unrelated; the config parser must treat an empty file as defaults.",
        "[Result:Grep] src/config.py:12: def parse_config(path)\nsrc/config.py:40: raise ValueError('E0425')",
    ],
}
QUERIES = [
    "retry uploads backoff",
    "exponential backoff",
    "parse_config empty file",
    "E0425",
    "logo upload svg",
    "what changed this week",
    "getUserName",
    "uploader retry loop",
]


@pytest.fixture
def services(backend_config: Config) -> Iterator[Services]:
    with open_services(backend_config) as opened:
        store = opened.store
        with store.atomic():
            project = store.resolve_project("/work/demo", "/work/demo")
            ids = itertools.count()
            for session, texts in SESSIONS.items():
                store.save_session(project, session, [_chunk(next(ids), text, session) for text in texts])
        yield opened


def _answers(services: Services) -> list[list[tuple[str, float]]]:
    out = []
    for query in QUERIES:
        result = services.searcher.search(SearchRequest(query, limit=10, mode="keyword"))
        out.append([(h.chunk.id, h.relevance) for h in result.hits])
    return out


def _forget_features_migration(services: Services) -> None:
    """Make the store one from before the features: drop their columns, the triggers that read them
    (clearing them; counting the sessions' stems) and the table they fill, and those migrations'
    records."""
    store = services.store
    sqlite = isinstance(store, MemoryStore)
    table = migrations.MIGRATIONS if sqlite else pg_migrations.MIGRATIONS
    added, trigger, counted = (
        (migrations.m009_text_features, migrations.m010_stale_text_features, migrations.m011_session_stems)
        if sqlite
        else (
            pg_migrations.m003_text_features,
            pg_migrations.m005_stale_text_features,
            pg_migrations.m006_session_stems,
        )
    )
    on = "" if sqlite else " ON chunks"
    with store.atomic():
        for name in ("chunks_text_features_stale", "chunks_session_stems_update"):
            store.conn.execute(f"DROP TRIGGER {name}{on}")
        for name in (
            ("chunks_session_stems_insert", "chunks_session_stems_delete") if sqlite else ("chunks_session_stems",)
        ):
            store.conn.execute(f"DROP TRIGGER {name}{on}")
        store.conn.execute("DROP TABLE session_stems")
        if not sqlite:
            store.conn.execute("DROP FUNCTION causantic_session_stems(); DROP FUNCTION causantic_own_stems(TEXT, TEXT)")
        for column in ("stems", "own_stems", "bulk"):
            store.conn.execute(f"ALTER TABLE chunks DROP COLUMN {column}")
        for migration in (added, trigger, counted):
            store.conn.execute(f"DELETE FROM schema_migrations WHERE version = {table.index(migration) + 1}")


def test_an_old_store_is_migrated_and_searches_the_same(services: Services) -> None:
    before = _answers(services)
    assert any(before), "the queries find something"
    chunks = list(services.store.get_chunks([f"c{i}" for i in range(11)]).values())
    kept = {c.id: c.features for c in chunks}
    assert len(kept) == 11 and all(f is not None for f in kept.values())

    _forget_features_migration(services)
    with open_services(services.config) as reopened:  # migrates: m009 (SQLite) or m003 (PostgreSQL)
        assert _answers(reopened) == before  # (SQLite: scored from the text until the next ingest)
        ingest_paths(reopened, [EXAMPLE], embed=False, workers=1)
        refilled = reopened.store.get_chunks(list(kept))
        assert {i: c.features for i, c in refilled.items()} == kept


def test_opening_an_upgraded_store_is_quick_and_the_next_ingest_stores_the_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Migration m009 only adds the columns: the first process to open an upgraded store may be the
    session-start hook, which Claude Code stops after 10 s (13-16 s of filling at 100k chunks)."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    config = Config().with_overrides({"storage.backend": "sqlite"})
    with open_services(config) as services:  # a store from before the features, holding two chunks
        store = services.store
        with store.atomic():
            project = store.resolve_project("/work/demo", "/work/demo")
            store.save_session(project, "s1", [_chunk(i, text) for i, text in enumerate(SESSIONS["s-log"])])
        _forget_features_migration(services)

    with open_services(config) as services:  # migrates
        assert all(c.features is None for c in services.store.get_chunks(["c0", "c1"]).values())
        first = ingest_paths(services, [EXAMPLE], embed=False, workers=1)
        assert "stored the search features of 2 chunks ingested by an earlier version" in first.notes
        kept = services.store.get_chunks(["c0", "c1"])
        assert all(c.features is not None and c.features.stems.split() for c in kept.values())
        again = ingest_paths(services, [EXAMPLE], embed=False, workers=1, force=True)
        assert not any("search features" in note for note in again.notes)


def test_rows_written_without_features_score_the_same_and_reindex_fills_them(services: Services) -> None:
    from causantic.ingest.service import reindex

    before = _answers(services)
    store = services.store
    with store.atomic():  # as rows an older version wrote after the store was migrated
        store.conn.execute("UPDATE chunks SET stems = NULL, own_stems = NULL, bulk = NULL")
    assert all(c.features is None for c in store.get_chunks([f"c{i}" for i in range(11)]).values())
    assert _answers(services) == before

    reindex(services)
    assert all(c.features is not None for c in store.get_chunks([f"c{i}" for i in range(11)]).values())
    # Reindexing embedded the chunks too, and keyword search scores with their cosines when there are
    # vectors: the filled features score as the text they were split from, vectors or not.
    filled = _answers(services)
    with store.atomic():
        store.conn.execute("UPDATE chunks SET stems = NULL, own_stems = NULL, bulk = NULL")
    assert _answers(services) == filled


def test_a_text_rewritten_without_its_features_is_scored_from_the_new_text(services: Services) -> None:
    """An older release re-saving a chunk sets its text alone; the stems of the old text must not
    score the new one (both backends: a trigger clears them)."""
    store = services.store
    with store.atomic():  # the statement an older release runs: no feature columns
        store.conn.execute("UPDATE chunks SET content = 'zebra crossing timings' WHERE id = 'c0'")
    rewritten = store.get_chunks(["c0"])["c0"]
    assert rewritten.features is None and chunk_stems(rewritten) == word_stems("zebra crossing timings")
    untouched = store.get_chunks(["c1"])["c1"]
    assert untouched.features is not None
