"""Recall beside team memory keeps the answer's budget: each store's episodes are fused
into one answer of at most ``episodes.maxTokens``, as an answer from one store is.

Real PostgreSQL (the ``postgres_server`` fixture) for the shared project, a real SQLite file for the
member's own; transcripts written as Claude Code writes them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from postgres_server import new_database
from transcript_files import write_session

from causantic import Memory

SHOP, DIARY = "/home/dev/shop", "/home/dev/diary"
QUERY = "the checkout redirect loop after login on Safari"


def _long_story(n: int, place: str) -> list[tuple[str, str]]:
    """A session of long turns, each about the redirect loop: an answer's budget holds few of them."""
    detail = " ".join(f"{place} trace line {i}: the checkout redirect loop after login on Safari" for i in range(25))
    return [(f"step {n}.{t}: the checkout redirect loop after login on Safari again", detail) for t in range(4)]


@pytest.mark.slow
def test_a_recall_from_both_stores_keeps_the_episodes_budget(postgres_server: Any, tmp_path: Path) -> None:
    """Fused under the whole tool budget (tokens.mcpMaxResponse, 20,000), it came to twice the 2,500 of
    an answer from one store."""
    folder = tmp_path / "projects"
    for n in range(3):
        write_session(folder, SHOP, f"5b0{n}0000-0000-4000-8000-000000000000", _long_story(n, "shop"), day=2 + n)
        write_session(folder, DIARY, f"d1a{n}0000-0000-4000-8000-000000000000", _long_story(n, "diary"), day=2 + n)
    team = {
        "storage.backend": "postgres",
        "storage.postgresUrl": new_database(postgres_server),
        "team.user": "alice",
        "team.shareProjects": ["shop"],
    }
    with Memory(tmp_path / "alice", overrides=team) as memory:
        memory.ingest([folder])
        answer = memory.recall(QUERY)
        budget = memory.config.episodes.max_tokens
    assert {c.user is None for c in answer.chunks} == {True, False}  # both stores answered
    assert 0 < answer.tokens <= budget
