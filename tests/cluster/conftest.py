"""Fixtures of the clustering tests."""

from __future__ import annotations

import numpy as np
import pytest
from blob_support import embedding_like_blobs


@pytest.fixture
def blobs() -> tuple[np.ndarray, np.ndarray]:
    return embedding_like_blobs([40, 25, 12, 6, 30], outliers=60)
