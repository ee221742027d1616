"""Vectors shaped like sentence embeddings, made on the spot (no model needed)."""

from __future__ import annotations

import numpy as np


def embedding_like_blobs(
    sizes: list[int], outliers: int = 0, *, spread: float = 0.25, dims: int = 384, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors in tight groups plus scattered outliers; the truth is ``-1`` for outliers.

    Like MiniLM vectors, every vector leans toward one shared direction, so unrelated texts still
    have a cosine of about 0.3, and members of a group sit about 0.1 apart in angular distance.
    """
    rng = np.random.default_rng(seed)
    shared = rng.standard_normal(dims)
    shared /= np.linalg.norm(shared)
    parts, truth = [], []
    for label, size in enumerate(sizes):
        centre = rng.standard_normal(dims)
        centre = centre / np.linalg.norm(centre) + 0.6 * shared
        centre /= np.linalg.norm(centre)
        noise = rng.standard_normal((size, dims)) * spread / np.sqrt(dims)
        parts.append(centre + noise)
        truth += [label] * size
    if outliers:
        scattered = rng.standard_normal((outliers, dims))
        scattered /= np.linalg.norm(scattered, axis=1, keepdims=True)
        parts.append(scattered + 0.6 * shared)
        truth += [-1] * outliers
    vectors = np.concatenate(parts).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    order = rng.permutation(len(vectors))
    return vectors[order], np.asarray(truth)[order]
