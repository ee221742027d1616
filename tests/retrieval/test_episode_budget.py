"""An episodic answer spends its token budget on what it prints: counted as printed (its heading,
each episode's and each chunk's heading, the text), it never exceeds the budget, and headings are
charged what they print, not search's long per-hit header (30 tokens a chunk), so more chunks fit."""

from __future__ import annotations

from pathlib import Path

import pytest
from transcript_files import write_session

from causantic import Memory
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import render_episodes

QUERY = "billing deploy migration lock timeout"
PLACES = ["runner", "queue", "ledger", "invoice"]
THINGS = ["lock", "index", "table", "column", "trigger", "cursor", "replica", "backup"]
BUDGETS = (150, 250, 400, 600, 900, 1500)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("episode-budget")
    for n, place in enumerate(PLACES):
        turns = [
            (
                f"the {place} billing deploy: migration {thing} timeout while step {step} ran",
                f"The {place} held the {thing} during migration step {step}; released it after the deploy.",
            )
            for step, thing in enumerate(THINGS)
        ]
        write_session(root / "sessions", f"/work/{place}", f"{n}a9e0000-0000-4000-8000-000000000000", turns)
    with Memory(root / "home") as memory:
        memory.ingest([root / "sessions"])
    return root / "home"


@pytest.mark.parametrize("kind", ["recall", "predict"])
def test_an_answer_printed_fits_its_budget_and_spends_it_on_chunks(home: Path, kind: str) -> None:
    chunks = []
    with Memory(home) as memory:
        for budget in BUDGETS:
            answer = getattr(memory, kind)(QUERY, max_tokens=budget)
            printed = approx_tokens(render_episodes(answer))
            assert printed <= budget, (budget, printed)
            chunks.append(len(answer.chunks))
    # A chunk here prints about 45 tokens with its heading, charged 30 more for search's header it does
    # not print: with the old charge 1,500 tokens held 19 chunks (and 250 printed 286).
    assert chunks == sorted(chunks) and chunks[-1] >= 21, chunks
