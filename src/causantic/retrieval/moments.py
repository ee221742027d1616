"""Past moments worth adding to a prompt: the few hits that clear a strict bar, one per session.

Used by the prompt-memory hook, where Claude Code waits for the answer, so the search is keyword-only:
no embedding model and no vector index load. The calibrated relevance then scores each chunk with
``relevance.missingCosine`` in place of the cosine, which is why the bars here are configured (and
measured, ``benchmarks/prompt_memory.py``) apart from ``relevance.floor``.

The current project is searched against ``bar``; other projects only against the stricter
``cross_bar``. Chunks of the current session and chunks already given are never chosen; of several
hits in one session only the best is a moment, so the answer names distinct past sessions.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from causantic.errors import ProjectNotFound
from causantic.retrieval.listing import resolve_project
from causantic.retrieval.search import Hit, Searcher, SearchRequest
from causantic.store.fts import query_terms
from causantic.store.records import StoredChunk

CANDIDATES = 20  # hits asked of each search; enough to survive the session and repeat filters
QUERY_MAX_CHARS = 2_000  # a pasted log is not a question: its head says what it is about


@dataclass(frozen=True, slots=True)
class Moment:
    chunk: StoredChunk
    relevance: float
    coverage: float
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


def prompt_moments(searcher: Searcher, request: MomentsRequest) -> Moments:
    query = request.prompt[:QUERY_MAX_CHARS]
    if len(query_terms(query)) < request.min_terms:
        return Moments([], None, "prompt too short to search")
    try:
        project = resolve_project(searcher.store, request.cwd)
    except ProjectNotFound:
        project = None
    hits: list[tuple[Hit, bool]] = []
    if project is not None:
        hits += [(h, False) for h in _search(searcher, query, project.path, request.bar)]
    if request.cross_bar < 1.0:
        hits += [(h, True) for h in _search(searcher, query, None, request.cross_bar)
                 if project is None or h.chunk.project != project.name]
    best: dict[str, Moment] = {}
    for hit, other in hits:
        chunk = hit.chunk
        if chunk.session_id == request.exclude_session or chunk.id in request.exclude_chunks:
            continue
        if chunk.session_id not in best or hit.relevance > best[chunk.session_id].relevance:
            best[chunk.session_id] = Moment(chunk, hit.relevance, hit.coverage, other)
    chosen = sorted(best.values(), key=lambda m: -m.relevance)[: request.most]
    name = project.name if project is not None else None
    if chosen:
        return Moments(chosen, name, f"{len(chosen)} of {len(best)} past session(s) cleared the bar")
    if hits:
        return Moments([], name, "every match was from this session or already given")
    return Moments([], name, "nothing cleared the bar")


def _search(searcher: Searcher, query: str, project: str | None, bar: float) -> list[Hit]:
    request = SearchRequest(query, project=project, mode="keyword", floor=bar, limit=CANDIDATES,
                            mmr=False, expand=False, max_tokens=1_000_000)
    return searcher.search(request).hits
