"""The real shipped model, loaded once for the embedding tests."""

from __future__ import annotations

import pytest

from causantic.embedding import Embedder, load_embedder


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return load_embedder()
