"""Agent attribution and the ``agent`` filter: search, recall, predict and reconstruct.

The filter narrows search hits and the *seeds* of recall/predict; a chain then follows edges
freely into other agents. Searches run keyword-only so no embedding model is needed.
"""

from __future__ import annotations

from pathlib import Path

from team_graph import ingest_graph

from causantic.config import Config
from causantic.retrieval.format import chunk_header
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct, render_reconstruction
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services


def _project(services: object) -> str:
    return services.store.conn.execute("SELECT name FROM projects").fetchone()[0]  # type: ignore[attr-defined]


def test_every_chunk_records_its_agent_main_or_a_name(real_team_session: Path, docs_team: Path) -> None:
    graph = ingest_graph(real_team_session, docs_team)
    for chunk in graph.chunks.values():
        assert chunk.agent == "main" if chunk.agent_id is None else chunk.agent not in ("", "main")


def test_keyword_search_for_one_agent_returns_only_that_agents_chunks(real_team_session: Path) -> None:
    graph = ingest_graph(real_team_session)
    with open_services(Config()) as services:
        everyone = services.searcher.search(SearchRequest("plan mode comparison", mode="keyword", limit=30))
        alice = services.searcher.search(SearchRequest("plan mode comparison", agent="alice", mode="keyword", limit=30))
    assert len({h.chunk.agent for h in everyone.hits}) > 1
    assert alice.hits and {h.chunk.agent for h in alice.hits} == {"alice"}
    assert alice.seeds and set(alice.seeds) <= {c.id for c in graph.chunks.values() if c.agent == "alice"}
    assert "| Agent: alice |" in chunk_header(alice.hits[0].chunk, alice.hits[0].relevance)


def test_recall_seeds_come_from_the_chosen_agent_and_the_chain_crosses_into_others(docs_team: Path) -> None:
    graph = ingest_graph(docs_team)
    with open_services(Config()) as services:
        result = services.chains.recall(SearchRequest("review docs/api.md", agent="ben", mode="keyword"))
    seeds = [graph.chunks[s] for s in result.search.seeds]
    assert seeds and {s.agent for s in seeds} == {"ben"}
    assert result.mode == "chain"
    agents = [c.agent for c in result.chunks]
    assert "ben" in agents and set(agents) - {"ben"}, agents
    assert agents[0] == "main"  # recall runs back through ben's spawn to the lead's request


def test_predict_seeds_come_from_the_chosen_agent_and_the_chain_follows_its_report_to_the_lead(docs_team: Path) -> None:
    graph = ingest_graph(docs_team)
    with open_services(Config()) as services:
        result = services.chains.predict(SearchRequest("pagination example", agent="ana", mode="keyword"))
    assert {graph.chunks[s].agent for s in result.search.seeds} == {"ana"}
    assert result.mode == "chain"
    agents = [c.agent for c in result.chunks]
    assert agents[0] == "ana" and "main" in agents


def test_reconstruct_for_one_agent_keeps_only_its_chunks_and_marks_agent_boundaries_otherwise(docs_team: Path) -> None:
    ingest_graph(docs_team)
    with open_services(Config()) as services:
        project = _project(services)
        ben = reconstruct(services.store, ReconstructRequest(project, agent="ben", full=True), 20_000)
        everyone = reconstruct(services.store, ReconstructRequest(project, full=True), 20_000)
    assert ben.chunks and {c.agent for c in ben.chunks} == {"ben"}
    assert "--- Agent:" not in render_reconstruction(ben)
    text = render_reconstruction(everyone)
    for agent in ("main", "ana", "ben"):
        assert f"--- Agent: {agent} ---" in text
