"""Keyword feedback from the best candidates' words (pseudo-relevance feedback, RM3-style).

A request whose words differ from the session's ("enable automatic sessions pushing" against
``autoPushSessions``, "auto-push") finds little by BM25, and the vector feedback
(:mod:`causantic.retrieval.feedback`) only reorders candidates already found: it cannot bring in a
chunk neither list returned. The best few candidates of the first pass, though, usually speak the
work's vocabulary. Their distinctive words (frequent in them, rare in the searched scope by the
store's own document counts; listing tool output left out, as for mentions) make a second BM25
query, and its hits join the keyword list weighted below the original query's
(``retrieval.termFeedbackWeight``), so a chunk that shares no word with the request but the best
hits' vocabulary can now be found.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from causantic.store.features import split_tool_output, stem
from causantic.store.fts import query_terms

# Words of letters only: numbers and hashes say nothing about the topic; nor do the parts of a path,
# a URL or an address (a user's home folder name, a host), nor a contraction's halves ("doesn't").
_WORD = re.compile(r"[A-Za-z]{3,30}")
_NOT_PROSE = re.compile(r"\S*[/\\@]\S*|\w+'\w+")
_COUNTED = 40  # most frequent feedback words whose chunk counts are read (one index read for all)


class TermCounts(Protocol):
    def keyword_document_counts(
        self, terms: Sequence[str], *, project_ids: Sequence[int] | None = None, agent: str | None = None, most: int
    ) -> list[int]: ...


def feedback_terms(
    texts: Sequence[tuple[str, float]],
    asked: frozenset[str],
    counts: TermCounts,
    *,
    scope_chunks: int,
    project_ids: Sequence[int] | None,
    agent: str | None,
    most_counted: int,
    terms: int,
) -> list[str]:
    """The ``terms`` words that best tell the feedback chunks apart from the scope: each text's
    own words (tool listings left out) weighed by their share of the text times the text's weight
    (its fused score), summed over the texts, times the word's IDF in the scope. Words of the
    query (by light stem, ``asked``), stop words, and words no other chunk of the scope holds (they
    cannot find anything new) are left out."""
    if terms <= 0 or not texts:
        return []
    mass: dict[str, float] = {}
    for text, weight in texts:
        counted = Counter(w.lower() for w in _WORD.findall(_NOT_PROSE.sub(" ", split_tool_output(text)[0])))
        kept = [w for w in query_terms(" ".join(counted)) if stem(w) not in asked]  # no stop word, no query word
        length = sum(counted[w] for w in kept)
        for word in kept:
            mass[word] = mass.get(word, 0.0) + weight * counted[word] / length
    common = sorted(mass, key=lambda word: (-mass[word], word))[:_COUNTED]
    if not common:
        return []
    found = counts.keyword_document_counts(common, project_ids=project_ids, agent=agent, most=most_counted)
    total = max(scope_chunks, 1)
    scored = [
        (mass[word] * math.log(1.0 + (total - n + 0.5) / (n + 0.5)), word)
        for word, n in zip(common, found, strict=True)
        if n > 1
    ]
    scored.sort(key=lambda pair: (-pair[0], pair[1]))
    return [word for _, word in scored[:terms]]


def merged_keyword_hits(
    original: Sequence[tuple[str, float]], feedback: Sequence[tuple[str, float]], weight: float
) -> list[tuple[str, float]]:
    """The keyword list with the feedback query's hits joined: each list divided by its best, the
    feedback's times ``weight``, summed per chunk; best first."""
    merged: dict[str, float] = {}
    for hits, factor in ((original, 1.0), (feedback, weight)):
        best = max((score for _, score in hits), default=0.0)
        if best <= 0:
            continue
        for chunk_id, score in hits:
            merged[chunk_id] = merged.get(chunk_id, 0.0) + factor * score / best
    return sorted(merged.items(), key=lambda pair: -pair[1])
