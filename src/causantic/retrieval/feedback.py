"""Query feedback from the best candidates' vectors (pseudo-relevance feedback, Rocchio).

A short or vague request ("fixed tests", "compilation", "enable automatic pushing") says little,
and what it says is said in many sessions. The best few candidates a search found already say more:
their vectors point at the topic the request is about. The query vector moved towards their mean
(q + β·mean, re-normalised) scores every candidate again, and a candidate close to that topic is
lifted a little. No second index query is made: only the candidates' vectors, already at hand for
de-duplication and MMR, are compared, so it costs one small matrix-vector product per search.

Like the vector list in fusion, the feedback cosines are spread from the weakest candidate (0) to
the best (1) before they count: a small model's cosines crowd into a narrow band.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def feedback_factors(
    scores: Sequence[float],
    vectors: Sequence[np.ndarray | None],
    query_vector: np.ndarray,
    weight: float,
    depth: int,
    pull: float = 1.0,
) -> list[float]:
    """Per candidate, the factor its score is multiplied by: 1 + ``weight`` × its spread cosine to
    the query moved ``pull`` of the way towards the mean vector of the ``depth`` best-scored
    candidates. A candidate without a vector keeps its score (factor 1); so does every candidate
    when fewer than two have vectors or they all sit at one distance from the moved query."""
    import numpy as np

    factors = [1.0] * len(scores)
    have = {i: v for i, v in enumerate(vectors) if v is not None}
    if weight <= 0 or depth <= 0 or len(have) < 2:
        return factors
    best = sorted(have, key=lambda i: -scores[i])[:depth]
    moved = query_vector + pull * np.mean([have[i] for i in best], axis=0)
    norm = float(np.linalg.norm(moved))
    if norm == 0:
        return factors
    cosines = np.stack(list(have.values())) @ (moved / norm)
    low, high = float(cosines.min()), float(cosines.max())
    if high <= low:
        return factors
    for i, cosine in zip(have, cosines, strict=True):
        factors[i] = 1.0 + weight * (float(cosine) - low) / (high - low)
    return factors
