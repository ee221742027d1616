"""The keyword score budget: bounded BM25 work that ranks exactly what it ranks.

On a real store whose word frequencies are skewed like real text, the bounded search must return
exactly the exact search's top hits among chunks that hold a rare query word, with the same
scores; only chunks holding nothing but common query words may be left out.
"""

from __future__ import annotations

import contextlib
import random
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from chunk_records import chunk_record
from hypothesis import example, given, settings
from hypothesis import strategies as st
from postgres_server import new_database

from causantic.errors import StoreError
from causantic.store import keyword
from causantic.store.fts import match_phrases, split_by_scoring_budget
from causantic.store.memory import MemoryStore
from causantic.store.postgres.keyword import RANK_COST
from causantic.store.records import ChunkRecord, ChunkScope

WORDS = [f"t{i}k" for i in range(150)]  # porter leaves these as they are
CHUNKS = 500
RARE = "parseConfigE0425"
ELSEWHERE = "zebraQuux42"


@dataclass(frozen=True)
class Corpus:
    store: Any  # MemoryStore or PostgresStore
    texts: dict[str, str]
    projects: dict[str, int]  # chunk id -> project id
    agents: dict[str, str]  # chunk id -> agent


def _chunk(i: int, text: str, session: str, agent: str) -> ChunkRecord:
    at = f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z"
    return chunk_record(
        i,
        session_id=session,
        agent=agent,
        agent_id=None if agent == "main" else f"x{agent}",
        start_time=at,
        end_time=at,
        content=text,
        approx_tokens=len(text) // 4,
        message_uuids=(f"u{i}",),
    )


def _fill(store: Any) -> Corpus:
    """Two projects (a third of the chunks in the second) and two agents, over Zipf-like text."""
    rng = random.Random(7)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(WORDS))]  # Zipf-like, as in prose
    texts = {f"c{i}": " ".join(rng.choices(WORDS, weights, k=rng.randint(5, 40))) for i in range(CHUNKS - 1)}
    texts[f"c{CHUNKS - 1}"] = f"{WORDS[0]} {WORDS[1]} {WORDS[2]} {RARE} {WORDS[0]}"  # one rare identifier
    texts[f"c{CHUNKS - 2}"] = f"{WORDS[3]} {ELSEWHERE} {WORDS[8]}"  # another, in the second project (498 % 3 == 0)
    demo = store.resolve_project("/work/demo", "/work/demo")
    other = store.resolve_project("/work/other", "/work/other")
    projects, agents = {}, {}
    for project, session, keep in ((demo, "s1", lambda i: i % 3 != 0), (other, "s2", lambda i: i % 3 == 0)):
        chunks = [
            _chunk(i, texts[f"c{i}"], session, "Explore" if i % 4 == 0 else "main") for i in range(CHUNKS) if keep(i)
        ]
        with store.atomic():
            store.save_session(project, session, chunks)
        projects.update((c.id, project.id) for c in chunks)
        agents.update((c.id, c.agent) for c in chunks)
    return Corpus(store, texts, projects, agents)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    store = MemoryStore(Path(tmp_path_factory.mktemp("kw")) / "memory.db")
    yield _fill(store)
    store.close()


@pytest.fixture(scope="module")
def pg_corpus(postgres_server: Any) -> Iterator[Corpus]:
    """The same corpus in PostgreSQL (its keyword search: causantic.store.postgres.keyword)."""
    from causantic.store.postgres.store import PostgresStore

    store = PostgresStore(new_database(postgres_server), member="alice")
    yield _fill(store)
    store.close()


def _holds(text: str, phrase: str) -> bool:
    return phrase.strip('"') in text.split()


_CASES = {
    "words": st.lists(st.sampled_from(WORDS), min_size=1, max_size=8, unique=True),
    "budget": st.integers(1, CHUNKS),
    "limit": st.integers(1, 40),
    "scope": st.sampled_from(["all", "project 1", "project 2", "agent Explore", "project 2 + agent main"]),
    "counted_first": st.sampled_from([None, 1, 30, CHUNKS]),
}


@settings(max_examples=80, deadline=None)
@given(
    **_CASES,
    shared_from=st.sampled_from([keyword.SHARED_FROM, 1]),  # 1: every count is kept for later searches
)
# A word the scope lacks beside words all over the budget: the rarest of those must lead.
@example(
    words=[WORDS[5], WORDS[20], ELSEWHERE],
    budget=1,
    limit=10,
    scope="project 1",
    counted_first=None,
    shared_from=keyword.SHARED_FROM,
)
def test_bounded_search_is_the_exact_ranking_of_chunks_with_a_rare_word(
    corpus: Corpus,
    words: list[str],
    budget: int,
    limit: int,
    scope: str,
    counted_first: int | None,
    shared_from: int,
) -> None:
    scoped = scope != "all"
    # SQLite ranks exactly when every chunk with a query word fits the budget (KeywordSearch._fits).
    fits = lambda n: CHUNKS <= budget or scoped and n <= budget  # noqa: E731
    sharing = patch.object(keyword, "SHARED_FROM", shared_from)
    _check_bounded(corpus, words, budget, limit, scope, counted_first, budget, fits, sharing)


@settings(max_examples=40, deadline=None)
@given(**_CASES)
@example(words=[WORDS[5], WORDS[20], ELSEWHERE], budget=1, limit=10, scope="project 1", counted_first=None)
def test_bounded_search_on_postgres_is_the_exact_ranking_of_chunks_with_a_rare_word(
    pg_corpus: Corpus, words: list[str], budget: int, limit: int, scope: str, counted_first: int | None
) -> None:
    # A row ranked by ts_rank counts as RANK_COST of the budget's (FTS5) rows.
    rows = max(1, budget // RANK_COST)
    _check_bounded(
        pg_corpus, words, budget, limit, scope, counted_first, rows, lambda n: False, contextlib.nullcontext()
    )


def _check_bounded(
    corpus: Corpus,
    words: list[str],
    budget: int,
    limit: int,
    scope: str,
    counted_first: int | None,
    rows: int,
    exact_when: Callable[[int], bool],
    searching: contextlib.AbstractContextManager[Any],
) -> None:
    """The bounded search's hits are the exact search's best among the chunks holding one of the
    rarest phrases whose chunks fit ``rows``, with the same scores (or all of them when
    ``exact_when(number of chunks with a query word)``); ``searching`` is held around the counts and
    the bounded search."""
    project_ids = [int(scope.split()[1])] if scope.startswith("project") else None
    agent = scope.split()[-1] if "agent" in scope else None
    in_scope = {
        cid: text
        for cid, text in corpus.texts.items()
        if (project_ids is None or corpus.projects[cid] in project_ids)
        and (agent is None or corpus.agents[cid] == agent)
    }
    query = " ".join(words)
    phrases = match_phrases(query)
    counts = {p: sum(_holds(t, p) for t in in_scope.values()) for p in phrases}  # rarity within the scope
    rare, _ = split_by_scoring_budget([p for p in phrases if counts[p]], counts, rows)

    search = corpus.store.keyword_search
    exact = search(query, project_ids=project_ids, agent=agent, limit=CHUNKS, score_budget=0)
    assert {cid for cid, _ in exact} <= set(in_scope)
    if exact_when(len(exact)):
        eligible = exact  # every chunk with a query word fits the budget: ranked exactly
    else:
        eligible = [(cid, score) for cid, score in exact if any(_holds(in_scope[cid], p) for p in rare)]
    with searching:
        if counted_first is not None:  # as search weighs the query's words first: their counts are reused
            corpus.store.keyword_document_counts(words, project_ids=project_ids, agent=agent, most=counted_first)
        bounded = search(query, project_ids=project_ids, agent=agent, limit=limit, score_budget=budget)

    assert [round(s, 9) for _, s in bounded] == [round(s, 9) for _, s in eligible[:limit]]
    exact_scores = dict(exact)
    assert all(abs(exact_scores[cid] - score) < 1e-9 for cid, score in bounded)


def test_a_word_rare_in_the_store_but_absent_from_the_project_does_not_empty_the_answer(corpus: Corpus) -> None:
    # The identifier is rare store-wide but only the other project holds it; the demo project's
    # chunks with the common word are still ranked.
    demo = corpus.projects["c1"]
    assert corpus.projects[f"c{CHUNKS - 2}"] != demo
    query = f"{WORDS[8]} {ELSEWHERE}"
    exact = corpus.store.keyword_search(query, project_ids=[demo], limit=10, score_budget=0)
    bounded = corpus.store.keyword_search(query, project_ids=[demo], limit=10, score_budget=20)
    assert len(exact) == 10 and bounded == exact


def test_query_words_never_match_the_scope_tokens(corpus: Corpus) -> None:
    demo = corpus.projects["c1"]
    tokens = (f"zzp{demo}zz", f"ZZP{demo}ZZ", "zza" + b"main".hex() + "zz", "zzà" + b"main".hex() + "zz")
    for word in (f"p{demo}", f"P{demo}", *tokens):  # the scope column's own tokens, as a user might type them
        assert corpus.store.keyword_search(word, score_budget=0) == []
        assert corpus.store.keyword_search(f"{word} {RARE}", project_ids=[demo], score_budget=20) == [
            (f"c{CHUNKS - 1}", pytest.approx(corpus.store.keyword_search(RARE, score_budget=0)[0][1]))
        ]


def test_a_rare_identifier_beside_common_words_ranks_first_either_way(corpus: Corpus) -> None:
    store, texts = corpus.store, corpus.texts
    query = f"{WORDS[0]} {WORDS[1]} {RARE}"
    exact = store.keyword_search(query, limit=5, score_budget=0)
    bounded = store.keyword_search(query, limit=5, score_budget=20)
    assert bounded[0] == exact[0]
    assert texts[bounded[0][0]] == texts[f"c{CHUNKS - 1}"]
    assert len(bounded) == 1  # only that chunk holds a rare phrase; common-only chunks go unranked


def test_split_keeps_the_rarest_phrases_within_the_budget_and_always_one() -> None:
    counts = {'"a"': 900, '"b"': 30, '"c"': 5, '"d"': 60}
    assert split_by_scoring_budget(list(counts), counts, 100) == (['"c"', '"b"', '"d"'], ['"a"'])
    assert split_by_scoring_budget(list(counts), counts, 1) == (['"c"'], ['"b"', '"d"', '"a"'])
    assert split_by_scoring_budget(list(counts), counts, 0) == (['"c"', '"b"', '"d"', '"a"'], [])


def test_phrases_are_quoted_words_without_stop_words() -> None:
    assert match_phrases("How did we fix getUserName?") == ['"fix"', '"getUserName"', '"get user name"']
    assert all(re.fullmatch(r'"[^"]+"', p) for p in match_phrases('foo-bar "x AND *'))


@settings(max_examples=150, deadline=None)
@given(text=st.text(), budget=st.sampled_from([0, 1, 30, CHUNKS]))
def test_hostile_query_text_never_turns_into_an_error_or_an_empty_answer(
    corpus: Corpus, text: str, budget: int
) -> None:
    store = corpus.store
    assert len(store.keyword_search(text, limit=10, score_budget=budget)) <= 10
    # Beside a word most chunks hold, hostile text still leaves hits: nothing was swallowed as an error.
    assert store.keyword_search(f'{text} {WORDS[0]} NEAR( AND "x*', limit=10, score_budget=budget)


def test_a_closed_store_refuses_to_search_instead_of_reopening(tmp_path: Path) -> None:
    store = MemoryStore(tmp_path / "memory.db")
    project = store.resolve_project("/work/demo", "/work/demo")
    with store.atomic():
        store.save_session(project, "s1", [_chunk(0, f"{WORDS[0]} {RARE}", "s1", "main")])
    assert store.keyword_search(RARE, score_budget=10)
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.keyword_search(RARE, score_budget=10)


def test_a_store_from_before_the_scope_column_upgrades_and_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from causantic.store import migrations

    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:3])  # the schema before m004
    old = MemoryStore(tmp_path / "memory.db")
    demo, other = (old.resolve_project(p, p) for p in ("/work/demo", "/work/other"))
    with old.atomic():  # rows as that schema held them (today's save_session writes later columns)
        for project, chunk in (
            (demo, _chunk(0, f"{WORDS[0]} {RARE}", "s1", "main")),
            (other, _chunk(1, f"{WORDS[0]} {RARE}", "s2", "Explore")),
        ):
            old.conn.execute("INSERT INTO sessions(id, project_id) VALUES (?, ?)", (chunk.session_id, project.id))
            old.conn.execute(
                "INSERT INTO chunks(id, session_id, project_id, agent, turn_index, part, start_time, end_time,"
                " content, content_hash, approx_tokens, created_at) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?, 1, ?)",
                (
                    chunk.id,
                    chunk.session_id,
                    project.id,
                    chunk.agent,
                    chunk.turn_index,
                    chunk.start_time,
                    chunk.end_time,
                    chunk.content,
                    chunk.content_hash,
                    chunk.start_time,
                ),
            )
    old.close()
    monkeypatch.undo()

    store = MemoryStore(tmp_path / "memory.db")
    try:
        assert [cid for cid, _ in store.keyword_search(RARE, project_ids=[other.id], score_budget=10)] == ["c1"]
        assert [cid for cid, _ in store.keyword_search(RARE, agent="main", score_budget=0)] == ["c0"]
        store.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
    finally:
        store.close()


def test_a_word_counted_before_a_write_is_found_in_the_chunk_that_write_added(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "memory.db") as store:
        project = store.resolve_project("/work/demo", "/work/demo")
        with store.atomic():
            store.save_session(project, "s1", [_chunk(i, f"{WORDS[0]} {WORDS[1]}", "s1", "main") for i in range(3)])
        assert store.keyword_document_counts([RARE], most=10) == [0]
        with store.atomic():
            store.save_session(project, "s2", [_chunk(3, f"{WORDS[0]} {RARE}", "s2", "main")])
        assert [cid for cid, _ in store.keyword_search(f"{WORDS[0]} {RARE}", score_budget=1)] == ["c3"]


def test_a_common_word_count_kept_between_searches_follows_scope_cap_and_every_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counts of common words are kept for later searches (here every count is common); a count
    is never read for another scope or past the cap it was counted to, nor after a write by this
    process or another."""
    monkeypatch.setattr(keyword, "SHARED_FROM", 1)
    path = tmp_path / "memory.db"
    with MemoryStore(path) as store, MemoryStore(path) as other:
        demo, elsewhere = (store.resolve_project(p, p) for p in ("/work/demo", "/work/other"))
        with store.atomic():
            store.save_session(demo, "s1", [_chunk(i, f"{WORDS[0]} {WORDS[1]}", "s1", "main") for i in range(3)])
            store.save_session(elsewhere, "s2", [_chunk(3, WORDS[0], "s2", "main")])
        count = store.keyword_document_counts
        assert count([WORDS[0]], most=2) == [2]  # at its cap
        assert count([WORDS[0]], most=10) == [4]
        assert count([WORDS[0]], project_ids=[demo.id], most=10) == [3]
        assert count([WORDS[0]], project_ids=[elsewhere.id], most=10) == [1]
        assert count([WORDS[0]], most=10) == [4]

        with other.atomic():  # a writer on another connection, as an ingest in another process
            other.save_session(demo, "s3", [_chunk(4, f"{WORDS[0]} {RARE}", "s3", "main")])
        assert count([WORDS[0]], most=10) == [5]
        assert count([WORDS[0]], project_ids=[demo.id], most=10) == [4]
        with store.atomic():
            store.delete_chunks(["c0", "c1"])
        assert count([WORDS[0]], most=10) == [3]
        # The search splits rare from common by the new counts: WORDS[1] (one chunk now) is rare.
        assert [cid for cid, _ in store.keyword_search(f"{WORDS[0]} {WORDS[1]}", score_budget=1)] == ["c2"]


def test_the_chunk_count_words_are_weighed_by_follows_every_save_and_delete(tmp_path: Path) -> None:
    """Kept between searches, never stale: a chunk saved or deleted here or by another process
    shows in the next count."""
    path = tmp_path / "memory.db"
    with MemoryStore(path) as store, MemoryStore(path) as other:
        project = store.resolve_project("/work/demo", "/work/demo")
        everything, this_project = ChunkScope(), ChunkScope(project_ids=(project.id,))
        assert store.count_chunks(everything) == 0
        with store.atomic():
            store.save_session(project, "s1", [_chunk(0, "alpha", "s1", "main"), _chunk(1, "beta", "s1", "main")])
        assert store.count_chunks(everything) == 2
        assert store.count_chunks(this_project) == 2

        with other.atomic():  # a writer on another connection, as an ingest in another process
            other.save_session(project, "s2", [_chunk(2, "gamma", "s2", "main")])
        assert store.count_chunks(everything) == 3
        assert store.count_chunks(this_project) == 3

        with store.atomic():
            store.delete_chunks(["c0"])
        assert store.count_chunks(everything) == 2


def test_the_chunk_count_forgets_what_a_rolled_back_write_added(tmp_path: Path) -> None:
    """An ingest that fails half-way through a session keeps nothing of it: neither may the count
    of chunks that words are weighed by and that `reconstruct` reports as left to read."""
    with MemoryStore(tmp_path / "memory.db") as store:
        project = store.resolve_project("/work/demo", "/work/demo")
        with pytest.raises(RuntimeError), store.atomic():
            store.save_session(project, "s1", [_chunk(0, "alpha", "s1", "main"), _chunk(1, "beta", "s1", "main")])
            assert store.count_chunks(ChunkScope()) == 2  # the transaction sees its own rows
            raise RuntimeError("the transcript broke off")
        assert store.count_chunks(ChunkScope()) == 0
