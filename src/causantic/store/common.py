"""The store's decisions that do not depend on the database: which chunks of a session are new or
changed, which edges to delete or add, how projects sharing a folder name are told apart, and the
values a chunk row is written with. :class:`~causantic.store.memory.MemoryStore` (SQLite) and
:class:`~causantic.store.postgres.store.PostgresStore` both call these, so the two backends keep
one behaviour and differ only in their SQL."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

from causantic.store.features import TextColumns
from causantic.store.records import ChunkKey, ChunkRecord, EdgeRecord, Project, SavedChunks, SessionTotals, iso

# Ids per ``IN (…)`` list: well under SQLite's oldest variable limit (999).
SQL_BATCH = 500

_T = TypeVar("_T")

# Statements SQLite and PostgreSQL run as written (no parameters, no dialect difference).
# Projects holding chunks with their totals (ProjectTotals' fields), most recently active first, the
# older project first on a tie (the dialects order a tie differently: SQLite by id, PostgreSQL as it hashed).
PROJECT_TOTALS_SQL = (
    "SELECT p.id, p.name, p.path, COUNT(*) AS chunks, COUNT(DISTINCT c.session_id) AS sessions,"
    " MIN(c.start_time) AS first_seen, MAX(c.end_time) AS last_seen"
    " FROM projects p JOIN chunks c ON c.project_id = p.id GROUP BY p.id ORDER BY last_seen DESC, p.id"
)
# Names of the projects holding any chunk, alphabetically (one index probe per project).
PROJECT_NAMES_SQL = (
    "SELECT name FROM projects p WHERE EXISTS (SELECT 1 FROM chunks c WHERE c.project_id = p.id) ORDER BY name"
)
# Projects with sessions (ProjectSessions' fields), most recently active first (then the older project),
# from the sessions table.
PROJECT_ACTIVITY_SQL = (
    "SELECT p.id, p.name, p.path, COUNT(*) AS sessions, MIN(s.started_at) AS first_seen,"
    " MAX(s.ended_at) AS last_seen FROM sessions s JOIN projects p ON p.id = s.project_id"
    " GROUP BY p.id ORDER BY last_seen DESC, p.id"
)

EdgeKey = tuple[str, str, str]  # (source chunk id, target chunk id, reference type)


def batches(items: Sequence[_T], size: int = SQL_BATCH) -> Iterator[list[_T]]:
    """``items`` in lists of at most ``size``, in order."""
    for start in range(0, len(items), size):
        yield list(items[start : start + size])


def now() -> str:
    return iso(datetime.now(UTC))


def path_parts(path: str) -> list[str]:
    return [part for part in path.replace("\\", "/").split("/") if part] or [path]


def clone_key(repository: str, path: str) -> str:
    """The alias naming a repository's clones kept in a folder of ``path``'s name (``git:…#blog``):
    recorded when a project is split out of its repository's (``causantic split-project``), so that
    another clone of that folder name (another member's) joins the split-out project, not the first."""
    return f"{repository}#{path_parts(path)[-1]}"


def family_names(projects: Iterable[tuple[int, str]], basename: str) -> dict[int, str]:
    """Give every project (id, path) with this folder name the shortest unique trailing part of its path.

    One project is just ``api``; two become ``work/api`` and ``clients/api``, and so on, so that
    no name silently means "the first one ingested". Returns the names by project id.
    """
    family = [(pid, path) for pid, path in projects if path_parts(path)[-1] == basename]
    longest = max(len(path_parts(p)) for _, p in family)
    names: dict[int, str] = {}
    for depth in range(1, longest + 1):
        names = {pid: "/".join(path_parts(p)[-depth:]) for pid, p in family}
        if len(set(names.values())) == len(names):
            break
    else:
        names = dict(family)
    return names


def session_span(chunks: Sequence[ChunkRecord]) -> tuple[str | None, str | None]:
    """The first start and last end of a session's chunks (None for a session without chunks)."""
    starts = [c.start_time for c in chunks]
    ends = [c.end_time for c in chunks]
    return (min(starts) if starts else None, max(ends) if ends else None)


def new_and_changed(
    chunks: Sequence[ChunkRecord],
    existing: Mapping[str, tuple[str, str, int]],
    keep: Collection[str] = (),
) -> tuple[list[ChunkRecord], list[ChunkRecord]]:
    """Split a session's chunks into those not stored yet and those whose stored row to replace.

    ``existing``: stored (content hash, message uuids JSON, turn index) by chunk id. A stored chunk
    is left alone when its text and turn number are the same, when it was made from more of the turn
    (:func:`older_copy`), or when its id is in ``keep`` (team memory: another member's copy is theirs
    to update). Its turn is numbered anew when a prompt is found before it in its stream (a
    ``/compact`` with words) or messages before it leave the stream.
    """
    turns: dict[tuple[str | None, int], set[str]] = {}  # the messages each turn's parts show
    for c in chunks:
        turns.setdefault((c.agent_id, c.turn_index), set()).update(c.message_uuids)
    new = [c for c in chunks if c.id not in existing]
    changed = [
        c
        for c in chunks
        if c.id in existing
        and c.id not in keep
        and (existing[c.id][0], existing[c.id][2]) != (c.content_hash, c.turn_index)
        and not older_copy(c, existing[c.id][1], turns[(c.agent_id, c.turn_index)])
    ]
    return new, changed


def saved_chunks(
    new: Sequence[ChunkRecord], changed: Sequence[ChunkRecord], existing: Mapping[str, tuple[str, str, int]]
) -> SavedChunks:
    """What a save of :func:`new_and_changed`'s chunks did: a changed chunk whose text is the one
    stored was only numbered anew."""
    renumbered = sum(existing[c.id][0] == c.content_hash for c in changed)
    return SavedChunks([c.id for c in new], len(changed) - renumbered, renumbered)


def older_copy(chunk: ChunkRecord, stored_uuids: str, turn: Collection[str] = ()) -> bool:
    """The stored chunk was made from more of the same turn than ``chunk`` (an early copy of the
    session read after the full file): keep the fuller text. Not when ``turn`` (the messages all of
    ``chunk``'s turn shows, read with it) holds all of the stored chunk's: the turn is whole, only
    split into parts elsewhere (its text changed under new ingest rules)."""
    try:
        stored = set(json.loads(stored_uuids or "[]"))
    except ValueError:
        return False
    return set(chunk.message_uuids) < stored and not stored <= set(turn)


# What saving a chunk again rewrites (its id, session, project and creation stay): both backends'
# upsert, so a column added to what ingest rewrites is added for both at once.
CHUNK_UPSERT = (
    " ON CONFLICT (id) DO UPDATE SET turn_index = excluded.turn_index,"
    " start_time = excluded.start_time, end_time = excluded.end_time,"
    " content = excluded.content, search_terms = excluded.search_terms, content_hash = excluded.content_hash,"
    " approx_tokens = excluded.approx_tokens, tool_use_count = excluded.tool_use_count,"
    " code_block_count = excluded.code_block_count, has_thinking = excluded.has_thinking,"
    " message_uuids = excluded.message_uuids, agent = excluded.agent, team_name = excluded.team_name,"
    " stems = excluded.stems, own_stems = excluded.own_stems, bulk = excluded.bulk"
)


def chunk_row(
    chunk: ChunkRecord,
    project_id: int,
    created_at: str,
    source: str,
    columns: TextColumns,
    text: Callable[[str], str] = str,
) -> tuple[Any, ...]:
    """A chunk's column values, in the order ``id, session_id, project_id, agent, agent_id, team_name,
    turn_index, part, start_time, end_time, content, search_terms, content_hash, approx_tokens,
    tool_use_count, code_block_count, has_thinking, message_uuids, created_at, source, stems,
    own_stems, bulk``. ``columns`` are the search terms and features made from the text as stored
    (:func:`~causantic.store.features.text_columns` of ``text(chunk.content)``); ``text`` adapts the
    content to what the database can hold."""
    c = chunk
    search_terms, *features = columns
    return (
        c.id,
        c.session_id,
        project_id,
        c.agent,
        c.agent_id,
        c.team_name,
        c.turn_index,
        c.part,
        c.start_time,
        c.end_time,
        text(c.content),
        search_terms,
        c.content_hash,
        c.approx_tokens,
        c.tool_use_count,
        c.code_block_count,
        int(c.has_thinking),
        json.dumps(c.message_uuids),
        created_at,
        source,
        *features,
    )


def chunk_key(row: Sequence[Any]) -> ChunkKey:
    """A row ``id, agent_id, turn_index, part, message_uuids`` as a :class:`ChunkKey`."""
    return ChunkKey(row[0], row[1], row[2], row[3], tuple(json.loads(row[4] or "[]")))


def edge_changes(
    stored: set[EdgeKey], edges: Sequence[EdgeRecord], present: Collection[str]
) -> tuple[set[EdgeKey], list[EdgeRecord]]:
    """The ``stored`` edges to delete and the new ones to insert so that exactly ``edges`` remain.

    ``present``: which of the edges' chunk ids are stored. An edge into a forgotten (absent) chunk
    has no end to point at and is left out, as is an edge from a chunk to itself.
    """
    wanted = {(e.source, e.target, e.reference_type): e for e in edges if e.source in present and e.target in present}
    new = [e for key, e in wanted.items() if key not in stored and e.source != e.target]
    return stored - wanted.keys(), new


def agent_and_time(
    mark: str, agent: str | None, since: datetime | None, until: datetime | None
) -> tuple[list[str], list[object]]:
    """WHERE conditions (to AND together) and their values over chunks aliased ``c``: written by
    ``agent``, starting at or after ``since`` and before ``until``; None leaves a bound out.
    ``mark``: the driver's placeholder, ``?`` (sqlite3) or ``%s`` (psycopg)."""
    where: list[str] = []
    params: list[object] = []
    if agent is not None:
        where.append(f"c.agent = {mark}")
        params.append(agent)
    if since is not None:
        where.append(f"c.start_time >= {mark}")
        params.append(iso(since))
    if until is not None:
        where.append(f"c.start_time < {mark}")
        params.append(iso(until))
    return where, params


def session_totals(row: Any) -> SessionTotals:
    """A ``session_summaries`` row (``session_id, started, ended, chunks, tokens, agents, source,
    title, members``; ``agents`` and ``members`` comma-joined) as :class:`SessionTotals`."""
    return SessionTotals(
        row["session_id"],
        row["started"],
        row["ended"],
        row["chunks"],
        int(row["tokens"] or 0),
        tuple(sorted((row["agents"] or "").split(","))),
        row["source"],
        row["title"],
        tuple(sorted(filter(None, (row["members"] or "").split(",")))),
    )


def project_for_cwd_hash(rows: Iterable[Any], digest: str) -> Project | None:
    """The project, among rows ``id, path, name, cwd`` (a project with each of its recorded cwds),
    whose path or a cwd has this sha256 hex digest (Gemini CLI's ``projectHash``)."""
    for row in rows:
        for candidate in (row["cwd"], row["path"]):
            if candidate and hashlib.sha256(candidate.encode()).hexdigest() == digest:
                return Project(row["id"], row["path"], row["name"])
    return None
