"""How relevant a chunk is to a query, on an absolute scale: the relevance floor's measure.

Fused search scores are relative (each list is divided by its best, or ranked), so the first hit
of any query, gibberish included, used to show "100%". This module scores a chunk against the
query itself, from two pieces of evidence that mean the same thing in every store:

- **cosine**: the embedding similarity of the chunk and the query (None without vectors);
- **coverage**: the share of the query's meaningful words found in the chunk, each word weighted
  by its inverse document frequency in the searched scope, so a rare identifier counts for much
  and a word found everywhere for little; a word found nowhere in memory counts fully against.

A logistic model turns them into a relevance in [0, 1] that is a probability: of the hits shown at
40%, about 4 in 10 were the right one on the development sets (the session that did the work in a
coding history, the turn that holds the answer in a chat; the two weigh the same). Its
coefficients are configuration (``relevance.*``) fitted by ``benchmarks/relevance_floor.py``: the
direction separates relevant hits from hits of questions memory cannot answer (``--fit``), the
scale is then fitted to how often hits are relevant (``--rescale``). Without that second step the
model was a classifier pushed to its extremes, and a third of on-topic hits showed "100%"; now even
a chunk that repeats the query word for word stays near 93%, and a stronger match always shows a
higher figure (every weight is positive, every penalty subtracts). A hit below ``relevance.floor``
is not shown, and an answer with none above it says "nothing relevant"; when nothing in memory is
near the query a weak hit is not shown either, unless the query is in memory's own words
(:func:`clears_floor`). Bulky payloads (SVG paths, base64, minified code, JSON or HAR dumps) are
searchable but score lower (``relevance.bulkPenalty``), so they never lead an answer when prose
says the same.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from causantic.store.features import bulk_share, stem, word_stems
from causantic.store.fts import identifier_terms, query_terms
from causantic.store.records import ChunkScope, StoredChunk

# Light on purpose (no configuration, no store protocol imported): the prompt hook scores with it
# while Claude Code waits. What it needs of them is written down as the two protocols below, which
# ``RelevanceConfig`` and ``MemoryStoreProtocol`` (and the hook's ``PromptIndex``) satisfy.


class RelevanceModel(Protocol):
    """The ``relevance.*`` values the score reads (``causantic.config.RelevanceConfig``)."""

    @property
    def intercept(self) -> float: ...
    @property
    def cosine_weight(self) -> float: ...
    @property
    def coverage_weight(self) -> float: ...
    @property
    def bulk_penalty(self) -> float: ...
    @property
    def absent_penalty(self) -> float: ...
    @property
    def missing_cosine(self) -> float: ...
    @property
    def absent_min_chunks(self) -> int: ...
    @property
    def absent_prior(self) -> float: ...
    @property
    def nearest_cosine(self) -> float: ...
    @property
    def large_nearest_cosine(self) -> float: ...
    @property
    def large_min_chunks(self) -> int: ...
    @property
    def coverage_alone(self) -> float: ...
    @property
    def far_floor(self) -> float: ...
    @property
    def nearest_min_chunks(self) -> int: ...
    @property
    def known_chunks(self) -> int: ...
    @property
    def known_floor(self) -> float: ...


class TermCounts(Protocol):
    """What :func:`profile_query` asks of a store."""

    def keyword_document_counts(
        self, terms: Sequence[str], *, project_ids: Sequence[int] | None = None, agent: str | None = None, most: int
    ) -> list[int]: ...

    def count_chunks(self, scope: ChunkScope) -> int: ...


_WORD = re.compile(r"\w+", re.UNICODE)


@dataclass(frozen=True, slots=True)
class QueryTerm:
    tokens: tuple[str, ...]  # stems of the term as the keyword index splits it ("step_count" -> step, count)
    parts: tuple[str, ...]  # stems of its camelCase parts ("StepCount" -> step, count), or ()
    weight: float  # inverse document frequency in the searched scope
    absent: bool  # found in no chunk of the scope
    chunks: int = 0  # chunks of the scope holding it (counted up to relevance.mostCounted)


@dataclass(frozen=True, slots=True)
class QueryProfile:
    """What a query asks for, weighed against the store it is asked of."""

    terms: tuple[QueryTerm, ...]
    scope_chunks: int = 0  # chunks in the searched scope
    # The same query weighed against the whole memory, when the search is narrowed to a project or
    # an agent: whether a question is about memory at all (its absent words, its vocabulary, the
    # scope the near-chunk rule needs) is judged there, so a filter never hides what it keeps.
    whole: QueryProfile | None = None
    # Σ of the terms' weights, summed once: a search measures some 400 coverages of one profile.
    total_weight: float = field(init=False, repr=False, compare=False, default=0.0)

    def __post_init__(self) -> None:
        object.__setattr__(self, "total_weight", sum(t.weight for t in self.terms))

    @property
    def memory(self) -> QueryProfile:
        """The query weighed against the whole memory: what the relevance floor judges by
        (:func:`query_absent_share`, :func:`clears_floor`), the same with a filter as without."""
        return self.whole if self.whole is not None else self

    def absent_share(self, min_chunks: int, prior: float) -> float:
        """IDF-weighted share of the query's terms that no chunk in the scope holds: a question
        about a thing memory has never seen (a framework, a person, a project) scores high. In a
        scope of fewer than ``min_chunks`` chunks most words of any question are absent, so there
        the share is not measured and ``prior`` (its mean over relevant hits) stands in."""
        total = self.total_weight
        if total <= 0:
            return 0.0
        if self.scope_chunks < min_chunks:
            return prior
        return sum(t.weight for t in self.terms if t.absent) / total

    def least_known(self) -> int:
        """Chunks of the scope holding the query's least known word (0 for a query without words):
        a query whose every word memory has written about in several chunks is asked in memory's
        own vocabulary, even when vague ("Will this get properly redacted?")."""
        return min((t.chunks for t in self.terms), default=0)

    def stems(self) -> frozenset[str]:
        """Every stem :meth:`coverage_of` looks for: a text's coverage is its coverage of these alone."""
        return frozenset(stem for t in self.terms for stem in (*t.tokens, *t.parts))

    def coverage_of(self, words: frozenset[str]) -> float:
        """IDF-weighted share of the query's terms present in a text split by :func:`word_stems`
        (0 when it has none): words are compared by a light stem, so "camped" finds "camping"."""
        total = self.total_weight
        if total <= 0:
            return 0.0
        found = sum(
            t.weight for t in self.terms if words.issuperset(t.tokens) or (t.parts and words.issuperset(t.parts))
        )
        return found / total


def marked_terms(query: str) -> list[str]:
    """The query's words worth marking in a result (its meaningful terms, no stop words), lowercase
    and longest first, so that where two overlap the longer is marked."""
    return sorted({t.lower() for t in query_terms(query)}, key=lambda t: (-len(t), t))


def informative(query: str) -> bool:
    """Whether the query holds a word to search by: a term of two characters or more that is not a
    stop word. "x", "what is it" or "why" hold none, and any chunk came near them by chance (recall
    "x" led with a match at 20% over 2,352 tokens); no question of the development sets lacks one."""
    return any(len(term) > 1 for term in query_terms(query))


def profile_query(
    store: TermCounts, query: str, *, project_ids: Sequence[int] | None, agent: str | None, most_counted: int
) -> QueryProfile:
    """Weigh each meaningful query term by its inverse document frequency in the scope.

    Counting stops at ``most_counted`` chunks per term (it reads postings), so on a large store a
    very common word's weight is slightly overstated; such words weigh little either way.
    """
    terms = query_terms(query)
    if not terms:
        return QueryProfile(())
    counts = store.keyword_document_counts(terms, project_ids=project_ids, agent=agent, most=most_counted)
    scope = ChunkScope(project_ids=tuple(project_ids) if project_ids else None, agent=agent or None)
    total = max(store.count_chunks(scope), 1)
    out: list[QueryTerm] = []
    for term, count in zip(terms, counts, strict=True):
        tokens = tuple(stem(w) for w in _WORD.findall(term.casefold()))
        if not tokens:
            continue
        parts = tuple(stem(p) for p in identifier_terms(term).split())
        weight = math.log(1.0 + (total - count + 0.5) / (count + 0.5))
        out.append(QueryTerm(tokens, parts if len(parts) > 1 else (), weight, count == 0, count))
    return QueryProfile(tuple(out), total)


def chunk_stems(chunk: StoredChunk) -> frozenset[str]:
    """The chunk's :func:`word_stems`: kept by the store since it was written, else split now."""
    return frozenset(chunk.features.stems.split()) if chunk.features is not None else word_stems(chunk.content)


def chunk_bulk(chunk: StoredChunk) -> float:
    """The chunk's :func:`bulk_share`: kept by the store since it was written, else measured now."""
    return chunk.features.bulk if chunk.features is not None else bulk_share(chunk.content)


def query_absent_share(profile: QueryProfile | None, config: RelevanceModel) -> float:
    """The query's share of words absent from memory, as the relevance model reads it."""
    if profile is None:
        return 0.0
    return profile.memory.absent_share(config.absent_min_chunks, config.absent_prior)


def relevance(cosine: float | None, coverage: float, bulk: float, absent: float, config: RelevanceModel) -> float:
    """The calibrated relevance in [0, 1]: a logistic model of the cosine, the coverage, the share of
    non-prose payload and the query's share of words absent from memory.

    Without a vector (embedding deferred, keyword-only search) the cosine term is replaced by the
    configured mean cosine of a relevant hit, so coverage decides alone.
    """
    cos = config.missing_cosine if cosine is None else cosine
    z = config.intercept + config.cosine_weight * cos + config.coverage_weight * coverage
    z -= config.bulk_penalty * bulk + config.absent_penalty * absent
    return 1.0 / (1.0 + math.exp(-z))


def clears_floor(
    score: float,
    coverage: float,
    nearest: float | None,
    scope_chunks: int,
    known_chunks: int,
    floor: float,
    config: RelevanceModel,
) -> bool:
    """Whether a hit is shown: its relevance reaches ``floor``, and the query is near memory at all.

    The relevance weighs one chunk against the query; in a large memory some chunk of thousands
    shares a rare word or two with any everyday question ("bread", "salary") and clears the floor.
    What such a question lacks is a near neighbour: ``nearest``, the best cosine of any chunk in
    memory (a project filter or not: :attr:`QueryProfile.memory`), stays low for it while a real
    question usually has some chunk close by. So below ``relevance.nearestCosine`` (in a memory of
    ``relevance.largeMinChunks`` chunks or more, ``relevance.largeNearestCosine``: the more chunks, the
    nearer the best of them comes to any question) a hit is shown only on evidence of its own, any of:

    - it holds ``relevance.coverageAlone`` of the query's weighed words (a chat question asked in
      the chat's own words: "When was Jon in Paris?");
    - its relevance reaches the higher ``relevance.farFloor``;
    - the query is asked in memory's own vocabulary, every word of it found in at least
      ``relevance.knownChunks`` chunks of memory (``known_chunks``, its least known word's), and
      the hit's relevance reaches ``relevance.knownFloor``. A vague request in a project's words
      ("Will this get properly redacted?") has no near chunk (0.27-0.29 in one project's or a few
      projects' memory), but memory knows each of its words well; an everyday question almost
      always holds a word memory barely knows ("standup", "colleague", "headphones").

    Without vectors (``nearest`` None), in a memory of fewer than ``relevance.nearestMinChunks``
    chunks (a store of a few sessions may hold nothing close to a question it still answers in
    part) and with no floor (0 shows everything) the relevance decides alone.
    """
    if score < floor:
        return False
    if floor <= 0 or nearest is None or scope_chunks < config.nearest_min_chunks:
        return True
    near = config.large_nearest_cosine if scope_chunks >= config.large_min_chunks else config.nearest_cosine
    if nearest >= near or coverage >= config.coverage_alone or score >= config.far_floor:
        return True
    return known_chunks >= config.known_chunks and score >= config.known_floor
