"""The prompt hook's reason reads as a person would say it, whatever the BM25 ratio."""

from __future__ import annotations

from causantic.retrieval.moments import MomentsRequest, _clear_lead, _Hit
from causantic.store.records import StoredChunk


def hit(session: str, bm25: float) -> _Hit:
    chunk = StoredChunk(
        id=f"{session}-c", session_id=session, project_id=1, project="p", agent="main", turn_index=0,
        part=0, start_time="2026-01-01T00:00:00Z", end_time="2026-01-01T00:00:00Z", content="x",
        content_hash="h", approx_tokens=1, message_uuids=(),
    )  # fmt: skip
    return _Hit(chunk, bm25=bm25, relevance=0.9, coverage=1.0, other=False)


REQUEST = MomentsRequest(prompt="p", cwd="/", bar=0.1, cross_bar=0.1, most=3, min_terms=1, session_margin=1.5)


def test_a_lead_over_a_stray_word_match_reads_over_100x_not_a_seven_digit_ratio() -> None:
    _, reason = _clear_lead([hit("lead", 16.65), hit("rival", 0.00001)], 0.1, REQUEST)
    assert "its session led the next by over 100x" in reason


def test_a_moderate_lead_keeps_its_figure() -> None:
    assert "led the next by 2.50x" in _clear_lead([hit("lead", 5.0), hit("rival", 2.0)], 0.1, REQUEST)[1]
    assert "led the next by 25x" in _clear_lead([hit("lead", 50.0), hit("rival", 2.0)], 0.1, REQUEST)[1]
