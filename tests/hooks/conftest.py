"""Fixtures for the hook tests: a store holding the example project."""

from __future__ import annotations

from pathlib import Path

import pytest
from process_support import EXAMPLES


@pytest.fixture
def acme_memory(causantic_home: Path) -> Path:
    """This test's home with the three example sessions of acme-shop ingested (no vectors)."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    with open_services() as services:
        report = ingest_paths(services, [EXAMPLES], embed=False, workers=1)
    assert report.chunks_added == 6
    return causantic_home
