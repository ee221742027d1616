"""Agents Claude Code runs on its own: what of them memory keeps.

A compaction (``acompact-…``) is kept as its summary, which restates the session's work, under one
line standing for Claude Code's 5–9 kB instruction to summarise; a prompt suggestion
(``aprompt_suggestion-…``) is skipped and counted like a warm-up. Real files from the shared corpus:
marot ``spotter`` (Claude Code 2.1.39) and randlee ``claude-history`` (2.1.29).
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

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
# Phrases of Claude Code's compaction instruction (not of any summary) and of its suggestion prompt.
BOILERPLATE = (
    "Your task is to create a detailed summary",
    "architectural decisions that would be essential",
    "Double-check for technical accuracy",
    "Here's an example of how your output should be structured",
    "IMPORTANT: Do NOT use any tools",
    "SUGGESTION MODE",
)


@pytest.fixture
def compacted_session(corpus_dir: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    shutil.copytree(corpus_dir / SPOTTER / COMPACTED, folder / COMPACTED)
    shutil.copy(corpus_dir / SPOTTER / f"{COMPACTED}.jsonl", folder)
    return folder


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
    # The rules before: the instruction to summarise read as a prompt, prompt suggestions ingested.
    with monkeypatch.context() as before:
        before.setattr(_system_text, "COMPACTION_PROMPT_OPENING", "\0")
        before.setattr(subagents, "_PROMPT_SUGGESTION", "\0")
        before.setattr(subagents, "SUGGESTION_PROMPT_OPENING", "\0")
        with open_services(Config()) as services:
            ingest_paths(services, paths, embed=False, workers=1)
    old_home = causantic_home()
    assert any(BOILERPLATE[0] in content for content in _stored_contents(old_home))

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


def _stored_contents(home: Path) -> list[str]:
    with sqlite3.connect(home / "memory.db") as conn:
        return [row[0] for row in conn.execute("SELECT content FROM chunks")]
