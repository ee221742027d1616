"""Agent teams on real files: teammates and their names, team edges and where they point.

Data: the real team session in claude-code-log's test data (six teammates spawned by ``Agent`` calls
with a ``name``, reporting back through the calls' results), its hand-made ``teammates/`` fixture
(``TeamCreate``, ``Task`` with ``team_name``, ``<teammate-message>`` reports), and our own
``fixtures/docs_team`` (messages between teammates, a teammate with two files; see its README).
"""

from __future__ import annotations

from pathlib import Path

from team_graph import Chunk, ingest_graph


def _only(pairs: list[tuple[Chunk, Chunk]]) -> tuple[Chunk, Chunk]:
    assert len(pairs) == 1, pairs
    return pairs[0]


# ---- the real team session ----------------------------------------------------------------------


def test_the_real_team_session_finds_six_teammates_by_the_names_they_were_spawned_with(real_team_session: Path) -> None:
    graph = ingest_graph(real_team_session)
    agents = {c.agent_id: c.agent for c in graph.chunks.values() if c.agent_id}
    assert sorted(agents.values()) == ["alice", "alice2", "bob", "bob2", "carol", "carol2"]
    assert agents["a4ca7529859c158c2"] == "alice" and agents["a36efb2a1231c41e2"] == "alice2"
    assert graph.report.teammates == 6 and graph.report.linked_subagents == 6
    assert {c.agent for c in graph.chunks.values() if c.agent_id is None} == {"main"}
    # Spawned with names only: there is no team name to store.
    assert set(graph.session_team.values()) == {None}


def test_each_real_teammate_is_spawned_from_its_calls_chunk_and_reports_into_its_results_chunk(
    real_team_session: Path,
) -> None:
    graph = ingest_graph(real_team_session)
    assert len(graph.of("team-spawn")) == 6 and len(graph.of("team-report")) == 6
    assert graph.of("brief") == [] and graph.of("debrief") == [] and graph.of("peer-message") == []
    alice = graph.agent_chunks("alice")
    lead, first = _only([(s, t) for s, t in graph.of("team-spawn") if t.agent == "alice"])
    assert lead.agent == "main"
    assert "[Tool:Agent] general-purpose: Research Claude Code plan mode — You are **alice**" in lead.content
    assert first == alice[0] and first.content.startswith("[User]\nYou are **alice**, a teammate")
    last, back = _only([(s, t) for s, t in graph.of("team-report") if s.agent == "alice"])
    assert last == alice[-1] and "Ready for round 2 when you send the merge confirmation." in last.content
    assert back.agent == "main"
    assert "[Result:Agent] Round 1 complete. Master is untouched (still at `04752c6`)." in back.content
    _, first2 = _only([(s, t) for s, t in graph.of("team-spawn") if t.agent == "alice2"])
    assert first2.content.startswith("[User]\nYou are **alice** (round 2).")


def test_a_lead_message_that_no_teammate_received_gets_no_edge(real_team_session: Path) -> None:
    # Round 2 went out by SendMessage after the teammates had exited; no file received it.
    graph = ingest_graph(real_team_session)
    senders = [c for c in graph.chunks.values() if "[Tool:SendMessage] to alice: round 2" in c.content]
    assert len(senders) == 1
    assert [k for s, _, k in graph.edges if s == senders[0]] == ["within-chain"]


# ---- the hand-made teammates fixture ----------------------------------------------------------------


def test_the_teammates_fixture_names_alice_and_bob_and_stores_the_team_name(teammates_fixture: Path) -> None:
    graph = ingest_graph(teammates_fixture)
    members = {c.agent_id: (c.agent, c.team_name) for c in graph.chunks.values() if c.agent_id}
    assert members == {"aaaa111111111111": ("alice", "test-coverage"), "bbbb222222222222": ("bob", "test-coverage")}
    assert {c.team_name for c in graph.chunks.values() if c.agent == "main"} == {None}
    assert list(graph.session_team.values()) == ["test-coverage"]


def test_a_teammate_message_to_the_lead_is_traced_to_the_teammate_chunk_that_wrote_its_words(
    teammates_fixture: Path,
) -> None:
    graph = ingest_graph(teammates_fixture)
    source, target = _only(
        [(s, t) for s, t in graph.of("team-report") if 'summary="relay tests complete"' in t.content]
    )
    assert source.agent == "alice" and "Relay module coverage is now 96%." in source.content
    assert target.agent == "main"
    assert target.content.startswith('[User]\n<teammate-message teammate_id="alice"')


def test_a_teammate_message_with_no_matching_words_falls_back_to_the_teammate_chunk_in_progress(
    teammates_fixture: Path,
) -> None:
    graph = ingest_graph(teammates_fixture)
    into = [s for s, t in graph.of("team-report") if 'summary="server tests passing"' in t.content]
    # That prompt holds bob's message and an alice heartbeat; neither's words are in their files.
    assert sorted(c.agent for c in into) == ["alice", "bob"]
    bob = next(c for c in into if c.agent == "bob")
    assert bob == graph.agent_chunks("bob")[-1]


def test_a_task_call_with_a_team_name_spawns_its_teammate_from_the_lead(teammates_fixture: Path) -> None:
    graph = ingest_graph(teammates_fixture)
    spawned = {t.agent: s for s, t in graph.of("team-spawn")}
    assert set(spawned) == {"alice", "bob"}
    assert "[Tool:Task] general-purpose: Run alice's test work" in spawned["alice"].content
    assert "[Tool:Task] general-purpose: Run bob's test work" in spawned["bob"].content


# ---- peer messages and multi-file teammates (fixtures/docs_team) -----------------------------------


def test_a_message_between_two_teammates_becomes_a_peer_message_edge(docs_team: Path) -> None:
    graph = ingest_graph(docs_team)
    source, target = _only(graph.of("peer-message"))
    assert source.agent == "ana" and "[Tool:SendMessage] to ben: api.md ready for review" in source.content
    assert target.agent == "ben"
    assert target.content.startswith('[User]\n<teammate-message teammate_id="ana" color="blue" summary="api')


def test_a_teammate_with_two_files_keeps_one_name_and_each_edge_lands_in_the_right_file(docs_team: Path) -> None:
    graph = ingest_graph(docs_team)
    ana_files = {c.agent_id for c in graph.chunks.values() if c.agent == "ana"}
    assert ana_files == {"a1110000aaaa0001", "a1110000aaaa0002"}
    # Both files start at turn 0; the report must come from the second file, the one that sent it.
    assert {c.turn_index for c in graph.chunks.values() if c.agent == "ana"} == {0}
    source, target = _only([(s, t) for s, t in graph.of("team-report") if s.agent == "ana"])
    assert source.agent_id == "a1110000aaaa0002"
    assert "[Tool:SendMessage] to team-lead: pagination example added" in source.content
    assert target.content.startswith('[User]\n<teammate-message teammate_id="ana" color="blue" summary="pag')
    lead, opened = _only([(s, t) for s, t in graph.of("team-spawn") if t.agent_id == "a1110000aaaa0002"])
    assert "[Tool:SendMessage] to ana: add the pagination example" in lead.content
    assert opened.content.startswith('[User]\n<teammate-message teammate_id="team-lead"')


def test_a_review_report_and_an_idle_notice_both_reach_the_lead_from_ben(docs_team: Path) -> None:
    graph = ingest_graph(docs_team)
    reports = [(s, t) for s, t in graph.of("team-report") if s.agent == "ben"]
    assert len(reports) == 2
    review, _ = _only([(s, t) for s, t in reports if 'summary="review of api.md done"' in t.content])
    assert "[Tool:SendMessage] to team-lead: review of api.md done" in review.content
    idle, _ = _only([(s, t) for s, t in reports if '"type": "idle_notification"' in t.content])
    assert idle == graph.agent_chunks("ben")[-1]  # no SendMessage for it: the chunk in progress


def test_every_team_edge_type_is_present_across_the_team_data(
    real_team_session: Path, teammates_fixture: Path, docs_team: Path
) -> None:
    graph = ingest_graph(real_team_session, teammates_fixture, docs_team)
    kinds = {k for _, _, k in graph.edges}
    assert {"team-spawn", "team-report", "peer-message"} <= kinds
    assert graph.report.teammates == 6 + 2 + 3
    assert graph.report.linked_subagents == graph.report.subagent_streams == 11
    for source, target, kind in graph.edges:
        if kind == "team-spawn":
            assert source.agent == "main" and target.agent != "main"
        elif kind == "team-report":
            assert source.agent != "main" and target.agent == "main"
        elif kind == "peer-message":
            assert "main" not in (source.agent, target.agent) and source.agent != target.agent
