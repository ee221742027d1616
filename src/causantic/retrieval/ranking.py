"""Ranking primitives: rank and score fusion, recency boost, Maximal Marginal Relevance.

Pure functions over ids, scores and vectors; the search pipeline composes them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def reciprocal_rank_fusion(
    rankings: Mapping[str, Sequence[str]], k: int = 60, weights: Mapping[str, float] | None = None
) -> list[tuple[str, float, tuple[str, ...]]]:
    """Fuse ranked id lists: score(d) = Σ weight / (k + rank), rank counted from 1.

    Returns (id, score, names of the lists that contained it), best first; ties keep first-seen order.
    """
    scores: dict[str, float] = {}
    sources: dict[str, list[str]] = {}
    for name, ranking in rankings.items():
        weight = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            sources.setdefault(item, []).append(name)
    order = sorted(scores, key=lambda item: -scores[item])
    return [(item, scores[item], tuple(sources[item])) for item in order]


def convex_fusion(
    scored: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float], spread: Collection[str] = ()
) -> list[tuple[str, float, tuple[str, ...]]]:
    """Fuse scored lists: score(d) = Σ weight · share(d), over the lists holding d, / Σ weight.

    BM25 and cosine have unrelated scales, so each list's scores become shares of its best, with
    zero as the floor: a cosine of zero or below counts as no evidence, and so does a list whose best
    is not positive. With ``spread`` a share runs from the list's weakest candidate (0) to its best
    (1) instead (min-max normalisation; a list whose candidates all score alike keeps shares of its
    best): cosines of a small model crowd into a narrow band (0.3 to 0.6), so as shares of the best
    they hardly differ and the vector list's order counts for little beside BM25's wide spread;
    spread, both lists' orders count alike. Unlike RRF this keeps how far apart the scores are: a
    keyword hit far ahead of the rest stays ahead. Items no list scored above zero are left out.
    Returns (id, score, names of the lists holding it), best first; ties keep first-seen order.
    """
    total = sum(weights.get(name, 1.0) for name in scored) or 1.0
    scores: dict[str, float] = {}
    sources: dict[str, list[str]] = {}
    for name, hits in scored.items():
        best = max((score for _, score in hits), default=0.0)
        low = max(0.0, min((score for _, score in hits), default=0.0)) if name in spread else 0.0
        if low >= best:
            low = 0.0  # one candidate, or all alike: nothing to spread between, each is the best
        weight = weights.get(name, 1.0) / total if best > low else 0.0
        for item, score in hits:
            sources.setdefault(item, []).append(name)
            if score > 0 and weight:
                scores[item] = scores.get(item, 0.0) + weight * max(0.0, score - low) / (best - low)
    order = sorted(scores, key=lambda item: -scores[item])
    return [(item, scores[item], tuple(sources[item])) for item in order]


def blend_fusion(
    convex: Sequence[tuple[str, float, tuple[str, ...]]],
    ranked: Sequence[tuple[str, float, tuple[str, ...]]],
    share: float,
) -> list[tuple[str, float, tuple[str, ...]]]:
    """``share`` × the convex score + (1 − ``share``) × the RRF score divided by the best RRF score.

    Convex fusion keeps score gaps (a keyword hit far ahead stays ahead) but lets one list's huge
    lead, such as a long listing that holds every query word, outweigh agreement between the lists;
    RRF sees only positions. The blend keeps some of both. Best first; ties keep first-seen order.
    """
    best = max((score for _, score, _ in ranked), default=0.0) or 1.0
    scores: dict[str, float] = {}
    sources: dict[str, tuple[str, ...]] = {}
    for item, score, names in convex:
        scores[item] = share * score
        sources[item] = names
    for item, score, names in ranked:
        scores[item] = scores.get(item, 0.0) + (1.0 - share) * score / best
        sources.setdefault(item, names)
    order = sorted(scores, key=lambda item: -scores[item])
    return [(item, scores[item], sources[item]) for item in order]


def keep_list_tops(
    fused: Sequence[tuple[str, float, tuple[str, ...]]], rankings: Mapping[str, Sequence[str]], depth: int
) -> list[tuple[str, float, tuple[str, ...]]]:
    """Fused hits with each list's top ``depth`` hits lifted: a list's hit at rank r (from 0) scores
    at least just under the fused hit at index r + 1, so it lands no lower than index r + 2 (a list's
    best hit is among the first three).

    Score fusion can bury a list's clear winner when the other list, which misses it, fills the top
    with hits of its own; this keeps the order elsewhere and lifts only those few, by score, so the
    stages after fusion (recency, MMR) still see one consistent scale. Best first; ties keep order.
    """
    if depth <= 0 or not fused:
        return list(fused)
    position_scores = [score for _, score, _ in fused]
    floor: dict[str, float] = {}
    for ranking in rankings.values():
        for rank, item in enumerate(ranking[:depth]):
            lifted = position_scores[min(rank + 1, len(position_scores) - 1)] * (1.0 - 1e-9)
            floor[item] = max(floor.get(item, 0.0), lifted)
    out = [(item, max(score, floor.get(item, 0.0)), sources) for item, score, sources in fused]
    return sorted(out, key=lambda row: -row[1])


def session_evidence(scores: Sequence[float], sessions: Sequence[str], weight: float, others: int) -> list[float]:
    """Each score plus ``weight`` times the best ``others`` scores of other candidates in its session:
    a session several candidates point at is stronger evidence than one hit alone."""
    if weight <= 0:
        return list(scores)
    by_session: dict[str, list[float]] = {}
    for score, session in zip(scores, sessions, strict=True):
        by_session.setdefault(session, []).append(score)
    tops = {session: sorted(values, reverse=True)[: others + 1] for session, values in by_session.items()}
    out = []
    for score, session in zip(scores, sessions, strict=True):
        best = tops[session]
        # A score among its session's best is left out of its own support once.
        support = sum(best) - score if score >= best[-1] else sum(best[:others])
        out.append(score + weight * support)
    return out


def session_coverage_factors(
    sessions: Sequence[str],
    stems: Sequence[Iterable[str]],
    coverage: Callable[[frozenset[str]], float],
    weight: float,
) -> list[float]:
    """Per candidate, 1 + ``weight`` × the ``coverage`` (0-1) of the union of the ``stems`` of every
    candidate in its session. A request names several things ("retry budget for flaky uploads");
    the session that did the work often says them in different chunks, none of which holds them
    all, while a chunk elsewhere holding most of them in passing outranks each one. Measured over
    distinct sessions, not chunks, so one session's many chunks count once, and every chunk of a
    session gets the same factor: only the order between sessions changes."""
    if weight <= 0:
        return [1.0] * len(sessions)
    union: dict[str, set[str]] = {}
    for session, words in zip(sessions, stems, strict=True):
        union.setdefault(session, set()).update(words)
    factor = {session: 1.0 + weight * coverage(frozenset(words)) for session, words in union.items()}
    return [factor[session] for session in sessions]


def session_term_shares(
    counts: Mapping[str, tuple[int, Mapping[str, int]]],
    terms: Sequence[tuple[float, Sequence[Sequence[str]]]],
    k1: float = 1.2,
    b: float = 0.75,
) -> dict[str, float]:
    """Per session, BM25 with the session as the document, as a share (0-1) of the best a session
    could score: Σ weight × saturation(n) / Σ weight over the query's ``terms`` (weight, spellings:
    each a sequence of stems), where n is how many of the session's chunks hold the term (the fewest
    holding one of its stems, for its best spelling) and saturation(n) = n / (n + k1 × (1 − b + b ×
    chunks / the mean chunks of the sessions at hand)): a word said in several chunks counts more
    than once, but ever less, and a long session must say it more often to count as much, so
    length alone (a long session holds most words somewhere) is not evidence. ``counts``: per
    session, its chunks and how many hold each stem (``session_stem_counts``)."""
    total = sum(weight for weight, _ in terms)
    if total <= 0 or not counts:
        return {}
    mean = sum(size for size, _ in counts.values()) / len(counts) or 1.0
    out = {}
    for session, (size, held) in counts.items():
        norm = k1 * (1.0 - b + b * size / mean)
        score = 0.0
        for weight, spellings in terms:
            # Plain loops, a one-stem spelling (most) looked up directly: nested generators took 7x as
            # long (0.37 against 0.05 ms for 30 sessions and 8 terms), each search.
            n = 0  # counts are positive, so 0 stands for "no spelling held"
            for spelling in spellings:
                least = (
                    held.get(spelling[0], 0)
                    if len(spelling) == 1
                    else min([held.get(x, 0) for x in spelling], default=0)
                )
                if least > n:
                    n = least
            score += weight * n / (n + norm) if n else 0.0
        out[session] = score / total
    return out


def recency_factor(start_time: datetime, now: datetime, decay_factor: float, half_life_hours: float) -> float:
    """1 + decay · 2^(-age / half-life): recent work counts a little more, old work never less than 1×."""
    age_hours = max(0.0, (now - start_time).total_seconds() / 3600)
    return 1.0 + decay_factor * math.exp(-age_hours * math.log(2) / half_life_hours)


def mmr_picks(relevance: Sequence[float], vectors: np.ndarray | None, lam: float) -> Iterator[int]:
    """Indices in Maximal Marginal Relevance order: λ·relevance − (1−λ)·max similarity to the picked.

    ``relevance`` is rescaled to [0, 1] between its minimum and maximum, so the trade-off is between
    the candidates at hand: fused scores are flat (RRF gives 1/61 and 1/62 to ranks 1 and 2), and
    dividing by the maximum alone would leave every candidate near 1 and let diversity override
    relevance. Rows of ``vectors`` are unit vectors (a zero row, for a candidate without a vector,
    is similar to nothing). The first pick is always the most relevant candidate. Lazy, since each
    pick depends only on those before it: search reads picks until its answer is full (10 hits of
    some 90 candidates), and picking all of them cost ~0.5 ms a search.
    """
    import numpy as np

    n = len(relevance)
    if n == 0:
        return
    rel = np.asarray(relevance, dtype=np.float64)
    spread = rel.max() - rel.min()
    rel = (rel - rel.min()) / spread if spread > 0 else np.ones_like(rel)
    if vectors is None or lam >= 1.0:
        yield from (int(i) for i in np.argsort(-rel, kind="stable"))
        return
    sims = vectors @ vectors.T
    max_sim = np.zeros(n)
    available = np.ones(n, dtype=bool)
    for _ in range(n):
        score = lam * rel - (1 - lam) * max_sim
        score[~available] = -np.inf
        pick = int(np.argmax(score))
        yield pick
        available[pick] = False
        max_sim = np.maximum(max_sim, sims[pick])


def non_increasing(values: Sequence[float]) -> list[float]:
    """The non-increasing sequence closest to ``values`` in least squares (isotonic regression by
    pool-adjacent-violators): a ranked list's scores shown so they never rise down the list, each
    moved as little as possible. scikit-learn's ``IsotonicRegression`` does the same, but importing
    it costs a search two seconds for a list of ten."""
    blocks: list[list[float]] = []  # [mean, size]
    for value in values:
        blocks.append([float(value), 1.0])
        while len(blocks) > 1 and blocks[-2][0] < blocks[-1][0]:
            mean, size = blocks.pop()
            blocks[-1] = [(blocks[-1][0] * blocks[-1][1] + mean * size) / (blocks[-1][1] + size), blocks[-1][1] + size]
    return [mean for mean, size in blocks for _ in range(int(size))]
