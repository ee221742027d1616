"""Forgetting: delete chosen chunks of one project, or the whole project, after a preview.

Filters combine (AND): ``before``/``after`` on chunk time, ``session_id`` (an id or its start, at
least ``options.SESSION_ID_MIN`` characters: a shorter prefix could name several sessions), a semantic
``query`` whose matches must reach ``threshold`` cosine similarity, and, in team memory, ``only_mine``
(the forgetting member's own chunks: others' are theirs to forget). No filter means the whole
project (``whole_project`` says so explicitly and refuses filters beside it). A dry run (the
default) only says what would go. A real run removes the chunks with their edges, keyword-index
rows, vectors and cluster memberships — nothing else — and re-links the project's remaining
sessions in order.

Space. A real run then gives the deleted rows' space back to the disk where the store can (a
memory.db made with incremental auto-vacuum: every one since this release) and says how much; a file
made before keeps it as free space inside, reused by later ingests, and the answer says so and
names ``causantic vacuum`` (:func:`space_note`).

Retention: :func:`prune` previews every chunk of every project before a date, by project, and
:func:`delete_pruned` deletes exactly those (``causantic prune --before DATE``).

Never more than was previewed: :func:`delete_previewed` deletes exactly the chunks a dry run
listed, and a real run given ``expected`` (the count a dry run reported) refuses when the
matches have grown since, e.g. because the current session kept being ingested.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TypeVar

from causantic.errors import CausanticError
from causantic.retrieval.format import byte_size, counted
from causantic.retrieval.listing import SessionSummary, list_sessions, resolve_project
from causantic.retrieval.options import FORGET_THRESHOLD, THRESHOLD, session_prefix
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import ChunkScope, StoredChunk


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    project: str
    before: datetime | None = None
    after: datetime | None = None
    session_id: str | None = None
    query: str | None = None
    threshold: float = FORGET_THRESHOLD
    dry_run: bool = True
    whole_project: bool = False  # explicit "everything in the project"; no filter means the same
    expected: int | None = None  # a real run deletes nothing unless the matches number exactly this
    # When set, a real run deletes only matches among these ids: what a preview listed, so memory
    # ingested between the preview and the confirmation is never deleted unseen.
    only_ids: frozenset[str] | None = None
    member: str | None = None  # team memory: who is forgetting (team.user), to name others' chunks
    # Team memory: only the member's own chunks (others' in the same scope stay, and are not counted).
    only_mine: bool = False


@dataclass(frozen=True, slots=True)
class ForgetResult:
    project: str
    dry_run: bool
    count: int
    preview: tuple[tuple[StoredChunk, float | None], ...]  # top matches (with similarity for a query)
    deleted: int
    whole_project: bool = False
    sessions: int = 0  # sessions the matches belong to
    ids: tuple[str, ...] = ()  # every matched chunk, so a confirmed preview deletes exactly these
    session_summaries: tuple[SessionSummary, ...] = ()  # whole project: its sessions, newest first
    # Team memory: matched chunks other members ingested, (member, chunks) by name. Row-level security
    # refuses their deletion (the whole of it) unless the forgetting role holds causantic_admin.
    others: tuple[tuple[str, int], ...] = ()
    # Team memory: whether the forgetting member's database role may delete those too (the team shares
    # one login, or it is an admin's or the tables' owner's); else a real run refuses them.
    others_deletable: bool = False
    only_mine: bool = False  # team memory: the matches are the forgetting member's own chunks only
    freed_bytes: int = 0  # a real run: how much smaller memory's files became
    free_bytes: int = 0  # a real run: free space left inside the file, given back by `causantic vacuum`
    size_bytes: int = 0  # a real run: memory's files after it
    # A query that matched nothing: the similarity of the chunk in scope closest to it, so the answer
    # can say what threshold would reach it (None when no chunk in scope has a vector).
    nearest: float | None = None


def space_note(result: ForgetResult | PruneResult) -> str | None:
    """What a deletion did to memory's size on disk (the CLI, MCP and the dashboard alike), or None
    when it changed nothing worth saying."""
    if result.dry_run or not result.deleted:
        return None
    if result.free_bytes:
        return (
            f"{byte_size(result.free_bytes)} inside memory.db is now free space, reused by later ingests; "
            "`causantic vacuum` gives it back to the disk."
        )
    if result.freed_bytes:
        return f"memory.db is {byte_size(result.freed_bytes)} smaller ({byte_size(result.size_bytes)} now)."
    return None


def nothing_to_forget(result: ForgetResult, threshold: str = "threshold {}") -> str:
    """What a preview, or a deletion, that matched nothing says, on the command line and to an agent
    alike; after a query, how close its nearest chunk came and the ``threshold`` (as the interface
    spells it) that would take it."""
    said = f"Nothing in {result.project!r} matches: nothing {'would be' if result.dry_run else 'was'} deleted."
    reach = math.floor(result.nearest * 100) / 100 if result.nearest is not None else 0.0
    if reach < (THRESHOLD.low or 0.01):  # not even the lowest threshold would take it
        return said
    shown = f"{reach:.2f}"
    return f"{said} The query's closest chunk there is {shown} similar: {threshold.format(shown)} would take it."


def chunks_forgotten(result: ForgetResult, count: int) -> str:
    """'3 chunks', or '3 of your chunks' ('1 of your chunks') when only the member's own were chosen
    (``only_mine``): the heading of a preview or a deletion says whose, as the box or option that
    chose them does."""
    return counted(count, "of your chunks", "of your chunks") if result.only_mine else counted(count, "chunk")


def others_note(result: ForgetResult, only_mine: str = "only_mine") -> str | None:
    """What a preview or a deletion says when some matches are other members' (the CLI and MCP alike),
    else None; ``only_mine`` is how the interface spells the switch that keeps one's own chunks alone.

    Whether a real run deletes them is the database's to say, and the note says what it will do: a
    team whose members share one login (or a member who is an admin, or owns the tables) may delete
    anyone's memory, and was told that nothing would be deleted, then deleted it."""
    if not result.others:
        return None
    total = sum(n for _, n in result.others)
    whose = ", ".join(f"{member} {n}" for member, n in result.others)
    if not result.dry_run:
        return f"{counted(total, 'of them was', 'of them were')} other members' ({whose})."
    these = f"{counted(total, 'chunk')} of these {'is' if total == 1 else 'are'} other members' ({whose})"
    if result.others_deletable:
        return (
            f"{these}, and your database role may delete them (the team shares one login, or it is an admin's or "
            f"the tables' owner's): they go too. Add {only_mine} to forget only your own."
        )
    return (
        f"{these}: deleting another member's memory needs the causantic_admin role; without it nothing is deleted. "
        f"Add {only_mine} to forget only your own."
    )


def preview_line(chunk: StoredChunk, width: int) -> str:
    """A chunk's opening words on one line, for a preview."""
    return " ".join(chunk.content.split())[:width]


def forget(
    store: MemoryStoreProtocol,
    vectors: VectorIndexProtocol,
    embed_query: object,
    request: ForgetRequest,
    preview_size: int = 5,
) -> ForgetResult:
    if request.query is not None and not request.query.strip():
        raise CausanticError("The forget query is empty; give a query or use before/after/session.")
    if not 0 < request.threshold <= 1:
        raise CausanticError("threshold must be a cosine similarity in (0, 1], e.g. 0.6.")
    if request.session_id is not None:
        request = replace(request, session_id=session_prefix(request.session_id))
    filtered = any((request.before, request.after, request.session_id, request.query, request.only_mine))
    if request.whole_project and filtered:
        raise CausanticError(
            "Forgetting the whole project takes no filter; drop before/after/session/query/only_mine, "
            "or drop the whole-project switch to forget only what they match."
        )
    project = resolve_project(store, request.project, emptied=True)
    if request.only_mine and request.member is None:
        raise CausanticError(
            f"{project.name!r} is in local memory, where every chunk is yours: forgetting only your own chunks "
            "(only-mine) is for team memory, where other members' chunks sit beside yours. Nothing was deleted; "
            "forget without only-mine."
        )
    scope = ChunkScope(
        project_ids=(project.id,),
        session_prefix=request.session_id,  # the start of an id, matched literally (`%` is a character)
        since=request.after,
        until=request.before,
        member=request.member if request.only_mine else None,
    )
    matches = list(store.chunks_in(scope))
    similarity: dict[str, float] = {}
    nearest: float | None = None
    if request.query:
        vector = embed_query(request.query)  # type: ignore[operator]
        hits = vectors.search(vector, limit=max(vectors.count(), 1), project_ids=[project.id])
        every = {h.chunk_id: h.similarity for h in hits}
        nearest = max((every[c.id] for c in matches if c.id in every), default=None)
        similarity = {chunk_id: s for chunk_id, s in every.items() if s >= request.threshold}
        matches = sorted((c for c in matches if c.id in similarity), key=lambda c: -similarity[c.id])
    if request.only_ids is not None:
        matches = [c for c in matches if c.id in request.only_ids]
    preview = tuple((c, similarity.get(c.id)) for c in matches[:preview_size])
    summaries = tuple(list_sessions(store, project.path, limit=preview_size)[1]) if matches and not filtered else ()
    theirs = [c.id for c in matches if c.user is not None and c.user != request.member]
    others = Counter(c.user for c in matches if c.user is not None and c.user != request.member)
    result = ForgetResult(
        project.name,
        True,
        len(matches),
        preview,
        0,
        not filtered,
        len({c.session_id for c in matches}),
        tuple(c.id for c in matches),
        summaries,
        tuple(sorted(others.items())),
        bool(theirs) and not store.protected_chunks(theirs),
        request.only_mine,
        nearest=nearest if not matches else None,
    )
    if request.dry_run:
        return result
    # Checked before "nothing matches": a preview of 3 that now matches none (deleted since) is a
    # changed memory to report, not a deletion of 0 chunks to confirm.
    if request.expected is not None and request.expected != len(matches):
        raise CausanticError(
            f"{counted(len(matches), 'chunk')} of {project.name!r} match now, not the {request.expected} previewed "
            "(memory changed since). Nothing was deleted; preview again."
        )
    if not matches:
        return replace(result, dry_run=False)
    return delete_previewed(store, vectors, result)


def delete_previewed(store: MemoryStoreProtocol, vectors: VectorIndexProtocol, preview: ForgetResult) -> ForgetResult:
    """Delete exactly the chunks a dry run matched (any added since are left alone)."""
    return _delete_matched(store, vectors, preview)


@dataclass(frozen=True, slots=True)
class _Space:
    freed_bytes: int = 0
    free_bytes: int = 0
    size_bytes: int = 0


def _deleted(store: MemoryStoreProtocol, vectors: VectorIndexProtocol, ids: Sequence[str]) -> tuple[int, _Space]:
    """Delete ``ids`` and give their space back where the store can; how many went, and the space."""
    # Imported here: the ingest pipeline (processes, discovery) is not for `reconstruct` to load.
    from causantic.ingest.pipeline import remove_chunks

    before = store.space()
    deleted = remove_chunks(store, vectors, ids) if ids else 0
    if not deleted:
        return 0, _Space()
    vectors.drop_deleted_from_ann()  # a forgotten chunk's vector stays in no file
    store.release_space()
    after = store.space()
    return deleted, _Space(max(0, before.total - after.total), after.free_bytes, after.total)


@dataclass(frozen=True, slots=True)
class ProjectShare:
    """One project's part of a :class:`PruneResult`."""

    project: str
    chunks: int
    sessions: int


@dataclass(frozen=True, slots=True)
class PruneResult:
    """Memory older than a date, in every project: what a preview matched or a real run deleted."""

    before: datetime
    dry_run: bool
    count: int
    projects: tuple[ProjectShare, ...]  # most chunks first
    deleted: int = 0
    ids: tuple[str, ...] = ()  # every matched chunk, so a confirmed preview deletes exactly these
    freed_bytes: int = 0
    free_bytes: int = 0
    size_bytes: int = 0

    @property
    def sessions(self) -> int:
        return sum(p.sessions for p in self.projects)


def prune(store: MemoryStoreProtocol, before: datetime) -> PruneResult:
    """Preview: every chunk of every project before ``before`` (chunk time, UTC), counted by project."""
    # Only the keys are kept: the texts of years of memory need not sit in memory at once.
    matches = [(c.id, c.project_id, c.session_id) for c in store.chunks_in(ChunkScope(until=before))]
    names = {p.id: p.name for p in store.projects_by_id({project for _, project, _ in matches})}
    chunks = Counter(names[project] for _, project, _ in matches)
    sessions = Counter(names[project] for project, _ in {(project, session) for _, project, session in matches})
    by_size = sorted(chunks.items(), key=lambda item: (-item[1], item[0]))
    shares = tuple(ProjectShare(name, n, sessions[name]) for name, n in by_size)
    return PruneResult(before, True, len(matches), shares, ids=tuple(i for i, _, _ in matches))


def delete_pruned(store: MemoryStoreProtocol, vectors: VectorIndexProtocol, preview: PruneResult) -> PruneResult:
    """Delete exactly the chunks a :func:`prune` preview matched (any ingested since stay)."""
    return _delete_matched(store, vectors, preview)


_Preview = TypeVar("_Preview", ForgetResult, PruneResult)


def _delete_matched(store: MemoryStoreProtocol, vectors: VectorIndexProtocol, preview: _Preview) -> _Preview:
    """A preview's chunks deleted, and the preview as done: what was deleted and the space it freed."""
    deleted, space = _deleted(store, vectors, preview.ids)
    return replace(
        preview,
        dry_run=False,
        deleted=deleted,
        freed_bytes=space.freed_bytes,
        free_bytes=space.free_bytes,
        size_bytes=space.size_bytes,
    )
