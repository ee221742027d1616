"""The session-start briefing: where work stopped, open threads and recent sessions of a project.

Built from SQLite alone (listing and reconstruct), so no embedding model or vector index loads.
It describes *earlier* sessions only (the current one is left out), fits ``tokens.claudeMdBudget``,
and is cached per session id, so a resumed or compacted session gets the same text again instead
of a second, different briefing. A project memory has never seen gets no briefing at all.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from causantic.errors import ProjectNotFound
from causantic.files import atomic_write, secure_dir
from causantic.ingest.chunker import approx_tokens
from causantic.retrieval.listing import list_sessions, resolve_project
from causantic.retrieval.reconstruct import ReconstructRequest, reconstruct
from causantic.services import Services

RECENT_SESSIONS = 5
CACHE_DAYS = 30
_MARKER = re.compile(r"^\[(User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]\s?")
_OPEN_LINE = re.compile(
    r"\b(TODO|FIXME|next steps?|still (?:fails?|failing|broken)|not (?:yet|done)|"
    r"left to do|follow[- ]up|open question)\b",
    re.IGNORECASE,
)
_OPEN_TODO = re.compile(r'"content":"((?:[^"\\]|\\.)+)","status":"(pending|in_progress)"')
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
FOOTER = (
    "More detail: the causantic memory tools reconstruct (what happened when), recall (how and why "
    "something was done) and search (anything else)."
)


@dataclass(frozen=True, slots=True)
class Briefing:
    project: str
    text: str


def cached_briefing(
    services: Services, home: Path, cwd: str, session_id: str, budget: int
) -> Briefing | None:
    """The briefing for this session: computed once, then the same text on resume and compact.

    Keyed by session id and working directory: the same id arriving from another folder (another
    project) must not get this project's briefing.
    """
    place = hashlib.sha256(cwd.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    cache = (home / "hooks" / "briefings" / f"{session_id}-{place}.json"
             if _SAFE_ID.fullmatch(session_id) else None)
    if cache is not None and cache.is_file():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        return Briefing(saved["project"], saved["text"]) if saved else None
    briefing = build_briefing(services, cwd, exclude_session=session_id or None, budget=budget)
    if cache is not None:
        secure_dir(cache.parent)
        _prune(cache.parent)
        atomic_write(cache, json.dumps(asdict(briefing) if briefing else None))
    return briefing


def build_briefing(
    services: Services, cwd: str, *, exclude_session: str | None, budget: int
) -> Briefing | None:
    store = services.store
    try:
        project = resolve_project(store, cwd)
        _, sessions, total = list_sessions(store, project.path, limit=RECENT_SESSIONS + 1)
    except ProjectNotFound:
        return None
    sessions = [s for s in sessions if s.session_id != exclude_session][:RECENT_SESSIONS]
    if not sessions:
        return None

    def chunks(session_id: str, newest: bool) -> list[tuple[str, list[tuple[str, str]]]]:
        """(agent, sections) of the session's newest or oldest chunks, in time order."""
        request = ReconstructRequest(project.path, session_id=session_id, keep_newest=newest, max_tokens=2000)
        return [(c.agent, sections(c.content)) for c in reconstruct(store, request, 2000).chunks]

    latest = sessions[0]
    tail = [section for _, parts in chunks(latest.session_id, True) for section in parts]
    stopped = _where_stopped(tail)
    open_threads = _open_threads(tail)
    recent = [
        f"- {_when(s.started_at)} · {s.session_id[:8]} · {s.chunks} chunks: "
        f"{_line(_topic(chunks(s.session_id, False)), 160)}"
        for s in sessions
    ]
    header = (
        f"Memory of earlier Claude Code sessions in this project ({project.name}; {total} session(s) "
        f"stored), from Causantic."
    )
    titled = [
        (f"Where work stopped (session {latest.session_id[:8]}, {_when(latest.ended_at)} UTC):", stopped),
        ("Open threads from that session:", open_threads),
        ("Recent sessions:", recent),
    ]
    return Briefing(project.name, _fit(header, titled, budget))


def sections(content: str) -> list[tuple[str, str]]:
    """A chunk's text as (role, text) pairs: User, Assistant, Tool:X, Result:X, Error:X, or ""."""
    out: list[tuple[str, str]] = []
    for para in content.split("\n\n"):
        match = _MARKER.match(para)
        if match:
            out.append((match.group(1), para[match.end() :].strip()))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n\n{para}")
        else:
            out.append(("", para))
    return out or [("", "")]


def _topic(head: list[tuple[str, list[tuple[str, str]]]]) -> str:
    """What a session was about: its first prompt (the main agent's first), else its first reply."""
    ordered = sorted(head, key=lambda item: item[0] != "main")  # stable: main agent first
    for wanted in ("User", "Assistant"):
        for _, parts in ordered:
            text = next((text for role, text in parts if role == wanted and text.strip()), "")
            if text:
                return text if wanted == "User" else f"(reply) {text}"
    return "(no text recorded)"


def _where_stopped(tail: list[tuple[str, str]]) -> list[str]:
    last_user = max((i for i, (role, _) in enumerate(tail) if role == "User"), default=-1)
    turn = tail[last_user:] if last_user >= 0 else tail
    lines = []
    if last_user >= 0:
        lines.append(f"- Last request: {_line(tail[last_user][1], 240)}")
    steps = [f"{role[5:]} {_line(text, 60)}".strip() for role, text in turn if role.startswith("Tool:")][-3:]
    if steps:
        lines.append(f"- Last steps: {'; '.join(steps)}")
    reply = next((text for role, text in reversed(turn) if role == "Assistant"), "")
    if reply:
        lines.append(f"- Last reply: {_line(reply, 320)}")
    return lines


def _open_threads(tail: list[tuple[str, str]]) -> list[str]:
    found: list[str] = []
    todo_writes = [text for role, text in tail if role == "Tool:TodoWrite"]
    if todo_writes:
        for content, status in _OPEN_TODO.findall(todo_writes[-1]):
            found.append(f"{_unescape(content)} ({status.replace('_', ' ')})")
    for role, text in tail:
        if role in ("User", "Assistant"):
            found += [ln.strip(" -*•\t") for ln in text.splitlines() if _OPEN_LINE.search(ln)]
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
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _unescape(json_text: str) -> str:
    try:
        return str(json.loads(f'"{json_text}"'))
    except ValueError:
        return json_text


def _when(iso_text: str) -> str:
    return iso_text[:16].replace("T", " ") if iso_text else "?"


def _prune(folder: Path) -> None:
    cutoff = time.time() - CACHE_DAYS * 86_400
    for path in folder.glob("*.json"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            continue
