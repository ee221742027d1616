"""Without FTS5, ingestion still works, says so, and search runs on vectors alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.search import SearchRequest
from causantic.services import open_services
from causantic.store import migrations


@pytest.fixture
def no_fts5(monkeypatch: pytest.MonkeyPatch) -> None:
    """An SQLite build without FTS5: the capability probe answers no."""
    monkeypatch.setattr(migrations, "fts5_available", lambda conn: False)


@pytest.mark.usefixtures("no_fts5")
def test_ingest_and_keyword_search_degrade_without_fts5() -> None:
    with open_services(Config()) as services:
        report = ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        assert report.chunks_added > 0
        assert services.store.fts_enabled is False
        assert services.store.counts()["keyword_index"].startswith("off")
        assert services.store.keyword_search("Safari") == []
        result = services.searcher.search(SearchRequest("Safari redirect loop"))
        assert result.hits == [] and result.mode == "none"


@pytest.mark.usefixtures("no_fts5")
def test_search_runs_vector_only_without_fts5(tmp_path: Path) -> None:
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], workers=1)
        result = services.searcher.search(SearchRequest("Safari redirect loop between login and dashboard"))
    assert result.mode == "vector-only"
    assert any("FTS5" in note for note in result.notes)
    assert "SameSite" in result.hits[0].chunk.content or "Safari" in result.hits[0].chunk.content
