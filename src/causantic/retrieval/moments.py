"""Past moments worth adding to a prompt: the few that clear a strict bar, one per past session.

Used by the prompt-memory hook, where Claude Code waits for the answer. So this is a keyword-first
path of its own: BM25 candidates from the store's keyword index, scored with the calibrated
relevance (:mod:`causantic.retrieval.relevance`) without a cosine (``relevance.missingCosine``
stands in), and nothing else: no embedding model, no vector index, no numpy, and not the search
pipeline's import chain (its fusion, recency and MMR reorder long answers; here at most a few
moments are kept). Because the cosine is missing, the bars are configured and measured apart from
``relevance.floor`` (``benchmarks/prompt_memory.py``).

The current project is searched against ``bar``; other projects only against the stricter
``cross_bar``. Chunks of the current session and chunks already given are never chosen; of several
hits in one session only the best is a moment, so the answer names distinct past sessions. Moments
keep the keyword ranking's order (BM25), which put a relevant moment first more often than ordering
by the calibrated score, whose keyword-only values tie near 1.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from causantic.config import RelevanceConfig
from causantic.errors import ProjectNotFound
from causantic.retrieval.listing import resolve_project
from causantic.retrieval.relevance import bulk_share, profile_query, query_absent_share, relevance
from causantic.store.fts import query_terms
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import StoredChunk

CANDIDATES = 10  # BM25 hits scored per search: enough to survive the session and repeat filters
QUERY_MAX_CHARS = 2_000  # a pasted log is not a question: its head says what it is about


@dataclass(frozen=True, slots=True)
class Moment:
    chunk: StoredChunk
    relevance: float  # calibrated, keyword-only
    coverage: float  # IDF-weighted share of the prompt's words in the chunk
    other_project: bool


@dataclass(frozen=True, slots=True)
class MomentsRequest:
    prompt: str
    cwd: str
    bar: float
    cross_bar: float
    most: int
    min_terms: int
    exclude_session: str = ""
    exclude_chunks: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class Moments:
    moments: list[Moment]
    project: str | None  # the current project's name, when memory knows it
    reason: str  # why these (or why none), for hook-status


def prompt_moments(store: MemoryStoreProtocol, config: RelevanceConfig, request: MomentsRequest) -> Moments:
    query = request.prompt[:QUERY_MAX_CHARS]
    if len(query_terms(query)) < request.min_terms:
        return Moments([], None, "prompt too short to search")
    try:
        project = resolve_project(store, request.cwd)
    except ProjectNotFound:
        project = None
    found: list[Moment] = []
    if project is not None:
        found += _scored(store, config, query, (project.id,), request.bar, other=False)
    if request.cross_bar < 1.0:
        found += [
            m
            for m in _scored(store, config, query, None, request.cross_bar, other=True)
            if project is None or m.chunk.project_id != project.id
        ]
    moments: dict[str, Moment] = {}
    for moment in found:  # own project first, each list in BM25 order: the first of a session is its best
        chunk = moment.chunk
        if chunk.session_id == request.exclude_session or chunk.id in request.exclude_chunks:
            continue
        moments.setdefault(chunk.session_id, moment)
    chosen = list(moments.values())[: request.most]
    name = project.name if project is not None else None
    if chosen:
        return Moments(chosen, name, f"{len(chosen)} of {len(moments)} past session(s) cleared the bar")
    if found:
        return Moments([], name, "every match was from this session or already given")
    return Moments([], name, "nothing cleared the bar")


def _scored(
    store: MemoryStoreProtocol,
    config: RelevanceConfig,
    query: str,
    project_ids: Sequence[int] | None,
    bar: float,
    *,
    other: bool,
) -> list[Moment]:
    """The BM25 top hits in scope that clear ``bar``, in BM25 order."""
    hits = store.keyword_search(query, project_ids=project_ids, limit=CANDIDATES)
    if not hits:
        return []
    profile = profile_query(store, query, project_ids=project_ids, agent=None, most_counted=config.most_counted)
    absent = query_absent_share(profile, config)
    chunks = store.get_chunks([chunk_id for chunk_id, _ in hits])
    out = []
    for chunk_id, _ in hits:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        coverage = profile.coverage(chunk.content)
        score = relevance(None, coverage, bulk_share(chunk.content), absent, config)
        if score >= bar:
            out.append(Moment(chunk, score, coverage, other))
    return out
