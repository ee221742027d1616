"""Angles between unit vectors: distances, cluster centroids and the assignment of new vectors.

Vectors are rows of an ``(n, dims)`` array of L2-normalised embeddings. Angular distance is
``arccos(cos) / pi``: 0 for the same direction, 0.5 for orthogonal, 1 for opposite. Euclidean
distance between unit vectors (``2 sin(theta / 2)``) orders pairs exactly as the angle does, which is
why :mod:`causantic.cluster.density` can cluster with fast euclidean machinery and still mean angles.

Pure functions over arrays; which vectors belong to which chunk is the caller's business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, NDArray

NOISE = -1
"""The label of a vector that belongs to no cluster."""


def normalise(vectors: ArrayLike) -> NDArray[np.float32]:
    """Rows scaled to unit length, as float32; an all-zero row stays zero."""
    import numpy as np

    matrix = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit: NDArray[np.float32] = matrix / np.maximum(norms, np.float32(1e-12))
    return unit


def angular_distances(vectors: ArrayLike, others: ArrayLike) -> NDArray[np.float64]:
    """``(n, m)`` angular distances between each row of ``vectors`` and each row of ``others``."""
    import numpy as np

    cos = normalise(vectors).astype(np.float64) @ normalise(others).astype(np.float64).T
    return np.arccos(np.clip(cos, -1.0, 1.0)) / np.pi


def centroids(vectors: ArrayLike, labels: ArrayLike) -> dict[int, NDArray[np.float32]]:
    """The unit-length mean direction of each cluster's members; noise (-1) has no centroid."""
    import numpy as np

    matrix = normalise(vectors)
    labels = np.asarray(labels)
    if labels.shape != (matrix.shape[0],):
        raise ValueError(f"{labels.shape[0] if labels.ndim else 0} labels for {matrix.shape[0]} vectors.")
    out: dict[int, NDArray[np.float32]] = {}
    for label in np.unique(labels):
        if label == NOISE:
            continue
        mean = matrix[labels == label].mean(axis=0)
        out[int(label)] = normalise(mean)[0]
    return out


def assign_new(
    vectors: ArrayLike,
    centroids: Mapping[int, ArrayLike],
    threshold: float,
    bars: Mapping[int, float] | None = None,
) -> NDArray[np.int64]:
    """Each vector's nearest cluster when its angular distance to that centroid is under
    ``threshold`` (seed 001) or no more than that cluster's bar in ``bars`` (:func:`join_bars`), else
    noise (-1).

    One cluster at most per vector, and centroids do not move: this is the cheap step between two
    full reclusters (seed 001: without a bar, clusters grow without bound and mix topics).
    """
    import numpy as np

    raw = np.asarray(vectors, dtype=np.float32)
    labels = np.full(raw.shape[0] if raw.ndim == 2 else int(raw.size > 0), NOISE, dtype=np.int64)
    if not centroids or labels.size == 0:
        return labels
    matrix = normalise(raw)
    keys = np.fromiter(centroids.keys(), dtype=np.int64, count=len(centroids))
    distances = angular_distances(matrix, np.stack([np.asarray(c) for c in centroids.values()]))
    nearest = distances.argmin(axis=1)
    own = np.array([(bars or {}).get(int(k), -1.0) for k in keys])  # -1: no bar of its own
    distance = distances[np.arange(matrix.shape[0]), nearest]
    close = (distance < threshold) | (distance <= own[nearest])
    labels[close] = keys[nearest[close]]
    return labels


def join_bars(member_distances: Mapping[int, Sequence[float]], quantile: float) -> dict[int, float]:
    """Each cluster's bar for a new vector: the ``quantile`` of its members' angular distances to its
    centroid (a cluster without members has none). A loose topic takes a newcomer as far out as its own
    members lie, a tight one only close in; a vector joined within a bar does not raise it."""
    import numpy as np

    return {
        cluster: float(np.quantile(np.asarray(distances, dtype=np.float64), quantile))
        for cluster, distances in member_distances.items()
        if len(distances)
    }


def principal_components(matrix: NDArray[np.float32], dims: int) -> NDArray[np.float32]:
    """The centred rows on their top ``dims`` principal axes (eigenvectors of the covariance): PCA
    with numpy alone, for the neighbour search of large clusterings and the dashboard's topic map."""
    import numpy as np

    centred = matrix - matrix.mean(axis=0, dtype=np.float64).astype(np.float32)
    covariance = centred.T.astype(np.float64) @ centred.astype(np.float64)
    _, vectors = np.linalg.eigh(covariance)
    axes = vectors[:, ::-1][:, :dims].astype(np.float32)
    return np.ascontiguousarray(centred @ axes)
