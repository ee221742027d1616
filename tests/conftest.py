"""Shared fixtures: every test gets its own CAUSANTIC_HOME, and real corpus files from ../shared."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_server import BACKENDS, backend_settings, require_postgres, start_server
from shared_data import require_shared

from causantic.config import Config

REPO = Path(__file__).resolve().parents[1]
SHARED = (REPO / ".." / "shared").resolve()
CORPUS = SHARED / "corpus" / "claude-code"


@pytest.fixture(autouse=True)
def causantic_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Point the data directory at a fresh temporary folder and clear config from the environment."""
    home = tmp_path / "causantic-home"
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    for name in list(os.environ):
        if name.startswith("CAUSANTIC_") and name != "CAUSANTIC_HOME":
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return home


@pytest.fixture(scope="session")
def corpus_dir() -> Path:
    return require_shared(CORPUS, "The shared transcript corpus")


@pytest.fixture(scope="session")
def agents_corpus() -> Path:
    """The shared corpus root, for tests of the Codex CLI and Gemini CLI files in it."""
    root = SHARED / "corpus"
    require_shared(root / "codex", "The shared Codex CLI corpus")
    require_shared(root / "gemini", "The shared Gemini CLI corpus")
    return root


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[Any]:
    """A real PostgreSQL with pgvector for the whole session (tests/postgres_server.py)."""
    require_postgres()
    # Not under pytest's temporary folder: every pytest run resets pytest-of-<user> to owner-only,
    # which would lock out the server's own system user when it runs as root (postgres_server.py).
    folder = Path(tempfile.mkdtemp(prefix="causantic-pgserver-"))
    server = start_server(folder / "data")
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(params=BACKENDS)
def backend_config(request: pytest.FixtureRequest) -> Config:
    """Default configuration on each backend: the SQLite file in CAUSANTIC_HOME, or a new database."""
    return backend_settings(request)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # Tests that read ../shared carry the `shared` marker, so `-m "not shared"` runs the rest.
    for item in items:
        if {"corpus_dir", "agents_corpus"} & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.shared)
