"""A store holding the shipped example sessions, with real vectors, shared by a module's tests.

Parametrised over both backends: every test using ``examples`` runs on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from postgres_server import BACKENDS, backend_settings

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services


@pytest.fixture(scope="module", params=BACKENDS)
def example_home(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Config]:
    home = tmp_path_factory.mktemp("examples-home")
    config = backend_settings(request)
    previous = os.environ.get("CAUSANTIC_HOME")
    os.environ["CAUSANTIC_HOME"] = str(home)
    try:
        with open_services(config) as services:
            ingest_paths(services, [SESSIONS_DIR], workers=1)
    finally:
        if previous is not None:
            os.environ["CAUSANTIC_HOME"] = previous
    return home, config


@pytest.fixture
def examples(example_home: tuple[Path, Config], monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    home, config = example_home
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    with open_services(config) as services:
        yield services
