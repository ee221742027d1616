"""The user-prompt-submit hook: relevant past work added to a prompt, only when it is relevant.

Opt-in (``promptMemory.enabled``; ``causantic init --prompt-memory`` registers the hook with it on).
For each prompt, :func:`causantic.retrieval.moments.prompt_moments` picks at most
``promptMemory.maxMoments`` past moments that clear ``promptMemory.bar`` (other projects:
``crossProjectBar``), keyword-only so neither the embedding model nor the vector index loads while
Claude Code waits. The hook prints ``{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
"additionalContext": …}}`` within ``promptMemory.maxTokens``, or nothing at all.

A small owner-only record per session (``<home>/hooks/prompt-memory/<session>.json``, pruned after
``promptMemory.keepDays``) lists the chunks already given, so no memory is added twice in a session.
What was added and why (relevance, word coverage) goes to ``hook-status.json``.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

from causantic.config_cache import cached_config
from causantic.files import atomic_write, prune_older_than, secure_dir
from causantic.home import causantic_home, is_team_memory
from causantic.hooks import warm
from causantic.hooks.chunk_text import sections
from causantic.hooks.event import HookEvent
from causantic.ingest.tokens import CHARS_PER_TOKEN
from causantic.prompt_services import open_prompt_index
from causantic.retrieval.format import counted, short_session
from causantic.retrieval.moments import Moment, MomentsRelevance, MomentsRequest, prompt_moments
from causantic.runs import PROMPT_HOOK, InjectedMoment, record
from causantic.transcripts._system_text import prompt_text_of
from causantic.wording import shortened

if TYPE_CHECKING:
    from causantic.config import StorageConfig

HOOK = PROMPT_HOOK
_SAFE_ID = re.compile(r"[A-Za-z0-9_.-]{1,128}")
TEAM_NOTE = (
    "; this project is not in local memory: with team memory (storage.backend postgres) a shared project's "
    "sessions are in team memory, which prompt memory does not read (search and recall do)"
)
MIN_EXCERPT = 40  # characters: a moment with less room than this is left out rather than shown bare
HEADER = "Causantic memory: earlier sessions that match this prompt (keyword match; may be useful context)."
FOOTER = (
    "More: the causantic MCP tools recall (how and why it was done, by question) and reconstruct "
    "(a session's timeline, by session)."
)


def user_prompt_submit(name: str, event: HookEvent, started: float) -> None:
    folder = Path(event.working_dir)
    config = cached_config(folder if folder.is_dir() else None, ("prompt_memory", "relevance", "storage"))
    settings = config.section("prompt_memory")
    if not settings.enabled:
        return _done(started, event, "off (promptMemory.enabled is false)")
    if not event.prompt.strip():
        return _done(started, event, "empty prompt")
    # Prompt memory reads the local store only, keyword-only and offline, because Claude Code waits for
    # it on every prompt; with team memory, shared projects' sessions live on the server instead.
    team = is_team_memory(cast("StorageConfig", config.section("storage")))  # validated by config.py when cached
    if not config.db_path.exists():
        empty = ("no local memory yet" + TEAM_NOTE) if team else "no memory yet (nothing ingested)"
        return _done(started, event, empty)
    if not warm.serving and settings.warm_minutes > 0:
        warm.start_server()  # for the next prompts; this one is answered here (it exits if one runs)
    given_file = _given_file(causantic_home(), event.session_id)
    given = _read_given(given_file)
    with open_prompt_index(config.db_path) as index:
        found = prompt_moments(
            index,
            cast(MomentsRelevance, config.section("relevance")),  # validated by config.py when cached
            MomentsRequest(
                event.prompt,
                event.working_dir,
                settings.bar,
                settings.cross_project_bar,
                settings.max_moments,
                settings.min_terms,
                settings.session_margin,
                settings.min_coverage,
                settings.per_session,
                exclude_session=event.session_id,
                exclude_chunks=given,
            ),
        )
    if not found.moments:
        unknown = team and found.project is None
        return _done(started, event, found.reason + (TEAM_NOTE if unknown else ""), found.project)
    text, shown = render(found.moments, settings.max_tokens)
    found_text = f"the {counted(len(found.moments), 'moment')} found"
    budget = f"promptMemory.maxTokens ({settings.max_tokens})"
    if not shown:
        why = f"none added: {budget} has no room for any of {found_text}; {found.reason}"
        return _done(started, event, why, found.project)
    moments = found.moments[:shown]
    cut = f"{shown} of {found_text} fit {budget}; " if shown < len(found.moments) else ""
    sys.stdout.write(
        json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}}) + "\n"
    )
    sys.stdout.flush()
    if given_file is not None:
        _save_given(given_file, [*given, *(m.chunk.id for m in moments)], settings.keep_days)
    injected = [
        InjectedMoment(
            chunkId=m.chunk.id,
            sessionId=m.chunk.session_id,
            project=m.chunk.project,
            date=m.chunk.start_time,
            relevance=round(m.relevance, 4),
            coverage=m.coverage,  # unrounded: hook status prints it as the reason prints the lead's
            otherProject=m.other_project,
            margin=round(m.margin, 2) if math.isfinite(m.margin) else None,
        )
        for m in moments
    ]
    return _done(
        started,
        event,
        f"added {counted(len(moments), 'past moment')}, {len(text)} characters: {cut}{found.reason}",
        found.project,
        injected,
    )


def render(moments: list[Moment], max_tokens: int) -> tuple[str, int]:
    """The block Claude reads, and how many of ``moments`` (the first ones) it holds: a header, one entry
    per moment (date, project, or "other project" when not the session's, session, relevance and an
    excerpt of what was said), the pointer to the tools; within ``max_tokens`` (``promptMemory.maxTokens``).
    The pointer goes first, then the last moments, while each left has no room for an excerpt of
    ``MIN_EXCERPT`` characters; ("", 0) when not even one has."""
    budget = int(max_tokens * CHARS_PER_TOKEN)
    entries = []
    for i, m in enumerate(moments, 1):
        c = m.chunk
        # "other project": a bare name did not say that the moment is not of the session's own project.
        where = f"other project {c.project}" if m.other_project else f"project {c.project}"
        head = (
            f"{i}. {c.start_time[:16].replace('T', ' ')} UTC · {where} · session "
            f"{short_session(c.session_id)} · relevance {round(m.relevance * 100)}%"
        )
        entries.append((head, excerpt(c.content)))
    for count in range(len(entries), 0, -1):
        for footer in ([FOOTER], []):
            kept = entries[:count]
            lines = [HEADER, *(head for head, _ in kept), *footer]
            room = (budget - len("\n".join(lines)) - 4 * count) // count  # "\n   " before each excerpt
            if room >= MIN_EXCERPT:
                said = [shortened(text, room) for _, text in kept]
                body = [line for (head, _), text in zip(kept, said, strict=True) for line in (head, "   " + text)]
                return "\n".join([HEADER, *body, *footer]), count
    return "", 0


def excerpt(content: str) -> str:
    """What was asked and answered in a chunk, flattened: 'User: … / Assistant: …'. Harness text in
    prompts (IDE wrappers, reminders) goes; tool calls and results are left out (long, and little
    use out of context) unless the chunk holds nothing else."""
    parts = sections(content)
    said = [
        (role, prompt_text_of(text) if role == "User" else text)
        for role, text in parts
        if role in ("User", "Assistant")
    ]
    said = [(role, text) for role, text in said if text.strip()]
    if said:
        return " / ".join(f"{role}: {' '.join(text.split())}" for role, text in said)
    return " ".join(parts[0][1].split())


def _done(
    started: float,
    event: HookEvent,
    outcome: str,
    project: str | None = None,
    injected: list[InjectedMoment] | None = None,
) -> None:
    record(
        HOOK,
        success=True,
        started=started,
        outcome=outcome + (" [warm process]" if warm.serving else ""),
        project=project,
        session_id=event.session_id,
        injected=injected,
    )


def _given_file(home: Path, session_id: str) -> Path | None:
    return home / "hooks" / "prompt-memory" / f"{session_id}.json" if _SAFE_ID.fullmatch(session_id) else None


def _read_given(path: Path | None) -> list[str]:
    if path is None:
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(x) for x in data] if isinstance(data, list) else []


def _save_given(path: Path, chunk_ids: list[str], keep_days: float) -> None:
    prune_older_than(secure_dir(path.parent), keep_days)
    atomic_write(path, json.dumps(list(dict.fromkeys(chunk_ids))))
