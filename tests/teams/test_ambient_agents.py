"""Agents Claude Code runs on its own: what of them memory keeps.

A compaction (``acompact-…``) is kept as its summary, which restates the session's work, under one
line standing for Claude Code's 5–9 kB instruction to summarise; the conversation's records its file
holds before that instruction are the main conversation's, kept once, in the turn they belong to;
the words given to ``/compact`` are the user's prompt. A prompt suggestion (``aprompt_suggestion-…``)
is skipped and counted like a warm-up. Real files from the shared corpus: marot ``spotter`` (Claude
Code 2.1.39) and randlee ``claude-history`` (2.1.29), and small written ones.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from team_graph import ingest_graph

from causantic.config import Config, causantic_home
from causantic.facade import Memory
from causantic.ingest import subagents
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.transcripts import _system_text

SPOTTER = "marot__spotter/test/fixtures/transcripts"
COMPACTED = "258c7280-ae70-4798-800f-63464d01a85d"  # a session with one compaction (acompact-fffbd0)
RANDLEE = "randlee__claude-history/docs/examples/claude-history-simple/export/source"
# randlee's last Read before its compaction: the result is only in the compaction's file, before the
# instruction to summarise; read as the compaction's, it was a chunk of its own, the tool unnamed.
CUT_RESULT = "[Result:tool] 836→"
WITH_WORDS = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"  # a session compacted with `/compact <words>`
COMPACT_WORDS = "/compact and continue with the reamining tasks"
WRITTEN = "5e55a0c1-0000-4000-8000-00000000c0de"  # the session written by the test below
# Phrases of Claude Code's compaction instruction (not of any summary) and of its suggestion prompt.
BOILERPLATE = (
    "Your task is to create a detailed summary",
    "architectural decisions that would be essential",
    "Double-check for technical accuracy",
    "Here's an example of how your output should be structured",
    "IMPORTANT: Do NOT use any tools",
    "SUGGESTION MODE",
)


def _session_copy(corpus_dir: Path, tmp_path: Path, session: str) -> Path:
    """A folder holding one spotter session: its transcript and its folder of sub-agents."""
    folder = tmp_path / "project"
    shutil.copytree(corpus_dir / SPOTTER / session, folder / session)
    shutil.copy(corpus_dir / SPOTTER / f"{session}.jsonl", folder)
    return folder


@pytest.fixture
def compacted_session(corpus_dir: Path, tmp_path: Path) -> Path:
    return _session_copy(corpus_dir, tmp_path, COMPACTED)


def test_a_compaction_is_remembered_as_its_summary_under_one_line_not_as_the_instruction_to_summarise(
    compacted_session: Path,
) -> None:
    graph = ingest_graph(compacted_session)
    assert not [c.id for c in graph.chunks.values() if any(p in c.content for p in BOILERPLATE)]
    compaction = graph.agent_chunks("compaction")
    assert compaction[0].content.startswith(
        "[User]\n[Compaction of the conversation above]\n[Assistant]\n<analysis>\nLet me chronologically analyze"
    )
    # The summary's brief and debrief still join it to the main chunks around it.
    assert len(graph.of("brief")) == len(graph.of("debrief")) == 2
    with Memory() as memory:
        hits = memory.search("Implement spotter-gqc annotation message references", mode="keyword", limit=10).hits
        assert "compaction" in {h.chunk.agent for h in hits}


def test_the_result_a_compaction_cut_into_is_remembered_once_in_the_turn_of_its_call(corpus_dir: Path) -> None:
    graph = ingest_graph(corpus_dir / RANDLEE)
    holding = [c for c in graph.chunks.values() if "836→\n   837→---" in c.content]
    assert [(c.agent, c.content.splitlines()[1]) for c in holding] == [
        ("main", "update the project plan to reflect reality and commit")
    ]
    assert "[Tool:Read] /Users/randlee/Documents/github/claude-history/docs/PROJECT_PLAN.md\n\n[Result:Read] 836→" in (
        holding[0].content
    )
    # The compaction opens with its summary, joined to the turn it cut into and to what followed.
    compaction = graph.agent_chunks("compaction")
    assert compaction[0].content.startswith("[User]\n[Compaction of the conversation above]\n[Assistant]\n")
    assert (holding[0], compaction[0]) in graph.of("brief")
    assert [t.agent for s, t in graph.of("debrief") if s == compaction[-1]] == ["main"]


def _record(kind: str, uuid: str, parent: str | None, stamp: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = f"msg_{uuid}"
    return {
        "parentUuid": parent,
        "isSidechain": "agentId" in extra,
        "type": kind,
        "cwd": "/work/site",
        "sessionId": WRITTEN,
        "uuid": uuid,
        "timestamp": f"2026-11-02T09:{stamp}.000Z",
        "message": message,
        **extra,
    }


def _call(name: str, call_id: str, path: str) -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": call_id, "name": name, "input": {"file_path": path}}]


def _result(call_id: str, text: str) -> list[dict[str, Any]]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": text}]


def test_records_a_compaction_file_holds_before_its_instruction_are_kept_once_in_the_main_turn(
    tmp_path: Path,
) -> None:
    """The compaction's file opens with a copy of a result the session's file holds (another uuid, the
    same message) and the result of the call the compaction cut into, which only it holds."""
    folder, session = tmp_path / "-work-site", WRITTEN
    main = [
        _record("user", "u1", None, "00:00", "raise the upload retry budget"),
        _record("assistant", "a1", "u1", "00:05", _call("Read", "toolu_read", "config.py")),
        _record("user", "r1", "a1", "00:06", _result("toolu_read", "RETRY_BUDGET = 3 # the read result")),
        _record("assistant", "a2", "r1", "00:10", _call("Edit", "toolu_edit", "config.py")),
        {"type": "system", "subtype": "compact_boundary", "parentUuid": None, "logicalParentUuid": "r2",
         "uuid": "b1", "sessionId": session, "timestamp": "2026-11-02T09:01:01.000Z"},
        _record("user", "s1", "b1", "01:01", "This session is being continued from a previous conversation.",
                isCompactSummary=True),
        _record("user", "u2", "s1", "02:00", "now add a test for the retry budget"),
        _record("assistant", "a3", "u2", "02:05", [{"type": "text", "text": "Added test_retry_budget."}]),
    ]  # fmt: skip
    agent = {"agentId": "acompact-1a2b3c"}
    compaction = [
        _record("user", "c1", "a1", "00:06", _result("toolu_read", "RETRY_BUDGET = 3 # the read result"), **agent),
        _record("user", "r2", "a2", "00:11", _result("toolu_edit", "config.py updated: RETRY_BUDGET = 5"), **agent),
        _record("user", "i1", "r2", "00:12", "Your task is to create a detailed summary of the conversation so far.",
                **agent),
        _record("assistant", "i2", "i1", "01:00", [{"type": "text", "text": "<summary>Budget raised.</summary>"}],
                **agent),
    ]  # fmt: skip
    (folder / session / "subagents").mkdir(parents=True)
    for path, records in (
        (folder / f"{session}.jsonl", main),
        (folder / session / "subagents" / "agent-acompact-1a2b3c.jsonl", compaction),
    ):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    graph = ingest_graph(folder)
    for words in ("RETRY_BUDGET = 3", "RETRY_BUDGET = 5"):
        assert [c.agent for c in graph.chunks.values() if words in c.content] == ["main"]
    (first_turn, second_turn), [summary] = graph.agent_chunks("main"), graph.agent_chunks("compaction")
    assert first_turn.content == (
        "[User]\nraise the upload retry budget\n\n[Tool:Read] config.py\n\n[Result:Read] RETRY_BUDGET = 3 # the read"
        " result\n\n[Tool:Edit] config.py\n\n[Result:Edit] config.py updated: RETRY_BUDGET = 5"
    )
    assert (
        summary.content
        == "[User]\n[Compaction of the conversation above]\n[Assistant]\n<summary>Budget raised.</summary>"
    )
    assert graph.of("brief") == [(first_turn, summary)] and graph.of("debrief") == [(summary, second_turn)]
    assert graph.report.skipped_lines["duplicate record"] == 1


def test_a_sub_agent_compacted_on_its_own_keeps_the_result_its_compaction_cut_into(tmp_path: Path) -> None:
    """A sub-agent's compaction file opens with the result of the sub-agent's last call (its
    ``parentUuid`` a record of the sub-agent's file): the result joins the sub-agent's turn, not the
    main conversation, where it read as a result of no call."""
    folder, session = tmp_path / "-work-site", WRITTEN
    task = {"subagent_type": "Explore", "description": "Audit retries", "prompt": "Find every retry limit"}
    main = [
        _record("user", "u1", None, "00:00", "audit the retry settings"),
        _record("assistant", "a1", "u1", "00:05", [{"type": "tool_use", "id": "toolu_task", "name": "Task",
                                                     "input": task}]),
        _record("user", "r1", "a1", "01:10", _result("toolu_task", "The only retry limit is LIMIT = 10."),
                toolUseResult={"agentId": "a5b6c7d", "status": "completed"}),
        _record("assistant", "a2", "r1", "01:15", [{"type": "text", "text": "The retry limit is 10."}]),
    ]  # fmt: skip
    agent = {"agentId": "a5b6c7d"}
    sub = [
        _record("user", "s1", None, "00:06", "Find every retry limit", **agent),
        _record("assistant", "s2", "s1", "00:10", _call("Read", "toolu_sread", "net.py"), **agent),
        _record("assistant", "s3", "c2", "01:05", [{"type": "text", "text": "LIMIT = 10 is the only one."}], **agent),
    ]
    compacting = {"agentId": "acompact-4d5e6f"}
    compaction = [
        _record("user", "c1", "s2", "00:11", _result("toolu_sread", "LIMIT = 10  # what the sub-agent read"),
                **compacting),
        _record("user", "c2", "c1", "00:12", "Your task is to create a detailed summary of the conversation so far.",
                **compacting),
        _record("assistant", "c3", "c2", "01:00", [{"type": "text", "text": "<summary>Found LIMIT.</summary>"}],
                **compacting),
    ]  # fmt: skip
    (folder / session / "subagents").mkdir(parents=True)
    for path, records in (
        (folder / f"{session}.jsonl", main),
        (folder / session / "subagents" / "agent-a5b6c7d.jsonl", sub),
        (folder / session / "subagents" / "agent-acompact-4d5e6f.jsonl", compaction),
    ):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")

    graph = ingest_graph(folder)
    holding = [c for c in graph.chunks.values() if "what the sub-agent read" in c.content]
    assert [c.agent for c in holding] == ["Explore"]
    assert "[Tool:Read] net.py\n\n[Result:Read] LIMIT = 10  # what the sub-agent read" in holding[0].content
    assert "what the sub-agent read" not in "".join(c.content for c in graph.agent_chunks("main"))


@pytest.fixture
def compacted_with_words(corpus_dir: Path, tmp_path: Path) -> Path:
    return _session_copy(corpus_dir, tmp_path, WITH_WORDS)


def test_the_words_given_to_compact_are_a_user_turn_and_the_hook_output_beside_them_is_not(
    compacted_with_words: Path,
) -> None:
    """Claude Code records `/compact and continue with the reamining tasks` in a record of its own,
    and hands the compaction agent the words followed by the PreCompact hook's 3 kB workflow primer."""
    graph = ingest_graph(compacted_with_words)
    [asked] = [c for c in graph.chunks.values() if COMPACT_WORDS in c.content]
    assert (asked.agent, asked.content) == ("main", f"[User]\n{COMPACT_WORDS}")
    assert not [c.id for c in graph.chunks.values() if "Beads Workflow Context" in c.content]
    # The request leads to the summary, and the summary to the next prompt.
    compaction = graph.agent_chunks("compaction")
    assert (asked, compaction[0]) in graph.of("brief")
    [(_, resumed)] = [(s, t) for s, t in graph.of("debrief") if s == compaction[-1]]
    assert resumed.content.startswith("[User]\ncontinue implementation")
    with Memory() as memory:
        hits = memory.search("compact reamining tasks", mode="keyword", limit=3).hits  # as typed
        assert hits[0].chunk.content == asked.content


def test_prompt_suggestions_are_skipped_and_counted_like_warm_ups(corpus_dir: Path) -> None:
    graph = ingest_graph(corpus_dir / RANDLEE)
    assert graph.report.skipped_subagents["prompt-suggestion"] == 6
    assert not [c for c in graph.chunks.values() if c.agent == "prompt-suggestion" or "SUGGESTION MODE" in c.content]
    # The session's own compaction is kept.
    assert graph.agent_chunks("compaction")


def _stored(home: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    with sqlite3.connect(home / "memory.db") as conn:
        chunks = conn.execute(
            "SELECT id, agent, turn_index, part, content_hash, message_uuids, start_time, end_time, search_terms"
            " FROM chunks ORDER BY id"
        ).fetchall()
        edges = conn.execute(
            "SELECT source_chunk_id, target_chunk_id, reference_type FROM edges ORDER BY 1, 2, 3"
        ).fetchall()
    return chunks, edges


def test_a_store_written_before_these_rules_ends_as_a_fresh_ingest_when_re_ingested_with_force(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    paths = [corpus_dir / SPOTTER, corpus_dir / RANDLEE]  # 6 compactions, 6 prompt suggestions
    # The rules before: the instruction to summarise read as a prompt (so the records before it stay
    # the compaction's), prompt suggestions ingested, the words of /compact dropped (the main turns
    # after it then had other numbers).
    with monkeypatch.context() as before:
        before.setattr(_system_text, "COMPACTION_PROMPT_OPENING", "\0")
        before.setattr(subagents, "_PROMPT_SUGGESTION", "\0")
        before.setattr(subagents, "SUGGESTION_PROMPT_OPENING", "\0")
        before.setattr(_system_text, "_LOCAL_COMMANDS", _system_text._LOCAL_COMMANDS | {"compact"})
        with open_services(Config()) as services:
            ingest_paths(services, paths, embed=False, workers=1)
    old_home = causantic_home()
    assert any(BOILERPLATE[0] in content for content in _stored_contents(old_home))
    assert any(content.startswith(CUT_RESULT) for content in _stored_contents(old_home))
    assert not any(COMPACT_WORDS in content for content in _stored_contents(old_home))

    with open_services(Config()) as services:
        unchanged = ingest_paths(services, paths, embed=False, workers=1)
        assert unchanged.sessions == 0 and unchanged.chunks_updated == 0  # "Nothing new": files unchanged
        forced = ingest_paths(services, paths, force=True, embed=False, workers=1)
    assert forced.chunks_removed > 0 and forced.skipped_subagents["prompt-suggestion"] == 6

    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "fresh"))
    with open_services(Config()) as services:
        ingest_paths(services, paths, embed=False, workers=1)
    assert _stored(old_home) == _stored(tmp_path / "fresh")
    assert not any(p in row for row in _stored_contents(old_home) for p in BOILERPLATE)
    assert not any(content.startswith(CUT_RESULT) for content in _stored_contents(old_home))


def _stored_contents(home: Path) -> list[str]:
    with sqlite3.connect(home / "memory.db") as conn:
        return [row[0] for row in conn.execute("SELECT content FROM chunks")]
