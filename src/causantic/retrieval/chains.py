"""Episodic retrieval by chain walking (seed 000): ``recall`` walks back, ``predict`` walks forward.

    seeds = top 5 of the search pipeline (agent filter applies to seeds only)
    for each seed: follow directed edges one hop at a time, skipping nodes already visited by
        any chain (a global visited set breaks cycles), until the token budget shared by all
        chains is spent or ``traversal.maxDepth`` hops were taken
    score every node by cosine similarity to the query
    best chain = highest median node score among chains of at least 2 chunks
    recall output is reversed into chronological order; with no qualifying chain, fall back to
    the search results and say why.

Branch points (a chunk with several edges in the walking direction, as at a sub-agent fork or a
debrief) are resolved by staying close: an edge within the same agent's stream first, then an
edge into another agent of the same session (a sub-agent's work that fed this result, or the
lead that spawned it), and only then a cross-session edge. A chain thus tells one session's story
before it reaches into earlier or later sessions.

A chunk without a vector (embedding deferred) gets no similarity score: it is shown, but left out
of its chain's median, and a chain with no scored node ranks below every chain with one.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Literal

from causantic.retrieval.search import Searcher, SearchRequest, SearchResult, hit_cost
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import StoredChunk

Direction = Literal["backward", "forward"]
# Between edges that lead equally far (:func:`closeness`), which kind is followed first. Only chain
# walks compare a cross-session edge with others: an episode never leaves its session.
_EDGE_PREFERENCE = {
    "within-chain": 0,
    "cross-session": 1,
    "forked-from": 1,
    "debrief": 2,
    "brief": 2,
    "team-report": 3,
    "team-spawn": 3,
    "peer-message": 3,
}


@dataclass(slots=True)
class Chain:
    seed: str
    ids: list[str]
    scores: list[float | None]
    tokens: int

    @property
    def median(self) -> float | None:
        scored = [s for s in self.scores if s is not None]
        return statistics.median(scored) if scored else None


@dataclass(slots=True)
class ChainDiagnostics:
    search_hits: int
    seeds: int
    chains_attempted: int
    chain_lengths: list[int]
    fallback_reason: str | None = None

    def line(self) -> str:
        """The note a fallback to search carries: why, and what the walk found."""
        lengths = ", ".join(map(str, self.chain_lengths)) or "none"
        return (
            f"[Chain walk: fell back to search — {self.fallback_reason}. Search found {self.search_hits} chunks,"
            f" {self.seeds} seeds, {self.chains_attempted} chain(s) attempted, lengths: {lengths}]"
        )


@dataclass(slots=True)
class EpisodicResult:
    mode: Literal["chain", "search"]
    chunks: list[StoredChunk]
    scores: list[float | None]
    tokens: int
    diagnostics: ChainDiagnostics
    search: SearchResult
    chain_median: float | None = None


class ChainWalker:
    def __init__(
        self, store: MemoryStoreProtocol, searcher: Searcher, vectors: VectorIndexProtocol, max_depth: int
    ) -> None:
        self.store = store
        self.searcher = searcher
        self.vectors = vectors
        self.max_depth = max_depth

    def recall(self, request: SearchRequest) -> EpisodicResult:
        return self.run(request, "backward")

    def predict(self, request: SearchRequest) -> EpisodicResult:
        return self.run(request, "forward")

    def run(self, request: SearchRequest, direction: Direction) -> EpisodicResult:
        budget = request.max_tokens or self.searcher.max_tokens
        search = self.searcher.search(request)
        diagnostics = ChainDiagnostics(len(search.hits), len(search.seeds), 0, [])
        if not search.seeds:
            diagnostics.fallback_reason = "no matching chunks in memory"
            return self._fallback(search, diagnostics)
        chains = self.walk(search.seeds, direction, budget)
        self._score(chains, search, request.query)
        diagnostics.chains_attempted = len(chains)
        diagnostics.chain_lengths = [len(c.ids) for c in chains]
        best = select_best_chain(chains)
        if best is None:
            if all(len(c.ids) <= 1 for c in chains):
                no_edges = all(not self.store.neighbours(seed, direction) for seed in search.seeds)
                diagnostics.fallback_reason = (
                    "no edges from the seed chunks" if no_edges else "all chains had only 1 chunk (minimum 2)"
                )
            else:
                diagnostics.fallback_reason = "no chain qualified"
            return self._fallback(search, diagnostics)
        ids, scores = list(best.ids), list(best.scores)
        if direction == "backward":
            ids.reverse()
            scores.reverse()
        chunks = self.store.get_chunks(ids)
        ordered = [chunks[i] for i in ids if i in chunks]
        return EpisodicResult("chain", ordered, scores, best.tokens, diagnostics, search, best.median)

    def walk(self, seeds: list[str], direction: Direction, budget: int) -> list[Chain]:
        """One chain per seed; the visited set and the token budget are shared by all chains."""
        visited: set[str] = set()
        tally = 0
        chains: list[Chain] = []
        info: dict[str, StoredChunk] = {}
        for seed in seeds:
            chain = Chain(seed, [], [], 0)
            current: str | None = seed
            depth = 0
            while current is not None and depth < self.max_depth:
                if current in visited:
                    break
                visited.add(current)
                chunk = info.get(current) or self.store.get_chunks([current]).get(current)
                if chunk is None:
                    break
                info[current] = chunk
                cost = hit_cost(chunk)
                if tally + cost > budget:
                    tally = budget + 1  # budget exhausted: no chain grows further
                    break
                tally += cost
                chain.ids.append(current)
                chain.tokens += cost
                current = self._next(chunk, direction, visited)
                depth += 1
            if chain.ids:
                chains.append(chain)
            if tally > budget:
                break
        return chains

    def _next(self, chunk: StoredChunk, direction: Direction, visited: set[str]) -> str | None:
        options = [(cid, kind) for cid, kind in self.store.neighbours(chunk.id, direction) if cid not in visited]
        if not options:
            return None
        if len(options) == 1:
            return options[0][0]
        others = self.store.get_chunks([cid for cid, _ in options])
        return min(options, key=lambda option: closeness(option, chunk, others))[0]

    def _score(self, chains: list[Chain], search: SearchResult, query_text: str) -> None:
        ids = [i for c in chains for i in c.ids]
        query = search.query_vector
        if query is None and ids:
            query = self.searcher.query_vector(query_text)  # keyword-only search: embed lazily
        vectors = self.vectors.vectors(ids) if query is not None and ids else {}
        for chain in chains:
            chain.scores = [
                float(vectors[i] @ query) if query is not None and i in vectors else None for i in chain.ids
            ]

    def _fallback(self, search: SearchResult, diagnostics: ChainDiagnostics) -> EpisodicResult:
        return EpisodicResult(
            "search",
            [h.chunk for h in search.hits],
            [h.relevance for h in search.hits],
            search.tokens,
            diagnostics,
            search,
        )


def closeness(option: tuple[str, str], here: StoredChunk, others: dict[str, StoredChunk]) -> tuple[int, int]:
    """How far an edge ``(chunk id, kind)`` leads from ``here``'s story, smallest first: into the same
    agent's stream, into another agent of the same session, then anywhere else (another session, or
    a chunk not found); between equals, by the kind of edge. Chain walks and episodes both branch by it."""
    other = others.get(option[0])
    if other is None or other.session_id != here.session_id:
        distance = 2
    else:
        distance = 0 if other.agent == here.agent else 1
    return distance, _EDGE_PREFERENCE.get(option[1], 9)


def select_best_chain(chains: list[Chain]) -> Chain | None:
    """Highest median node score among chains of ≥ 2 chunks; unscored chains rank last, longest first."""
    qualifying = [c for c in chains if len(c.ids) >= 2]
    if not qualifying:
        return None
    return max(qualifying, key=lambda c: (c.median is not None, c.median or 0.0, len(c.ids)))
