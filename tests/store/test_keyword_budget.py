"""The keyword score budget: bounded BM25 work that ranks exactly what it ranks.

On a real store whose word frequencies are skewed like real text, the bounded search must return
exactly the exact search's top hits among chunks that hold a rare query word, with the same
scores; only chunks holding nothing but common query words may be left out.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.store.fts import match_phrases, split_by_scoring_budget
from causantic.store.memory import MemoryStore
from causantic.store.records import ChunkRecord

WORDS = [f"t{i}k" for i in range(150)]  # porter leaves these as they are
CHUNKS = 500
RARE = "parseConfigE0425"


def _chunk(i: int, text: str) -> ChunkRecord:
    return ChunkRecord(
        id=f"c{i}", session_id="s1", agent="main", agent_id=None, team_name=None, turn_index=i, part=0,
        start_time=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z", end_time=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
        content=text, search_terms="", content_hash=f"h{i}", approx_tokens=len(text) // 4, tool_use_count=0,
        code_block_count=0, has_thinking=False, message_uuids=(f"u{i}",),
    )


@pytest.fixture(scope="module")
def skewed_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, dict[str, str]]]:
    rng = random.Random(7)
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(WORDS))]  # Zipf-like, as in prose
    texts = {f"c{i}": " ".join(rng.choices(WORDS, weights, k=rng.randint(5, 40))) for i in range(CHUNKS - 1)}
    texts[f"c{CHUNKS - 1}"] = f"{WORDS[0]} {WORDS[1]} {WORDS[2]} {RARE} {WORDS[0]}"  # one rare identifier
    store = MemoryStore(Path(tmp_path_factory.mktemp("kw")) / "memory.db")
    project = store.resolve_project("/work/demo", "/work/demo")
    with store.atomic():
        store.save_session(project, "s1", [_chunk(i, texts[f"c{i}"]) for i in range(CHUNKS)])
    yield store, texts
    store.close()


def _holds(text: str, phrase: str) -> bool:
    return phrase.strip('"') in text.split()


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=8, unique=True),
    budget=st.integers(1, CHUNKS),
    limit=st.integers(1, 40),
)
def test_bounded_search_is_the_exact_ranking_of_chunks_with_a_rare_word(
        skewed_store: tuple[MemoryStore, dict[str, str]], words: list[str], budget: int, limit: int) -> None:
    store, texts = skewed_store
    query = " ".join(words)
    phrases = match_phrases(query)
    counts = {p: sum(_holds(t, p) for t in texts.values()) for p in phrases}
    rare, _ = split_by_scoring_budget([p for p in phrases if counts[p]], counts, budget)

    exact = store.keyword_search(query, limit=CHUNKS, score_budget=0)
    eligible = [(cid, score) for cid, score in exact if any(_holds(texts[cid], p) for p in rare)]
    bounded = store.keyword_search(query, limit=limit, score_budget=budget)

    assert [round(s, 9) for _, s in bounded] == [round(s, 9) for _, s in eligible[:limit]]
    exact_scores = dict(exact)
    assert all(abs(exact_scores[cid] - score) < 1e-9 for cid, score in bounded)


def test_a_rare_identifier_beside_common_words_ranks_first_either_way(
        skewed_store: tuple[MemoryStore, dict[str, str]]) -> None:
    store, texts = skewed_store
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
        skewed_store: tuple[MemoryStore, dict[str, str]], text: str, budget: int) -> None:
    store, _ = skewed_store
    assert len(store.keyword_search(text, limit=10, score_budget=budget)) <= 10
    # Beside a word most chunks hold, hostile text still leaves hits: nothing was swallowed as an error.
    assert store.keyword_search(f"{text} {WORDS[0]} NEAR( AND \"x*", limit=10, score_budget=budget)
