"""The search pipeline on the example sessions: meaning, exact words, filters, budgets, safety."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from causantic.errors import InvalidQuery, ProjectNotFound
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.search import HEADER_TOKENS, SearchRequest
from causantic.services import Services


def test_a_question_in_other_words_finds_the_fix(examples: Services) -> None:
    result = examples.searcher.search(SearchRequest("why were users bounced back to the sign-in page on Safari"))
    assert result.mode == "hybrid"
    assert "SameSite" in result.hits[0].chunk.content or "Safari" in result.hits[0].chunk.content


def test_an_exact_identifier_is_found_by_keyword(examples: Services) -> None:
    result = examples.searcher.search(SearchRequest("test_invoice_due_date", mode="keyword"))
    assert result.mode == "keyword-only"
    assert "test_invoice_due_date" in result.hits[0].chunk.content
    fused = examples.searcher.search(SearchRequest("rate-limiter-flexible"))
    assert "rate-limiter-flexible" in fused.hits[0].chunk.content
    assert "keyword" in fused.hits[0].sources


@pytest.mark.parametrize(
    "query",
    ['foo-bar "x', "AND NEAR(", "日本語 ünïcode", "src/auth/session.ts", "OR NOT (words", "'; DROP TABLE chunks; --"],
)
def test_hostile_queries_are_searched_as_words(examples: Services, query: str) -> None:
    result = examples.searcher.search(SearchRequest(query, floor=0.0))
    # FTS5 syntax in the query is searched as words: the keyword side answers (maybe with nothing)
    assert result.mode == "hybrid" and "keyword index unavailable" not in " ".join(result.notes)


@pytest.mark.parametrize("query", ["x", "what is it", "AND", "OR NOT (", "a b c"])
def test_a_query_without_a_word_to_search_by_is_told_so(examples: Services, query: str) -> None:
    # Searched, any chunk came near it by chance: "x" led recall with a match at 20% over 2,352 tokens.
    for floor in (None, 0.0):
        result = examples.searcher.search(SearchRequest(query, floor=floor))
        assert result.nothing_relevant and result.tokens == 0
        assert result.notes == [f"{query!r} holds no word to search by, only stop words or single letters: "
                                "name what you are after"]  # fmt: skip
    episodes = examples.episodes.recall(SearchRequest(query))
    assert episodes.nothing_relevant and "no word to search by" in " ".join(episodes.notes)


@pytest.mark.parametrize("query", ["*", "'; --", ""])
def test_queries_without_words_are_refused_clearly(examples: Services, query: str) -> None:
    with pytest.raises(InvalidQuery, match="The query is empty"):
        examples.searcher.search(SearchRequest(query))


def test_the_token_budget_holds_whole_chunks_only(examples: Services) -> None:
    result = examples.searcher.search(SearchRequest("tests", max_tokens=500, limit=50))
    assert result.tokens <= 500
    assert sum(approx_tokens(h.chunk.content) + HEADER_TOKENS for h in result.hits) == result.tokens
    stored = examples.store.get_chunks([h.chunk.id for h in result.hits])
    assert all(stored[h.chunk.id].content == h.chunk.content for h in result.hits)


def test_filters_by_project_and_agent(examples: Services) -> None:
    only_agent = examples.searcher.search(SearchRequest("billing date today", agent="Explore", limit=20))
    assert only_agent.hits and all(h.chunk.agent == "Explore" for h in only_agent.hits)
    in_project = examples.searcher.search(SearchRequest("redirect", project="acme-shop"))
    assert all(h.chunk.project == "acme-shop" for h in in_project.hits)
    with pytest.raises(ProjectNotFound, match="list-projects"):
        examples.searcher.search(SearchRequest("redirect", project="no-such-project"))


def test_an_agent_name_no_chunk_carries_is_named_in_the_notes(examples: Services) -> None:
    """A typo in --agent said only 'no matching chunks', as if memory had nothing on the question."""
    typo = examples.searcher.search(SearchRequest("billing date today", agent="Explroe"))
    assert not typo.hits and any("no chunk in memory is by an agent named 'Explroe'" in n for n in typo.notes)
    known = examples.searcher.search(SearchRequest("kubernetes helm chart rollout", agent="Explore"))
    assert not any("agent named" in n for n in known.notes)


def test_a_source_memory_holds_no_session_of_is_named_in_the_notes(examples: Services) -> None:
    """--source gemini on a memory of Claude Code sessions said only 'no matching chunks'."""
    gemini = examples.searcher.search(SearchRequest("billing date today", source="gemini"))
    assert not gemini.hits and gemini.notes == ["memory holds no gemini sessions"]
    claude = examples.searcher.search(SearchRequest("billing date today", source="claude-code"))
    assert claude.hits and not any("memory holds no" in n for n in claude.notes)


def test_a_time_range_holding_no_chunk_says_so_and_when_memory_ends(examples: Services) -> None:
    """ "no matching chunks" read as if nothing in memory were about the question, when the range
    asked (the last 30 days, of a memory of older sessions) held no chunk at all."""
    later = datetime(2030, 1, 1, tzinfo=UTC)
    newest = "its newest is from 2026-11-04 10:33 UTC"  # the example sessions' last chunk
    everywhere = examples.searcher.search(SearchRequest("redirect", since=later))
    assert everywhere.notes == [f"memory holds no chunk from the requested time range; {newest}"]
    in_project = examples.searcher.search(SearchRequest("redirect", project="acme-shop", since=later))
    assert in_project.notes == [f"'acme-shop' holds no chunk from the requested time range; {newest}"]
    before = examples.searcher.search(SearchRequest("redirect", until=datetime(2020, 1, 1, tzinfo=UTC)))
    assert before.notes[0].startswith("memory holds no chunk from the requested time range")
    unmatched = examples.searcher.search(SearchRequest("zzqx", mode="keyword", since=datetime(2026, 1, 1, tzinfo=UTC)))
    assert unmatched.notes == ["no matching chunks in the requested time range"]


def test_results_are_ranked_and_labelled(examples: Services) -> None:
    result = examples.searcher.search(SearchRequest("flaky test on CI", limit=5))
    assert result.hits and all(0 <= h.relevance <= 1.0 for h in result.hits)
    assert len({h.chunk.id for h in result.hits}) == len(result.hits)
    assert result.seeds and result.seeds[0] in {h.chunk.id for h in result.hits}


def test_without_vectors_search_runs_keyword_only_and_says_so(examples: Services) -> None:
    examples.vectors.drop()
    try:
        result = examples.searcher.search(SearchRequest("Safari redirect"))
        assert result.mode == "keyword-only"
        assert any("no vectors" in note for note in result.notes)
        assert result.hits
    finally:
        from causantic.ingest.service import embed_pending

        assert embed_pending(examples) > 0


def test_chunks_waiting_for_vectors_are_counted_readably_and_a_running_ingest_is_allowed_for() -> None:
    """Seen on the dashboard during an ingest: '1234 of 3327 chunks … (`causantic embed` adds them)'
    beside the overview's 'a running ingest is embedding them, or run causantic embed'."""
    from causantic.retrieval.search import vector_health_notes
    from causantic.store.records import VectorHealth

    (note,) = vector_health_notes(VectorHealth(chunks=3_327, vectors=2_093, ann="ready"))
    assert note == (
        "1,234 of 3,327 chunks (37%) have no vector yet, so vector search cannot find them "
        "(a running ingest is embedding them, or run `causantic embed`)"
    )
