"""The session-start briefing: where work stopped, open threads and recent sessions of a project.

Built from SQLite alone (listing and reconstruct), so no embedding model or vector index loads.
Sessions are named by their titles (the first real prompt, stored at ingest); "where work stopped"
reads the end of the newest session the user worked in, back to its last request that names work
(not a "continue" or "thank you" after it; a long run on one prompt: its opening request), its steps
with paths relative to the project. Chunk text holds no IDE wrappers, reminders or warm-up agents
(ingest leaves them out), and the briefing's own opening (:data:`BRIEFING_OPENING`) is what ingest
recognises to keep it out of memory. It describes *earlier* sessions only (the current one is left
out), fits ``tokens.claudeMdBudget``, and is cached per session id, so a compacted session gets the
same text again instead of a second, different briefing. A resumed (or forked) session whose
transcript already holds the briefing gets none: Claude Code replays the saved conversation,
injected context included, so a second copy would only cost tokens (:func:`briefing_in_transcript`).
After a compaction a note follows it: where this session's own turns from before the compaction are
(:func:`compacted_note`). A project memory has never seen gets no briefing.
"""

from __future__ import annotations

import calendar
import hashlib
import json
import mmap
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from causantic.errors import ProjectNotFound
from causantic.files import atomic_write, prune_older_than, secure_dir
from causantic.hooks.chunk_text import sections
from causantic.ingest.tokens import approx_tokens
from causantic.retrieval.format import TIMES_ZONE, counted, short_session, when, when_utc
from causantic.sources import SOURCE_NAMES
from causantic.transcripts import BRIEFING_OPENING
from causantic.wording import shortened

if TYPE_CHECKING:
    from causantic.facade import Memory
    from causantic.retrieval.listing import SessionSummary

RECENT_SESSIONS = 5
CACHE_DAYS = 30
_OPEN_LINE = re.compile(
    r"\b(TODO|FIXME|next steps?|still (?:fails?|failing|broken)|not (?:yet|done)|"
    r"left to do|follow[- ]up|open question)\b",
    re.IGNORECASE,
)
_OPEN_TODO = re.compile(r'"content":"((?:[^"\\]|\\.)+)","status":"(pending|in_progress)"')
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
# Words of a prompt that only acknowledges or says go on ("continue", "Excellent work, thank you!"):
# such a prompt names no work, so "where work stopped" quotes the request before it.
_GO_ON_WORDS = frozenset(
    "ok okay k yes yep yeah y sure thanks thank you thx ty great good nice cool perfect excellent awesome "
    "amazing wonderful brilliant fantastic continue go on ahead proceed please pls lgtm done job work it do "
    "that this works looks sounds fine right alright all much so very keep going carry now then let s us".split()
)
TITLE_CHARS = 100  # a recent session's first prompt: its head says what it was about; 160 left room for 4 of 5
TAIL_TOKENS = 2000  # one page of a session's end
TAIL_PAGES = 4  # how far back to look for the last request
FOOTER = (
    "More detail: the causantic memory tools reconstruct (what happened when), recall (how and why "
    "something was done) and search (anything else)."
)


RESUMED = ("resume", "fork")  # SessionStart sources that bring back a saved conversation
CLEAR_WAIT_S = 5.0  # after /clear, the longest wait for the cleared session's ingest (the hook's timeout is 10 s)
CLEARED_WITHIN_S = 60.0  # a session-end run this recent may be the /clear that started this session
_COMPACT_BOUNDARY = b'"subtype":"compact_boundary"'
# The briefing's header as saved, not the opening alone: a session that read Causantic's source has that.
_HEADER_SAVED = re.compile(re.escape(BRIEFING_OPENING.encode("utf-8")) + rb" \([^()]{1,400}\), from Causantic\.")


@dataclass(frozen=True, slots=True)
class Briefing:
    project: str
    text: str


def cached_briefing(memory: Memory, home: Path, cwd: str, session_id: str, budget: int) -> Briefing | None:
    """The briefing for this session: computed once, then the same text on resume and compact.

    Keyed by session id and working directory: the same id arriving from another folder (another
    project) must not get this project's briefing.
    """
    place = hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cache = home / "hooks" / "briefings" / f"{session_id}-{place}.json" if _SAFE_ID.fullmatch(session_id) else None
    if cache is not None and cache.is_file():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        return Briefing(saved["project"], saved["text"]) if saved else None
    briefing = build_briefing(memory, cwd, exclude_session=session_id or None, budget=budget)
    if cache is not None:
        secure_dir(cache.parent)
        prune_older_than(cache.parent, CACHE_DAYS)
        atomic_write(cache, json.dumps(asdict(briefing) if briefing else None))
    return briefing


def await_cleared_session(memory: Memory, transcript_path: str, session_id: str) -> float | None:
    """After ``/clear``: wait, at most :data:`CLEAR_WAIT_S`, until memory holds the session just cleared.

    Trigger: SessionStart with source clear, within :data:`CLEARED_WITHIN_S` of a session-end hook
    that started the ingest of another session in this session's transcript folder. Why: that ingest
    runs in the background; the briefing, built before it lands, said where the session *before* the
    cleared one stopped, and is then kept for this whole session. Outcome: the seconds waited; None
    when there was nothing to wait for (no such session-end, its ingest failed or has landed).
    """
    from causantic.runs import read_status

    run = read_status().get("session-end", {})
    ended_id = run.get("sessionId", "")
    if not (run.get("success") and transcript_path and ended_id != session_id and _SAFE_ID.fullmatch(ended_id)):
        return None
    try:
        ended_at = calendar.timegm(time.strptime(run.get("lastRun", "")[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None
    ended = Path(transcript_path).expanduser().parent / f"{ended_id}.jsonl"
    if time.time() - ended_at > CLEARED_WITHIN_S or not ended.is_file() or memory.holds_transcript(ended):
        return None
    started = time.monotonic()
    while not memory.holds_transcript(ended) and time.monotonic() - started < CLEAR_WAIT_S:
        time.sleep(0.1)
    return time.monotonic() - started


def briefing_in_transcript(transcript_path: str) -> bool:
    """Whether the conversation a transcript holds already carries a Causantic briefing: one saved
    (as a hook attachment) after the transcript's last compaction, which dropped what came before.

    Trigger: SessionStart with source resume or fork. Why: Claude Code replays the saved conversation
    with the briefing given at startup (or after the last compaction) in it. Outcome: False, and so a
    briefing, when the transcript is missing, unreadable or holds none (Claude Code builds that saved
    no hook output, a session started before Causantic was installed).
    """
    if not transcript_path:
        return False
    path = Path(transcript_path).expanduser()
    try:
        if not path.is_file() or path.stat().st_size == 0:  # not a FIFO or a folder: reading could hang
            return False
        with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as data:
            since = max(data.rfind(_COMPACT_BOUNDARY), 0)
            return _HEADER_SAVED.search(data, since) is not None
    except (OSError, ValueError):
        return False


def build_briefing(memory: Memory, cwd: str, *, exclude_session: str | None, budget: int) -> Briefing | None:
    try:
        listing = memory.sessions(cwd, limit=RECENT_SESSIONS + 1)
    except ProjectNotFound:
        return None
    sessions = [s for s in listing.sessions if s.session_id != exclude_session][:RECENT_SESSIONS]
    if not sessions:
        return None
    # Where work stopped: the newest session the user worked in (not one only sub-agents left behind).
    latest = next((s for s in sessions if "main" in s.agents), sessions[0])
    tail = _tail(memory, listing.project_path, latest)
    stopped = _where_stopped(tail, listing.project_path, latest.title)
    open_threads = _open_threads(tail)
    # The session where work stopped is not named twice by the same prompt (a one-request session's is).
    quoted = stopped[0].split(": ", 1)[1] if stopped and stopped[0].startswith(("- Last", "- Opening")) else ""
    recent = [
        f"- {when(s.started_at)} · {short_session(s.session_id)} · {SOURCE_NAMES.get(s.source, s.source)} · "
        f"{counted(s.chunks, 'chunk')}: "
        + (
            "(where work stopped, above)"
            if s is latest and _same_prompt(s.title, quoted)
            else s.short_title(TITLE_CHARS)
        )
        for s in sessions
    ]
    header = f"{BRIEFING_OPENING} ({listing.project}; {counted(listing.total, 'session')} stored), from Causantic."
    titled = [
        (
            f"Where work stopped (session {short_session(latest.session_id)}, "
            f"{SOURCE_NAMES.get(latest.source, latest.source)}, {when_utc(latest.ended_at)}):",
            stopped,
        ),
        ("Open threads from that session:", open_threads),
        (f"Recent sessions ({TIMES_ZONE}):", recent),
    ]
    return Briefing(listing.project, _fit(header, titled, budget))


def compacted_note(memory: Memory, cwd: str, session_id: str) -> str | None:
    """After a compaction: where this session's own turns from before it are, in full.

    Trigger: SessionStart with source compact. Why: the summary Claude Code keeps loses most of the
    session's detail, and the pre-compact hook has just ingested it; the briefing itself describes
    earlier sessions only. Outcome: None while memory holds none of this session (its ingest may
    still be running), so the note never points at nothing.
    """
    try:
        listing = memory.sessions(cwd, limit=RECENT_SESSIONS + 1)
    except ProjectNotFound:
        return None
    own = next((s for s in listing.sessions if s.session_id == session_id), None)
    if own is None:
        return None
    return (
        f"This session before the compaction is in memory: {counted(own.chunks, 'chunk')}, up to "
        f"{when_utc(own.ended_at)}. The causantic reconstruct tool (project {listing.project!r}, session "
        f"{short_session(session_id)!r}) gives it back in full; recall finds the part you need."
    )


def _tail(memory: Memory, project: str, session: SessionSummary) -> list[tuple[str, str]]:
    """The end of a session's main-agent text, reaching back to its last request (a few pages at most)."""
    agent = "main" if "main" in session.agents else None
    tail: list[tuple[str, str]] = []
    for page in range(1, TAIL_PAGES + 1):
        result = memory.reconstruct(
            project, session_id=session.session_id, agent=agent, max_tokens=TAIL_TOKENS, page=page
        )
        tail = [section for c in result.chunks for section in sections(c.content)] + tail
        if not result.earlier or any(role == "User" and _names_work(text) for role, text in tail):
            break
    return tail


def _is_request(text: str) -> bool:
    """A user section that asks for something (not just an interruption marker or a pasted image)."""
    words = " ".join(text.split())
    return bool(words) and not words.startswith("[Request interrupted") and words not in ("[image]", "[document]")


def _same_prompt(title: str, quoted: str) -> bool:
    """Whether a session's title (its first prompt, stored cut with an ellipsis) is the request quoted."""
    title = _line(title, 240)
    return bool(quoted) and (quoted.startswith(title[:-1].rstrip()) if title.endswith("…") else quoted == title)


def _names_work(text: str) -> bool:
    """A request that says what to do, not only "continue" or "thanks, great work" after one."""
    words = re.findall(r"[^\W\d_]+|\d+", text.casefold())
    return _is_request(text) and not (len(words) <= 8 and set(words) <= _GO_ON_WORDS)


def _last_request(tail: list[tuple[str, str]]) -> int:
    """Index of the last request that names work (else the last request of any kind; -1: none)."""
    requests = [i for i, (role, text) in enumerate(tail) if role == "User" and _is_request(text)]
    return next((i for i in reversed(requests) if _names_work(tail[i][1])), requests[-1] if requests else -1)


def _where_stopped(tail: list[tuple[str, str]], project_path: str, opening: str) -> list[str]:
    """The last request, steps and reply; a long run on one prompt (an agent working through an issue
    alone) has no request in its last pages: its opening prompt, the session's title, says what it was."""
    last_user = _last_request(tail)
    turn = tail[last_user:] if last_user >= 0 else tail
    lines = []
    if last_user >= 0:
        lines.append(f"- Last request: {_line(tail[last_user][1], 240)}")
    elif opening.strip():
        lines.append(f"- Opening request: {_line(opening, 240)}")
    steps = [_step(role[5:], text, project_path) for role, text in turn if role.startswith("Tool:")][-3:]
    if steps:
        lines.append(f"- Last steps: {'; '.join(steps)}")
    reply = next((text for role, text in reversed(turn) if role == "Assistant"), "")
    if reply:
        lines.append(f"- Last reply: {_line(reply, 320)}")
    return lines


def _step(tool: str, text: str, project_path: str) -> str:
    """One tool call as a step: its tool and subject (a todo list update is just that), with paths
    inside the project relative to it: cut at 60 characters, an absolute path lost its file name."""
    if tool == "TodoWrite":
        return tool
    root = project_path.rstrip("/")
    if project_path.startswith("/") and root:  # "<root>/a/b" -> "a/b", "<root>" alone -> "."
        text = re.sub(
            r"(?<![\w.~/-])" + re.escape(root) + r"(?:/|(?![^\s'\"`]))",
            lambda m: "" if m[0].endswith("/") else ".",
            text,
        )
    return f"{tool} {_line(text, 60)}".strip()


def _open_threads(tail: list[tuple[str, str]]) -> list[str]:
    """Unfinished todo items, and what the last request and final reply say is still open. Earlier
    replies are left out: their "still failing" is usually fixed by the end of the session."""
    found: list[str] = []
    todo_writes = [text for role, text in tail if role == "Tool:TodoWrite"]
    if todo_writes:
        for content, status in _OPEN_TODO.findall(todo_writes[-1]):
            found.append(f"{_unescape(content)} ({status.replace('_', ' ')})")
    last_user = _last_request(tail)
    final_reply = max((i for i, (role, _) in enumerate(tail) if role == "Assistant"), default=-1)
    for index in (last_user, final_reply):
        if index >= 0:
            found += [ln.strip(" -*•\t") for ln in tail[index][1].splitlines() if _OPEN_LINE.search(ln)]
    unique = list(dict.fromkeys(_line(item, 160) for item in found if item.strip()))
    return [f"- {item}" for item in unique[-4:]]


def _fit(header: str, titled: list[tuple[str, list[str]]], budget: int) -> str:
    """Add lines section by section (earlier sections first) while the whole stays within budget."""
    kept: list[tuple[str, list[str]]] = [(title, []) for title, _ in titled]

    footer = [FOOTER] if approx_tokens(f"{header}\n\n{FOOTER}") <= budget else []

    def render() -> str:
        return "\n\n".join([header, *("\n".join([t, *ls]) for t, ls in kept if ls), *footer])

    for (_, lines), (_, keep) in zip(titled, kept, strict=True):
        for line in lines:
            keep.append(line)
            if approx_tokens(render()) > budget:
                keep.pop()
    return render()


def _line(text: str, limit: int) -> str:
    """``text`` on one line within ``limit``. A backslash ending a line is how a prompt typed in a
    terminal breaks its line (Claude Code keeps it): on one line it read "equal depths.\\ \\ diff"."""
    return shortened(" ".join(_CONTINUED.sub("\n", text).split()), limit)


_CONTINUED = re.compile(r"\\[ \t]*\n")


def _unescape(json_text: str) -> str:
    try:
        return str(json.loads(f'"{json_text}"'))
    except ValueError:
        return json_text
