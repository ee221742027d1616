"""The search pipeline (seed 002): find past context by meaning and by exact words.

    query ─┬─ embed → vector search ─┐
           └─ BM25 keyword search ────┴─ fusion (convex or RRF) → expanders (cluster siblings)
              → recency boost → de-duplication → MMR (λ=0.7) → relevance floor → token budget

Vector and keyword search run concurrently. Without vectors (nothing embedded yet) the pipeline
runs keyword-only; without FTS5 it runs vector-only; the result says which (``mode``).

Every hit carries its calibrated relevance (:mod:`causantic.retrieval.relevance`), an absolute
score in [0, 1]; hits below ``relevance.floor`` are left out (and weak ones of a query with no
near chunk in memory: :func:`~causantic.retrieval.relevance.clears_floor`), and a search whose every
candidate falls below it answers ``nothing_relevant``. The order stays the fused, diversified ranking (it
recalled more on LoCoMo than ordering by the calibrated score: 80.5 against 78.3 evidence turns in
25; reordering only the hits shown, T@5 64.2 against 60.5, and coding dev R@5 92.6 against 81.5);
what people read is :attr:`SearchResult.shown_relevance`, the calibrated scores fitted to that order
(pooled where a lower-ranked hit scores higher), so figure and order agree. Keyword mode ranks by
words alone but scores like hybrid (real cosines, the query's nearest chunk) when memory has
vectors, so its floor is the same; a query without a word to search by
(:func:`~causantic.retrieval.relevance.informative`) is told so.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol

from causantic.errors import ProjectNotFound, checked_query
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.blas import use_one_blas_thread
from causantic.retrieval.feedback import feedback_factors
from causantic.retrieval.format import counted, over_budget_note, when_utc
from causantic.retrieval.listing import resolve_project
from causantic.retrieval.mentions import edits_files, listing_share, own_stem_words, retells
from causantic.retrieval.ranking import (
    blend_fusion,
    convex_fusion,
    keep_list_tops,
    mmr_picks,
    non_increasing,
    recency_factor,
    reciprocal_rank_fusion,
    session_coverage_factors,
    session_evidence,
    session_term_shares,
)
from causantic.retrieval.relevance import (
    QueryProfile,
    chunk_bulk,
    chunk_stems,
    clears_floor,
    informative,
    profile_query,
    query_absent_share,
    relevance,
)
from causantic.retrieval.term_feedback import feedback_terms, merged_keyword_hits
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import ChunkScope, StoredChunk, VectorHealth, VectorMatch, iso, parse_iso

if TYPE_CHECKING:
    import numpy as np

    from causantic.config import ClusterExpansionConfig, RelevanceConfig, RetrievalConfig

Mode = Literal["hybrid", "keyword", "vector"]
HEADER_TOKENS = 30  # the per-hit header line, in approximate tokens
SOURCE_POOL_FACTOR = 4  # candidate pool widening under a source filter
# Said instead of "no vectors yet … no matching chunks" to someone who searches before any ingest.
EMPTY_MEMORY = "memory is empty: run `causantic batch-ingest` first"
# Said of a query without a word to search by (relevance.informative) instead of searching it.
UNINFORMATIVE = "{!r} holds no word to search by, only stop words or single letters: name what you are after"


def hit_cost(chunk: StoredChunk) -> int:
    """What a hit costs of a token budget: its text and its header line."""
    return approx_tokens(chunk.content) + HEADER_TOKENS


@dataclass(frozen=True, slots=True)
class SearchRequest:
    query: str
    project: str | None = None
    agent: str | None = None
    source: str | None = None  # only chunks written by this coding agent: claude-code, codex, gemini
    user: str | None = None  # team memory: only chunks this member ingested
    since: datetime | None = None
    until: datetime | None = None
    limit: int | None = None  # most hits; default retrieval.defaultLimit
    max_tokens: int | None = None  # budget; default tokens.mcpMaxResponse
    mode: Mode | None = None  # default retrieval.primary
    mmr: bool | None = None
    expand: bool | None = None  # cluster expansion
    floor: float | None = None  # relevance floor; default relevance.floor
    here: str | None = None  # the asker's working directory: its project's hits rank higher (retrieval.hereBoost)


@dataclass(frozen=True, slots=True)
class Candidate:
    chunk_id: str
    score: float
    sources: tuple[str, ...]  # "vector", "keyword", "cluster"


@dataclass(frozen=True, slots=True)
class Hit:
    chunk: StoredChunk
    relevance: float  # calibrated, 0..1 (see causantic.retrieval.relevance)
    sources: tuple[str, ...]
    cosine: float | None = None  # similarity to the query; None without a vector
    coverage: float = 0.0  # IDF-weighted share of the query's words in the chunk


@dataclass(frozen=True, slots=True)
class SearchResult:
    hits: list[Hit]
    mode: str  # what actually ran: hybrid, keyword-only, vector-only
    seeds: list[str]  # top fused ids before recency and MMR: chain-walk seeds
    tokens: int
    candidates: int
    notes: list[str] = field(default_factory=list)
    query_vector: np.ndarray | None = None
    below_floor: int = 0  # candidates left out for scoring under the relevance floor
    profile: QueryProfile | None = None  # the query's weighed terms, for scoring more chunks later
    # Cosine of the query's nearest chunk in memory (with a filter, the scope's when that reaches
    # relevance.nearestCosine already: the floor's judgement is the same); None without vectors.
    nearest: float | None = None
    here_project: int | None = None  # the asker's project, whose hits were weighed up (retrieval.hereBoost)
    # Fused from two stores (team memory), whose project ids differ: the asker's project's hits, by id.
    here_chunks: frozenset[str] | None = None

    @property
    def nothing_relevant(self) -> bool:
        """True when memory holds nothing that clears the relevance floor for this query."""
        return not self.hits

    @property
    def shown_relevance(self) -> list[float]:
        """The hits' relevance as shown to people: non-increasing down the list, in [0, 1]. Asked from a
        project, its hits and other projects' are each made so apart: an other project's hit ranked
        below the asker's own keeps its higher figure rather than being pulled down to theirs."""
        if self.here_project is None and self.here_chunks is None:
            return non_increasing([h.relevance for h in self.hits])
        mine = [
            h.chunk.id in self.here_chunks if self.here_chunks is not None else h.chunk.project_id == self.here_project
            for h in self.hits
        ]
        shown = [0.0] * len(self.hits)
        for own in (True, False):
            places = [i for i, m in enumerate(mine) if m == own]
            for i, value in zip(places, non_increasing([self.hits[i].relevance for i in places]), strict=True):
                shown[i] = value
        return shown


HERE_NOTE = "asked from {}: its own matches placed above other projects' higher-scoring ones"


def here_note(hits: Sequence[Hit], own: Sequence[Hit]) -> list[str]:
    """Asked from a project, a note when one of its own matches (``own``, among ``hits``) was placed
    above another project's higher-scoring one (retrieval.hereBoost), else none."""
    ids = {h.chunk.id for h in own}
    weakest_above = float("inf")  # the lowest relevance of the asker's own matches ranked so far
    for hit in hits:
        if hit.chunk.id in ids:
            weakest_above = min(weakest_above, hit.relevance)
        elif hit.relevance > weakest_above:
            return [HERE_NOTE.format(own[0].chunk.project)]
    return []


def is_here_note(note: str) -> bool:
    prefix, _, suffix = HERE_NOTE.partition("{}")
    return note.startswith(prefix) and note.endswith(suffix)


@dataclass(frozen=True, slots=True)
class SearchScope:
    project_ids: tuple[int, ...] | None
    agent: str | None


@dataclass(frozen=True, slots=True)
class _ReadAhead:
    """What the vector side read while keyword search ran: the matches' chunks, their stems, and
    the opening prompts' stems of ``opened``, their sessions (read when sessionContext is on)."""

    chunks: dict[str, StoredChunk]
    stems: dict[str, frozenset[str]]
    openings: dict[str, frozenset[str]]
    opened: frozenset[str]


class CandidateExpander(Protocol):
    """Adds candidates after fusion (cluster siblings); the pipeline's extension point."""

    def expand(
        self, fused: list[Candidate], scope: SearchScope, query_vector: np.ndarray | None
    ) -> list[Candidate]: ...


class Searcher:
    def __init__(
        self,
        store: MemoryStoreProtocol,
        vectors: Callable[[], VectorIndexProtocol],
        embed_query: Callable[[str], np.ndarray],
        config: RetrievalConfig,
        expansion: ClusterExpansionConfig,
        max_tokens: int,
        expanders: Sequence[CandidateExpander] = (),
        relevance: RelevanceConfig | None = None,
    ) -> None:
        self.store = store
        self._vectors = vectors
        self._embed_query = embed_query
        self.config = config
        if relevance is None:
            from causantic.config import RelevanceConfig  # the defaults

            relevance = RelevanceConfig()
        self.relevance = relevance
        self.expansion = expansion
        self.max_tokens = max_tokens
        self.expanders = list(expanders)

    # ---- public ---------------------------------------------------------------------------

    def search(self, request: SearchRequest) -> SearchResult:
        checked_query(request.query)
        if not informative(request.query):
            return SearchResult([], "none", [], 0, 0, [UNINFORMATIVE.format(" ".join(request.query.split()))])
        use_one_blas_thread()
        cfg = self.config
        scope = self.scope(request)
        here = self.here_project(request)
        mode, notes = self._mode(request.mode or cfg.primary)
        pool = max(cfg.vector_search_limit, cfg.keyword_search_limit, (request.limit or 0) * 3)
        if request.source:  # filtered after retrieval (the indexes do not know it): a wider pool
            pool *= SOURCE_POOL_FACTOR
        # One helper thread: keyword search (then weighing the query's words) runs beside the
        # embedding and vector search, then the lookup of missing candidate vectors beside the
        # chunk lookup, then the whole-session counts beside the scoring.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="causantic-search") as helper:
            query_vector, vector_matches, nearest, ahead, keyword_hits, profile = self._candidates(
                request.query, mode, scope, pool, helper, request.user
            )
            read_ahead = ahead.chunks
            vector_hits = [(m.chunk_id, m.similarity) for m in vector_matches]
            fused = self._fuse(vector_hits, keyword_hits)
            if cfg.term_feedback_weight > 0 and mode in ("hybrid", "keyword-only") and fused:
                # A second keyword query in the best candidates' words: it may bring chunks in.
                read_ahead = read_ahead | self.store.get_chunks(
                    [c.chunk_id for c in fused[: cfg.term_feedback_depth] if c.chunk_id not in read_ahead]
                )
                keyword_hits = self._term_feedback(fused, read_ahead, keyword_hits, profile, scope, pool, request.user)
                fused = self._fuse(vector_hits, keyword_hits)
            # What ranks: keyword search ranks by words alone, its vector only scores (_candidates).
            ranking_vector = None if mode == "keyword-only" else query_vector
            if request.expand if request.expand is not None else self.expansion.enabled:
                for expander in self.expanders:
                    fused = expander.expand(fused, scope, ranking_vector)
            vectors = {m.chunk_id: m.vector for m in vector_matches}
            missing = [c.chunk_id for c in fused if c.chunk_id not in vectors] if query_vector is not None else []
            fetched = helper.submit(self._vectors().vectors, missing) if missing else None
            chunks = read_ahead | self.store.get_chunks([c.chunk_id for c in fused if c.chunk_id not in read_ahead])
            if fetched is not None:
                vectors.update(fetched.result())
            # Expanders may add other agents' chunks; the agent filter holds for every hit and every seed.
            fused = [
                c
                for c in fused
                if c.chunk_id in chunks
                and _in_range(chunks[c.chunk_id], request)
                and (not request.agent or chunks[c.chunk_id].agent == request.agent)
                and (not request.source or chunks[c.chunk_id].source == request.source)
                and (not request.user or chunks[c.chunk_id].user == request.user)
            ]
            whole = (
                helper.submit(
                    self.store.session_stem_counts,
                    list(dict.fromkeys(chunks[c.chunk_id].session_id for c in fused))[: cfg.session_words_depth],
                    sorted(profile.stems()),
                )
                if cfg.session_words > 0 and profile is not None
                else None
            )
            stems = {  # split once: scored, covered
                c.chunk_id: ahead.stems[c.chunk_id] if c.chunk_id in ahead.stems else chunk_stems(chunks[c.chunk_id])
                for c in fused
            }
            scored = {
                c.chunk_id: self.score(
                    chunks[c.chunk_id], vectors.get(c.chunk_id), query_vector, profile, stems[c.chunk_id]
                )
                for c in fused
            }
            # The opening prompts not read ahead are read here, not on the helper: it has the
            # whole-session counts to read meanwhile, and did both in turn while this thread waited.
            openings = (
                ahead.openings
                | self.store.session_opening_stems(
                    [s for s in (chunks[c.chunk_id].session_id for c in fused) if s not in ahead.opened]
                )
                if cfg.session_context > 0 and profile is not None
                else {}
            )
        floor = self.relevance.floor if request.floor is None else request.floor
        judged = profile.memory if profile is not None else None  # the whole memory, with a filter or without
        scope_chunks, known = (judged.scope_chunks, judged.least_known()) if judged is not None else (0, 0)
        shown = {
            cid
            for cid, (score, _, coverage) in scored.items()
            if clears_floor(score, coverage, nearest, scope_chunks, known, floor, self.relevance)
        }
        seeds = [c.chunk_id for c in fused if c.chunk_id in shown][: cfg.seed_count]
        ranked = self._rerank(
            fused,
            chunks,
            vectors,
            request,
            ranking_vector,
            profile,
            openings,
            stems,
            whole.result() if whole is not None else {},
            here,
        )
        hits, tokens, below, budget_notes = self._fit(ranked, chunks, scored, shown, request)
        notes += budget_notes
        if not fused and not self.store.count_chunks(ChunkScope()):  # counted only when nothing matched
            notes = [EMPTY_MEMORY]  # not "no vectors yet … run `causantic embed`": there is nothing to embed
        elif not hits and request.agent and not self.store.count_chunks(ChunkScope(agent=request.agent)):
            notes.append(f"no chunk in memory is by an agent named {request.agent!r}; 'main' names the main sessions")
        elif not hits and request.source and not self.store.source_counts().get(request.source, {}).get("chunks"):
            notes.append(f"memory holds no {request.source} sessions")
        elif not fused and (request.since or request.until):
            notes.append(self._range_note(scope, request))
        elif not fused:
            notes.append("no matching chunks")
        elif below and not hits:
            # Say which rule hid them: matches that clear the floor are hidden only because nothing in
            # memory is near the question (clears_floor), and "below the floor" would misreport them.
            far = any(score >= floor for score, _, _ in scored.values())
            why = "hidden: nothing in memory is near this question" if far else "below the relevance floor"
            notes.append(f"{counted(below, 'weak match', 'weak matches')} {why}")
        if here is not None:
            notes += here_note(hits, [h for h in hits if h.chunk.project_id == here])
        return SearchResult(hits, mode, seeds, tokens, len(fused), notes, query_vector, below, profile, nearest, here)

    def score(
        self,
        chunk: StoredChunk,
        vector: np.ndarray | None,
        query_vector: np.ndarray | None,
        profile: QueryProfile | None,
        stems: frozenset[str] | None = None,
    ) -> tuple[float, float | None, float]:
        """(calibrated relevance, cosine, coverage) of one chunk for the query; ``stems``: the
        chunk's, when the caller has split them already."""
        cosine = float(vector @ query_vector) if vector is not None and query_vector is not None else None
        if profile is None:
            coverage = 0.0
        else:
            coverage = profile.coverage_of(chunk_stems(chunk) if stems is None else stems)
        absent = query_absent_share(profile, self.relevance)
        return relevance(cosine, coverage, chunk_bulk(chunk), absent, self.relevance), cosine, coverage

    def _range_note(self, scope: SearchScope, request: SearchRequest) -> str:
        """Why a search in a time range found nothing: no match in it, or no chunk at all there (the
        last days asked of a memory of older sessions: "no matching chunks" read as if nothing in
        memory were about the question), and then when the newest chunk is from, as reconstruct says."""
        covered = ChunkScope(project_ids=scope.project_ids, since=request.since, until=request.until)
        if self.store.count_chunks(covered):
            return "no matching chunks in the requested time range"
        ids = set(scope.project_ids or ())
        projects = [p for p in self.store.project_summaries() if not ids or p.id in ids]
        holder = f"{projects[0].name!r}" if ids and projects else "memory"
        newest = max((p.last_seen for p in projects), default=None)
        return f"{holder} holds no chunk from the requested time range" + (
            f"; its newest is from {when_utc(newest)}" if newest else ""
        )

    def scope(self, request: SearchRequest) -> SearchScope:
        project_ids = (resolve_project(self.store, request.project).id,) if request.project else None
        return SearchScope(project_ids, request.agent)

    def here_project(self, request: SearchRequest) -> int | None:
        """The id of the project the asker works in (``request.here``, a folder inside it), when no
        project filter already keeps to one and memory knows it; None otherwise."""
        if not request.here or request.project or self.config.here_boost <= 0:
            return None
        try:
            return resolve_project(self.store, request.here).id
        except ProjectNotFound:  # a folder memory has no session of: nothing to prefer
            return None

    def query_vector(self, query: str) -> np.ndarray | None:
        """The query's embedding when vectors exist for the active model, else None."""
        return self._embed_query(query) if self._vectors().has_vectors() else None

    # ---- stages ---------------------------------------------------------------------------

    def _mode(self, wanted: Mode) -> tuple[str, list[str]]:
        notes: list[str] = []
        has_vectors = wanted != "keyword" and self._vectors().has_vectors()
        has_keywords = wanted != "vector" and self.store.fts_enabled
        if has_vectors:
            notes.extend(vector_health_notes(self._vectors().health()))
        if wanted == "hybrid" and has_vectors and has_keywords:
            return "hybrid", notes
        if has_vectors and not has_keywords:
            if wanted != "vector":
                notes.append("keyword index unavailable (SQLite without FTS5): vector-only")
            return "vector-only", notes
        if has_keywords:
            if wanted != "keyword":
                notes.append("no vectors yet: keyword-only (a running ingest is embedding, or run `causantic embed`)")
            return "keyword-only", notes
        notes.append("neither vectors nor a keyword index are available")
        return "none", notes

    def _candidates(
        self, query: str, mode: str, scope: SearchScope, pool: int, helper: ThreadPoolExecutor, member: str | None
    ) -> tuple[np.ndarray | None, list[VectorMatch], float | None, _ReadAhead, list[tuple[str, float]], QueryProfile]:
        """The query vector, the vector matches, the cosine of the query's nearest chunk in the whole
        memory, what was read of the matches ahead, the keyword hits and the query's weighed words.
        ``member`` (team memory's ``user`` filter) narrows both index queries, so another member's
        many chunks never crowd the pool.

        The relevance floor judges whether the question is about memory at all on the whole memory
        (:attr:`QueryProfile.memory`, the nearest chunk), not on the searched scope: a project of a
        few hundred chunks seldom holds a chunk near a question asked in other words, and a filter
        hid hits the same search without it showed (the project's own among them)."""
        project_ids = list(scope.project_ids) if scope.project_ids else None
        narrowed = bool(project_ids or scope.agent)

        def keyword_side() -> tuple[list[tuple[str, float]], QueryProfile]:
            # Words weighed first: the keyword search then reuses their chunk counts.
            most = self.relevance.most_counted
            profile = profile_query(self.store, query, project_ids=project_ids, agent=scope.agent, most_counted=most)
            if narrowed:
                whole = profile_query(self.store, query, project_ids=None, agent=None, most_counted=most)
                profile = replace(profile, whole=whole)
            hits = (
                []
                if mode not in ("hybrid", "keyword-only")
                else self.store.keyword_search(
                    query,
                    project_ids=project_ids,
                    agent=scope.agent,
                    limit=pool,
                    score_budget=self.config.keyword_score_budget,
                    member=member,
                )
            )
            return hits, profile

        keyword = helper.submit(keyword_side)
        if mode == "keyword-only":
            # Asked for keyword search of a memory that has vectors: the hits are scored with their
            # real cosines and the query's nearest chunk, as in hybrid, so the floor is the same
            # honest one; scored with an assumed cosine (relevance.missingCosine) every keyword hit
            # read 2-5% and cleared it. The vector is used to score, never to rank.
            vectors = self._vectors()
            vector = self._embed_query(query) if vectors.has_vectors() else None
            nearest = (
                max((m.similarity for m in vectors.search(vector, limit=1)), default=None)
                if vector is not None
                else None
            )
            return vector, [], nearest, _ReadAhead({}, {}, {}, frozenset()), *keyword.result()
        if mode not in ("hybrid", "vector-only"):
            return None, [], None, _ReadAhead({}, {}, {}, frozenset()), *keyword.result()
        vector = self._embed_query(query)
        matches = self._vectors().search(vector, limit=pool, project_ids=project_ids, agent=scope.agent, member=member)
        nearest = max((m.similarity for m in matches), default=None)
        if (narrowed or member) and (nearest is None or nearest < self.relevance.nearest_cosine):
            # the scope's nearest chunk is far: is memory's? (when the scope's is near, so is memory's)
            nearest = max((m.similarity for m in self._vectors().search(vector, limit=1)), default=nearest)
        # Keyword search usually takes longer (a long question's common words above all): meanwhile
        # this thread reads the vector matches, splits their stems (kept or, for rows written
        # before the store kept them, from the text), and reads their sessions' opening prompts,
        # all of which scoring needs after fusion, where they cost ~1.5 ms of waiting at 100k.
        chunks = self.store.get_chunks([m.chunk_id for m in matches])
        stems = {cid: chunk_stems(chunk) for cid, chunk in chunks.items()}
        for chunk in chunks.values():
            if chunk.features is None:
                chunk_bulk(chunk)  # cached: the rerank finds it done
        sessions = list(dict.fromkeys(c.session_id for c in chunks.values())) if self.config.session_context > 0 else []
        openings = self.store.session_opening_stems(sessions) if sessions else {}
        return vector, matches, nearest, _ReadAhead(chunks, stems, openings, frozenset(sessions)), *keyword.result()

    def _term_feedback(
        self,
        fused: list[Candidate],
        chunks: dict[str, StoredChunk],
        keyword_hits: list[tuple[str, float]],
        profile: QueryProfile,
        scope: SearchScope,
        pool: int,
        member: str | None,
    ) -> list[tuple[str, float]]:
        """The keyword hits with those of a query in the best fused candidates' distinctive words
        joined (:mod:`causantic.retrieval.term_feedback`)."""
        cfg = self.config
        best = [c for c in fused[: cfg.term_feedback_depth] if c.chunk_id in chunks]
        project_ids = list(scope.project_ids) if scope.project_ids else None
        words = feedback_terms(
            [(chunks[c.chunk_id].content, c.score) for c in best],
            profile.stems(),
            self.store,
            scope_chunks=profile.scope_chunks,
            project_ids=project_ids,
            agent=scope.agent,
            most_counted=self.relevance.most_counted,
            terms=cfg.term_feedback_terms,
        )
        if not words:
            return keyword_hits
        extra = self.store.keyword_search(
            " ".join(words),
            project_ids=project_ids,
            agent=scope.agent,
            limit=pool,
            score_budget=cfg.keyword_score_budget,
            member=member,
        )
        return merged_keyword_hits(keyword_hits, extra, cfg.term_feedback_weight)

    def _fuse(self, vector_hits: list[tuple[str, float]], keyword_hits: list[tuple[str, float]]) -> list[Candidate]:
        cfg = self.config
        scored = {name: hits for name, hits in (("vector", vector_hits), ("keyword", keyword_hits)) if hits}
        weights = {"vector": cfg.vector_weight, "keyword": cfg.keyword_weight}
        spread = ("vector",) if cfg.vector_spread else ()
        rankings = {name: [i for i, _ in hits] for name, hits in scored.items()}
        if cfg.fusion == "convex":
            fused = convex_fusion(scored, weights, spread)
        elif cfg.fusion == "rrf":
            fused = reciprocal_rank_fusion(rankings, cfg.rrf_k, weights)
        else:
            fused = blend_fusion(
                convex_fusion(scored, weights, spread),
                reciprocal_rank_fusion(rankings, cfg.rrf_k, weights),
                cfg.fusion_blend,
            )
        fused = keep_list_tops(fused, rankings, cfg.fusion_keep_top)
        return [Candidate(i, score, sources) for i, score, sources in fused]

    def _rerank(
        self,
        fused: list[Candidate],
        chunks: dict[str, StoredChunk],
        vectors: dict[str, np.ndarray],
        request: SearchRequest,
        query_vector: np.ndarray | None,
        profile: QueryProfile | None,
        openings: dict[str, frozenset[str]],
        stems: dict[str, frozenset[str]],
        whole: dict[str, tuple[int, dict[str, int]]],
        here: int | None = None,
    ) -> Iterable[Candidate]:
        """``openings``: the stems of the candidates' sessions' opening prompts (read when
        sessionContext is on); ``stems``: each candidate's own; ``whole``: per best session, its
        chunks and how many hold each of the query's stems (read when sessionWords is on); ``here``:
        the asker's project (:meth:`here_project`), whose candidates count retrieval.hereBoost more."""
        cfg = self.config
        now = datetime.now(UTC)
        # Each candidate's own words (not what a listing tool printed), split once for both uses.
        own = (
            {c.chunk_id: own_stem_words(chunks[c.chunk_id], stems[c.chunk_id]) for c in fused}
            if profile is not None and (cfg.mention_penalty or cfg.session_coverage > 0)
            else {}
        )
        mentions = (
            {cid: listing_share(profile, stems[cid], words) for cid, words in own.items()}
            if cfg.mention_penalty and profile is not None
            else {}
        )
        # Recent work counts a little more; a chunk that is mostly payload (SVG, base64, a JSON dump)
        # a little less, so it stays findable by its words but never leads when prose says the same;
        # a chunk whose match is only in tool output (a git log listing the commit) less than the
        # chunk where the work was done; a chunk that changes files (an Edit call) a little more
        # than talk about the change; and talk after the work began (a turn's report, a compaction
        # summary) less than the request that opened the turn and the chunks that act on it.
        # Each weighing multiplies the scores; the candidates are rebuilt once, at the end (a
        # dataclass copy per candidate per weighing cost ~4% of a search).
        tools, retelling = cfg.work_tools, cfg.retelling_agents
        scores = [
            c.score
            * recency_factor(
                parse_iso(chunks[c.chunk_id].start_time), now, cfg.recency_decay_factor, cfg.recency_half_life_hours
            )
            * (1.0 - 0.5 * chunk_bulk(chunks[c.chunk_id]))
            * (1.0 - cfg.mention_penalty * mentions.get(c.chunk_id, 0.0))
            * (1.0 + cfg.work_evidence if cfg.work_evidence and edits_files(chunks[c.chunk_id], tools) else 1.0)
            * (1.0 - cfg.talk_penalty if cfg.talk_penalty and retells(chunks[c.chunk_id], retelling) else 1.0)
            for c in fused
        ]
        sessions = [chunks[c.chunk_id].session_id for c in fused]
        if cfg.session_context > 0 and profile is not None:
            # A chunk deep in a session rarely restates the task; the session's opening prompt does.
            context = {sid: profile.coverage_of(stems) for sid, stems in openings.items()}
            scores = [
                score * (1.0 + cfg.session_context * context.get(session, 0.0))
                for score, session in zip(scores, sessions, strict=True)
            ]
        if cfg.session_coverage > 0 and profile is not None:
            # Together a session's candidates may cover the whole request where no one chunk does.
            asked = profile.stems()  # only these count: the union is kept small
            factors = session_coverage_factors(
                sessions,
                [asked.intersection(own[c.chunk_id]) for c in fused],
                profile.coverage_of,
                cfg.session_coverage,
            )
            scores = [score * f for score, f in zip(scores, factors, strict=True)]
        if cfg.session_words > 0 and profile is not None:
            # And the whole session, chunks no list found included, read as one BM25 document: the
            # work names the request's parts again and again across the session, a passing mention once.
            shares = session_term_shares(
                whole, [(t.weight, (t.tokens, t.parts) if t.parts else (t.tokens,)) for t in profile.terms]
            )
            scores = [
                score * (1.0 + cfg.session_words * shares.get(session, 0.0))
                for score, session in zip(scores, sessions, strict=True)
            ]
        if cfg.feedback_weight > 0 and query_vector is not None:
            factors = feedback_factors(
                scores,
                [vectors.get(c.chunk_id) for c in fused],
                query_vector,
                cfg.feedback_weight,
                cfg.feedback_depth,
                cfg.feedback_pull,
            )
            scores = [score * f for score, f in zip(scores, factors, strict=True)]
        if cfg.session_evidence > 0:
            scores = session_evidence(scores, sessions, cfg.session_evidence, cfg.session_evidence_chunks)
        if here is not None:
            # The project the agent works in: asked without a filter, its own history should lead unless
            # another project's match is clearly better (a factor, not a filter).
            scores = [
                score * (1.0 + cfg.here_boost) if chunks[c.chunk_id].project_id == here else score
                for c, score in zip(fused, scores, strict=True)
            ]
        boosted = [Candidate(c.chunk_id, score, c.sources) for c, score in zip(fused, scores, strict=True)]
        boosted.sort(key=lambda c: -c.score)
        boosted = _drop_exact_duplicates(boosted, chunks)
        use_mmr = request.mmr if request.mmr is not None else cfg.mmr_enabled
        if len(boosted) < 2 or query_vector is None:
            return boosted
        import numpy as np

        dims = len(query_vector)
        matrix = np.stack([vectors.get(c.chunk_id, np.zeros(dims, np.float32)) for c in boosted])
        kept = _near_duplicate_free_rows(matrix, cfg.dedup_threshold)
        boosted = [boosted[i] for i in kept]
        if not use_mmr:
            return boosted
        # Picked lazily: _fit reads only as far as its answer fills.
        return (boosted[i] for i in mmr_picks([c.score for c in boosted], matrix[kept], cfg.mmr_lambda))

    def _fit(
        self,
        ranked: Iterable[Candidate],
        chunks: dict[str, StoredChunk],
        scored: dict[str, tuple[float, float | None, float]],
        shown: set[str],
        request: SearchRequest,
    ) -> tuple[list[Hit], int, int, list[str]]:
        """Whole chunks that clear the floor (``shown``), in ranked order while they fit the budget (a chunk too
        big is skipped, not cut); also how many fell below the floor, and a note when the best
        matches were skipped as each larger than the whole budget."""
        budget = request.max_tokens or self.max_tokens
        limit = request.limit or self.config.default_limit
        hits: list[Hit] = []
        used = below = 0
        too_big: list[int] = []  # the costs of matches ranked above every hit, each over the budget
        for candidate in ranked:
            chunk = chunks[candidate.chunk_id]
            score, cosine, coverage = scored[candidate.chunk_id]
            if candidate.chunk_id not in shown:
                below += 1
                continue
            cost = hit_cost(chunk)
            if used + cost > budget:
                if not hits:
                    too_big.append(cost)
                continue
            hits.append(Hit(chunk, score, candidate.sources, cosine, coverage))
            used += cost
            if len(hits) >= limit:
                break
        notes = [over_budget_note(len(too_big), min(too_big), budget)] if too_big else []
        return hits, used, below, notes


MISSING_ANN_FILE = (
    "the vector index file is missing: vector search scans every vector until `causantic embed` rebuilds it"
)


def vector_health_notes(health: VectorHealth) -> list[str]:
    """What a search result should say about vectors it could not use."""
    notes = []
    if health.missing:
        share = health.missing / health.chunks
        notes.append(  # as the keyword-only note says it: during an ingest, its newest chunks wait for vectors
            f"{health.missing:,} of {health.chunks:,} chunks ({share:.0%}) have no vector yet, so vector search "
            "cannot find them (a running ingest is embedding them, or run `causantic embed`)"
        )
    if health.ann == "missing":
        notes.append(health.ann_note or MISSING_ANN_FILE)
    return notes


def _in_range(chunk: StoredChunk, request: SearchRequest) -> bool:
    if request.since is not None and chunk.start_time < iso(request.since):
        return False
    return not (request.until is not None and chunk.start_time >= iso(request.until))


def _drop_exact_duplicates(candidates: list[Candidate], chunks: dict[str, StoredChunk]) -> list[Candidate]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        digest = chunks[c.chunk_id].content_hash
        if digest not in seen:
            seen.add(digest)
            out.append(c)
    return out


def _near_duplicate_free_rows(matrix: np.ndarray, threshold: float) -> list[int]:
    """Rows kept, in order: a row goes when its similarity to a row kept before it reaches the
    threshold; a zero row (a candidate without a vector) is always kept. One matrix product, not a
    Python loop over pairs."""
    import numpy as np

    close = np.tril(matrix @ matrix.T >= threshold, -1)  # close[i, j]: j comes before i, near-identical
    keep = np.ones(len(matrix), dtype=bool)
    # Only a row close to an earlier one can go; it goes when one of those was kept.
    for i in np.flatnonzero(close.any(axis=1) & matrix.any(axis=1)):
        keep[i] = not keep[close[i]].any()
    return [int(i) for i in np.flatnonzero(keep)]
