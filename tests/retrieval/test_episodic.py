"""recall, predict, reconstruct, list and forget on the example sessions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from causantic.config import Config
from causantic.errors import CausanticError, InvalidQuery
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.chains import Chain, select_best_chain
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.retrieval.listing import list_projects, list_sessions
from causantic.retrieval.ranking import non_increasing
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct, render_reconstruction
from causantic.retrieval.search import SearchRequest
from causantic.services import Services, open_services


def test_recall_tells_the_story_in_order(examples: Services) -> None:
    answer = examples.episodes.recall(SearchRequest("how did we fix the flaky invoice test"))
    assert answer.mode == "episodes" and not answer.nothing_relevant
    chunks = answer.chunks
    assert "date.today()" in "\n".join(c.content for c in chunks)
    for episode in answer.episodes:  # each episode tells its chunks in time order
        times = [m.chunk.start_time for m in episode.chunks]
        assert times == sorted(times)
    assert any(m.is_hit for e in answer.episodes for m in e.chunks)
    assert answer.tokens <= examples.config.episodes.max_tokens


def test_recall_brings_the_turns_that_led_to_the_hit(examples: Services) -> None:
    answer = examples.episodes.recall(SearchRequest("date.today in invoice.py", agent="Explore"))
    hits = {m.chunk.id for e in answer.episodes for m in e.chunks if m.is_hit}
    assert hits and all(examples.store.get_chunks([i])[i].agent == "Explore" for i in hits)
    # the Explore sub-agent's finding came from the lead's question: the story crosses agents
    assert {c.agent for c in answer.chunks} >= {"Explore", "main"}


def test_predict_stays_with_what_followed(examples: Services) -> None:
    answer = examples.episodes.predict(SearchRequest("Fix Safari login redirect loop SameSite lax cookie"))
    assert not answer.nothing_relevant
    for episode in answer.episodes:
        first_hit = next(m for m in episode.chunks if m.is_hit)
        assert {m.chunk.session_id for m in episode.chunks} == {first_hit.chunk.session_id}
        assert all(m.chunk.start_time >= first_hit.chunk.start_time for m in episode.chunks)


@pytest.mark.parametrize("query", ["zzqx nonexistent gibberish qqq", "What temperature should I bake sourdough at?"])
def test_nothing_relevant_is_said_plainly(examples: Services, query: str) -> None:
    search = examples.searcher.search(SearchRequest(query))
    assert search.nothing_relevant and search.hits == []
    for answer in (examples.episodes.recall(SearchRequest(query)), examples.episodes.predict(SearchRequest(query))):
        assert answer.nothing_relevant and answer.episodes == () and answer.tokens == 0


@pytest.mark.parametrize("query", ["", "   ", "\t\n", "\x00", "?!"])
def test_empty_queries_are_refused(examples: Services, query: str) -> None:
    with pytest.raises(InvalidQuery, match="empty"):
        examples.searcher.search(SearchRequest(query))
    with pytest.raises(InvalidQuery):
        examples.episodes.recall(SearchRequest(query))


def test_relevance_is_absolute_and_monotone(examples: Services) -> None:
    result = examples.searcher.search(SearchRequest("invoice due date test", limit=10))
    shown = result.shown_relevance
    assert shown and all(0.0 <= r <= 1.0 for r in shown)
    assert shown == sorted(shown, reverse=True)
    assert all(h.relevance >= examples.config.relevance.floor for h in result.hits)  # no weak hit padded in
    assert max(shown) < 1.0  # a probability: "100%" is not handed to the best of whatever matched


def test_the_seeds_chain_walk_remains_as_a_mode(examples: Services) -> None:
    answer = examples.episodes.recall(SearchRequest("how did we fix the flaky invoice test"), "chain")
    assert answer.mode == "chain" and len(answer.episodes) == 1 and len(answer.chunks) >= 2
    walked = examples.chains.recall(SearchRequest("how did we fix the flaky invoice test"))
    assert walked.mode == "chain" and walked.diagnostics.fallback_reason is None


def test_best_chain_is_the_highest_median_of_at_least_two() -> None:
    chains = [
        Chain("a", ["a"], [0.99], 10),
        Chain("b", ["b", "x", "y"], [0.85, 0.30, 0.82], 30),
        Chain("c", ["c", "z"], [0.5, 0.6], 20),
        Chain("d", ["d", "w"], [None, None], 20),
    ]
    best = select_best_chain(chains)
    assert best is not None and best.seed == "b" and best.median == pytest.approx(0.82)
    assert select_best_chain([Chain("a", ["a"], [0.9], 1)]) is None


def test_reconstruct_modes(examples: Services) -> None:
    budget = examples.config.tokens.mcp_max_response
    timeline = reconstruct(examples.store, ReconstructRequest("acme-shop"), budget)
    assert timeline.mode == "timeline" and timeline.view == "timeline" and len(timeline.sessions) == 3
    assert not timeline.chunks and not timeline.truncated
    sessions = [s.session_id for s in timeline.sessions]
    assert [s.started_at for s in timeline.sessions] == sorted(s.started_at for s in timeline.sessions)
    full = reconstruct(examples.store, ReconstructRequest("acme-shop", full=True), budget)
    assert [c.start_time for c in full.chunks] == sorted(c.start_time for c in full.chunks)
    small = reconstruct(examples.store, ReconstructRequest("acme-shop", full=True, max_tokens=400), budget)
    assert small.truncated and small.chunks[-1].id == full.chunks[-1].id  # newest kept
    one = reconstruct(examples.store, ReconstructRequest("acme-shop", session_id=sessions[1][:8]), budget)
    assert [s.session_id for s in one.sessions] == [sessions[1]] and one.view == "text"
    previous = reconstruct(
        examples.store, ReconstructRequest("acme-shop", previous_session=True, current_session_id=sessions[2]), budget
    )
    assert [s.session_id for s in previous.sessions] == [sessions[1]]
    text = render_reconstruction(one)
    assert "=== Session" in text and "--- Agent: Explore ---" in text
    unknown = reconstruct(examples.store, ReconstructRequest("acme-shop", previous_session=True), budget)
    assert [s.session_id for s in unknown.sessions] == [sessions[-1]]  # the current session unknown: the newest
    assert "The current session's id was not given, so this is the newest session" in render_reconstruction(unknown)


def test_list_projects_and_sessions(examples: Services) -> None:
    projects = list_projects(examples.store)
    assert [(p.name, p.sessions, p.chunks) for p in projects] == [("acme-shop", 3, 6)]
    project, sessions, total = list_sessions(examples.store, "acme-shop", limit=2)
    assert total == 3 and len(sessions) == 2
    assert sessions[0].started_at > sessions[1].started_at


def _all_store_ids(services: Services) -> dict[str, set[str]]:
    conn = services.store.conn
    return {
        "chunks": {r[0] for r in conn.execute("SELECT id FROM chunks")},
        "fts": {r[0] for r in conn.execute("SELECT c.id FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid")},
        "edges": {f"{r[0]}>{r[1]}" for r in conn.execute("SELECT source_chunk_id, target_chunk_id FROM edges")},
        "vectors": services.vectors.ids(),
    }


def test_forget_previews_then_removes_exactly_the_matches(tmp_path: Path) -> None:
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], workers=1)
        before = _all_store_ids(services)
        embed = services.embedder.embed_query
        preview = forget(
            services.store,
            services.vectors,
            embed,
            ForgetRequest("acme-shop", query="rate limiting with redis", threshold=0.4),
        )
        assert preview.dry_run and preview.count >= 1 and preview.deleted == 0
        assert _all_store_ids(services) == before
        doomed = {c.id for c, _ in preview.preview}
        done = forget(
            services.store,
            services.vectors,
            embed,
            ForgetRequest("acme-shop", query="rate limiting with redis", threshold=0.4, dry_run=False),
        )
        after = _all_store_ids(services)
        assert done.deleted == preview.count
        for name in ("chunks", "fts", "vectors"):
            assert after[name] == before[name] - doomed, name
        assert not any(e.split(">")[0] in doomed or e.split(">")[1] in doomed for e in after["edges"])
        again = ingest_paths(services, [SESSIONS_DIR], workers=1, force=True)
        assert again.chunks_added == 0  # forgotten stays forgotten
        whole = forget(services.store, services.vectors, embed, ForgetRequest("acme-shop"))
        assert whole.dry_run and whole.whole_project and whole.count == len(after["chunks"])
        assert _all_store_ids(services) == after  # no filter is a whole-project preview, nothing deleted
        with pytest.raises(CausanticError, match="takes no filter"):
            forget(
                services.store,
                services.vectors,
                embed,
                ForgetRequest("acme-shop", session_id="4005b823", whole_project=True),
            )


def test_shown_relevance_moves_each_score_as_little_as_possible() -> None:
    assert non_increasing([0.9, 0.5, 0.7, 0.2]) == pytest.approx([0.9, 0.6, 0.6, 0.2])
    assert non_increasing([0.3, 0.8]) == pytest.approx([0.55, 0.55])
    assert non_increasing([]) == []


def test_the_chain_walks_fallback_says_its_hits_come_as_they_rank(tmp_path: Path) -> None:
    """With no edge to walk, chain mode tells search's hits one by one, best first, under a heading
    that said 'in time order'."""
    from chunk_records import chunk_record

    from causantic.retrieval.format import render_episodes
    from causantic.store.fts import identifier_terms

    texts = {  # the older session matches a word of the question, the newer one all of them
        "s1": ("2026-03-01T09:00:00.000Z", "[User]\nthe export is slow again"),
        "s2": ("2026-03-05T09:00:00.000Z", "[User]\nthe invoice export times out on large months: paged it"),
    }
    with open_services(Config()) as services:
        store = services.store
        with store.atomic():
            project = store.resolve_project("/work/shop", "/work/shop")
            for n, (session, (when, text)) in enumerate(texts.items()):
                record = chunk_record(n, session_id=session, start_time=when, end_time=when, content=text)
                store.save_session(project, session, [replace(record, search_terms=identifier_terms(text))])
        answer = services.episodes.recall(SearchRequest("invoice export times out on large months"), "chain")
    assert [e.chunks[0].chunk.session_id for e in answer.episodes] == ["s2", "s1"]  # as search ranks them
    assert render_episodes(answer).startswith("Recall: the story behind it, 2 episodes, best first")
