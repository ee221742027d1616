"""Past moments worth adding to a prompt: the few that clear a strict bar, from a session that
clearly leads.

Used by the prompt-memory hook, where Claude Code waits for the answer. So this is a keyword-first
path of its own: BM25 candidates from the store's keyword index (through the light read-only
:class:`~causantic.store.prompt_index.PromptIndex`), scored with the calibrated relevance
(:mod:`causantic.retrieval.relevance`) without a cosine (``relevance.missingCosine`` stands in),
and nothing else: no embedding model, no vector index, no numpy, and not the search pipeline's
import chain (its fusion, recency and MMR reorder long answers; here at most a few moments are
kept). Because the cosine is missing, the bars are configured and measured apart from
``relevance.floor`` (``benchmarks/prompt_memory.py``).

The current project is searched against ``bar``; other projects only against the stricter
``cross_bar``. In each, nothing is added unless one past session clearly leads (its best BM25 at
least ``session_margin`` times any other session's) with a lead covering ``min_coverage`` of the
prompt's words: a close race was where the hook used to add noise. Another project's session must
lead the current project's sessions too: a prompt they match as well is about this project's work,
and another project's moment beside it was a distraction. Chunks of the current session
and chunks already given are never chosen; at most ``per_session`` moments come from one session.
Moments keep the keyword ranking's order (BM25), which put a relevant moment first more often than
ordering by the calibrated score, whose keyword-only values tie near 1.

Search's "nothing relevant" rule (:func:`~causantic.retrieval.relevance.clears_floor`) is not applied
here: its bite is the query's nearest chunk by cosine, which this path does not compute, and the lead
gate ``min_coverage`` (0.5) already is that rule's own exception (``relevance.coverageAlone``). Applied
to each moment with the nearest chunk taken as far, it stopped no off-topic prompt of the development
sets or of the whole corpus and only trimmed second moments (docs/measurements.md, "Prompt memory").
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from causantic.retrieval.format import counted
from causantic.retrieval.relevance import (
    RelevanceModel,
    TermCounts,
    chunk_bulk,
    chunk_stems,
    profile_query,
    query_absent_share,
    relevance,
)
from causantic.store.fts import query_terms
from causantic.store.records import Project, StoredChunk

CANDIDATES = 10  # BM25 hits scored per search: enough to survive the session and repeat filters
QUERY_MAX_CHARS = 2_000  # a pasted log is not a question: its head says what it is about


class MomentsStore(TermCounts, Protocol):
    """What moments are read from: the prompt hook's light read-only index
    (``causantic.store.prompt_index.PromptIndex``, opened by ``causantic.prompt_services``)."""

    def project_for_cwd(self, cwd: str) -> Project | None: ...
    def project_by_path(self, path: str) -> Project | None: ...
    def keyword_search(
        self, query: str, *, project_ids: Sequence[int] | None = None, limit: int = 10
    ) -> list[tuple[str, float]]: ...
    def get_chunks(self, ids: Sequence[str]) -> dict[str, StoredChunk]: ...


class MomentsRelevance(RelevanceModel, Protocol):
    """The ``relevance.*`` values moments are scored with (``causantic.config.RelevanceConfig``)."""

    @property
    def most_counted(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Moment:
    chunk: StoredChunk
    relevance: float  # calibrated, keyword-only
    coverage: float  # IDF-weighted share of the prompt's words in the chunk
    other_project: bool
    margin: float = 0.0  # the lead moment's BM25 over the best of any other session (inf: no other)


@dataclass(frozen=True, slots=True)
class MomentsRequest:
    prompt: str
    cwd: str
    bar: float
    cross_bar: float
    most: int
    min_terms: int
    session_margin: float = 1.0
    min_coverage: float = 0.0
    per_session: int = 1
    exclude_session: str = ""
    exclude_chunks: Collection[str] = ()


@dataclass(frozen=True, slots=True)
class Moments:
    moments: list[Moment]
    project: str | None  # the current project's name, when memory knows it
    reason: str  # why these (or why none), for hook-status


def prompt_moments(store: MomentsStore, config: MomentsRelevance, request: MomentsRequest) -> Moments:
    query = request.prompt[:QUERY_MAX_CHARS]
    if len(query_terms(query)) < request.min_terms:
        return Moments([], None, "prompt too short to search")
    project = store.project_for_cwd(request.cwd)
    if project is None and request.cwd:  # a worktree or folder never seen: its git root's project
        from causantic.transcripts.projects import canonical_project_path  # rare, and not a light import

        project = store.project_by_path(canonical_project_path(request.cwd))
    name = project.name if project is not None else None
    chosen: list[Moment] = []
    reasons: list[str] = []
    scopes: list[tuple[Sequence[int] | None, float, bool]] = []
    if project is not None:
        scopes.append(((project.id,), request.bar, False))
    if request.cross_bar < 1.0:
        scopes.append((None, request.cross_bar, True))
    for project_ids, bar, other in scopes:
        scored = [
            h
            for h in _scored(store, config, query, project_ids, other=other)
            if h.chunk.session_id != request.exclude_session
        ]
        own = [h for h in scored if other and project is not None and h.chunk.project_id == project.id]
        in_scope = [hit for hit in scored if hit not in own]
        hits = [hit for hit in in_scope if hit.chunk.id not in request.exclude_chunks]
        # The current project's sessions are rivals too: another project's session must lead them as well.
        picked, reason = _clear_lead(hits, bar, request, max((h.bm25 for h in own), default=0.0))
        if given := len(in_scope) - len(hits):  # why the same prompt again gets less, or nothing
            reason += f" ({counted(given, 'match', 'matches')} added earlier in this session left out)"
        kept = picked[: request.most - len(chosen)]  # at most `most` moments in all, the current project's first
        chosen += kept
        if picked and not kept:
            reason = f"none added: {counted(request.most, 'moment')} (promptMemory.maxMoments) already added"
        elif kept:  # counts what was kept, not what cleared before the cap; the hook says how many fit its budget
            sessions = counted(len({m.chunk.session_id for m in kept}), "session")
            reason = f"found {counted(len(kept), 'moment')} of {sessions}: {reason}"
        reasons.append(("other projects: " if other else "this project: ") + reason)
    return Moments(chosen, name, "; ".join(reasons) or "no project to search")


def _clear_lead(
    hits: list[_Hit], bar: float, request: MomentsRequest, own_best: float = 0.0
) -> tuple[list[Moment], str]:
    """The moments of one scope, or none when no past session clearly leads.

    Measured on the development sets (``benchmarks/prompt_memory.py``): a lead whose BM25 beats every
    other session's best by ``session_margin`` is the right session far more often than a close race
    (where the hook used to add the wrong exchange of a right session, or a wrong session), and a
    lead covering under ``min_coverage`` of the prompt's words is mostly noise. Past the gate, hits
    clearing ``bar`` are kept in BM25 order, at most ``per_session`` of each session (a session's
    second-best chunk often holds the exchange its best one only leads to).
    """
    if not hits:
        return [], "none added: no keyword match"
    lead = hits[0]
    rival = max([own_best, *(h.bm25 for h in hits if h.chunk.session_id != lead.chunk.session_id)])
    margin = lead.bm25 / rival if rival > 0 else math.inf
    # The reasons name what each figure measures: the coverage gate holds for the best match only, the
    # bar for every moment added (hook status lists each moment's own figures beside them).
    if margin < request.session_margin:
        next_one = "this project's best" if rival == own_best else "the next"
        return [], (
            f"none added: no session clearly led (the best matched {margin:.2f}x as well as {next_one}, "
            f"needs {request.session_margin:g}x)"
        )
    best = f"the best match covers {lead.coverage:.0%} of the prompt's words"
    if lead.coverage < request.min_coverage:
        return [], f"none added: {best}, under the {request.min_coverage:.0%} needed"
    per_session: dict[str, int] = {}
    out: list[Moment] = []
    for hit in hits:
        session = hit.chunk.session_id
        if hit.relevance < bar or per_session.get(session, 0) >= request.per_session:
            continue
        per_session[session] = per_session.get(session, 0) + 1
        out.append(Moment(hit.chunk, hit.relevance, hit.coverage, hit.other, margin))
    if not out:
        return [], f"none added: no match cleared the {bar:.0%} relevance bar"
    lead_by = f"its session led the next by {_times(margin)}" if math.isfinite(margin) else "no other session matched"
    cleared = f"each moment cleared the {bar:.0%} relevance bar"
    return out, f"{best} (needs {request.min_coverage:.0%}), {lead_by}, and {cleared}"


def _times(ratio: float) -> str:
    """A lead as people read it: a rival matching one stray word makes ratios like 1665046.87x."""
    if ratio >= 100:
        return "over 100x"
    return f"{ratio:.0f}x" if ratio >= 10 else f"{ratio:.2f}x"


@dataclass(frozen=True, slots=True)
class _Hit:
    chunk: StoredChunk
    bm25: float
    relevance: float
    coverage: float
    other: bool


def _scored(
    store: MomentsStore,
    config: MomentsRelevance,
    query: str,
    project_ids: Sequence[int] | None,
    *,
    other: bool,
) -> list[_Hit]:
    """The BM25 top hits in scope with their keyword-only relevance, in BM25 order."""
    hits = store.keyword_search(query, project_ids=project_ids, limit=CANDIDATES)
    if not hits:
        return []
    profile = profile_query(store, query, project_ids=project_ids, agent=None, most_counted=config.most_counted)
    absent = query_absent_share(profile, config)
    chunks = store.get_chunks([chunk_id for chunk_id, _ in hits])
    out = []
    for chunk_id, bm25 in hits:
        chunk = chunks.get(chunk_id)
        if chunk is None:
            continue
        coverage = profile.coverage_of(chunk_stems(chunk))
        score = relevance(None, coverage, chunk_bulk(chunk), absent, config)
        out.append(_Hit(chunk, bm25, score, coverage, other))
    return out
