"""A store holding the shipped example sessions, with real vectors, shared by a module's tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.services import Services, open_services


@pytest.fixture(scope="module")
def example_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("examples-home")
    previous = os.environ.get("CAUSANTIC_HOME")
    os.environ["CAUSANTIC_HOME"] = str(home)
    try:
        with open_services(Config()) as services:
            ingest_paths(services, [SESSIONS_DIR], workers=1)
    finally:
        if previous is not None:
            os.environ["CAUSANTIC_HOME"] = previous
    return home


@pytest.fixture
def examples(example_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Services]:
    monkeypatch.setenv("CAUSANTIC_HOME", str(example_home))
    with open_services(Config()) as services:
        yield services
