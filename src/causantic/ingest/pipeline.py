"""Writing plans to the store: idempotent, incremental, crash-safe; batch ingest on both cores.

Each session group (a main file with its sub-agent files) is written in one transaction together
with the marks of its files, so a process killed at any point leaves the store as it was before
that group, and the next run, seeing the files unmarked, does the group again. A group planned in
this process (one worker, or a file of :data:`STREAM_FILE_BYTES` or more) is planned inside its
transaction and its chunks saved as they are made, :data:`STREAM_BATCH_CHARS` of text at a time,
so a pasted line of many megabytes is never held as chunks all at once. An unchanged file
(same size and modification time) is not even parsed; a grown one is re-read whole and its turns
upserted by their stable ids, so appended lines become new chunks linked to the previous last one.
A file read under older ingest rules (:mod:`rules`) counts as changed: it is read again, and the
store converges to what a fresh ingest of it makes today.
"""

from __future__ import annotations

import functools
import hashlib
import sys
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from causantic.errors import CausanticError, StoreError, TranscriptError
from causantic.files import absolute
from causantic.ingest import rules
from causantic.ingest.chunker import chunk_id
from causantic.ingest.edges import cross_session_edges
from causantic.ingest.plan import (
    GroupPlan,
    PlanSettings,
    SessionHead,
    SessionPlan,
    group_paths,
    plan_group,
)
from causantic.ingest.streams import MAIN_AGENT
from causantic.processes import worker_pool
from causantic.store.features import PARALLEL_FEATURE_CHARS
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import ChunkKey, ChunkRecord, Project, stand_in_project
from causantic.transcripts import BROKEN_LINE_REASONS
from causantic.transcripts.discovery import (
    SessionFiles,
    discover,
    join_codex_forks,
    stored_codex_forks,
    stored_codex_parent,
)
from causantic.transcripts.projects import is_folder_key
from causantic.transcripts.rewinds import REWOUND_PREFIX
from causantic.wording import counted

if TYPE_CHECKING:
    from causantic.store.protocol import VectorIndexProtocol

SESSION_EDGE_TYPES = ("within-chain", "brief", "debrief", "team-spawn", "team-report", "peer-message")
LINKS_NAMED = 3  # linked folders named in the note that some were not entered; the rest are counted
# A group with a file this large is planned by the writing process, its chunks saved as they are
# made, rather than planned by a worker and sent over whole (a 50 MB pasted line: 37,000 chunks,
# pickled, unpickled and held, some three times the line).
STREAM_FILE_BYTES = 8 << 20
# Chunk text saved at a time while a group is planned here: what is held beyond the pasted text
# itself. As much as the store needs to make a write's search terms and features in a second process
# beside SQLite's work. A 50 MB line of corpus text, main then 4M then 8M batches, load 2.2-2.8:
# 20.3 / 25.5 / 21.7 s, 19.5 / 23.7 / 25.9 CPU-s, peak 3.17 / 1.86 / 1.94x the line (before the
# store made search terms there, 4M had been cheaper).
STREAM_BATCH_CHARS = PARALLEL_FEATURE_CHARS


@dataclass(slots=True)
class IngestReport:
    files: int = 0
    files_unchanged: int = 0
    files_rules_changed: int = 0  # unchanged files read again: ingest rules changed since they were read
    # Files of projects another store takes (team memory: shared or not), left for that store's run;
    # what a team-memory ingest reports here is only what waits for team memory to answer again.
    files_waiting: int = 0
    # The paths behind files_unchanged and files_waiting: two stores' runs over the same files
    # (team memory and the local store) count a file both hold, or both leave, once (combined).
    unchanged_paths: set[str] = field(default_factory=set, repr=False)
    waiting_paths: set[str] = field(default_factory=set, repr=False)
    notes: list[str] = field(default_factory=list)  # what people should know (team memory unavailable)
    bytes_read: int = 0
    sessions: int = 0  # distinct sessions written (a session's records can lie in several files)
    chunks_added: int = 0
    chunks_updated: int = 0  # stored chunks whose text changed (embedded again)
    chunks_renumbered: int = 0  # stored chunks with the same text under a new turn number (not embedded again)
    chunks_removed: int = 0  # stored chunks these rules no longer produce (warm-ups, parts of shrunk turns)
    edges_added: Counter[str] = field(default_factory=Counter)
    skipped_lines: Counter[str] = field(default_factory=Counter)  # every reason, broken or ignored
    subagent_streams: int = 0  # sub-agent streams ingested (stubs, warm-ups and prompt suggestions are skipped)
    linked_subagents: int = 0  # of those, the ones joined to another agent by a brief/debrief or team edge
    skipped_subagents: Counter[str] = field(default_factory=Counter)  # by kind: stub, warm-up, prompt-suggestion
    teammates: int = 0  # agent-team members among the ingested sub-agent streams
    errors: list[tuple[str, str]] = field(default_factory=list)
    other_format: list[str] = field(default_factory=list)  # files read in no known format (said in a note)
    seconds: float = 0.0  # wall time of the whole run, embedding and topics included
    embed_seconds: float = 0.0  # of which embedding new chunks
    new_chunk_ids: list[str] = field(default_factory=list)
    project_ids: set[int] = field(default_factory=set)  # projects that got sessions in this run
    examples_removed: list[str] = field(default_factory=list)  # example projects dropped for real memory
    vectors_added: int | None = None  # None: embedding deferred
    vectors_elsewhere: int = 0  # new chunks of this run that another process embedded at the same time
    topics_note: str | None = None  # what topic maintenance did, in words, when vectors were added
    session_ids: set[str] = field(default_factory=set)  # the sessions counted in ``sessions``
    saved_ids: set[str] = field(default_factory=set)  # chunks a file of this run made as stored (see _not_older)
    # Sessions of shared projects the local store took (team memory): each also worked in, or shares
    # its file with a session of, a folder not shared (Route). By session id: its project's name.
    kept_local: dict[str, str] = field(default_factory=dict)

    def _broken(self) -> Counter[str]:
        return Counter({k: v for k, v in self.skipped_lines.items() if k in BROKEN_LINE_REASONS})

    @property
    def broken_lines(self) -> int:
        """Damaged lines skipped (invalid JSON, truncated, …), not the record kinds ignored by design."""
        return sum(self._broken().values())

    def as_dict(self) -> dict[str, object]:
        return {
            "files": self.files,
            "files_unchanged": self.files_unchanged,
            "files_rules_changed": self.files_rules_changed,
            "files_waiting": self.files_waiting,
            "notes": self.notes,
            "bytes_read": self.bytes_read,
            "session_count": self.sessions,
            "chunks_added": self.chunks_added,
            "chunks_updated": self.chunks_updated,
            "chunks_renumbered": self.chunks_renumbered,
            "chunks_removed": self.chunks_removed,
            "edges_added": {"total": sum(self.edges_added.values()), "by_type": dict(self.edges_added)},
            "skipped_lines": {"total": self.broken_lines, "by_reason": dict(self._broken())},
            "ignored_records": {k: v for k, v in self.skipped_lines.items() if k not in BROKEN_LINE_REASONS},
            "examples_removed": self.examples_removed,
            "subagent_streams": self.subagent_streams,
            "linked_subagents": self.linked_subagents,
            "skipped_subagents": dict(self.skipped_subagents),
            "teammates": self.teammates,
            "errors": [{"path": p, "error": e} for p, e in self.errors],
            "vectors_added": self.vectors_added,
            "vectors_elsewhere": self.vectors_elsewhere,
            "topics_note": self.topics_note,
            "seconds": round(self.seconds, 3),
            "embed_seconds": round(self.embed_seconds, 3),
        }


def combined(first: IngestReport, second: IngestReport) -> IngestReport:
    """Two runs over the same files into two stores (local and team memory) as one report; files
    the first left for the second count only where the second left them too."""
    out = IngestReport()
    for name in ("files", "files_unchanged", "files_rules_changed", "bytes_read", "sessions"):
        setattr(out, name, getattr(first, name) + getattr(second, name))
    # A file both stores hold as it is (a shared project's session kept locally, then uploaded) is
    # one file, unchanged; a file one store left for the other is the other's, and waits only when
    # both left it (neither store takes its project yet).
    held = first.unchanged_paths & second.unchanged_paths
    out.unchanged_paths = first.unchanged_paths | second.unchanged_paths
    out.files -= len(held)
    out.files_unchanged -= len(held)
    out.waiting_paths = first.waiting_paths & second.waiting_paths
    for name in ("chunks_added", "chunks_updated", "chunks_renumbered"):
        setattr(out, name, getattr(first, name) + getattr(second, name))
    out.chunks_removed = first.chunks_removed + second.chunks_removed
    out.files_waiting = len(out.waiting_paths)
    for name in ("edges_added", "skipped_lines", "skipped_subagents"):
        setattr(out, name, getattr(first, name) + getattr(second, name))
    for name in ("subagent_streams", "linked_subagents", "teammates"):
        setattr(out, name, getattr(first, name) + getattr(second, name))
    out.errors = first.errors + second.errors
    out.notes = list(dict.fromkeys(first.notes + second.notes))  # a file neither store keeps: told once
    out.other_format = list(dict.fromkeys(first.other_format + second.other_format))
    out.examples_removed = first.examples_removed + second.examples_removed
    out.kept_local = first.kept_local | second.kept_local
    if first.vectors_added is not None or second.vectors_added is not None:
        out.vectors_added = (first.vectors_added or 0) + (second.vectors_added or 0)
    out.vectors_elsewhere = first.vectors_elsewhere + second.vectors_elsewhere
    # Each store forms its own topics: two unlabelled "none yet" clauses read as one store saying it twice.
    labelled = (("local (unshared)", first.topics_note), ("team memory", second.topics_note))
    out.topics_note = "; ".join(f"{where}: {t}" for where, t in labelled if t) or None
    out.seconds = first.seconds + second.seconds
    out.embed_seconds = first.embed_seconds + second.embed_seconds
    return out


ProgressCallback = Callable[[int, int, int], None]  # (files done, bytes done, chunks added so far)


def ingest(
    store: MemoryStoreProtocol,
    targets: Iterable[Path],
    settings: PlanSettings,
    *,
    workers: int = 2,
    force: bool = False,
    on_progress: ProgressCallback | None = None,
    on_discovered: Callable[[int, int], None] | None = None,
    route: Route | None = None,
    marked_elsewhere: Sequence[MemoryStoreProtocol] = (),
) -> IngestReport:
    """Ingest transcript files and folders; returns what changed.

    ``route`` (team memory): which session groups this store takes (:class:`Route`); a group it
    does not take is neither written nor marked (``files_waiting``), so the store that does take it
    reads it on its own run. Files marked in one of ``marked_elsewhere`` (that store has them) are
    skipped without a word."""
    started = time.perf_counter()
    report = IngestReport()
    unreadable: list[tuple[str, str]] = []
    linked_outside: list[tuple[str, str]] = []
    groups = _discover_all(targets, unreadable, linked_outside)
    report.errors.extend(unreadable)
    if linked_outside:
        report.notes.append(_linked_outside_note(linked_outside))
    todo: list[SessionFiles] = []
    stale: dict[str, int] = {}  # by a group's first file: its files unchanged but read under older rules
    stored: list[str] | None = None  # the paths of the files the store holds, read once when needed
    for group in groups:
        paths = group_paths(group)
        read_under = [None if force else _read_under(store, p) for p in paths]
        if not force and all(map(_current, read_under)):
            report.files_unchanged += len(paths)
            report.unchanged_paths.update(map(str, paths))
        elif not force and any(all(_current(_read_under(other, p)) for p in paths) for other in marked_elsewhere):
            continue
        else:
            if group.source == "codex":  # its forks stored before it was found drop their copy of its turns
                stored = list(store.file_rules()) if stored is None else stored
                # and a fork of a session stored from elsewhere is read with it, dropping its copy
                group = stored_codex_forks(stored_codex_parent(group, stored), stored)
                paths = group_paths(group)
            todo.append(group)
            stale[str(paths[0])] = sum(1 for v in read_under if v is not None and v < rules.VERSION)
        report.files += len(paths)
    if on_discovered:
        on_discovered(sum(len(group_paths(g)) for g in todo), sum(_size(p) for g in todo for p in group_paths(g)))
    files_done = 0
    try:
        # Several groups per transaction (one per small session would spend most of the run
        # committing); each group is still all-or-nothing with its file marks, so a kill loses at
        # most the uncommitted groups, which the next run, seeing their files unmarked, redoes.
        with store.batch():
            for group, planned in _plan_all(todo, settings, workers):
                files_done += len(group_paths(group))
                outcome: BaseException | None = None
                if planned is None:  # planned here, its chunks saved as they are made
                    outcome = _plan_and_write(store, group, settings, report, route)
                elif isinstance(planned, BaseException):
                    outcome = planned
                elif _waits(planned, route):
                    outcome = _Waiting()
                else:
                    write_plan(store, planned, report, route=route)
                if isinstance(outcome, _Waiting):
                    report.files -= len(group_paths(group))
                    report.files_waiting += len(group_paths(group))
                    report.waiting_paths.update(map(str, group_paths(group)))
                elif outcome is not None:
                    report.errors.append((str(group_paths(group)[0]), _error_text(outcome)))
                else:
                    report.files_rules_changed += stale[str(group_paths(group)[0])]
                if on_progress:
                    on_progress(files_done, report.bytes_read, report.chunks_added)
    except StoreError as exc:  # a full disk, a damaged file: stop, keep what was committed, say so
        raise StoreError(f"{_stopped(store, todo)}: {exc}") from exc
    if report.other_format:
        report.notes.append(_other_format_note(report.other_format))
    # Projects flagged in the same transactions as their sessions: a run killed before this point
    # leaves the flags set, and the next run finishes the linking even if it reads no file.
    for project_id in store.projects_to_relink():
        report.edges_added["cross-session"] += relink_sessions(store, project_id)
    report.seconds = time.perf_counter() - started
    return report


def _stopped(store: MemoryStoreProtocol, todo: list[SessionFiles]) -> str:
    """How far an ingest a store error stopped got: the changed files the store now holds (their
    marks were committed with them), not the files read, whose last transaction may have failed
    ("after 99 of 99 changed files (the next run reads the rest)" on a disk that filled at the end)."""
    paths = [p for group in todo for p in group_paths(group)]
    try:
        stored = sum(1 for p in paths if _current(_read_under(store, p)))
    except StoreError:  # the store cannot even be read: say nothing of how far it got
        return "Ingest stopped (the next run reads the files not stored)"
    if stored == len(paths):  # --force re-reads files whose marks are current: none of them is "left"
        return "Ingest stopped (run it again to finish)"
    return (
        f"Ingest stopped with {stored} of {counted(len(paths), 'changed file')} stored "
        f"(the next run reads the {len(paths) - stored} left)"
    )


class _Waiting(Exception):
    """A group of a project this store does not take (team memory), found while it was written."""


@dataclass(frozen=True, slots=True)
class Route:
    """Which session groups a store takes, in team memory: team memory those whose sessions worked
    only in shared projects (``shared``, by canonical path), the local store every other. A session
    that moved from a shared project into an unshared folder, or a file holding sessions of both,
    stays local whole: nothing recorded in an unshared folder is sent to the server."""

    shared: Callable[[str], bool]
    team: bool  # this store is team memory

    def takes(self, projects: Iterable[str]) -> bool:
        """Whether this store takes a group whose sessions worked in ``projects``."""
        everywhere = all(self.shared(p) for p in projects)
        return everywhere if self.team else not everywhere

    def refuses(self, projects: Iterable[str]) -> bool:
        """Whether a group with a session that worked in ``projects`` is not this store's, whatever
        its other sessions: said before any chunk of it is saved."""
        return self.team and not self.takes(projects)


def _deciding(plan: GroupPlan) -> list[str]:
    """The projects that say whose a planned group is: its sessions' with chunks; a group with none
    (sub-agents' warm-ups and stubs, a session cut short) by all of its sessions, and one with no
    session at all (an empty file) is no shared project's ('')."""
    sessions = [s for s in plan.sessions if s.chunks] or plan.sessions
    return [p for s in sessions for p in s.head.projects] or [""]


def _waits(plan: GroupPlan, route: Route | None) -> bool:
    """Whether a planned group is one this store does not take (yet).

    Under `--force`, or once ingest's rules changed, each store reads every file, and team memory
    marked the files of such groups of projects nobody shared: their paths, which name the
    project's folder, readable by every member."""
    return route is not None and not route.takes(_deciding(plan))


def _has_large_file(group: SessionFiles) -> bool:
    """Whether the group holds a file of :data:`STREAM_FILE_BYTES` or more: it is then planned by the
    writing process even when workers plan the others, its chunks saved as they are made."""
    return any(_size(p) >= STREAM_FILE_BYTES for p in group_paths(group))


def _plan_and_write(
    store: MemoryStoreProtocol,
    group: SessionFiles,
    settings: PlanSettings,
    report: IngestReport,
    route: Route | None,
) -> _Waiting | Exception | None:
    """Plan a group here, saving its chunks as they are made, and write the rest of it, all in one
    transaction (a failure or a kill anywhere leaves the store as before the group); None when it
    is written, else why not: left for another store, or the error planning it hit. A store error
    (a full disk) is raised: it stops the run."""
    if _has_large_file(group):
        _large_blocks_returned()
    try:
        with store.atomic():
            writer = _ChunkWriter(store, route, report.saved_ids)
            plan = plan_group(group, settings, writer)
            if _waits(plan, route):
                raise _Waiting
            write_plan(store, plan, report, writer, route)
    except StoreError:
        raise
    except _Waiting as waiting:
        return waiting
    except Exception as exc:  # a bug in planning must not stop the other files
        return exc
    return None


@functools.cache  # a setting of the process: made once
def _large_blocks_returned() -> None:
    """From now on, this process gives a freed block of 256 KiB or more back to the system at once.

    A huge text is cleaned and cut in windows of megabytes, each copied a few times at up to four
    bytes a character, then freed. glibc's malloc raises its threshold for serving a block from its
    own mapping to the largest block freed so far, so after the first window the copies come from the
    heap, and what they leave there stays resident: a 32 MB line held some 60 MB of freed windows
    beside its own 32 (peak 3.9x the line; with the threshold fixed, 2.3x). Nothing elsewhere."""
    if sys.platform != "linux":
        return
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.mallopt(_M_MMAP_THRESHOLD, 256 << 10)
    except (OSError, AttributeError):  # not glibc (musl has no mallopt): its own policy stands
        pass


_M_MMAP_THRESHOLD = -3  # glibc's malloc.h


class _ChunkWriter:
    """Saves the chunks of a group planned in this process as they are made (a :data:`ChunkSink`),
    a batch of :data:`STREAM_BATCH_CHARS` of text at a time, inside the group's transaction; the
    last batch of each session is saved with the rest of it by :func:`write_plan`."""

    def __init__(self, store: MemoryStoreProtocol, route: Route | None, saved: set[str]) -> None:
        self._store = store
        self._route = route
        self._saved = saved  # chunks other groups of this run saved (IngestReport.saved_ids)
        self._heads: dict[str, SessionHead] = {}
        self._pending: dict[str, list[ChunkRecord]] = {}
        self._chars = 0
        self._projects: dict[str, Project] = {}
        self._stored: dict[str, list[ChunkKey]] = {}
        # Per session, the saved chunk that starts first, whole: saved again (unchanged, so not
        # rewritten) with the last batch, the session's row then gets the same start and title as
        # if all its chunks were saved at once.
        self._earliest: dict[str, ChunkRecord] = {}
        self.new_ids: dict[str, list[str]] = {}
        self.updated: Counter[str] = Counter()
        self.renumbered: Counter[str] = Counter()

    def begin(self, heads: Sequence[SessionHead]) -> None:
        lock_group(self._store, heads)

    def __call__(self, head: SessionHead, record: ChunkRecord) -> None:
        self._heads.setdefault(head.session_id, head)
        self._pending.setdefault(head.session_id, []).append(record)
        self._chars += len(record.content)
        if self._chars >= STREAM_BATCH_CHARS:
            self._save_pending()

    def _save_pending(self) -> None:
        for session_id, records in self._pending.items():
            if not records:
                continue
            head = self._heads[session_id]
            project = self._project(head)
            fresh = _not_older(records, self._stored[session_id], self._saved)
            if fresh:  # else all saved already by another file of this run: the session row too
                done = self._store.save_session(project, session_id, fresh, None, head.source, None, head.cwd or None)
                self.new_ids.setdefault(session_id, []).extend(done.new_ids)
                self.updated[session_id] += done.updated
                self.renumbered[session_id] += done.renumbered
            first = min(records, key=lambda r: r.start_time)
            earliest = self._earliest.get(session_id)
            if earliest is None or first.start_time < earliest.start_time:
                self._earliest[session_id] = first
            records.clear()
        self._chars = 0

    def _project(self, head: SessionHead) -> Project:
        project = self._projects.get(head.session_id)
        if project is None:
            if self._route is not None and self._route.refuses(head.projects):
                raise _Waiting
            project = session_project(self._store, head)
            self._projects[head.session_id] = project
            # What was stored before this run's chunks: a session's own saved batches are never
            # superseded, and reading them back (37,000 rows for a 50 MB line) would be for nothing.
            self._stored[head.session_id] = self._store.session_chunk_keys(head.session_id)
        return project

    def stored_keys(self, session_id: str) -> list[ChunkKey] | None:
        """The session's chunks stored before its first batch was saved; None when none was."""
        return self._stored.get(session_id)

    def rest(self, session_id: str) -> list[ChunkRecord]:
        """The session's chunks not saved yet, after the earliest one saved (if any)."""
        earliest = self._earliest.get(session_id)
        return [*([earliest] if earliest is not None else []), *self._pending.get(session_id, [])]


def write_plan(
    store: MemoryStoreProtocol,
    plan: GroupPlan,
    report: IngestReport,
    writer: _ChunkWriter | None = None,
    route: Route | None = None,
) -> None:
    """Save one group in one transaction, flagging its projects for cross-session relinking.

    ``writer`` saved the chunks of the sessions planned with it (``written``) as they were made:
    only their last batch is saved here. ``route``: the store's, in team memory (see :class:`Route`)."""
    with store.atomic():
        if writer is None:  # else locked when planning began (_ChunkWriter.begin)
            lock_group(store, [s.head for s in plan.sessions])
        held: list[str] = []  # the chunks of this group whose version the store keeps (see _not_older)
        for session in plan.sessions:
            report.skipped_subagents.update(session.skipped_subagents)
            saved = writer if session.written else None  # saved its chunks as they were made
            stored = saved.stored_keys(session.session_id) if saved is not None else None
            if stored is None:
                stored = store.session_chunk_keys(session.session_id)
            held += _not_fuller_stored(session.chunks, stored)
            superseded = _superseded(stored, session)
            if superseded:
                report.chunks_removed += store.drop_superseded(session.session_id, superseded)
            for thread in session.joined:  # a sub-agent stored as a session of its own: a stream now
                if thread != session.session_id and (keys := store.session_chunk_keys(thread)):
                    report.chunks_removed += store.drop_superseded(thread, [k.id for k in keys])
            if not session.chunks:  # only skipped sub-agent streams (stubs, warm-ups, …)
                continue
            project = session_project(store, session.head)
            if not session.cwd_hash:  # Gemini sessions ingested before any that named this cwd join it now
                for path in _stand_ins(session.cwd, project.path):
                    store.absorb_project(path, project)
            report.project_ids.add(project.id)
            store.mark_relink(project.id)
            if route is not None and not route.team and any(map(route.shared, session.head.projects)):
                report.kept_local[session.session_id] = project.name
            fresh = _not_older(
                saved.rest(session.session_id) if saved is not None else session.chunks, stored, report.saved_ids
            )
            new: list[str] = []  # all saved already by another file of this run: the session row too
            if fresh:  # (a save of no chunks would blank the session's span)
                done = store.save_session(
                    project,
                    session.session_id,
                    fresh,
                    session.team_name,
                    session.source,
                    session.title,
                    session.cwd or None,
                )
                new = done.new_ids
                report.chunks_updated += done.updated
                report.chunks_renumbered += done.renumbered
            store.file_chunks_with_session(session.session_id)  # what an older version filed elsewhere
            if saved is not None:
                new = [*saved.new_ids.get(session.session_id, []), *new]
                report.chunks_updated += saved.updated[session.session_id]
                report.chunks_renumbered += saved.renumbered[session.session_id]
            added = store.replace_edges([c.id for c in session.chunks], SESSION_EDGE_TYPES, session.edges)
            if session.session_id not in report.session_ids:
                report.session_ids.add(session.session_id)
                report.sessions += 1
            report.chunks_added += len(new)
            report.new_chunk_ids += new
            report.subagent_streams += session.subagent_streams
            report.linked_subagents += session.linked_subagents
            report.teammates += session.teammates
            report.edges_added.update(e.reference_type for e in added)
        report.saved_ids.update(held)  # after every session of the group: each is read from one file
        store.mark_files(plan.files, rules.VERSION)
    report.bytes_read += plan.bytes_read
    report.skipped_lines.update(plan.skipped)
    report.other_format += plan.other_format


def session_project(store: MemoryStoreProtocol, head: SessionHead) -> Project:
    """The project a session's chunks are saved in: the one it is stored in already, else its cwd's.

    A session belongs to one project, whichever of its files names another cwd (a copy of a few of
    its lines edited elsewhere, a resumed part started in another folder): otherwise the chunks of
    the later file land in a second project, which the overview counts and the project list, made
    from sessions, does not.

    A session without cwd keyed by its folder's name (:func:`~causantic.transcripts.projects.folder_project`)
    first gives that key to the projects an older release keyed by the folder's whole path: the one at
    its folder here, and the one it is stored in when that was its folder at another place (a moved
    ``~/.claude``); the second of two such projects is merged into the first."""
    if head.project_path != head.cwd and is_folder_key(head.project_path):
        stored = store.session_project(head.session_id)
        name = PurePath(head.project_path).name
        older = [head.cwd, *([stored.path] if stored is not None and PurePath(stored.path).name == name else [])]
        for path in dict.fromkeys(older):
            store.rekey_project(path, head.project_path)
    stored = store.session_project(head.session_id)
    if stored is not None:
        return stored
    return (head.cwd_hash and store.project_for_cwd_hash(head.cwd_hash)) or store.resolve_project(
        head.cwd, head.project_path, head.repository
    )


def _not_older(records: Sequence[ChunkRecord], stored: Sequence[ChunkKey], saved: set[str]) -> list[ChunkRecord]:
    """``records`` less the chunks another file of this run made as the store keeps them (two files
    hold copies of one session: fixtures, a session copied to a second folder; see
    :func:`_not_fuller_stored`) in a version this one would not add messages to. The first copy read
    keeps a chunk both make differently, unless a later one shows more of its turn (then the fuller
    text wins, as :func:`~causantic.store.common.older_copy` keeps it the other way round): each read
    of the copies then ends as the last did, so a re-read of unchanged files (``--force``) changes
    nothing, and no copy's messages are lost."""
    if not saved:
        return list(records)
    held = {k.id: k.message_uuids for k in stored if k.id in saved}
    return [r for r in records if r.id not in held or set(held[r.id]) < set(r.message_uuids)]


def _not_fuller_stored(records: Sequence[ChunkRecord], stored: Sequence[ChunkKey]) -> list[str]:
    """Ids of ``records`` the store keeps as this file makes them: all but those it holds made from
    more of their turn (:func:`~causantic.store.common.older_copy`: an excerpt read after the whole
    session). A later file of the run holding such a chunk writes its own version, number included
    (a store of older rules may hold the excerpt's turn number under the whole session's text)."""
    fuller = {k.id: set(k.message_uuids) for k in stored}
    return [r.id for r in records if not (r.id in fuller and set(r.message_uuids) < fuller[r.id])]


def lock_group(store: MemoryStoreProtocol, heads: Sequence[SessionHead]) -> None:
    """Take the write locks of every project a session group's transaction may write, all at once
    (:meth:`~causantic.store.protocol.MemoryStoreProtocol.lock_projects`: in id order), before it
    writes anything: the projects its sessions are stored in, the ones they resolve to, and the
    Gemini CLI stand-ins those absorb. A group whose sessions sit in two projects took their locks
    in plan order, so two such groups in opposite orders (or a forget of both projects) could
    deadlock on team memory. A project created by the group itself is new, and locked by creating it.
    The stand-in of a project path other than the cwd's canonical one (the project a session is
    stored in, or a cwd an older release recorded) is found by the locking statement itself: taken
    later, by :meth:`~causantic.store.protocol.MemoryStoreProtocol.absorb_project`, it was out of
    order, and deadlocked with a forget holding it (tests/store/test_team_project_races.py).

    Before those, the folder names of the projects the group may make or absorb
    (:meth:`~causantic.store.protocol.MemoryStoreProtocol.lock_project_names`): its sessions' project
    paths and stand-ins. A project another ingest makes at the same moment is then either committed
    before these locks are read (and locked with them) or made after this group commits, seeing its
    projects: without them, a Gemini CLI stand-in made beside this group outlived the session naming
    its folder, and two new projects of one folder name were both named alike. A Gemini CLI session's
    project is looked up after them for that reason. So is the repository a session's project path is
    a checkout of (:attr:`~causantic.ingest.plan.SessionHead.repository`): a member making the project
    of their clone beside another's ingest of a clone at another path (of another folder name) each
    found no project of it, and made two."""
    store.lock_project_names(sorted({key for head in heads for key in (*_may_make(head), *_repository(head))}))
    cwds: set[str] = set()
    paths: set[str] = set()
    for head in heads:
        if head.cwd_hash:  # as write_plan resolves it
            known = store.project_for_cwd_hash(head.cwd_hash)
            paths.add(known.path if known is not None else head.project_path)
        else:
            cwds.update([head.cwd, *_repository(head)])  # the repository is recorded as the cwds are
            paths.update(_may_make(head))
    sessions = [h.session_id for h in heads] + [thread for h in heads for thread in h.joined]
    store.lock_ingest_projects(sessions, sorted(cwds), sorted(paths))


def _repository(head: SessionHead) -> list[str]:
    return [head.repository] if head.repository else []


def _may_make(head: SessionHead) -> list[str]:
    """The paths of the projects writing a session may make or absorb: its project's (a Gemini CLI
    session known by its cwd's hash: the stand-in's), and the stand-ins a session naming its cwd absorbs."""
    return [head.project_path, *([] if head.cwd_hash else _stand_ins(head.cwd, head.project_path))]


def _stand_ins(cwd: str, project_path: str) -> list[str]:
    """The paths of the Gemini CLI stand-in projects a session in ``cwd`` merges into its project."""
    return [stand_in_project(hashlib.sha256(path.encode()).hexdigest()) for path in dict.fromkeys((cwd, project_path))]


def _superseded(stored: Sequence[ChunkKey], session: SessionPlan) -> list[str]:
    """Stored chunks of a session that today's rules no longer produce from the same transcript.

    Five kinds, all left by an older version of these rules: chunks of sub-agent streams now skipped
    (warm-ups, prompt suggestions) made of those streams' messages alone; chunks of a sub-agent stream
    (not a rewound branch) made of messages the main stream now shows (the conversation's records a
    compaction file holds, see :mod:`causantic.transcripts.compaction`); main-line chunks of turns now
    told as a rewound branch (:mod:`causantic.transcripts.rewinds`), by the id they had there, and
    main-line chunks of a Codex fork showing only its copy of the session it forked; and trailing
    parts of a turn whose text shrank
    (injected text now left out), so it splits into fewer parts. A stored chunk is a part of a
    planned turn only when it has the id of one (same session, agent, first message), whatever
    number the turn had then (a turn is numbered anew when messages before it leave its stream, or a
    prompt is found before it), and it is dropped only when the planned turn still shows all its
    messages: a turn read from another file of a resumed session, or whole in one copy of a session
    and cut short in another (a file holding a few of its lines), is never touched.
    """
    if not stored:
        return []
    skipped = set(session.skipped_agent_ids)
    parts: dict[tuple[str | None, int], int] = {}
    messages: dict[tuple[str | None, int], set[str]] = {}
    turn_of: dict[str, tuple[str | None, int]] = {}
    for chunk in session.chunks:
        key = turn_of[chunk.id] = (chunk.agent_id, chunk.turn_index)
        parts[key] = max(parts.get(key, 0), chunk.part + 1)
        messages.setdefault(key, set()).update(chunk.message_uuids)
    in_main = set().union(*(m for (agent_id, _), m in messages.items() if agent_id is None))
    # The turns now told as rewound, by the ids their main-line chunks had under older rules.
    was_main = {
        chunk_id(session.session_id, MAIN_AGENT, anchor, part)
        for agent_id, turn, anchor in session.turn_anchors
        if _rewound(agent_id)
        for part in range(parts.get((agent_id, turn), 1))
    }
    renumbered = {(row.agent_id, row.turn_index): turn_of[row.id] for row in stored if row.id in turn_of}
    anchors = {(agent_id, turn): anchor for agent_id, turn, anchor in session.turn_anchors}
    out: list[str] = []
    for row in stored:
        key = renumbered.get((row.agent_id, row.turn_index), (row.agent_id, row.turn_index))
        if row.agent_id in skipped:
            if set(row.message_uuids) <= session.skipped_messages:
                out.append(row.id)
        elif (
            row.agent_id is not None
            and not _rewound(row.agent_id)
            and row.id not in turn_of
            and row.message_uuids
            and set(row.message_uuids) <= in_main
        ):
            out.append(row.id)
        elif row.agent_id is None and row.id not in turn_of and (row.id in was_main or _copied(row, session)):
            out.append(row.id)
        elif (
            key in parts
            and row.part >= parts[key]
            and row.id == chunk_id(session.session_id, row.agent_id or MAIN_AGENT, anchors[key], row.part)
            and set(row.message_uuids) <= messages[key]
        ):
            out.append(row.id)
    return out


def _copied(row: ChunkKey, session: SessionPlan) -> bool:
    """Whether a stored chunk shows only messages a Codex fork copied from the session it forked."""
    return bool(row.message_uuids) and set(row.message_uuids) <= session.copied_messages


def _rewound(agent_id: str | None) -> bool:
    return (agent_id or "").startswith(REWOUND_PREFIX)


def remove_chunks(
    store: MemoryStoreProtocol, vectors: VectorIndexProtocol, ids: Sequence[str], *, remember: bool = True
) -> int:
    """Delete chunks from SQLite and the vector index, then re-link the sessions left in their projects
    (flagged with the deletion: killed before this re-links them, the next ingest does).

    Exactly ``ids`` go (a caller that previewed them deletes no more than it showed). ``remember``:
    keep them forgotten, so ingesting their transcript again does not bring them back. Returns how
    many chunks were deleted.
    """
    projects = store.projects_of_chunks(ids)
    vectors.mark_deleting()  # first: killed once the chunks are gone, their rows still leave the ANN file
    deleted = store.delete_chunks(ids, remember=remember)
    vectors.delete(ids)
    for project_id in projects:
        relink_sessions(store, project_id)
    return deleted


def relink_sessions(store: MemoryStoreProtocol, project_id: int) -> int:
    """Recompute a project's cross-session edges from its sessions' order; return edges added."""
    with store.atomic():
        rows = store.session_endpoints(project_id)
        edges = cross_session_edges([(r.first_id, r.last_id) for r in rows])
        added = store.replace_project_edges(project_id, "cross-session", edges)
        store.clear_relink(project_id)
        return len(added)


def _discover_all(
    targets: Iterable[Path], unreadable: list[tuple[str, str]], linked_outside: list[tuple[str, str]]
) -> list[SessionFiles]:
    """The sessions under every target, each once: paths are made absolute first, so a file given
    as ``sessions/a.jsonl`` and as ``/home/me/sessions/a.jsonl`` is one file with one mark."""
    groups: list[SessionFiles] = []
    seen: dict[str, int] = {}
    for target in targets:
        path = absolute(target)
        if not path.exists():
            raise TranscriptError(f"{path} does not exist. Pass a transcript file or a folder of them.")
        for group in discover(path, unreadable, linked_outside=linked_outside):
            key = str(group_paths(group)[0])
            if key not in seen:
                seen[key] = len(groups)
                groups.append(group)
            else:  # found again from another target, maybe with other files (a fork found by its own)
                first = groups[seen[key]]
                groups[seen[key]] = replace(
                    first,
                    subagents=tuple(sorted({*first.subagents, *group.subagents})),
                    forks=tuple(sorted({*first.forks, *group.forks})),
                )
    # Gemini sessions go last: one that names its project only by a hash of its cwd is matched
    # against the projects known, so the other agents' sessions of this run must be there first.
    return sorted(join_codex_forks(groups), key=lambda g: g.source == "gemini")


def unmarked_files_of_held_sessions(
    stores: Sequence[MemoryStoreProtocol], marked: set[str], targets: Iterable[Path]
) -> int:
    """The files under ``targets`` that no store has a mark for (``marked``: every path any store
    has one for) though their session is in memory: the next ingest of them reads them again, as
    it reads every file without a mark (a migration cleared the marks: m008)."""
    unmarked = [
        (group.session_id, n)
        for group in _discover_all(targets, [], [])
        if (n := sum(1 for p in group_paths(group) if str(p) not in marked))
    ]
    ids = sorted({session for session, _ in unmarked})
    held = {session for store in stores for session in store.session_sizes(ids)} if ids else set()
    return sum(n for session, n in unmarked if session in held)


def _linked_outside_note(links: list[tuple[str, str]]) -> str:
    """One line naming the linked folders not entered (the first few) and how to read one."""
    shown = ", ".join(f"{link} -> {target}" for link, target in links[:LINKS_NAMED])
    more = f" and {len(links) - LINKS_NAMED} more" if len(links) > LINKS_NAMED else ""
    return (
        f"skipped {counted(len(links), 'linked folder')} leading outside the folder read: "
        f"{shown}{more}. To read one, pass its target: causantic batch-ingest TARGET"
    )


def _error_text(error: BaseException) -> str:
    """What a file's error says after its path, as discovery words a folder it cannot list: 'cannot
    read it: Permission denied' (a file deleted since it was found: 'No such file or directory').
    Our other errors are worded for the reader already; anything else is a bug, named by its type."""
    cause = error.__cause__
    if isinstance(error, TranscriptError) and isinstance(cause, OSError):
        return f"cannot read it: {cause.strerror or cause}"
    return str(error) if isinstance(error, CausanticError) else f"{type(error).__name__}: {error}"


def _other_format_note(paths: list[str]) -> str:
    """One line saying which files were read in no known format (the first few named): nothing of
    them is in memory, and no rerun will change that."""
    n = len(paths)
    shown = ", ".join(paths[:LINKS_NAMED]) + (f" and {n - LINKS_NAMED} more" if n > LINKS_NAMED else "")
    return (
        f"{n} file{'s' if n != 1 else ''} in no format Causantic reads (it reads the sessions of Claude Code, "
        "Codex CLI, Gemini CLI, Copilot CLI, Cursor, Factory Droid and Pi; Kiro and OpenCode keep theirs in "
        f"databases it does not read), so nothing of {'them' if n != 1 else 'it'} is in memory: {shown}"
    )


def _current(read_under: int | None) -> bool:
    """Whether a file read under these rules (or newer ones) is unchanged since: nothing to read.

    A file a store holds under older rules is read again, also by the other store of team memory:
    a session of a project shared after it was kept locally is then uploaded, as `--force` does."""
    return read_under is not None and read_under >= rules.VERSION


def _read_under(store: MemoryStoreProtocol, path: Path) -> int | None:
    """The ingest-rules version ``store`` read the file under, if it is unchanged since; else None."""
    try:
        st = path.stat()
    except OSError:
        return None
    return store.unchanged_file_rules(str(path), st.st_size, st.st_mtime_ns)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _plan_all(
    groups: list[SessionFiles], settings: PlanSettings, workers: int
) -> Iterator[tuple[SessionFiles, GroupPlan | BaseException | None]]:
    """Plans in discovery order; parsing runs in ``workers`` processes when there is enough work.
    None for a group the caller is to plan itself, saving its chunks as they are made: every
    group when planning runs in this process, else one with a file of :data:`STREAM_FILE_BYTES`.

    Writing in a fixed order makes the result independent of which worker finishes first, so a
    run that was killed and resumed ends in exactly the state of one uninterrupted run, even when
    two files hold copies of the same session.
    """
    if workers <= 1 or len(groups) < 2:
        for group in groups:
            yield group, None
        return
    with worker_pool(workers) as pool:
        pending: deque[tuple[SessionFiles, Future[GroupPlan] | None]] = deque()
        queue = iter(groups)
        window = workers * 8  # bounded, so plans never pile up in memory
        while True:
            while len(pending) < window:
                queued = next(queue, None)
                if queued is None:
                    break
                planned_here = _has_large_file(queued)
                pending.append((queued, None if planned_here else pool.submit(plan_group, queued, settings)))
            if not pending:
                return
            group, future = pending.popleft()
            if future is None:
                yield group, None
                continue
            error = future.exception()
            yield group, (error if error is not None else future.result())
