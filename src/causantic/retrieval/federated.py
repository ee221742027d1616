"""One answer from two stores: team memory and the local store beside it (``team.shareProjects``).

Each store answers the request alone, through the whole pipeline (its own indexes, relevance floor
and diversification); this module fuses the answers the way the pipeline fuses its keyword and
vector lists, by reciprocal rank (:func:`causantic.retrieval.ranking.reciprocal_rank_fusion`):
the two stores' scores come from different indexes, their ranks do not. Then the request's limit
and token budget are applied to the fused list. Results are keyed by store name ("team",
"local"), team first, so ties go to team memory; a chunk both stores hold (a project uploaded
after it was kept locally) appears once. Asked from inside a project (``retrieval.hereBoost``), each
store ranked that project's matches up in its own list, and fusing by rank alone undid it: team
memory's best came first, the local store's best second, whichever projects they were. So the
asker's project's matches (of either store) are placed above another project's unless that one's
relevance beats theirs by more than the boost, as one store's ranking weighs them
(:func:`here_first`). Which store a chunk came from shows in its ``user``:
team memory's chunks name their member, local ones none (``store`` in the JSON shape).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from causantic.retrieval.episodes import (
    Episode,
    EpisodeAnswer,
    Order,
    cut_episode,
    heading_cost,
    here_said,
    is_own,
    printed_within,
    side_sessions,
    story_projects,
    told_order,
    weak_aside,
    weak_left_out_note,
)
from causantic.retrieval.ranking import reciprocal_rank_fusion
from causantic.retrieval.search import EMPTY_MEMORY, Hit, SearchResult, here_note, hit_cost, is_here_note

Item = TypeVar("Item")
QUIET_NOTES = ("no matching chunks",)  # one store's empty answer says nothing when the other answered
# The local store answering alone (team memory down) is empty on a machine whose sessions all went to
# team memory: "run batch-ingest" would send the member to ingest what is already stored there.
LOCAL_EMPTY = "local memory holds nothing (with team memory configured, sessions are stored there)"


def fused_search(
    results: Mapping[str, SearchResult],
    *,
    rrf_k: int,
    limit: int,
    max_tokens: int,
    notes: list[str],
    here_boost: float = 0.0,
) -> SearchResult:
    """The stores' hits as one ranked list within ``limit`` hits and ``max_tokens``; ``notes`` lead.
    ``here_boost``: retrieval.hereBoost, by which the asker's project's hits were weighed up."""
    if len(results) == 1:
        ((name, only),) = results.items()
        return replace(only, notes=[*notes, *_own_notes(name, only.notes)])
    by_id: dict[str, Hit] = {}
    for result in results.values():
        for hit in result.hits:
            by_id.setdefault(hit.chunk.id, hit)
    fused = reciprocal_rank_fusion({name: [h.chunk.id for h in r.hits] for name, r in results.items()}, rrf_k)
    here = _here_chunks(results.values())
    ranked = here_first(
        [by_id[chunk_id] for chunk_id, _, _ in fused], lambda h: h.chunk.id in here, lambda h: h.relevance, here_boost
    )
    hits, used = _packed(ranked, lambda h: hit_cost(h.chunk), max_tokens, limit)
    own = [h for h in hits if h.chunk.id in here]
    seeds = [i for i, _, _ in reciprocal_rank_fusion({n: r.seeds for n, r in results.items()}, rrf_k)]
    first = next(iter(results.values()))
    return SearchResult(
        hits=hits,
        mode=first.mode,
        seeds=seeds[: max(len(r.seeds) for r in results.values())],
        tokens=used,
        candidates=sum(r.candidates for r in results.values()),
        notes=[*notes, *_store_notes(results, answered=bool(hits)), *here_note(hits, own)],
        query_vector=next((r.query_vector for r in results.values() if r.query_vector is not None), None),
        below_floor=sum(r.below_floor for r in results.values()),
        profile=first.profile,
        nearest=max((r.nearest for r in results.values() if r.nearest is not None), default=None),
        here_chunks=frozenset(h.chunk.id for h in own) if here else None,
    )


def here_first(
    ranked: list[Item], is_here: Callable[[Item], bool], relevance: Callable[[Item], float], boost: float
) -> list[Item]:
    """``ranked`` (fused by rank) with the asker's project's items (``is_here``) placed above each
    other project's item whose relevance is not more than ``1 + boost`` times theirs: one store
    weighs the asker's project's candidates up by that factor, so another project's match still leads
    when it is clearly better. Each group keeps its own order."""
    own = [item for item in ranked if is_here(item)]
    if not own or boost <= 0:
        return ranked
    place = {id(item): n for n, item in enumerate(ranked)}
    others = [item for item in ranked if not is_here(item)]
    placed: list[Item] = []
    i = j = 0
    while i < len(own) and j < len(others):
        mine, theirs = own[i], others[j]
        if place[id(mine)] < place[id(theirs)] or relevance(mine) * (1.0 + boost) >= relevance(theirs):
            placed.append(mine)
            i += 1
        else:
            placed.append(theirs)
            j += 1
    return [*placed, *own[i:], *others[j:]]


def fused_episodes(
    answers: Mapping[str, EpisodeAnswer],
    *,
    rrf_k: int,
    limit: int,
    max_episodes: int,
    max_tokens: int,
    notes: list[str],
    weak_anchors: bool,
    side_share: float,
    here_boost: float = 0.0,
    order: Order = "best",
) -> EpisodeAnswer:
    """The stores' episodes, the best-ranked of both first, within ``max_episodes`` and the budget,
    told in ``order`` as one store's answer is (:func:`told_order`; best: by their fused rank).
    Beside a relevant match of either store, a weakly related one of another project tells no
    episode (``weak_anchors`` off), as in one store's answer: a store holding only weak matches told
    them, having no relevant match to weigh them by.
    Side sessions of both stores' matches (``side_share``, :func:`side_sessions`) get only the
    budget the others leave, as in one store's answer: a store's best episode ranked beside team
    memory's best, a side match took the room of the story's next episode. The asker's project's
    episodes lead as its hits do (:func:`here_first`)."""
    search = fused_search(
        {n: a.search for n, a in answers.items()},
        rrf_k=rrf_k,
        limit=limit,
        max_tokens=max_tokens,
        notes=notes,
        here_boost=here_boost,
    )
    if len(answers) == 1:
        ((name, only),) = answers.items()
        return replace(only, search=search, notes=(*notes, *_own_notes(name, only.notes)))
    by_key: dict[str, Episode] = {}
    rankings: dict[str, list[str]] = {}
    here: set[str] = set()  # the asker's project's episodes (each store knows it by its own id)
    for name, answer in answers.items():
        ranked = sorted(answer.episodes, key=lambda e: -e.relevance)
        rankings[name] = [_episode_key(e) for e in ranked]
        for episode in ranked:
            by_key.setdefault(_episode_key(episode), episode)
        own = answer.search.here_project
        here.update(_episode_key(e) for e in ranked if own is not None and e.chunks[0].chunk.project_id == own)
    fused = [by_key[key] for key, _, _ in reciprocal_rank_fusion(rankings, rrf_k)]
    fused = here_first(fused, lambda e: _episode_key(e) in here, lambda e: e.relevance, here_boost)
    left_out = 0
    if not weak_anchors:
        hits = [h for a in answers.values() for h in a.search.hits]
        # The fused search's best-ranked relevant hit is the story's; the asker's project is each store's own.
        projects = story_projects([*search.hits, *hits], lambda h: is_own(search, h.chunk))
        scores = {h.chunk.id: h.relevance for h in hits}  # an episode's figure is search's; judged by its own score
        fused = [e for e in fused if not weak_aside(e.chunks[0].chunk.project, _own_score(e, scores), projects)]
        told = {h.chunk.session_id for h in hits if not weak_aside(h.chunk.project, h.relevance, projects)}
        left_out = len({h.chunk.session_id for h in hits} - told)
    # The best-ranked hit of both stores (the fused search's first) anchors the story; every hit weighs.
    sides = side_sessions([*search.hits[:1], *(h for a in answers.values() for h in a.search.hits)], side_share)
    fused = sorted(fused, key=lambda e: e.chunks[0].chunk.session_id in sides)  # stable: ranks kept within
    # Each store ranked its own episodes; the fused order is the one rank both are told by.
    fused = [replace(e, rank=i) for i, e in enumerate(fused)]
    kept = _fitted(fused, max_tokens, max_episodes)
    first = next(iter(answers.values()))
    extra = tuple(
        n
        for a in answers.values()
        for n in a.notes
        if (kept or n not in QUIET_NOTES)
        and not (a.weak_left_out and n == weak_left_out_note(a.weak_left_out))
        and not is_here_note(n)  # each store's order: said again of the fused one
    )
    extra += tuple(n for n in search.notes if is_here_note(n))
    extra += (weak_left_out_note(left_out),) if left_out else ()

    def answer_of(kept: list[Episode]) -> EpisodeAnswer:
        episodes = tuple(told_order(kept, order, sides))
        said = here_said((*notes, *dict.fromkeys(extra)), episodes, lambda e: _episode_key(e) in here)
        return EpisodeAnswer(first.kind, first.mode, episodes, search, said, left_out, order=order)

    # As one store's answer: what the pieces' costs leave uncounted (the heading, "Local (not shared)"
    # on the member's own chunks) is measured on the answer as printed.
    return printed_within(
        answer_of(kept), max_tokens, max_tokens, lambda room: answer_of(_fitted(fused, room, max_episodes))
    )


def _packed(ranked: list[Item], cost: Callable[[Item], int], max_tokens: int, most: int) -> tuple[list[Item], int]:
    """The best-ranked items that fit ``max_tokens`` (one too large is passed over, not an end), at
    most ``most`` of them, and the tokens they use."""
    kept: list[Item] = []
    used = 0
    for item in ranked:
        tokens = cost(item)
        if used + tokens > max_tokens:
            continue
        kept.append(item)
        used += tokens
        if len(kept) >= most:
            break
    return kept, used


def _fitted(ranked: list[Episode], max_tokens: int, most: int) -> list[Episode]:
    """The best-ranked episodes within ``max_tokens``, at most ``most``: one larger than the room
    left is cut to its matches and the context nearest them (:func:`cut_episode`), not passed over. Each
    store fitted its answer to the whole budget, so a store's first episode, two that touch told as
    one, could fill it and leave the other store's story out."""
    kept: list[Episode] = []
    used = 0
    for episode in ranked:
        heading = heading_cost(episode.chunks, most - 1, most, episode.relevance)
        room = max_tokens - used - heading
        fitting = episode if episode.tokens <= room else cut_episode(episode, room)
        if fitting is None:
            continue
        kept.append(fitting)
        used += heading + fitting.tokens
        if len(kept) >= most:
            break
    return kept


def _here_chunks(results: Iterable[SearchResult]) -> set[str]:
    """The asker's project's hits of the stores, by chunk id: each store knows
    it by its own project id (``here_project``), and the two stores number their projects apart."""
    return {
        h.chunk.id
        for r in results
        if r.here_project is not None
        for h in r.hits
        if h.chunk.project_id == r.here_project
    }


def _own_score(episode: Episode, scores: Mapping[str, float]) -> float:
    """The best own score (``scores``, by chunk id) of the episode's matches."""
    return max((scores.get(c.chunk.id, c.relevance or 0.0) for c in episode.chunks if c.is_hit), default=0.0)


def _episode_key(episode: Episode) -> str:
    return episode.chunks[0].chunk.id


def _own_notes(store: str, notes: Sequence[str]) -> list[str]:
    """The notes of the one store that answered, for the member who reads them."""
    return [LOCAL_EMPTY if store == "local" and note == EMPTY_MEMORY else note for note in notes]


def _store_notes(results: Mapping[str, SearchResult], *, answered: bool) -> list[str]:
    """Each store's notes, named by store; a store's "asked from …" note is said again of the fused
    list (:func:`here_note`), whose order it no longer describes."""
    return [
        f"{name} memory: {note}"
        for name, result in results.items()
        for note in result.notes
        if not (answered and note in QUIET_NOTES) and not is_here_note(note)
    ]
