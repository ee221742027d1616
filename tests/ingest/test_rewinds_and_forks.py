"""Attempts the user rewound past, and Codex sessions the user forked, as memory keeps them: an
abandoned attempt is stored (it happened) but in a ``rewound`` stream of its own, beside the main line
and linked to where it branched off; a fork keeps only its own turns and links to the turn it forked at.
Also the other agents' corpus (Copilot CLI, Cursor, Factory Droid, Pi) end to end."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from transcript_files import write_codex_rollout, write_pi_session

from causantic.config import Config
from causantic.ingest import rules
from causantic.ingest.pipeline import IngestReport
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services
from causantic.store.records import ChunkScope, StoredChunk
from causantic.transcripts import discovery, reader
from causantic.transcripts.other_agents import PiHeader

REWIND_SESSION = "b3edadab-bca0-4054-9b41-f7ffa6941260"
REWIND_FILE = (
    "kfischer-okarin__scripts-and-tools/src/claude-history/test/fixtures/claude-projects/-Users-user-project/"
    f"{REWIND_SESSION}.jsonl"
)
ABANDONED = "Ok make another addition which I will revert later"
AFTER = "Ok in the future some new content was added look at it"


def _ingest(services: Services, *paths: Path) -> IngestReport:
    return ingest_paths(services, list(paths), embed=False, workers=1)


def _chunks(services: Services, session_id: str) -> list[StoredChunk]:
    return list(services.store.chunks_in(ChunkScope(session_id=session_id)))


def _rewind_copy(corpus_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "projects" / "-Users-user-project"
    folder.mkdir(parents=True)
    return Path(shutil.copy(corpus_dir / REWIND_FILE, folder))


def test_a_claude_code_rewind_is_kept_beside_the_main_line_not_in_it(corpus_dir: Path, tmp_path: Path) -> None:
    # A real session (claude-history's rewind fixture): the user asked for an addition, rewound past
    # it with /rewind, then asked again from the same point, twice.
    path = _rewind_copy(corpus_dir, tmp_path)
    with open_services(Config()) as services:
        report = _ingest(services, path)
        chunks = _chunks(services, REWIND_SESSION)
        main = [c for c in chunks if c.agent == "main"]
        rewound = [c for c in chunks if c.agent == "rewound"]
        assert not any(ABANDONED in c.content for c in main)
        assert [c.agent_id for c in rewound] == ["rewound-84944fbf", "rewound-291cfc48"]
        assert ABANDONED in rewound[0].content
        # The main line runs from the turn before the first attempt straight to the prompt after them.
        by_id = {c.id: c for c in chunks}
        edges = services.store.session_edges(REWIND_SESSION)
        chain = [(by_id[e.source], by_id[e.target]) for e in edges if e.reference_type == "within-chain"]
        assert any(AFTER in b.content and a.agent == "main" for a, b in chain)
        linked = {(e.reference_type, by_id[e.target].agent_id) for e in edges if e.reference_type == "brief"}
        assert linked == {("brief", "rewound-84944fbf"), ("brief", "rewound-291cfc48")}
        assert report.subagent_streams == 2 and report.linked_subagents == 2


def test_a_rewound_turn_stored_on_the_main_line_by_older_rules_moves_off_it(corpus_dir: Path, tmp_path: Path) -> None:
    path = _rewind_copy(corpus_dir, tmp_path)
    with pytest.MonkeyPatch.context() as before:  # the release before: rewinds read inline
        before.setattr(reader, "mark_claude_rewinds", lambda messages, _: messages)
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        with open_services(Config()) as services:
            _ingest(services, path)
            assert any(ABANDONED in c.content for c in _chunks(services, REWIND_SESSION) if c.agent == "main")
    with open_services(Config()) as services:
        upgraded = _ingest(services, path)
        chunks = _chunks(services, REWIND_SESSION)
    assert upgraded.files_rules_changed == 1 and upgraded.chunks_removed > 0
    assert [c.agent for c in chunks if ABANDONED in c.content] == ["rewound"]


def _shop_session_and_fork(sessions: Path) -> tuple[Path, Path]:
    """A two-turn Codex session on the cart total and a fork of it that tries another rounding."""
    parent = write_codex_rollout(
        sessions,
        "/srv/shop",
        "019e-parent",
        [("why does the cart total drift", "Float rounding."), ("use cents", "Done.")],
    )
    fork = _fork_of(sessions, parent, "019e-fork", "019e-parent", 2, [("try banker's rounding instead", "Switched.")])
    return parent, fork


def _fork_of(
    sessions: Path, parent: Path, thread: str, parent_thread: str, copied: int, turns: list[tuple[str, str]]
) -> Path:
    """A Codex user fork (``/fork``) of `parent`: a rollout naming the thread it forked, opening with a
    copy of the parent's first `copied` turns (its session_meta too), then turns of its own."""
    records = [json.loads(line) for line in parent.read_text().splitlines()]
    own = [
        json.loads(line)
        for line in write_codex_rollout(sessions / "own", "/srv/shop", thread, turns).read_text().splitlines()
    ]
    head = {**own[0], "payload": {"id": thread, "cwd": "/srv/shop", "forked_from_id": parent_thread}}
    path = sessions / "2026" / "11" / "03" / f"rollout-2026-11-03T09-00-00-{thread}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [head, records[0], *records[1 : 1 + 2 * copied], *own[1:]]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    shutil.rmtree(sessions / "own")
    return path


def test_a_codex_fork_keeps_only_its_own_turns_and_links_to_where_it_forked(tmp_path: Path) -> None:
    sessions = tmp_path / "codex"
    parent = write_codex_rollout(
        sessions,
        "/srv/shop",
        "019e-parent",
        [
            ("why does the cart total drift", "Float rounding in the discount step."),
            ("store the discount in cents", "Stored in cents; totals match."),
            ("add a test for the rounding", "Added test_cart_rounding."),
        ],
    )
    _fork_of(sessions, parent, "019e-fork", "019e-parent", 2, [("try banker's rounding instead", "Switched to it.")])
    with open_services(Config()) as services:
        report = _ingest(services, sessions)
        assert report.sessions == 2
        fork = _chunks(services, "019e-fork")
        assert [c.content.splitlines()[1] for c in fork] == ["try banker's rounding instead"]
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("store the discount in cents" in c.content for c in everything) == 1  # not twice
        [edge] = [e for e in services.store.session_edges("019e-fork") if e.reference_type == "forked-from"]
        by_id = {c.id: c for c in everything}
        assert "store the discount in cents" in by_id[edge.source].content and edge.target == fork[0].id
        again = _ingest(services, sessions)
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


def test_a_codex_fork_read_alone_keeps_its_copy_until_the_session_it_forked_is_there(tmp_path: Path) -> None:
    # The session the fork copied is nowhere to be found (not yet copied over from another machine):
    # the copied turns are kept in the fork, so what was said there can still be found. Once the
    # session's file is where Codex keeps it, the fork is read with it and keeps only its own turns.
    sessions = tmp_path / "codex"
    parent, fork = _shop_session_and_fork(sessions)
    away = Path(shutil.move(parent, tmp_path / parent.name))
    with open_services(Config()) as services:
        _ingest(services, fork)
        assert len(_chunks(services, "019e-fork")) == 3
        shutil.move(away, parent)
        later = _ingest(services, fork)
        assert later.chunks_removed == 2
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork")] == ["try banker's rounding instead"]
        assert len(_chunks(services, "019e-parent")) == 2


@pytest.mark.parametrize("first", ["fork", "parent"])
def test_a_codex_fork_ingested_by_its_file_alone_is_read_with_the_session_it_forked(tmp_path: Path, first: str) -> None:
    # A fork's file ingested by itself (``causantic ingest <rollout>``), in either order with the
    # file of the session it forked: each turn is kept once, the fork's own turns in the fork.
    sessions = tmp_path / "codex"
    parent, fork = _shop_session_and_fork(sessions)
    order = [fork, parent] if first == "fork" else [parent, fork]
    with open_services(Config()) as services:
        for path in order:
            _ingest(services, path)
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork")] == ["try banker's rounding instead"]
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("use cents" in c.content for c in everything) == 1
        assert [e.reference_type for e in services.store.session_edges("019e-fork")].count("forked-from") == 1
        again = _ingest(services, sessions)
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


def test_a_codex_session_found_only_after_its_fork_was_stored_is_read_with_the_fork(tmp_path: Path) -> None:
    # The fork was ingested while the session it forked was nowhere (copied over later): it kept the
    # copied turns. That session's file, ingested by itself once it is there, is read with the fork
    # the store holds in its sessions tree (where it stayed until the fork's file changed).
    sessions = tmp_path / "codex"
    parent, fork = _shop_session_and_fork(sessions)
    # and a fork of that fork, copying its three turns
    second = _fork_of(sessions, fork, "019e-fork-2", "019e-fork", 3, [("try decimal instead", "Switched to Decimal.")])
    away = Path(shutil.move(parent, tmp_path / parent.name))
    with open_services(Config()) as services:
        _ingest(services, second)  # read with the fork it forked, where Codex keeps it
        assert len(_chunks(services, "019e-fork")) == 3
        shutil.move(away, parent)
        later = _ingest(services, parent)
        assert later.chunks_removed == 2 and later.files == 3  # the session, and its forks read again
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork")] == ["try banker's rounding instead"]
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork-2")] == ["try decimal instead"]
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("use cents" in c.content for c in everything) == 1
        # one into the fork (from the session), one out of it (to its own fork)
        assert [e.reference_type for e in services.store.session_edges("019e-fork")].count("forked-from") == 2
        assert [e.reference_type for e in services.store.session_edges("019e-fork-2")].count("forked-from") == 1
        again = _ingest(services, sessions)
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


PI_PARENT = "019e1111-0000-7000-8000-00000000aaaa"
PI_FORK = "019e1111-0000-7000-8000-00000000bbbb"
PI_TURNS = [
    ("why does the cart total drift", "Float rounding in the discount step."),
    ("store the discount in cents", "Stored in cents; totals match."),
    ("add a test for the rounding", "Added test_cart_rounding."),
]


def test_a_pi_fork_keeps_only_its_own_turns_and_links_to_where_it_forked(tmp_path: Path) -> None:
    # Pi's /fork: a new session whose header names the session's file (parentSession) and whose
    # entries open with a copy of its first turns, under the same ids. Before: the copy was stored
    # again, as the fork's own conversation.
    sessions = tmp_path / "pi"
    parent = write_pi_session(sessions, "/srv/shop", PI_PARENT, PI_TURNS)
    write_pi_session(
        sessions,
        "/srv/shop",
        PI_FORK,
        [("try banker's rounding instead", "Switched to it.")],
        forked_from=parent,
        copied=2,
    )
    with open_services(Config()) as services:
        report = _ingest(services, sessions)
        assert report.sessions == 2 and report.broken_lines == 0
        fork = _chunks(services, PI_FORK)
        assert [c.content.splitlines()[1] for c in fork] == ["try banker's rounding instead"]
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("store the discount in cents" in c.content for c in everything) == 1  # not twice
        [edge] = [e for e in services.store.session_edges(PI_FORK) if e.reference_type == "forked-from"]
        by_id = {c.id: c for c in everything}
        assert "store the discount in cents" in by_id[edge.source].content and edge.target == fork[0].id
        again = _ingest(services, sessions)
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


def test_a_pi_fork_stored_whole_by_older_rules_drops_its_copy_on_the_upgrade(tmp_path: Path) -> None:
    sessions = tmp_path / "pi"
    parent = write_pi_session(sessions, "/srv/shop", PI_PARENT, PI_TURNS)
    write_pi_session(
        sessions, "/srv/shop", PI_FORK, [("try banker's rounding", "Switched.")], forked_from=parent, copied=2
    )
    with pytest.MonkeyPatch.context() as before:  # the release before: a fork was a session like any
        before.setattr(discovery, "peek_pi_header", lambda path: PiHeader())
        before.setattr(rules, "VERSION", rules.VERSION - 1)
        with open_services(Config()) as services:
            _ingest(services, sessions)
            assert len(_chunks(services, PI_FORK)) == 3
    with open_services(Config()) as services:
        upgraded = _ingest(services, sessions)
        assert (upgraded.files_rules_changed, upgraded.chunks_removed) == (2, 2)
        assert [c.content.splitlines()[1] for c in _chunks(services, PI_FORK)] == ["try banker's rounding"]


def test_a_pi_fork_ingested_alone_is_read_with_the_session_its_header_names(tmp_path: Path) -> None:
    # The fork's file alone (the session it forked lives in another project's folder: ``pi --fork``).
    parent = write_pi_session(tmp_path / "pi", "/srv/shop", PI_PARENT, PI_TURNS)
    fork = write_pi_session(
        tmp_path / "pi",
        "/srv/till",
        PI_FORK,
        [("try banker's rounding instead", "Switched.")],
        forked_from=parent,
        copied=2,
    )
    with open_services(Config()) as services:
        _ingest(services, fork)
        assert [c.content.splitlines()[1] for c in _chunks(services, PI_FORK)] == ["try banker's rounding instead"]
        assert len(_chunks(services, PI_PARENT)) == 3
        again = _ingest(services, parent)
        assert (again.chunks_added, again.chunks_removed) == (0, 0)


def test_the_other_agents_corpus_ingests_by_agent(agents_corpus: Path) -> None:
    with open_services(Config()) as services:
        report = _ingest(services, agents_corpus / "cursor", agents_corpus / "other-agents")
        assert report.errors == [] and report.broken_lines == 0
        assert (report.files, report.sessions, report.chunks_added) == (16, 8, 19)
        assert report.skipped_lines["file in another format"] == 8  # 5 Kiro histories, 3 generic fixtures
        sources = services.store.counts()["sources"]
        assert {k: v["sessions"] for k, v in sources.items() if v["sessions"]} == {
            "gemini": 1,
            "copilot": 2,
            "cursor": 2,
            "droid": 2,
            "pi": 1,
        }
        again = _ingest(services, agents_corpus / "cursor", agents_corpus / "other-agents")
        assert (again.files_unchanged, again.chunks_added, again.chunks_updated) == (16, 0, 0)


def _copilot_events(folder: Path, newer: bool) -> Path:
    """A Copilot CLI event log (``session-state/<id>/events.jsonl``) whose main agent runs a sub-agent
    with its ``task`` tool, shaped as github/copilot-sdk's session-events schema
    (``nodejs/src/generated/session-events.ts``) and the real logs of the corpus: the sub-agent's
    events carry ``data.parentToolCallId`` (older) or the envelope's ``agentId`` (1.0.39 on)."""
    task = {
        "agent_type": "explore",
        "description": "find the rounding",
        "prompt": "find where cart totals get rounded",
    }

    def sub(data: dict[str, object]) -> dict[str, object]:
        return {"agentId": "agent-7", "data": data} if newer else {"data": {**data, "parentToolCallId": "call_task"}}

    events: list[dict[str, object]] = [
        {"type": "session.start", "data": {"sessionId": "cop-sub-1", "context": {"cwd": "/srv/shop"}}},
        {"type": "user.message", "data": {"content": "why do cart totals drift by a cent"}},
        {
            "type": "assistant.message",
            "data": {
                "content": "",
                "toolRequests": [{"toolCallId": "call_task", "name": "task", "arguments": task, "type": "function"}],
            },
        },
        {
            "type": "subagent.started",
            **({"agentId": "agent-7"} if newer else {}),
            "data": {
                "toolCallId": "call_task",
                "agentName": "explore",
                "agentDisplayName": "Explore",
                "agentDescription": "Explores the codebase",
            },
        },
        {
            "type": "assistant.message",
            **sub({"content": "", "toolRequests": [{"toolCallId": "call_grep", "name": "grep", "arguments": {}}]}),
        },
        {
            "type": "tool.execution_complete",
            **sub({"toolCallId": "call_grep", "success": True, "result": {"content": "cart.py:41: round(total, 2)"}}),
        },
        {"type": "assistant.message", **sub({"content": "Totals are rounded per line in cart.py:41."})},
        {"type": "subagent.completed", "data": {"toolCallId": "call_task", "agentName": "explore"}},
        {
            "type": "tool.execution_complete",
            "data": {"toolCallId": "call_task", "success": True, "result": {"content": "Rounded per line."}},
        },
        {"type": "assistant.message", "data": {"content": "The drift comes from rounding each line; round once."}},
    ]
    path = folder / "session-state" / "cop-sub-1" / "events.jsonl"
    path.parent.mkdir(parents=True)
    lines = [
        {**event, "id": f"e{n}", "timestamp": f"2026-11-02T09:00:{n:02d}Z", "parentId": f"e{n - 1}" if n else None}
        for n, event in enumerate(events)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


@pytest.mark.parametrize("newer", [False, True], ids=["parentToolCallId", "agentId"])
def test_a_copilot_sub_agents_work_is_its_own_stream_linked_to_the_task_that_ran_it(
    tmp_path: Path, newer: bool
) -> None:
    # Before: the sub-agent's calls and words were told on the main line, as if the main agent said them.
    path = _copilot_events(tmp_path, newer)
    with open_services(Config()) as services:
        report = _ingest(services, path)
        chunks = _chunks(services, "cop-sub-1")
        main = [c for c in chunks if c.agent == "main"]
        [sub] = [c for c in chunks if c.agent != "main"]
        assert sub.agent == "explore" and "Totals are rounded per line in cart.py:41." in sub.content
        assert not any("cart.py:41" in c.content for c in main)
        assert report.subagent_streams == 1 and report.linked_subagents == 1
        by_id = {c.id: c for c in chunks}
        briefs = [by_id[e.source] for e in services.store.session_edges("cop-sub-1") if e.reference_type == "brief"]
        assert [c.agent for c in briefs] == ["main"]
        assert "[Tool:task] explore: find the rounding — find where cart totals get rounded" in briefs[0].content


def test_two_forks_of_one_codex_session_given_as_two_targets_are_both_kept(tmp_path: Path) -> None:
    # Each fork, given by its own file, is read with the session it forked: the group found twice
    # (once per target) is one group holding both forks, not the first one found.
    sessions = tmp_path / "codex"
    parent = write_codex_rollout(sessions, "/srv/shop", "019e-parent", [("why does the cart drift", "Rounding.")])
    one = _fork_of(sessions, parent, "019e-fork-1", "019e-parent", 1, [("try banker's rounding", "Switched.")])
    two = _fork_of(sessions, parent, "019e-fork-2", "019e-parent", 1, [("try decimal instead", "Switched to Decimal.")])
    with open_services(Config()) as services:
        report = _ingest(services, one, two)
        assert report.sessions == 3
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork-2")] == ["try decimal instead"]


def test_a_pi_session_found_only_after_its_fork_was_stored_is_read_with_the_fork(tmp_path: Path) -> None:
    # The fork was ingested while the session it forked was nowhere (copied over later): it kept the
    # copied turns. That session's file, ingested by itself once it is there, brings the fork beside
    # it along, so the copy is not kept twice.
    sessions = tmp_path / "pi"
    parent = write_pi_session(sessions, "/srv/shop", PI_PARENT, PI_TURNS)
    fork = write_pi_session(
        sessions, "/srv/shop", PI_FORK, [("try banker's rounding", "Switched.")], forked_from=parent, copied=2
    )
    away = Path(shutil.move(parent, tmp_path / parent.name))
    with open_services(Config()) as services:
        _ingest(services, fork)
        assert len(_chunks(services, PI_FORK)) == 3
        shutil.move(away, parent)
        later = _ingest(services, parent)
        assert later.chunks_removed == 2
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("store the discount in cents" in c.content for c in everything) == 1
        again = _ingest(services, sessions)
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


@pytest.mark.parametrize("order", ["session-first", "fork-first", "one-run"])
def test_a_codex_fork_in_another_sessions_tree_than_its_session_keeps_only_its_own_turns(
    tmp_path: Path, order: str
) -> None:
    # The session was ingested from one sessions tree (this machine's ~/.codex/sessions) and its fork
    # from another (a copy of another machine's, a backup): in either order, or both at once, the
    # fork is read with the session the store holds (its file still where it was ingested from) and
    # keeps only its own turns; the copied ones were stored twice.
    parent, fork = _shop_session_and_fork(tmp_path / "codex")
    elsewhere = tmp_path / "backup" / "sessions" / fork.relative_to(tmp_path / "codex")
    elsewhere.parent.mkdir(parents=True)
    fork = Path(shutil.move(fork, elsewhere))
    with open_services(Config()) as services:
        if order == "one-run":
            _ingest(services, tmp_path / "codex", tmp_path / "backup")
        else:
            for tree in (tmp_path / "codex", tmp_path / "backup")[:: 1 if order == "session-first" else -1]:
                _ingest(services, tree)
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork")] == ["try banker's rounding instead"]
        everything = list(services.store.chunks_in(ChunkScope()))
        assert sum("use cents" in c.content for c in everything) == 1
        assert [e.reference_type for e in services.store.session_edges("019e-fork")].count("forked-from") == 1
        again = _ingest(services, tmp_path / "codex", tmp_path / "backup")
        assert (again.chunks_added, again.chunks_removed, again.chunks_updated) == (0, 0, 0)


def _agent_links(services: Services, session_id: str) -> list[tuple[str, str, str]]:
    """The session's edges to and from its agents' streams: (type, source, target)."""
    edges = services.store.session_edges(session_id)
    return sorted((e.reference_type, e.source, e.target) for e in edges if e.reference_type in ("brief", "debrief"))


def test_a_codex_session_read_again_for_its_fork_from_elsewhere_keeps_its_spawned_agents_links(
    tmp_path: Path,
) -> None:
    # The session spawned an agent (its rollout beside it, in this machine's tree); its fork was copied
    # from another machine. Read again with the fork, the session brings the agent's rollout too: read
    # without it, its links to the agent's stream went (the session's edges are written anew).
    parent, fork = _shop_session_and_fork(tmp_path / "codex")
    child = write_codex_rollout(tmp_path / "own", "/srv/shop", "019e-child", [("find the rounding", "In discount.")])
    records = [json.loads(line) for line in child.read_text().splitlines()]
    records[0]["payload"]["parent_thread_id"] = "019e-parent"
    spawned = parent.parent / "rollout-2026-11-02T09-00-30-019e-child.jsonl"
    spawned.write_text("".join(json.dumps(r) + "\n" for r in records))
    elsewhere = tmp_path / "backup" / "sessions" / fork.relative_to(tmp_path / "codex")
    elsewhere.parent.mkdir(parents=True)
    shutil.move(fork, elsewhere)
    with open_services(Config()) as services:
        _ingest(services, tmp_path / "codex")
        links = _agent_links(services, "019e-parent")
        assert [kind for kind, *_ in links] == ["brief", "debrief"]
        _ingest(services, tmp_path / "backup")
        assert [c.content.splitlines()[1] for c in _chunks(services, "019e-fork")] == ["try banker's rounding instead"]
        assert _agent_links(services, "019e-parent") == links
