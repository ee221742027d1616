"""Session reconstruction: what happened in a project, in order, within a token budget.

Two views:

- **timeline** (the default): one line per session — when, which agents, its title (the first
  real prompt), how many chunks — oldest first, so the newest is last. Paged by sessions: page 1 is
  the most recent ``limit`` sessions, page 2 the ones before them, and so on.
- **text** (``full``, or one session by ``session_id``/``previous_session``): the chunks
  themselves, in time order, paged by the token budget. Page 1 ends with the newest chunk (or, with
  ``keep_newest`` off, starts with the oldest); each further page reaches further from it.

Which sessions or chunks: ``session_id`` (one session), ``previous_session`` (the one before
``current_session_id``), a time range (``since``/``until``), else the whole project (``until`` may
end it). A budget never cuts silently: the result says how many sessions or chunks lie beyond the
page on either side, a session split across pages is marked, and a chunk larger than the whole
budget is shown whole on a page of its own, which says so; a range that holds no session says when
the project's newest one started.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from causantic.errors import CausanticError
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import TIMES_ZONE, counted, short_session, shown_content, span, when
from causantic.retrieval.listing import SessionSummary, list_sessions, newest_note, resolve_project
from causantic.retrieval.options import TIMELINE_SESSIONS
from causantic.sources import SOURCE_NAMES
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import ChunkScope, Project, StoredChunk

CHUNK_OVERHEAD_TOKENS = 5
SESSION_HEADER_TOKENS = 20
TIMELINE_LINE_TOKENS = 60  # one timeline line at most (titles are cut to fit)
TIMELINE_TITLE_CHARS = 120
TIMELINE_TITLE_MIN = 30  # a title cut shorter than this says too little: it gets a line of its own


@dataclass(frozen=True, slots=True)
class ReconstructRequest:
    project: str
    session_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None
    previous_session: bool = False
    current_session_id: str | None = None
    keep_newest: bool = True
    agent: str | None = None
    max_tokens: int | None = None
    full: bool = False  # the chunks' text rather than the timeline (implied by one session)
    page: int = 1  # 1: the part nearest the kept end (the newest, unless keep_newest is off)
    limit: int = TIMELINE_SESSIONS  # sessions per timeline page


@dataclass(frozen=True, slots=True)
class Reconstruction:
    project: str
    mode: str  # timeline | time-range | session | previous-session
    view: str  # "timeline" (one line per session) or "text" (the chunks)
    sessions: tuple[SessionSummary, ...]  # the sessions shown, oldest first
    chunks: tuple[StoredChunk, ...]  # text view only, oldest first
    tokens: int
    page: int
    pages: int | None  # known for a timeline; a text view only says what lies beyond
    earlier: int  # sessions (timeline) or chunks (text) older than this page, not shown
    later: int  # newer than this page, not shown
    earlier_page: int | None = None  # the page that holds what comes just before this one
    later_page: int | None = None
    split: tuple[str, ...] = ()  # text view: sessions only partly on this page
    newest: SessionSummary | None = None  # a range that held no session: the project's newest one
    current_known: bool = True  # previous-session: the current session was named (else: the newest)
    budget: int = 0  # the page's token budget (text view): a chunk larger than it stands alone, over it

    @property
    def over_budget(self) -> bool:
        """A text page of one chunk larger than the whole budget (shown whole, said so)."""
        return self.view == "text" and 0 < self.budget < self.tokens

    @property
    def truncated(self) -> bool:
        return bool(self.earlier or self.later)

    @property
    def unit(self) -> str:
        return "session" if self.view == "timeline" else "chunk"


def reconstruct(store: MemoryStoreProtocol, request: ReconstructRequest, default_budget: int) -> Reconstruction:
    if request.page < 1:
        raise CausanticError("page counts from 1 (the most recent part).")
    project = resolve_project(store, request.project)
    if request.agent and not store.count_chunks(ChunkScope(project_ids=(project.id,), agent=request.agent)):
        # not "no session data in the requested range": no range was asked for, and none would help
        raise CausanticError(
            f"No chunk of {project.name!r} is by an agent named {request.agent!r}; 'main' names the main "
            "sessions, and list-sessions shows each session's agents."
        )
    budget = request.max_tokens or default_budget
    since, until = request.since, request.until
    session_id: str | None = None
    if request.session_id:
        mode, session_id = "session", _one_session(store, project, request.session_id)
    elif request.previous_session:
        mode = "previous-session"
        session_id = _previous_session(store, project.id, request.current_session_id)
        if session_id is None:
            return Reconstruction(project.name, mode, "text", (), (), 0, 1, 1, 0, 0)
    else:
        mode = "time-range" if since else "timeline"
    if session_id is None and not request.full:
        result = _timeline(store, project, mode, since, until, request, budget)
    else:
        result = _text(store, project, mode, session_id, since, until, request, budget)
    if mode == "previous-session" and not request.current_session_id:
        result = replace(result, current_known=False)
    if result.sessions or result.page > 1 or mode not in ("time-range", "timeline"):
        return result
    _, newest, _ = list_sessions(store, project.path, limit=1)  # an agent's "last week" may be long ago
    return replace(result, newest=newest[0] if newest else None)


def _timeline(
    store: MemoryStoreProtocol,
    project: Project,
    mode: str,
    since: datetime | None,
    until: datetime | None,
    request: ReconstructRequest,
    budget: int,
) -> Reconstruction:
    size = max(1, min(request.limit, budget // TIMELINE_LINE_TOKENS))
    offset = (request.page - 1) * size
    _, newest_first, total = list_sessions(
        store, project.path, since=since, until=until, limit=size, offset=offset, agent=request.agent
    )
    shown = tuple(reversed(newest_first))
    earlier, later = max(0, total - offset - size), min(offset, total)
    return Reconstruction(
        project.name,
        mode,
        "timeline",
        shown,
        (),
        sum(approx_tokens(timeline_line(s)) for s in shown),
        request.page,
        max(1, -(-total // size)),
        earlier,
        later,
        earlier_page=request.page + 1 if earlier else None,
        later_page=request.page - 1 if later else None,
    )


def _text(
    store: MemoryStoreProtocol,
    project: Project,
    mode: str,
    session_id: str | None,
    since: datetime | None,
    until: datetime | None,
    request: ReconstructRequest,
    budget: int,
) -> Reconstruction:
    scope = ChunkScope(
        project_ids=(project.id,),
        session_id=session_id,
        agent=request.agent or None,
        since=since,
        until=until,
    )
    before = 0  # chunks on the pages nearer the kept end
    page: list[StoredChunk] = []
    tokens = windows = 0
    for window, cost in _windows(store.chunks_in(scope, newest_first=request.keep_newest), budget):
        windows += 1
        if windows == request.page:
            page, tokens = window, cost
            break
        before += len(window)
    beyond = max(0, store.count_chunks(scope) - before - len(page))
    nearer_page = request.page - 1 if before else None
    further_page = request.page + 1 if beyond else None
    if request.keep_newest:
        page.reverse()
        earlier, later, earlier_page, later_page = beyond, before, further_page, nearer_page
    else:
        earlier, later, earlier_page, later_page = before, beyond, nearer_page, further_page
    ids = list(dict.fromkeys(c.session_id for c in page))
    by_id: dict[str, SessionSummary] = {}
    if ids:
        _, listed, _ = list_sessions(store, project.path, limit=1_000_000, agent=request.agent)
        by_id = {s.session_id: s for s in listed if s.session_id in ids}
    sessions = tuple(by_id[i] for i in ids if i in by_id)
    filtered = bool(since or until)  # a partial session is then expected, not a cut
    split = (
        ()
        if filtered
        else tuple(s.session_id for s in sessions if sum(1 for c in page if c.session_id == s.session_id) < s.chunks)
    )
    pages = None if further_page else max(windows, 1)  # unknown while more lies beyond this page
    return Reconstruction(
        project.name,
        mode,
        "text",
        sessions,
        tuple(page),
        tokens,
        request.page,
        pages,
        earlier,
        later,
        earlier_page,
        later_page,
        split,
        budget=budget,
    )


def _windows(chunks: Iterable[StoredChunk], budget: int) -> Iterator[tuple[list[StoredChunk], int]]:
    """Consecutive runs of ``chunks`` that each fit ``budget`` (a chunk larger than it stands alone)."""
    window: list[StoredChunk] = []
    used = 0
    sessions: set[str] = set()
    for chunk in chunks:
        cost = approx_tokens(chunk.content) + CHUNK_OVERHEAD_TOKENS
        if chunk.session_id not in sessions:
            cost += SESSION_HEADER_TOKENS
        if window and used + cost > budget:
            yield window, used
            window, used, sessions = [], 0, set()
            cost = approx_tokens(chunk.content) + CHUNK_OVERHEAD_TOKENS + SESSION_HEADER_TOKENS
        sessions.add(chunk.session_id)
        window.append(chunk)
        used += cost
    if window:
        yield window, used


def _one_session(store: MemoryStoreProtocol, project: Project, prefix: str) -> str:
    """The id of the one session of ``project`` whose id is ``prefix`` or starts with it; else a
    :class:`CausanticError` naming the sessions it could be, or the project that holds it."""
    sessions = [s.session_id for s in store.session_summaries(project.id)]  # newest first
    matches = [s for s in sessions if s == prefix] or [s for s in sessions if s.startswith(prefix)]
    if len(matches) == 1:
        return matches[0]
    if matches:  # the text of one session was asked for: several, run together, would read as one
        raise CausanticError(
            f"{prefix!r} is the start of {len(matches)} session ids in {project.name!r} ({_listed(matches)}); "
            "give more of the id."
        )
    elsewhere = next(iter(store.chunks_in(ChunkScope(session_prefix=prefix))), None)
    raise CausanticError(
        f"No session of {project.name!r} has an id starting {prefix!r}"
        + (
            f"; it is a session of {elsewhere.project!r}: reconstruct that project."
            if elsewhere is not None
            else "; list-sessions shows its sessions."
        )
    )


def _listed(session_ids: list[str], most: int = 5) -> str:
    return ", ".join(session_ids[:most]) + (", …" if len(session_ids) > most else "")


def _previous_session(store: MemoryStoreProtocol, project_id: int, current: str | None) -> str | None:
    """The session before ``current`` (its id or an id prefix, as ``session_id`` takes); the newest
    stored session when ``current`` is not stored yet (a live session not ingested so far) or unknown
    (an agent that tells its MCP server no session id: Codex CLI, Gemini CLI)."""
    sessions = [s.session_id for s in store.session_summaries(project_id)]  # newest first
    if not current:
        return sessions[0] if sessions else None
    matches = [i for i, s in enumerate(sessions) if s == current] or [
        i for i, s in enumerate(sessions) if s.startswith(current)
    ]
    if len(matches) > 1:
        listed = _listed([sessions[i] for i in matches])
        raise CausanticError(
            f"The current session {current!r} matches {len(matches)} sessions ({listed}); give more of its id."
        )
    if matches:
        index = matches[0] + 1
        return sessions[index] if index < len(sessions) else None
    return sessions[0] if sessions else None


# ---- rendering ------------------------------------------------------------------------------------


def timeline_columns(sessions: Sequence[SessionSummary]) -> tuple[int, int, int, int]:
    """The widths of a page's session ids (:func:`short_session`), coding-agent names, agent lists
    and chunk counts, so that :func:`timeline_line` starts every title of the page in one column."""
    cells = [_timeline_cells(s) for s in sessions]
    return (
        max((len(short) for short, _, _, _ in cells), default=0),
        max((len(source) for _, source, _, _ in cells), default=0),
        max((len(agents) for _, _, agents, _ in cells), default=0),
        max((len(chunks) for _, _, _, chunks in cells), default=0),
    )


def _timeline_cells(session: SessionSummary) -> tuple[str, str, str, str]:
    source = SOURCE_NAMES.get(session.source, session.source)
    return short_session(session.session_id), source, f"[{', '.join(session.agents)}]", counted(session.chunks, "chunk")


def timeline_line(
    session: SessionSummary, width: int | None = None, columns: tuple[int, int, int, int] | None = None
) -> str:
    """One session on one line: start, id, coding agent, agents, chunk count, title; ``columns``
    (:func:`timeline_columns` of its page) pads the middle four so the page's titles line up. Within
    ``width`` columns (a terminal's), the title is cut to fit, or, where less than
    :data:`TIMELINE_TITLE_MIN` would be left of it, goes on a line of its own below (with the agents,
    if the first line has no room for them): a terminal wrapping a long line mid-word made each
    session three ragged lines at 80 columns."""
    short, source, agents, chunks = _timeline_cells(session)
    if columns is not None:
        short, source = short.ljust(columns[0]), source.ljust(columns[1])
        agents, chunks = agents.ljust(columns[2]), chunks.rjust(columns[3])
    head = f"{when(session.started_at)}  {short}  {source}"
    lead = f"{head}  {agents}  {chunks}"
    title = session.short_title(TIMELINE_TITLE_CHARS)
    if width is None or len(lead) + 2 + len(title) <= width:
        return f"{lead}  {title}"
    if width - len(lead) - 2 >= TIMELINE_TITLE_MIN:
        return f"{lead}  {session.short_title(width - len(lead) - 2)}"
    first, below = (lead, "    ") if len(lead) <= width else (f"{head}  {chunks}", f"    {agents}  ")
    return f"{first}\n{below}{session.short_title(max(TIMELINE_TITLE_MIN, width - len(below)))}"


def render_reconstruction(result: Reconstruction, *, page_hint: str = "page={page}", width: int | None = None) -> str:
    """The result as text for a person or an agent; ``page_hint`` says how to ask for another page
    in the caller's own terms (``--page {page}`` on the command line, ``page={page}`` for a tool);
    ``width``, a terminal's columns, fits each timeline entry to it (:func:`timeline_line`)."""
    if not result.sessions and result.page > 1:
        hint = page_hint.format(page=result.pages or 1)
        pages = counted(result.pages or 0, "page")
        return f"Page {result.page} is past the end: {result.project!r} has {pages} here; use {hint}."
    if not result.sessions and result.mode == "previous-session":
        return f"No session of {result.project!r} comes before the current one."
    unsure = result.mode == "previous-session" and not result.current_known
    if not result.sessions:
        return f"No session of {result.project!r} in the requested range{newest_note(result.newest)}."
    of = (
        f" (page {result.page} of {result.pages})"
        if result.pages and result.pages > 1
        else (f" (page {result.page})" if result.page > 1 else "")
    )
    if result.view == "timeline":
        lines = [f"{result.project}: {counted(len(result.sessions), 'session')}, oldest first{of}; {TIMES_ZONE}"]
    else:
        lines = [
            f"{result.project}: {counted(len(result.chunks), 'chunk')} from "
            f"{counted(len(result.sessions), 'session')}, {counted(result.tokens, 'token')}{of}; {TIMES_ZONE}"
        ]
    if result.over_budget:
        # Cut, the chunk would lose what it is about; left out, the page would be empty: shown, and said.
        budget = f"{result.budget:,}-token budget"
        lines.append(f"(Over the {budget}: this chunk is larger than it, and is shown whole on a page of its own.)")
    if unsure:
        lines.append(
            "(The current session's id was not given, so this is the newest session in memory; if it is the "
            "one you are in, give its id as the current session to get the one before.)"
        )
    if result.earlier:
        lines.append(
            f"… {counted(result.earlier, 'earlier ' + result.unit)} not shown; use "
            + page_hint.format(page=result.earlier_page)
        )
    if result.view == "timeline":
        columns = timeline_columns(result.sessions)
        lines.extend(timeline_line(s, width, columns) for s in result.sessions)
    else:
        lines.extend(_text_lines(result))
    if result.later:
        lines.append(
            f"… {counted(result.later, 'later ' + result.unit)} not shown; use "
            + page_hint.format(page=result.later_page)
        )
    return "\n".join(lines)


def _text_lines(result: Reconstruction) -> list[str]:
    lines: list[str] = []
    titles = {s.session_id: s.title for s in result.sessions}
    session = agent = None
    multi_agent = False  # agent lines only in a session with several: one with only main needs none
    for chunk in result.chunks:
        if chunk.session_id != session:
            session, agent = chunk.session_id, None
            bounds = [c for c in result.chunks if c.session_id == session]
            multi_agent = len({c.agent for c in bounds}) > 1
            part = " (only part of this session is on this page)" if session in result.split else ""
            lines.append(
                f"\n=== Session {short_session(session)} · {SOURCE_NAMES.get(chunk.source, chunk.source)} "
                f"({span(bounds[0].start_time, bounds[-1].end_time)}){part} ==="
            )
            title = titles.get(session, "")
            if title and not " ".join(chunk.content.split()).startswith(f"[User] {title[:60]}"):
                lines.append(f"Title: {title}")  # the session's first prompt is not on show here
        if multi_agent and chunk.agent != agent:
            agent = chunk.agent
            lines.append(f"--- Agent: {agent} ---")
        lines.append(shown_content(chunk.content))
        lines.append("---")
    return lines
