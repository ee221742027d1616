"""recall, predict, reconstruct, list and forget on the example sessions."""

from __future__ import annotations

from pathlib import Path

import pytest

from causantic.config import Config
from causantic.errors import CausanticError
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.chains import Chain, select_best_chain
from causantic.retrieval.forget import ForgetRequest, forget
from causantic.retrieval.listing import list_projects, list_sessions
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct, render_reconstruction
from causantic.retrieval.search import SearchRequest
from causantic.services import Services, open_services


def test_recall_tells_the_story_in_order(examples: Services) -> None:
    result = examples.chains.recall(SearchRequest("how did we fix the flaky invoice test"))
    assert result.mode == "chain"
    assert len(result.chunks) >= 2
    text = "\n".join(c.content for c in result.chunks)
    assert "date.today()" in text
    assert result.diagnostics.fallback_reason is None
    assert all(s is not None for s in result.scores)


def test_predict_walks_forward_from_the_fix(examples: Services) -> None:
    result = examples.chains.predict(SearchRequest("Fix Safari login redirect loop SameSite lax cookie"))
    assert result.mode == "chain"
    times = [c.start_time for c in result.chunks]
    assert times == sorted(times)


def test_recall_without_matches_falls_back_and_says_why(examples: Services) -> None:
    result = examples.chains.recall(SearchRequest("zzzqqq", mode="keyword"))
    assert result.mode == "search"
    assert result.diagnostics.fallback_reason == "no matching chunks in memory"


def test_the_agent_filter_chooses_seeds_only(examples: Services) -> None:
    result = examples.chains.recall(SearchRequest("date.today in invoice.py", agent="Explore"))
    seeds = examples.store.get_chunks(result.search.seeds)
    assert seeds and all(c.agent == "Explore" for c in seeds.values())
    assert {c.agent for c in result.chunks} >= {"Explore", "main"}


def test_best_chain_is_the_highest_median_of_at_least_two() -> None:
    chains = [Chain("a", ["a"], [0.99], 10), Chain("b", ["b", "x", "y"], [0.85, 0.30, 0.82], 30),
              Chain("c", ["c", "z"], [0.5, 0.6], 20), Chain("d", ["d", "w"], [None, None], 20)]
    best = select_best_chain(chains)
    assert best is not None and best.seed == "b" and best.median == pytest.approx(0.82)
    assert select_best_chain([Chain("a", ["a"], [0.9], 1)]) is None


def test_reconstruct_modes(examples: Services) -> None:
    budget = examples.config.tokens.mcp_max_response
    timeline = reconstruct(examples.store, ReconstructRequest("acme-shop"), budget)
    assert timeline.mode == "timeline" and len(timeline.sessions) == 3
    assert [c.start_time for c in timeline.chunks] == sorted(c.start_time for c in timeline.chunks)
    small = reconstruct(examples.store, ReconstructRequest("acme-shop", max_tokens=400), budget)
    assert small.truncated and small.chunks[-1].id == timeline.chunks[-1].id  # newest kept
    sessions = timeline.sessions
    one = reconstruct(examples.store, ReconstructRequest("acme-shop", session_id=sessions[1][:8]), budget)
    assert set(one.sessions) == {sessions[1]}
    previous = reconstruct(examples.store, ReconstructRequest(
        "acme-shop", previous_session=True, current_session_id=sessions[2]), budget)
    assert previous.sessions == [sessions[1]]
    text = render_reconstruction(one)
    assert "=== Session" in text and "--- Agent: Explore ---" in text
    with pytest.raises(CausanticError, match="current_session_id"):
        reconstruct(examples.store, ReconstructRequest("acme-shop", previous_session=True), budget)


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
        "fts": {r[0] for r in conn.execute(
            "SELECT c.id FROM chunks_fts f JOIN chunks c ON c.rowid = f.rowid")},
        "edges": {f"{r[0]}>{r[1]}" for r in conn.execute("SELECT source_chunk_id, target_chunk_id FROM edges")},
        "vectors": services.vectors.ids(),
    }


def test_forget_previews_then_removes_exactly_the_matches(tmp_path: Path) -> None:
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], workers=1)
        before = _all_store_ids(services)
        embed = services.embedder.embed_query
        preview = forget(services.store, services.vectors, embed,
                         ForgetRequest("acme-shop", query="rate limiting with redis", threshold=0.4))
        assert preview.dry_run and preview.count >= 1 and preview.deleted == 0
        assert _all_store_ids(services) == before
        doomed = {c.id for c, _ in preview.preview}
        done = forget(services.store, services.vectors, embed,
                      ForgetRequest("acme-shop", query="rate limiting with redis", threshold=0.4, dry_run=False))
        after = _all_store_ids(services)
        assert done.deleted == preview.count
        for name in ("chunks", "fts", "vectors"):
            assert after[name] == before[name] - doomed, name
        assert not any(e.split(">")[0] in doomed or e.split(">")[1] in doomed for e in after["edges"])
        again = ingest_paths(services, [SESSIONS_DIR], workers=1, force=True)
        assert again.chunks_added == 0  # forgotten stays forgotten
        with pytest.raises(CausanticError, match="Name what to forget"):
            forget(services.store, services.vectors, embed, ForgetRequest("acme-shop"))
