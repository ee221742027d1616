"""Episodic answers: the story around the best search hits (``recall``) or what followed them (``predict``).

Seed 000 walked one chain from the search seeds and kept the chain with the best median
similarity. Measured, that answer held a quarter of the evidence plain search found at the same
token budget, and often a side story. Here the graph gives order and neighbourhood, and relevance
comes from search (seed 001's lesson):

1. search, with the relevance floor: no hit above it is a plain "nothing relevant";
2. each hit, best first, anchors an episode: ``recall`` follows the edges *into* it (the turns that
   led to it), ``predict`` the edges *out of* it (what came next), within the hit's session: its
   agent's stream first, then the sub-agent or lead it exchanged work with;
3. ``recall`` cuts the walk where relevance drops below ``episodes.contextRelevance`` of the hit's
   (the story starts there); ``predict`` keeps up to ``episodes.contextChunks`` chunks of the same
   session, relevant or not (what came next need not resemble the question); recall's best episode
   tells its match's turn instead (``episodes.storyTurn``, :func:`story_of_turn`): back to the
   request that opened it and on to the turn's end, what was tried, the fix and how it ended; a
   match deeper in a long turn than the walk reaches tells the turn's first chunks, then how many it
   leaves out, then the match's neighbourhood (``episodes.storyOpening``, :func:`elided_story`,
   :attr:`Episode.gaps`); predict's best episode tells, after what followed its match, how the
   match's turn began, the same way (``episodes.predictRequest``): what the work was for;
4. episodes come from at most ``episodes.maxEpisodes`` sessions, the best-ranked ones; episodes
   that overlap are merged; a hit already told by an earlier episode anchors no new one; beside a
   relevant hit, a weakly related one (under 10% by its own score) of another project than the
   story's anchors none (``episodes.weakAnchors``, :func:`weak_aside`):
   in time order it would read as part of the story, and on the whole Claude Code corpus such
   episodes took half of recall's budget; a match says the figure search shows for it;
5. the token budget goes to each session's best hit first, then to the other hits, then to
   context nearest first; sessions whose best match is far weaker than the best one
   (``episodes.sideShare``, :func:`side_sessions`) get only what the others leave; two episodes of
   one session that touch (nothing of the session between them) are told as one; of two episodes
   of one session told one after the other, the later says how many of the session's chunks lie
   between them (:attr:`Episode.span`); when the best match's session is told whole (a short
   session that did one thing), side sessions get nothing (``episodes.wholeSessionAlone``) and the
   heading counts them;
6. the answer tells each episode's chunks in time order, and the episodes session by session, the
   best-ranked match's session first, asked from a project (``retrieval.hereBoost``) that
   project's best relevant one (:func:`asker_first`), side sessions last, a session's episodes from
   its best one on (``episodes.order`` best, :func:`told_order`); or all in time order (``time``).

``episodes.mode = "chain"`` answers with the seeds' chain walk instead (:mod:`chains`), so the
benchmarks can compare both.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from itertools import takewhile
from typing import TYPE_CHECKING, Literal

from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.chains import ChainWalker, closeness
from causantic.retrieval.format import (
    counted,
    episodes_body,
    episodes_heading,
    is_weak,
    member_heading,
    over_budget_note,
    render_episodes,
    titled,
    told_content,
)
from causantic.retrieval.search import Hit, Searcher, SearchRequest, SearchResult, is_here_note
from causantic.store.features import word_stems
from causantic.store.fts import identifier_terms
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import ChunkKey, StoredChunk

if TYPE_CHECKING:
    from causantic.config import EpisodesConfig

Kind = Literal["recall", "predict"]
Order = Literal["best", "time"]


@dataclass(frozen=True, slots=True)
class EpisodeChunk:
    chunk: StoredChunk
    relevance: float | None  # calibrated relevance to the query (None: not scored, e.g. no vector)
    is_hit: bool  # a search hit, rather than context around one
    text: str  # the chunk's text as the episode tells it (:func:`told_content`); the store keeps it whole

    @property
    def tokens(self) -> int:
        """What the chunk prints in an episode: its heading (:func:`member_heading`, at the widest
        position it says, its time without its date: one on another day than its episode's start is
        measured on the answer as printed, :func:`printed_within`), its text and the blank line after."""
        heading = member_heading(self, POSITION_ROOM, mixed=False, placed=True, day=self.chunk.start_time[:10])
        return approx_tokens(f"{heading}\n{self.text}\n\n")


@dataclass(frozen=True, slots=True)
class Episode:
    chunks: tuple[EpisodeChunk, ...]  # in time order
    relevance: float  # the best hit's
    # Where its first and last chunk stand among its session's chunks (0-based), when the answer
    # tells another episode of the session: the chunks left out between the two are counted from it.
    span: tuple[int, int] | None = None
    # Per chunk, the session's chunks left out right before it within the episode (a long turn told
    # from its request, :func:`elided_story`); () when none is.
    gaps: tuple[int, ...] = ()
    # Where its best hit ranks among the answer's episodes' (0: the best-ranked match's; an episode
    # merged from two keeps the better): the answer tells them in this order (:func:`told_order`).
    rank: int = 0

    @property
    def tokens(self) -> int:
        return sum(c.tokens for c in self.chunks)

    @property
    def start(self) -> str:
        return self.chunks[0].chunk.start_time


@dataclass(frozen=True, slots=True)
class EpisodeAnswer:
    kind: Kind
    mode: Literal["episodes", "chain"]
    episodes: tuple[Episode, ...]  # in ``order`` (:func:`told_order`)
    search: SearchResult
    notes: tuple[str, ...] = ()
    weak_left_out: int = 0  # sessions whose weak matches anchored no episode (episodes.weakAnchors off)
    order: Order = "time"  # best: the best-ranked match's session first (episodes.order); time: in time order

    @property
    def chunks(self) -> list[StoredChunk]:
        return [c.chunk for e in self.episodes for c in e.chunks]

    @property
    def tokens(self) -> int:
        """What the episodes print (:func:`episodes_body`: their headings, their chunks' headings and
        text), as the answer's heading counts them."""
        return approx_tokens(episodes_body(self)) if self.episodes else 0

    @property
    def nothing_relevant(self) -> bool:
        return not self.episodes


# The widest position a chunk's heading says ("12/12"), charged before the episode's size is known.
POSITION_ROOM = "99/99"


def heading_cost(members: Sequence[EpisodeChunk], index: int, count: int, relevance: float) -> int:
    """What an episode's heading prints (:func:`titled`), with the blank line after it."""
    ordered = sorted(members, key=lambda m: (m.chunk.start_time, m.chunk.turn_index, m.chunk.part))
    return approx_tokens(titled(Episode(tuple(ordered), relevance), index, count, True) + "\n\n")


def printed_within(
    answer: EpisodeAnswer, budget: int, room: int, refit: Callable[[int], EpisodeAnswer]
) -> EpisodeAnswer:
    """``answer`` (fitted to ``room``), or while it prints more than ``budget`` (what its pieces'
    costs leave uncounted: a heading's numbers, the line between two episodes of a session, a
    store's label), ``refit`` with that much less room; an answer with no episode ends it."""
    while answer.episodes and (over := approx_tokens(render_episodes(answer)) - budget) > 0:
        room -= over
        answer = refit(room)
    return answer


class EpisodeBuilder:
    def __init__(
        self,
        store: MemoryStoreProtocol,
        searcher: Searcher,
        vectors: VectorIndexProtocol,
        config: EpisodesConfig,
        chain_walker: ChainWalker | None = None,
    ) -> None:
        self.store = store
        self.searcher = searcher
        self.vectors = vectors
        self.config = config
        self.chain_walker = chain_walker

    def recall(self, request: SearchRequest, mode: Literal["episodes", "chain"] | None = None) -> EpisodeAnswer:
        return self.answer("recall", request, mode)

    def predict(self, request: SearchRequest, mode: Literal["episodes", "chain"] | None = None) -> EpisodeAnswer:
        return self.answer("predict", request, mode)

    def answer(
        self, kind: Kind, request: SearchRequest, mode: Literal["episodes", "chain"] | None = None
    ) -> EpisodeAnswer:
        cfg = self.config
        budget = request.max_tokens or cfg.max_tokens
        if (mode or cfg.mode) == "chain":
            return self._chain(kind, replace(request, max_tokens=budget))
        search = self.searcher.search(
            replace(request, limit=max(request.limit or 0, cfg.max_episodes * 4), max_tokens=max(budget, 50_000))
        )
        if search.nothing_relevant:
            return EpisodeAnswer(kind, "episodes", (), search, tuple(search.notes), order=cfg.order)
        hits = {h.chunk.id: h for h in search.hits}
        scores = {cid: h.relevance for cid, h in hits.items()}
        chunks = {cid: h.chunk for cid, h in hits.items()}
        shown = shown_figures(search)
        anchors, left_out = self._anchors(search)
        if cfg.order == "best":
            anchors = asker_first(anchors, search.here_project, cfg.side_share, cfg.max_episodes)
        episodes: list[list[str]] = []  # chunk ids, anchor first then context outward
        owner: dict[str, int] = {}
        sessions: set[str] = set()  # sessions with an episode: at most maxEpisodes of them
        orders: dict[str, list[str]] = {}  # a long turn's session, told from its request: its chunk order
        leading = cfg.story_chunks  # the best episode's context chunks the budget gives first (:meth:`_fit`)
        for hit in anchors:  # best first
            if hit.chunk.id in owner:
                continue  # already told by an earlier episode
            if hit.chunk.session_id not in sessions and len(sessions) >= cfg.max_episodes:
                continue
            sessions.add(hit.chunk.session_id)
            walk = self._walk(hit.chunk, kind)
            best = not episodes
            turn = self._walk(hit.chunk, "predict") if kind == "recall" and best and cfg.story_turn else []
            lead = self._walk(hit.chunk, "recall") if kind == "predict" and best and cfg.predict_request else []
            self._score_context([cid for cid in walk + turn + lead if cid not in chunks], search, chunks, scores)
            ids = [hit.chunk.id] + self._cut(kind, hit.relevance, walk, scores, chunks)
            if turn:  # the best episode of a recall: its match's turn, from the request to the outcome
                story = story_of_turn(hit.chunk, walk, turn, ids[1:], chunks)
                opening = self._opening(hit.chunk, walk, story, search, chunks, scores, orders)
                ids = [hit.chunk.id] + list(dict.fromkeys(opening + story))
            elif lead:  # the best episode of a predict: what followed its match, then how its turn began
                began = story_of_turn(hit.chunk, lead, (), [], chunks)[::-1]  # the request first
                began = began or self._opening(hit.chunk, lead, [], search, chunks, scores, orders)
                if began := [cid for cid in began if cid not in ids]:  # the match is not its turn's request
                    if hit.chunk.session_id not in orders:  # the budget may leave a gap before the match
                        orders[hit.chunk.session_id] = self.store.session_chunk_ids(hit.chunk.session_id)
                    after = ids[1 : 1 + cfg.story_chunks]
                    ids = [hit.chunk.id, *after, *began, *ids[1 + len(after) :]]
                    leading = len(after) + len(began)
            joined = next((owner[i] for i in ids if i in owner), None)
            if joined is None:
                episodes.append([])
                joined = len(episodes) - 1
            for cid in ids:
                if cid not in owner:
                    owner[cid] = joined
                    episodes[joined].append(cid)
        sides = side_sessions(anchors, cfg.side_share)
        # The best match's session, when it is short enough to be told whole, is the whole story: side
        # matches then leave the rest of the budget unspent (episodes.wholeSessionAlone).
        side_told = {chunks[ids[0]].session_id for ids in episodes} & sides
        whole: list[str] = []
        if side_told and cfg.whole_session_alone:
            first = chunks[episodes[0][0]].session_id
            whole = orders.get(first) or self.store.session_chunk_ids(first)
        told = self._teller(search)
        members = {  # a match says the figure search shows for it: one figure per chunk
            cid: EpisodeChunk(chunks[cid], shown.get(cid, scores.get(cid)), cid in hits, told(chunks[cid]))
            for ids in episodes
            for cid in ids
        }
        notes = tuple(search.notes) + ((weak_left_out_note(left_out),) if left_out else ())
        # Episodes are in their best hits' order, and each hit alone larger than the budget is left out:
        # those ranked above every episode told are said to be missing, as search says of its hits.
        too_big = [members[ids[0]].tokens for ids in episodes]
        too_big = too_big[: next((n for n, cost in enumerate(too_big) if cost <= budget), len(too_big))]
        if too_big:
            notes += (over_budget_note(len(too_big), min(too_big), budget),)
        # The budget is spent on what the answer prints: its heading, each episode's and each chunk's.
        # What the pieces' costs leave uncounted (a heading's numbers, the line between two episodes
        # of a session) is measured on the answer as printed, and the answer fitted again that less.
        room = budget - approx_tokens(episodes_heading(EpisodeAnswer(kind, "episodes", (), search, notes)) + ":\n\n")

        def fitted(room: int) -> EpisodeAnswer:
            built = self._placed(self._fit(episodes, members, room, sides, leading, whole), orders)
            built = told_order(built, cfg.order, sides)
            alone = bool(whole) and set(whole) <= {c.chunk.id for e in built for c in e.chunks}
            said = here_said(notes, built, lambda e: is_own(search, e.chunks[0].chunk))
            said += (whole_session_note(len(side_told)),) if alone else ()
            return EpisodeAnswer(kind, "episodes", tuple(built), search, said, left_out, cfg.order)

        return printed_within(fitted(room), budget, room, fitted)

    def _teller(self, search: SearchResult) -> Callable[[StoredChunk], str]:
        """How this answer tells a chunk (:func:`told_content`): tool results cut to their head and
        the lines that hold a word of the query (its stems, as relevance compares them, found in
        snake_case and camelCase names too: ``checkpointBranch`` holds "checkpoint")."""
        stems = search.profile.stems() if search.profile is not None else frozenset()
        cfg = self.config

        def told(chunk: StoredChunk) -> str:
            return told_content(
                chunk.content,
                lambda line: not stems.isdisjoint(word_stems(f"{line.replace('_', ' ')} {identifier_terms(line)}")),
                result_lines=cfg.result_lines,
                similar_lines=cfg.similar_lines,
                whole_results=cfg.whole_results,
            )

        return told

    def _anchors(self, search: SearchResult) -> tuple[list[Hit], int]:
        """The hits that may anchor an episode, best first, and how many sessions' weak matches were
        passed over (:func:`weak_aside`), each judged by its own score."""
        if self.config.weak_anchors:
            return list(search.hits), 0
        projects = story_projects(search.hits, lambda h: is_own(search, h.chunk))
        anchors = [h for h in search.hits if not weak_aside(h.chunk.project, h.relevance, projects)]
        told = {h.chunk.session_id for h in anchors}
        return anchors, len({h.chunk.session_id for h in search.hits} - told)

    # ---- walking ---------------------------------------------------------------------------

    def _score_context(
        self, ids: list[str], search: SearchResult, chunks: dict[str, StoredChunk], scores: dict[str, float]
    ) -> None:
        """Read and score chunks a walk reached that search did not return (one lookup each)."""
        if not ids:
            return
        found = self.store.get_chunks(ids)
        vectors = self.vectors.vectors(list(found)) if search.query_vector is not None else {}
        for cid, chunk in found.items():
            chunks[cid] = chunk
            scores[cid] = self.searcher.score(chunk, vectors.get(cid), search.query_vector, search.profile)[0]

    def _walk(self, start: StoredChunk, kind: Kind) -> list[str]:
        """Up to ``contextChunks`` chunk ids from ``start`` outward along edges (into it for recall,
        out of it for predict), the same agent's stream first, then its sub-agents or lead; never
        into another session: an episode is one session's story, and another session that holds
        more of it is found by search as an episode of its own."""
        direction = "backward" if kind == "recall" else "forward"
        seen = {start.id}
        out: list[str] = []
        current = start
        while len(out) < self.config.context_chunks:
            options = [(cid, kind_) for cid, kind_ in self.store.neighbours(current.id, direction) if cid not in seen]
            if not options:
                break
            others = self.store.get_chunks([cid for cid, _ in options])
            best_id, _ = min(options, key=lambda option: closeness(option, current, others))
            best = others.get(best_id)
            if best is None or best.session_id != start.session_id:
                break
            seen.add(best_id)
            out.append(best_id)
            current = best
        return out

    def _cut(
        self,
        kind: Kind,
        hit_relevance: float,
        walk: Sequence[str],
        scores: dict[str, float],
        chunks: dict[str, StoredChunk],
    ) -> list[str]:
        """The walk up to where the story starts: recall stops before the first chunk whose relevance
        falls under ``contextRelevance`` of the hit's; predict keeps the walk."""
        if kind == "predict":
            return [cid for cid in walk if cid in chunks]
        bar = hit_relevance * self.config.context_relevance
        kept: list[str] = []
        for cid in walk:
            if cid not in chunks or scores.get(cid, 0.0) < bar:
                break
            kept.append(cid)
        return kept

    def _opening(
        self,
        hit: StoredChunk,
        walk: Sequence[str],
        story: Sequence[str],
        search: SearchResult,
        chunks: dict[str, StoredChunk],
        scores: dict[str, float],
        orders: dict[str, list[str]],
    ) -> list[str]:
        """The request that opened a long turn and the ``storyOpening`` chunks of the turn from it
        (:func:`elided_story`), read and scored, when the walk back from the match stayed in its turn
        and did not reach the request; else none. ``orders`` gets the session's chunk order, from
        which the answer counts the chunks it leaves out between them and the match."""
        if self.config.story_opening == 0 or not walk or any(opens_turn(chunks[cid]) for cid in story if cid in chunks):
            return []
        order = self.store.session_chunk_ids(hit.session_id)
        opening = elided_story(hit, order, self.store.session_chunk_keys(hit.session_id), self.config.story_opening)
        self._score_context([cid for cid in opening if cid not in chunks], search, chunks, scores)
        if not opening or opening[0] not in chunks or not opens_turn(chunks[opening[0]]):
            return []
        orders[hit.session_id] = order
        return [cid for cid in opening if cid in chunks]

    # ---- fitting ---------------------------------------------------------------------------

    def _fit(
        self,
        episodes: list[list[str]],
        members: dict[str, EpisodeChunk],
        budget: int,
        sides: Collection[str],
        story: int,
        whole: Collection[str] = (),
    ) -> list[Episode]:
        """Spend the budget on each session's best hit first, then on the best episode's first
        ``story`` chunks of context (``storyChunks``; predict's best episode's with
        ``predictRequest`` also how its match's turn began: the answer tells at least one story),
        then on every other hit (best episode first), so the answer names the best distinct sessions
        and each strong match, then on context, nearest first; a story is never left with a gap (but
        one between how predict's turn began and its match, which the answer counts). The
        episodes of ``sides`` (:func:`side_sessions`) get what is left after all that, in the same
        order: a side match fills room the story leaves, and never takes it, and none does once
        every chunk of ``whole`` (the best match's session, ``episodes.wholeSessionAlone``) is told.
        A chunk costs what it prints (:attr:`EpisodeChunk.tokens`: told, not as the store holds it,
        and its heading), and an episode's first chunk its heading too."""
        cost = {cid: member.tokens for cid, member in members.items()}
        hits = {cid for cid, member in members.items() if member.is_hit}
        chunks = {cid: member.chunk for cid, member in members.items()}
        chosen: list[list[str]] = [[] for _ in episodes]
        used = 0
        leads: set[str] = set()
        main = [n for n, ids in enumerate(episodes) if chunks[ids[0]].session_id not in sides]
        aside = [n for n, ids in enumerate(episodes) if chunks[ids[0]].session_id in sides]
        for tier in (main, aside):
            if tier is aside and whole and not set(whole).difference(*chosen):
                break  # the best match's session told whole: the story is all there
            for n in tier:  # the anchor of each session's first episode
                ids, picked = episodes[n], chosen[n]
                session = chunks[ids[0]].session_id
                heading = heading_cost(
                    [members[i] for i in ids],
                    len(episodes) - 1,
                    len(episodes),
                    max(members[i].relevance or 0.0 for i in ids if i in hits),
                )
                if session not in leads and used + heading + cost[ids[0]] <= budget:
                    leads.add(session)
                    picked.append(ids[0])
                    used += heading + cost[ids[0]]
            if tier is main and chosen and chosen[0]:  # the first episode holds the best hit
                for cid in episodes[0][1 : 1 + story]:  # nearest first: no gap
                    if used + cost[cid] > budget:
                        break
                    chosen[0].append(cid)
                    used += cost[cid]
            for n in tier:
                for cid in episodes[n]:
                    if cid in hits and cid not in chosen[n] and used + cost[cid] <= budget:
                        chosen[n].append(cid)
                        used += cost[cid]
            for n in tier:
                if not chosen[n]:
                    continue
                for cid in episodes[n]:
                    if cid in hits or cid in chosen[n]:
                        continue
                    if used + cost[cid] > budget:
                        break
                    chosen[n].append(cid)
                    used += cost[cid]
        out: list[Episode] = []
        for rank, picked in enumerate(chosen):
            if not picked:
                continue
            ordered = sorted(picked, key=lambda i: (chunks[i].start_time, chunks[i].turn_index, chunks[i].part))
            told = tuple(members[i] for i in ordered)
            out.append(Episode(told, max(members[i].relevance or 0.0 for i in picked if i in hits), rank=rank))
        return out

    def _placed(self, episodes: list[Episode], orders: dict[str, list[str]]) -> list[Episode]:
        """The episodes, two of a session that touch (the later starts at the chunk after the
        earlier's last: nothing of the session left out between them) told as one, in time order,
        and those of a session still told in more than one with their :attr:`Episode.span` (one read
        of the session's chunk order each, ``orders`` holding those already read): told apart, two
        touching episodes read as one story told twice. An episode of a long turn told from its
        request (a session of ``orders``) gets its :attr:`Episode.gaps`."""
        told = Counter(e.chunks[0].chunk.session_id for e in episodes)
        order = {s: orders.get(s) or self.store.session_chunk_ids(s) for s, n in told.items() if n > 1}
        placed: list[Episode] = []
        for episode in episodes:
            session = episode.chunks[0].chunk.session_id
            ids = order.get(session)
            if ids is not None and episode.chunks[0].chunk.id in ids and episode.chunks[-1].chunk.id in ids:
                span = (ids.index(episode.chunks[0].chunk.id), ids.index(episode.chunks[-1].chunk.id))
                episode = replace(episode, span=span)
            if session in orders:
                episode = replace(episode, gaps=gaps_in(episode, orders[session]))
            placed.append(episode)
        placed.sort(key=lambda e: (e.chunks[0].chunk.session_id, e.span or (-1, -1)))
        out: list[Episode] = []
        for episode in placed:
            earlier = out[-1] if out else None
            if (
                earlier is not None
                and earlier.span is not None
                and episode.span is not None
                and earlier.chunks[0].chunk.session_id == episode.chunks[0].chunk.session_id
                and episode.span[0] == earlier.span[1] + 1
            ):
                out[-1] = Episode(
                    earlier.chunks + episode.chunks,
                    max(earlier.relevance, episode.relevance),
                    (earlier.span[0], episode.span[1]),
                    (earlier.gaps or (0,) * len(earlier.chunks)) + (episode.gaps or (0,) * len(episode.chunks))
                    if earlier.gaps or episode.gaps
                    else (),
                    min(earlier.rank, episode.rank),
                )
            else:
                out.append(episode)
        left = Counter(e.chunks[0].chunk.session_id for e in out)
        return [e if left[e.chunks[0].chunk.session_id] > 1 else replace(e, span=None) for e in out]

    def _chain(self, kind: Kind, request: SearchRequest) -> EpisodeAnswer:
        """The seeds' chain walk, shaped as one episode (or its search fallback, one per hit)."""
        if self.chain_walker is None:
            raise RuntimeError("episodes.mode = chain needs a chain walker")
        result = self.chain_walker.run(request, "backward" if kind == "recall" else "forward")
        told = self._teller(result.search)
        members = [EpisodeChunk(c, s, False, told(c)) for c, s in zip(result.chunks, result.scores, strict=True)]
        notes = (result.diagnostics.line(),) if result.diagnostics.fallback_reason else ()
        if not members:
            return EpisodeAnswer(kind, "chain", (), result.search, notes)
        if result.mode == "chain":
            chain = (Episode(tuple(members), result.chain_median or 0.0),)
            return EpisodeAnswer(kind, "chain", chain, result.search, notes)
        # The fallback tells search's hits one by one, as they rank: its heading must not say "in time order".
        hits = tuple(Episode((m,), m.relevance or 0.0, rank=i) for i, m in enumerate(members))
        return EpisodeAnswer(kind, "chain", hits, result.search, notes, order="best")


def cut_episode(episode: Episode, room: int) -> Episode | None:
    """The episode's matches, then the chunks nearest them, while they fit ``room``, in time order;
    None when not even one fits. Its span goes (its ends may have moved): no gap line is counted
    from it; the chunks left out within it (:attr:`Episode.gaps`) are counted again."""
    chunks = episode.chunks
    hits = [i for i, c in enumerate(chunks) if c.is_hit] or [0]
    keep: list[int] = []
    used = 0
    for i in sorted(range(len(chunks)), key=lambda i: (not chunks[i].is_hit, min(abs(i - h) for h in hits))):
        cost = chunks[i].tokens
        if used + cost <= room:
            keep.append(i)
            used += cost
    if not keep:
        return None
    kept = sorted(keep)
    gaps: tuple[int, ...] = ()
    if episode.gaps:  # where each chunk stands in its session, counting what was left out before it
        places = [sum(episode.gaps[: i + 1]) + i for i in kept]
        gaps = tuple(0 if n == 0 else places[n] - places[n - 1] - 1 for n in range(len(places)))
    return replace(episode, chunks=tuple(chunks[i] for i in kept), span=None, gaps=gaps if any(gaps) else ())


def told_order(episodes: Iterable[Episode], order: Order, sides: Collection[str] = ()) -> list[Episode]:
    """The episodes as the answer tells them (``episodes.order``). best: session by session, the
    session of the best-ranked match first (:attr:`Episode.rank`: search's order, the asker's
    project's best match first, :func:`asker_first`), then the others as they rank, side sessions
    (:func:`side_sessions`) last; a session's episodes from its best one on in time order, then
    those before it in time order (so no told episode lies between two that the line between them
    counts the left-out chunks of). time: all in time order. An agent reads an answer from its top,
    and a client may cut it short: in time order the best match's episode was first in little over
    half of recall's answers on the coding dev set, and a session's weak early match (7%, 100
    chunks before its 64% one) could open the answer."""
    in_time = sorted(episodes, key=lambda e: e.start)
    if order == "time":
        return in_time
    best: dict[str, Episode] = {}
    for episode in in_time:
        session = episode.chunks[0].chunk.session_id
        if session not in best or episode.rank < best[session].rank:
            best[session] = episode

    def place(episode: Episode) -> tuple[bool, int, bool]:
        lead = best[episode.chunks[0].chunk.session_id]
        return episode.chunks[0].chunk.session_id in sides, lead.rank, episode.start < lead.start

    return sorted(in_time, key=place)  # stable: in time order within each part


def asker_first(anchors: list[Hit], here: int | None, share: float, sessions: int) -> list[Hit]:
    """``anchors`` (best-ranked first) with the best-ranked of the asker's project (``here``, its id:
    ``retrieval.hereBoost``) first, when another project's ranks above it and its own match is of
    the first ``sessions`` sessions (those the answer tells: it is reordered, never added to), no
    side match (at least ``share`` of the best's relevance, :func:`side_sessions`), nor weakly
    related beside a relevant first one. Search ranks the asker's project's matches higher unless
    another's scores clearly better; that one is still told, after, with its figure. The first
    anchor's episode tells the story (``storyTurn``, ``storyChunks``) and leads the answer."""
    if here is None or not anchors:
        return anchors
    bar = share * max(h.relevance for h in anchors)
    weak_first = is_weak(anchors[0].relevance)
    told = list(dict.fromkeys(h.chunk.session_id for h in anchors))[:sessions]
    lead = next(
        (
            h
            for h in anchors
            if h.chunk.project_id == here
            and h.chunk.session_id in told
            and h.relevance >= bar
            and (weak_first or not is_weak(h.relevance))
        ),
        None,
    )
    if lead is None or lead is anchors[0]:
        return anchors
    return [lead, *(h for h in anchors if h is not lead)]


def opens_turn(chunk: StoredChunk) -> bool:
    """A request: the chunk that opens its turn with the user's words (a sub-agent's task too)."""
    return chunk.part == 0 and chunk.content.startswith("[User]")


def story_of_turn(
    hit: StoredChunk, back: Sequence[str], forward: Sequence[str], cut: list[str], chunks: dict[str, StoredChunk]
) -> list[str]:
    """The context of recall's best episode (``episodes.storyTurn``), nearest first: back to the
    request that opened the match's turn (past where relevance drops: the request is where the
    story starts), when the walk back (``back``) reaches it, else the walk cut where relevance drops
    (``cut``); then forward through the rest of the turn (``forward``, to the next request): what
    was tried, the fix and how it ended. A match that is itself the request tells the rest of its
    turn first and what led to it (``cut``) after."""

    def of_turn(cid: str) -> bool:
        chunk = chunks.get(cid)
        return chunk is not None and chunk.agent == hit.agent and chunk.turn_index == hit.turn_index

    rest = list(takewhile(lambda cid: of_turn(cid) and not opens_turn(chunks[cid]), forward))
    if opens_turn(hit):
        return rest + [cid for cid in cut if cid not in rest]
    turn = list(takewhile(of_turn, back))
    request = next((n for n, cid in enumerate(turn) if opens_turn(chunks[cid])), None)
    return (turn[: request + 1] if request is not None else cut) + rest


def elided_story(hit: StoredChunk, order: Sequence[str], keys: Sequence[ChunkKey], most: int) -> list[str]:
    """The first ``most`` chunks of the turn ``hit`` belongs to (its agent's, in the session's chunk
    ``order``), the request that opened it first: how a long turn is told when its match lies
    beyond the walk back (``episodes.storyOpening``): the request, how the work began, then "… N
    chunks left out …" and the match's neighbourhood, rather than every step between."""
    by_id = {key.id: key for key in keys}
    own = by_id.get(hit.id)
    if own is None:
        return []
    turn = [
        cid
        for cid in order
        if (key := by_id.get(cid)) is not None and key.agent_id == own.agent_id and key.turn_index == own.turn_index
    ]
    if not turn or by_id[turn[0]].part != 0 or hit.id in turn[:most]:
        return []
    return turn[:most]


def gaps_in(episode: Episode, order: Sequence[str]) -> tuple[int, ...]:
    """Per chunk of ``episode``, how many of its session's chunks (in ``order``) lie right before
    it and are not told (:attr:`Episode.gaps`); () when none is."""
    at = {cid: n for n, cid in enumerate(order)}
    places = [at.get(c.chunk.id) for c in episode.chunks]
    gaps = tuple(
        0 if n == 0 or place is None or before is None else max(place - before - 1, 0)
        for n, (before, place) in enumerate(zip([None, *places[:-1]], places, strict=True))
    )
    return gaps if any(gaps) else ()


def shown_figures(search: SearchResult) -> dict[str, float]:
    """Each hit's relevance as search shows it (:attr:`SearchResult.shown_relevance`), by chunk id:
    the figure an episode's match says (and is marked weakly related by), so a chunk reads the same
    in search, recall and predict (one read 19% in search and 6% in recall). Which weak matches an
    answer leaves out is still judged on each match's own score (:func:`weak_aside`): search's
    figures never rise down its list, and a 9% match ranked above a 10% one read 10% there; judged
    on that figure, it led the coding dev set's dev005 instead of the right session."""
    return {h.chunk.id: shown for h, shown in zip(search.hits, search.shown_relevance, strict=True)}


def story_projects(hits: Sequence[Hit], own: Callable[[Hit], bool]) -> set[str]:
    """The projects whose weakly related matches may still carry the story (:func:`weak_aside`): the
    best-ranked relevant hit's (``hits`` best-ranked first, each judged by its own score), and the
    asker's (``own``) when one of its hits is relevant; none when no hit is."""
    relevant = [h for h in hits if not is_weak(h.relevance)]
    return {h.chunk.project for n, h in enumerate(relevant) if n == 0 or own(h)}


def weak_aside(project: str, relevance: float, story: set[str]) -> bool:
    """Whether a hit (or an episode it anchors) is a weakly related match beside the story
    (``weakAnchors`` off): weak by its own score, of another project than the story's (``story``,
    :func:`story_projects`; none: no story to stand beside). Another project's relevant match does
    not make that project's weak ones part of the story: a 5% Codex episode was told beside a
    relevant story because another of its project's hits read 10%. One of the story's own project
    may carry more of it (a conversation's earlier sessions: on LoCoMo, leaving those out too lost 7
    points of evidence)."""
    return bool(story) and project not in story and is_weak(relevance)


def side_sessions(anchors: Sequence[Hit], share: float) -> set[str]:
    """The sessions of ``anchors`` (best-ranked first) whose best match reads under ``share`` of the
    best one's relevance (``episodes.sideShare``), the best-ranked hit's session aside: their
    episodes get only the budget the others leave (:meth:`EpisodeBuilder._fit`). Told first, in time
    order beside the story, a side match reads as part of it; on the coding dev set such matches
    took half of recall's budget from the session that did the work."""
    best: dict[str, float] = {}
    for hit in anchors:
        best[hit.chunk.session_id] = max(best.get(hit.chunk.session_id, 0.0), hit.relevance)
    if not best:
        return set()
    bar = share * max(best.values())
    return {session for session, relevance in best.items() if relevance < bar} - {anchors[0].chunk.session_id}


def is_own(search: SearchResult, chunk: StoredChunk) -> bool:
    """Whether ``chunk`` is of the asker's project (``search.here_project``; fused from two stores,
    whose project ids differ: one of ``search.here_chunks``)."""
    if search.here_chunks is not None:
        return chunk.id in search.here_chunks
    return search.here_project is not None and chunk.project_id == search.here_project


def here_said(notes: tuple[str, ...], episodes: Iterable[Episode], own: Callable[[Episode], bool]) -> tuple[str, ...]:
    """``notes`` without search's "asked from …: its own matches placed above …" note
    (:func:`~causantic.retrieval.search.here_note`) when no episode told is of the asker's project
    (``own``): the note explains why that project's matches lead, and beside an answer holding none
    of them it reads as if they were there (asked from one project about another's fix, the answer
    was all the other's, under that note)."""
    if any(own(e) for e in episodes):
        return notes
    return tuple(n for n in notes if not is_here_note(n))


def shortened(answer: EpisodeAnswer, budget: int) -> EpisodeAnswer:
    """``answer`` told in at most ``budget`` tokens of episodes: its first episode cut to its
    matches and the chunks nearest them (:func:`cut_episode`), none when 0 or when not one chunk
    fits (the answer then says its notes alone); its notes kept (``episodes.elsewhereTokens``)."""
    if not answer.episodes:
        return answer
    first = answer.episodes[0]
    room = budget - heading_cost(first.chunks, 0, 1, first.relevance)
    cut = cut_episode(first, room) if budget > 0 else None
    return replace(answer, episodes=(cut,) if cut is not None else ())


WEAK_LEFT_OUT = "weakly related matches in {} of other projects left out (search lists them)"
WHOLE_SESSION = "weaker matches in {} left out (the story's session told whole)"


def weak_left_out_note(sessions: int) -> str:
    return WEAK_LEFT_OUT.format(counted(sessions, "session"))


def whole_session_note(sessions: int) -> str:
    return WHOLE_SESSION.format(counted(sessions, "other session"))
