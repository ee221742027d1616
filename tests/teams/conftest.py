"""Team and sub-agent test data: the real team session, its hand-made fixture, and ours."""

from __future__ import annotations

from pathlib import Path

import pytest
from team_graph import FIXTURES, REAL_TEAM_SESSION, TEST_DATA


@pytest.fixture(scope="session")
def real_team_session(corpus_dir: Path) -> Path:
    return corpus_dir / REAL_TEAM_SESSION


@pytest.fixture(scope="session")
def teammates_fixture(corpus_dir: Path) -> Path:
    return corpus_dir / TEST_DATA / "teammates"


@pytest.fixture(scope="session")
def docs_team() -> Path:
    return FIXTURES / "docs_team"
