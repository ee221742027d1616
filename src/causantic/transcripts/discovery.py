"""Finding sessions under a folder, whatever its layout and file names, and reading each one.

Layouts handled (all seen in real Claude Code data):

- main session file ``<folder>/<sessionId>.jsonl``; any other ``*.jsonl`` name is a main file too
  (``full.jsonl``, ``session.jsonl``), its session id taken from its first record;
- flat sub-agent files ``agent-<id>.jsonl`` beside the sessions (Claude Code 2.0.x) or in a
  sub-folder of them (exports): their records carry the parent's ``sessionId``, which pairs them
  with the main file of the same session in the same folder or its parent;
- ``<folder>/<sessionId>/subagents/**/*.jsonl`` (2.1.x), with optional ``agent-<id>.meta.json``
  companions, read into :class:`~causantic.transcripts.model.AgentMeta`;
- sidechains inline in the main file (1.0.x), which :mod:`reader` splits out.

Other agents' files are told apart by their first bytes (:func:`source_of`), wherever they lie
(and Cursor's older text transcripts, ``agent-transcripts/<id>.txt``, by where they lie):

- a Codex CLI rollout (:mod:`codex`) is a session of its own, except a spawned agent's rollout whose
  parent thread's rollout is found too: it joins the parent's session as a sub-agent file, less the
  copy of the parent's conversation a forked agent's rollout opens with;
- a user's fork of a Codex or Pi session is read with the session it forked, less the copy of that
  session's turns it opens with; when that session's file is not among those found, it is looked
  for where the agent keeps it (a Pi fork's header names it; a Codex rollout lies in the same
  ``YYYY/MM/DD`` tree), and read too when found, as is a Codex session's rollout found from another
  target or held by the store (:func:`join_codex_forks`, :func:`stored_codex_parent`): else the
  fork keeps its copy;
- a Gemini CLI session (:mod:`gemini`): ``*.jsonl`` like the others, or ``session-*.json`` in a
  ``chats`` folder (where Gemini CLI writes them); a sub-agent's file in ``chats/<parent id>/`` joins
  its parent's session when the parent's file is found.

Folders whose name starts with ``.`` and ``node_modules`` are not entered (a root given by the user
may itself be one, as ``~/.codex/sessions`` is). Linked files are followed, and linked folders that
lead to a place inside the folder read, each real one read once; a linked folder leading outside it
(a home folder, a disk) is not entered but reported, and a broken link or a loop of links is reported,
as is a pipe or device named like a transcript (never opened: it could wait forever). A sub-agent file
whose session file is absent still forms a session (``main=None``). Results are sorted by path.
"""

from __future__ import annotations

import errno
import glob
import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, cast

from causantic.errors import TranscriptError
from causantic.sources import Source
from causantic.transcripts.codex import RolloutMeta, is_rollout_head, peek_rollout_meta, read_rollout
from causantic.transcripts.compaction import give_back_carried
from causantic.transcripts.gemini import looks_like_gemini, peek_gemini_header, read_gemini
from causantic.transcripts.model import AgentMeta, SessionTranscripts, SkipReport, Transcript
from causantic.transcripts.other_agents import (
    OTHER_SOURCES,
    PiHeader,
    is_cursor_text,
    peek_pi_header,
    read_other,
    source_of_line,
)
from causantic.transcripts.projects import session_folder
from causantic.transcripts.reader import SkipReason, read_file
from causantic.transcripts.rewinds import split_rewound

__all__ = ["SessionFiles", "discover", "join_codex_forks", "read_session", "source_of", "stored_codex_parent"]

_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", re.IGNORECASE)
_PEEK_MAX_LINES = 200
_PEEK_MAX_BYTES = 16 * 1024 * 1024
_PEEK_LINE_BYTES = 1 << 20  # a line longer than this is not parsed to find its session id
_SESSION_ID_KEY = re.compile(rb'^\{[^\\]{0,4096}?"sessionId"\s*:\s*"([^"\\]{1,200})"')
_SNIFF_BYTES = 4096  # enough for every first line seen but a Codex meta, told by its start


@dataclass(frozen=True, slots=True)
class SessionFiles:
    """The files that make up one session, found by :func:`discover`."""

    session_id: str  # from the file or folder name, else the first record's sessionId
    main: Path | None  # None when only sub-agent files of the session are present
    subagents: tuple[Path, ...]
    folder: Path  # the folder holding the session: a project folder under ~/.claude/projects
    source: Source = "claude-code"
    forks: tuple[Path, ...] = ()  # Codex CLI: user forks of this session (and of its forks), read with it
    # Codex CLI: the thread this session's file forked when that thread's file was not found with it
    # (:func:`join_codex_forks`, :func:`stored_codex_parent` read the two together once it is).
    forked_from: str = ""


def discover(
    root: Path,
    unreadable: list[tuple[str, str]] | None = None,
    *,
    linked_outside: list[tuple[str, str]] | None = None,
) -> list[SessionFiles]:
    """Every session under `root` (a folder, or a single ``.jsonl`` file), sorted by path.

    Folders that cannot be listed are appended to `unreadable` as (path, reason) rather than
    passed over in silence; linked folders not entered because they lead outside `root`, to
    `linked_outside` as (link, target). Raises :class:`TranscriptError` when `root` does not exist.
    """
    if root.is_file():
        source = source_of(root)
        if source != "claude-code":
            return _other_sessions([(root, source)])
        session = _session_id_of_main(root)
        return [SessionFiles(session, root, (), root.parent)]
    if not root.is_dir():
        raise TranscriptError(f"No transcript folder at {root}. Pass a folder of .jsonl files.")

    mains: list[tuple[Path, str]] = []
    nested: dict[tuple[Path, str], list[Path]] = defaultdict(list)  # <session>/subagents/ files
    flat: list[tuple[Path, str]] = []  # agent-*.jsonl outside a subagents/ folder
    others: list[tuple[Path, Source]] = []
    for path in _jsonl_files(root, unreadable, linked_outside):
        source = source_of(path)
        if path.suffix == ".txt" and source != "cursor":
            continue  # a text file that is no transcript: no business of ours
        if source != "claude-code":
            others.append((path, source))
            continue
        owner = _subagents_owner(root, path)
        if owner is not None:
            nested[owner].append(path)
        elif path.name.startswith("agent-"):
            flat.append((path, _peek_session_id(path) or path.stem))
        else:
            mains.append((path, _session_id_of_main(path)))

    main_by_key: dict[tuple[Path, str], Path] = {}
    for path, session in mains:
        main_by_key.setdefault((path.parent, session), path)
    attached: dict[Path, list[Path]] = defaultdict(list)
    orphans: dict[tuple[Path, str], list[Path]] = defaultdict(list)
    for key, paths in nested.items():
        main = main_by_key.get(key)
        (attached[main] if main is not None else orphans[key]).extend(paths)
    for path, session in flat:
        main = main_by_key.get((path.parent, session)) or main_by_key.get((path.parent.parent, session))
        if main is not None:
            attached[main].append(path)
        else:
            orphans[(path.parent, session)].append(path)

    found = [SessionFiles(session, path, tuple(sorted(attached.get(path, ()))), path.parent) for path, session in mains]
    found += [SessionFiles(session, None, tuple(sorted(paths)), folder) for (folder, session), paths in orphans.items()]
    found += _other_sessions(others)
    found.sort(key=lambda s: str(s.main if s.main is not None else s.subagents[0]))
    return found


def read_session(files: SessionFiles) -> tuple[list[SessionTranscripts], SkipReport]:
    """Read a session's files into one :class:`SessionTranscripts` per session id found.

    Usually that is one; a resumed session's file can also hold records of the session it resumed.
    Sub-agent files belong to ``files.session_id`` whatever their records say. Sub-agent
    transcripts keep their file order (main file's inline sidechains first). The conversation's
    records a compaction agent's file holds before its instruction join the main stream
    (:mod:`compaction`). Raises
    :class:`TranscriptError` when one of the files cannot be read at all.
    """
    if files.source == "codex":
        return _read_codex(files)
    if files.source == "gemini":
        return _read_gemini(files)
    if files.source in OTHER_SOURCES and files.main is not None:
        return _read_other(files)
    report = SkipReport()
    found: list[Transcript] = []
    if files.main is not None:
        own_files = frozenset(_agent_id_from_name(path) for path in files.subagents)
        transcripts, skipped = read_file(files.main, known_agents=own_files)
        report.merge(skipped)
        found += transcripts
    for path in files.subagents:
        transcripts, skipped = read_file(path, agent_id=_agent_id_from_name(path), session_id=files.session_id)
        report.merge(skipped)
        meta = _read_agent_meta(path, report)
        found += [replace(t, meta=meta) for t in transcripts] if meta is not None else transcripts

    by_session: dict[str, list[Transcript]] = {}
    for transcript in found:
        by_session.setdefault(transcript.session_id, []).append(transcript)
    sessions: list[SessionTranscripts] = []
    for session_id, transcripts in by_session.items():
        main = next((t for t in transcripts if t.agent_id is None), None)
        subagents = tuple(t for t in transcripts if t.agent_id is not None)
        cwd = next((t.cwd for t in transcripts if t.cwd), None) if main is None or not main.cwd else main.cwd
        paths = tuple(dict.fromkeys(t.path for t in transcripts))
        main, subagents, copies = give_back_carried(main, subagents)
        if copies:
            report.add(SkipReason.DUPLICATE_RECORD, copies)
        main, rewound = split_rewound(main)
        sessions.append(SessionTranscripts(session_id, main, (*subagents, *rewound), cwd, paths))
    return sessions, report


# --- other agents ---------------------------------------------------------------------------------


def source_of(path: Path) -> Source:
    """Which agent wrote a transcript file, from its first bytes; Claude Code unless recognised."""
    try:
        with path.open("rb") as f:
            head = f.read(_SNIFF_BYTES)
    except OSError:
        return "claude-code"
    if path.suffix == ".txt":
        return "cursor" if is_cursor_text(head) else "claude-code"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if not text.startswith(b"{"):
        return "claude-code"
    if text[1:2] in (b"\n", b"\r") or path.suffix == ".json":
        return "gemini" if looks_like_gemini(text) else "claude-code"
    line = text.split(b"\n", 1)[0]
    if b'"payload"' in line or b'"instructions"' in line:
        record: Any = None
        if b"\n" in text or len(head) < _SNIFF_BYTES:
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):
                record = None
        elif b'"session_meta"' in line[:300]:  # a 0.14x meta embedding its tool catalogue: too long to parse
            record = {"type": "session_meta"}
        elif line.startswith(b'{"id":'):  # a legacy meta line with long instructions
            record = {"id": "", "instructions": None}
        if type(record) is dict and is_rollout_head(cast("dict[str, Any]", record)):
            return "codex"
    if looks_like_gemini(line) and b'"type"' not in line:
        return "gemini"  # a JSON-lines Gemini session: its header record first
    return source_of_line(line) or "claude-code"


def _other_sessions(files: list[tuple[Path, Source]]) -> list[SessionFiles]:
    """Sessions of other agents' files: a spawned Codex thread joins its parent's session, and a
    user's fork of a Codex or Pi session is read with the session it forked (the root of a chain of
    forks). A fork whose session is not among `files` is read with it all the same when that
    session's file is where the agent keeps it (:func:`_add_forked_sessions`), so the turns the fork
    copied are kept once, in the session they belong to, whichever of the two files is read first."""
    found: list[SessionFiles] = []
    codex = {path: peek_rollout_meta(path) for path, source in files if source == "codex"}
    pi = {path: peek_pi_header(path) for path, source in files if source == "pi"}
    _add_forked_sessions(codex, pi)
    by_thread = {m.thread_id: p for p, m in codex.items() if m.thread_id}
    children: dict[Path, list[Path]] = defaultdict(list)
    forks: dict[Path, list[Path]] = defaultdict(list)
    forked_from = {p: m.forked_from for p, m in codex.items() if m.parent_thread_id is None}
    for path, meta in codex.items():
        parent = by_thread.get(meta.parent_thread_id or "")
        if parent is not None and parent != path:
            children[parent].append(path)
        elif (root := _fork_root(path, forked_from, by_thread)) is not None:
            forks[root].append(path)
    attached = {p for paths in (*children.values(), *forks.values()) for p in paths}
    for path, meta in codex.items():
        if path not in attached:
            found.append(
                SessionFiles(
                    meta.thread_id or path.stem,
                    path,
                    tuple(sorted(children.get(path, ()))),
                    path.parent,
                    "codex",
                    tuple(sorted(forks.get(path, ()))),
                    forked_from.get(path) or "",
                )
            )
    for source in ("copilot", "cursor", "droid"):
        found += [_one_file_session(path, source) for path, kind in files if kind == source]
    found += _pi_sessions(pi)
    found += _gemini_sessions([path for path, source in files if source == "gemini"])
    return found


def _add_forked_sessions(codex: dict[Path, RolloutMeta], pi: dict[Path, PiHeader]) -> None:
    """Add to `codex` and `pi` the file of each session a fork among them was forked from, when it
    is not among them but where the agent keeps it (and so on up a chain of forks): a Pi fork's
    header names the file (``parentSession``); a Codex rollout lies in ``<sessions>/YYYY/MM/DD/``,
    named after its thread (``rollout-<time>-<thread id>.jsonl``). Also the Pi forks beside a Pi
    session among them (``/fork`` writes the fork in the session's folder): a session ingested by
    its own file after its fork is read with it, and the fork's copy goes."""
    known = {path.resolve() for path in (*codex, *pi)}
    threads = {m.thread_id for m in codex.values()}
    pending = list(codex)
    while pending:
        path = pending.pop()
        meta = codex[path]
        wanted = meta.forked_from if meta.parent_thread_id is None else None
        if not wanted or wanted in threads:
            continue
        threads.add(wanted)
        parent = _codex_rollout(path, wanted)
        if parent is not None and parent.resolve() not in known and source_of(parent) == "codex":
            known.add(parent.resolve())
            codex[parent] = peek_rollout_meta(parent)
            pending.append(parent)
    sessions = {h.session_id for h in pi.values()}
    for folder in {path.parent for path in pi}:  # a session read by its own file: its forks beside it
        for sibling in sorted(folder.glob("*.jsonl")):
            if sibling.resolve() in known or source_of(sibling) != "pi":
                continue
            header = peek_pi_header(sibling)
            if header.parent_id in sessions:
                known.add(sibling.resolve())
                pi[sibling] = header
    waiting = list(pi)
    while waiting:
        header = pi[waiting.pop()]
        parent = header.parent_path
        if not header.parent_id or header.parent_id in sessions or parent is None:
            continue
        sessions.add(header.parent_id)
        if parent.is_file() and parent.resolve() not in known and source_of(parent) == "pi":
            known.add(parent.resolve())
            pi[parent] = peek_pi_header(parent)
            waiting.append(parent)


def _codex_rollout(fork: Path, thread: str) -> Path | None:
    """The rollout of `thread` in the Codex sessions tree `fork` lies in (``<sessions>/YYYY/MM/DD/``),
    if there is one; None also when `fork` lies elsewhere (there is nowhere known to look)."""
    tree = _codex_tree(fork)
    if tree is None:
        return None
    return next(iter(sorted(tree.glob(f"[0-9]*/[0-9]*/[0-9]*/rollout-*-{glob.escape(thread)}.jsonl"))), None)


def _codex_tree(rollout: Path) -> Path | None:
    """The Codex sessions tree a rollout lies in (``<sessions>/YYYY/MM/DD/``); None elsewhere."""
    day = rollout.parent
    if not all(p.name.isdigit() for p in (day, day.parent, day.parent.parent)):
        return None
    return day.parent.parent.parent


def join_codex_forks(groups: list[SessionFiles]) -> list[SessionFiles]:
    """``groups`` with each Codex session whose file forked the session of another of them read in
    that one's group, as one of its forks (and so on up a chain of forks): the two were found apart,
    from two targets (two sessions trees: one copied from another machine, a backup)."""
    by_thread = {g.session_id: n for n, g in enumerate(groups) if g.source == "codex"}

    def root(n: int) -> int:
        seen = {n}
        while (up := by_thread.get(groups[n].forked_from)) is not None and up not in seen:
            seen.add(up)
            n = up
        return n

    out = list(groups)
    moved: set[int] = set()
    for n, group in enumerate(groups):
        top = root(n)
        # (not a loop of forks; nor a fork with spawned agents: a fork's are not read in its session's group)
        if top != n and groups[top].forked_from not in by_thread and group.main is not None and not group.subagents:
            out[top] = replace(out[top], forks=tuple(sorted({*out[top].forks, group.main, *group.forks})))
            moved.add(n)
    return [g for n, g in enumerate(out) if n not in moved]


def stored_codex_parent(group: SessionFiles, stored: Iterable[str]) -> SessionFiles:
    """``group`` (a Codex session whose file forked a thread not found with it: ``forked_from``) read
    as a fork of that thread's session, when ``stored`` (the paths of files a store holds) holds its
    rollout and it is still there: the session was ingested from another place (another sessions
    tree, a copy from another machine) than its fork, whose copy of its turns then goes; with the
    agents it spawned among ``stored`` (their first lines read), so their links stay. Up a chain of
    forks when the session found forked another one in turn (but for one that spawned agents)."""
    if group.source != "codex" or not group.forked_from or group.main is None or group.subagents:
        return group  # a fork's spawned agents are not read in its session's group: kept as it is
    rollouts = sorted(p for p in map(Path, stored) if p.name.startswith("rollout-") and p.suffix == ".jsonl")
    seen = {group.session_id}
    while group.forked_from and group.forked_from not in seen and group.main is not None:
        seen.add(group.forked_from)
        named = f"-{group.forked_from}.jsonl"
        parent = next((p for p in rollouts if p.name.endswith(named) and p.is_file()), None)
        meta = peek_rollout_meta(parent) if parent is not None else None
        if parent is None or meta is None or meta.thread_id != group.forked_from:
            break
        thread, forks = group.forked_from, tuple(sorted({group.main, *group.forks}))
        spawned = tuple(p for p in rollouts if p.name > parent.name and peek_rollout_meta(p).parent_thread_id == thread)
        above = meta.forked_from or "" if meta.parent_thread_id is None and not spawned else ""
        group = SessionFiles(thread, parent, spawned, parent.parent, "codex", forks, above)
    return group


def stored_codex_forks(group: SessionFiles, stored: Iterable[str]) -> SessionFiles:
    """``group`` (a Codex session), with the user forks of it (and of those forks) among ``stored``
    (the paths of files a store holds) added to its forks: the rollouts named after it, in any
    sessions tree (a fork may have been stored from a copy of another machine's), whose meta names
    it, or one of them, as the thread they forked. A fork ingested while its session was nowhere
    kept the turns it copied; read again with the session, it drops that copy. Only stored files
    are opened (their first line), not every later rollout of the tree."""
    main = group.main
    if group.source != "codex" or main is None or not main.name.startswith("rollout-"):
        return group
    known = {main, *group.forks}
    later = {
        path: meta
        for path in map(Path, stored)
        if path.name.startswith("rollout-")
        and path.name > main.name  # named by when it started: a fork starts after what it forked
        and path not in known
        and (meta := peek_rollout_meta(path)).forked_from
        and meta.parent_thread_id is None
    }
    threads, forks = {group.session_id}, set[Path]()
    while found := {p for p, meta in later.items() if p not in forks and meta.forked_from in threads}:
        forks |= found
        threads |= {thread for p in found if (thread := later[p].thread_id)}
    return replace(group, forks=tuple(sorted({*group.forks, *forks}))) if forks else group


def _pi_sessions(headers: dict[Path, PiHeader]) -> list[SessionFiles]:
    """A session per Pi file, but a fork is read with the session it was forked from (the root of a
    chain of forks) when that session's file is among `headers`."""
    by_id = {h.session_id: p for p, h in headers.items() if h.session_id}
    parent_of: dict[Path, str | None] = {p: h.parent_id for p, h in headers.items()}
    forks: dict[Path, list[Path]] = defaultdict(list)
    for path in headers:
        if (root := _fork_root(path, parent_of, by_id)) is not None:
            forks[root].append(path)
    attached = {p for found in forks.values() for p in found}
    return [
        replace(_one_file_session(path, "pi"), forks=tuple(sorted(forks.get(path, ()))))
        for path in headers
        if path not in attached
    ]


def _gemini_sessions(paths: list[Path]) -> list[SessionFiles]:
    """A session per Gemini CLI file, but a sub-agent's (``chats/<parent id>/<agent id>.jsonl``)
    joins the session of its parent's file (``chats/session-<time>-<parent id8>.jsonl``) when present."""
    headers = {path: peek_gemini_header(path) for path in paths}
    by_id = {(p.parent, h.session_id): p for p, h in headers.items() if h.session_id and not h.subagent}
    children: dict[Path, list[Path]] = defaultdict(list)
    for path, header in headers.items():
        if header.subagent:
            parent = by_id.get((path.parent.parent, path.parent.name))
            if parent is not None:
                children[parent].append(path)
    attached = {p for paths in children.values() for p in paths}
    return [
        SessionFiles(path.stem, path, tuple(sorted(children.get(path, ()))), path.parent, "gemini")
        for path in paths
        if path not in attached
    ]


def _one_file_session(path: Path, source: Source) -> SessionFiles:
    return SessionFiles(path.stem, path, (), session_folder(path, source), source)


def _fork_root(path: Path, forked_from: dict[Path, str | None], by_id: dict[str, Path]) -> Path | None:
    """The file at the start of `path`'s chain of user forks, when `path` is a fork and the
    session it forked is among `by_id` (`forked_from`: each file's fork parent id); None otherwise."""
    seen = {path}
    parent = by_id.get(forked_from.get(path) or "")
    while parent is not None and parent not in seen:
        seen.add(parent)
        above = by_id.get(forked_from.get(parent) or "")
        if above is None or above in seen:
            return parent
        parent = above
    return None


def _read_codex(files: SessionFiles) -> tuple[list[SessionTranscripts], SkipReport]:
    report = SkipReport()
    main, meta = None, None
    if files.main is not None:
        main, meta, skipped = read_rollout(files.main)
        report.merge(skipped)
    session_id = (meta.thread_id if meta else None) or files.session_id
    main, subagents = split_rewound(main)
    for path in files.subagents:
        child_meta = peek_rollout_meta(path)
        sub, _, skipped = read_rollout(path, agent_id=child_meta.thread_id or path.stem, session_id=session_id)
        report.merge(skipped)
        if sub is not None and main is not None:
            sub = _after_copy(sub, main)
        if sub is not None:
            label = AgentMeta(agent_type=child_meta.role, description=child_meta.nickname)
            subagents.append(replace(sub, meta=label))
    sessions: list[SessionTranscripts] = []
    if main is not None or subagents:
        cwd = (main.cwd if main else None) or next((s.cwd for s in subagents if s.cwd), None)
        paths = tuple(dict.fromkeys(t.path for t in (main, *subagents) if t is not None))
        sessions.append(SessionTranscripts(session_id, main, tuple(subagents), cwd, paths, "codex"))
    threads: dict[str, Transcript | None] = {session_id: main}
    metas = {path: peek_rollout_meta(path) for path in files.forks}
    pending = sorted(files.forks)
    while pending:  # a fork after the one it forked
        ready = [p for p in pending if metas[p].forked_from in threads] or pending[:1]
        path = ready[0]
        pending.remove(path)
        fork, fork_meta, skipped = read_rollout(path)
        report.merge(skipped)
        fork, rewound = split_rewound(fork)
        parent = threads.get(fork_meta.forked_from or "")
        threads[fork_meta.thread_id or path.stem] = fork
        copied = _copied(fork, parent) if fork is not None and parent is not None else 0
        if copied:
            report.add(SkipReason.DUPLICATE_RECORD, copied)
        if fork is None or copied == len(fork.messages):
            continue  # nothing but the copy (yet)
        own = replace(fork, messages=fork.messages[copied:])
        origin = (fork_meta.forked_from or "", parent.messages[copied - 1].uuid) if copied and parent else None
        sessions.append(
            SessionTranscripts(
                own.session_id,
                own,
                tuple(rewound),
                own.cwd,
                (path,),
                "codex",
                forked_from=origin,
                copied=frozenset(m.uuid for m in fork.messages[:copied]),
            )
        )
    return sessions, report


def _copied(fork: Transcript, parent: Transcript) -> int:
    """How many messages `fork` opens with that repeat `parent`'s (a user fork copies the
    conversation it forked, main line only)."""
    copied = 0
    for mine, theirs in zip(fork.messages, parent.messages, strict=False):
        if (mine.role, mine.blocks) != (theirs.role, theirs.blocks):
            break
        copied += 1
    return copied


def _after_copy(child: Transcript, parent: Transcript) -> Transcript | None:
    """A spawned Codex agent's stream without the copy of its parent's conversation it opens with
    (``spawn_agent`` with ``fork_context``: Codex versions before fork references wrote the parent's
    items again into the child's rollout); None when nothing else is left."""
    copied = _copied(child, parent)
    if not copied:
        return child
    return replace(child, messages=child.messages[copied:]) if copied < len(child.messages) else None


def _read_other(files: SessionFiles) -> tuple[list[SessionTranscripts], SkipReport]:
    """A Copilot CLI, Cursor, Droid or Pi session, and the Pi sessions forked from it (each after
    the one it forked), each fork without the entries it copied: those that carry the id of an entry
    of the session it forked, with the same message (Pi copies them under their ids)."""
    assert files.main is not None
    transcript, subagents, report = read_other(files.main, files.source)
    sessions: list[SessionTranscripts] = []
    threads: dict[str, Transcript] = {}
    parents = {path: peek_pi_header(path).parent_id for path in files.forks}
    pending = [files.main, *sorted(files.forks)]
    while pending:  # a fork after the one it forked
        path = ([p for p in pending if parents.get(p) in threads] or pending[:1])[0]
        pending.remove(path)
        if path != files.main:
            transcript, subagents, skipped = read_other(path, files.source)
            report.merge(skipped)
        if transcript is None:
            if subagents:  # a sub-agent's work with nothing of the main agent's (yet)
                first = subagents[0]
                sessions.append(
                    SessionTranscripts(first.session_id, None, tuple(subagents), first.cwd, (path,), files.source)
                )
            continue
        threads[transcript.session_id] = transcript
        parent = threads.get(parents.get(path, ""))
        theirs = {m.uuid: (m.role, m.blocks) for m in parent.messages} if parent is not None else {}
        copied = [m for m in transcript.messages if theirs.get(m.uuid) == (m.role, m.blocks)]
        if copied:
            report.add(SkipReason.DUPLICATE_RECORD, len(copied))
            left = {m.uuid for m in copied}
            transcript = replace(transcript, messages=tuple(m for m in transcript.messages if m.uuid not in left))
        main, rewound = split_rewound(transcript if transcript.messages else None)
        if main is None and not rewound:
            continue  # nothing but the copy (yet)
        found_in = main or rewound[0]
        sessions.append(
            SessionTranscripts(
                found_in.session_id,
                main,
                (*subagents, *rewound),
                found_in.cwd,
                (path,),
                files.source,
                forked_from=(parent.session_id, copied[-1].uuid) if parent is not None and copied else None,
                copied=frozenset(m.uuid for m in copied),
            )
        )
    return sessions, report


def _read_gemini(files: SessionFiles) -> tuple[list[SessionTranscripts], SkipReport]:
    assert files.main is not None
    session, report = read_gemini(files.main)
    main, subagents = split_rewound(session.transcript)
    for path in files.subagents:
        agent = peek_gemini_header(path).session_id or path.stem
        child, skipped = read_gemini(path, agent_id=agent, session_id=session.session_id)
        report.merge(skipped)
        if child.transcript is not None:
            subagents.append(child.transcript)
    if main is None and not subagents:
        return [], report
    cwd = session.cwd or next((s.cwd for s in subagents if s.cwd), None)
    paths = tuple(dict.fromkeys(t.path for t in (main, *subagents) if t is not None))
    return [
        SessionTranscripts(session.session_id, main, tuple(subagents), cwd, paths, "gemini", session.project_hash)
    ], report


# --- walking ----------------------------------------------------------------------------------------


def _jsonl_files(
    root: Path, unreadable: list[tuple[str, str]] | None = None, linked_outside: list[tuple[str, str]] | None = None
) -> list[Path]:
    """Transcript candidates: every ``*.jsonl``, ``session-*.json`` in a ``chats`` folder, and Cursor's
    text transcripts (:func:`_cursor_text`).

    Linked files are followed, and so are the linked folders right under `root` (a project folder
    moved to another disk and linked back: Claude Code writes through such a link) and, deeper down,
    linked folders whose target lies inside what is read (`root` and those project folders, after
    links). Each real folder and file is taken once, so a link back up the tree ends instead of
    looping. A deeper linked folder leading outside is not entered: a link inside a project to a
    home folder or a disk would have the walk read a tree nobody asked for, for minutes. It goes to
    `linked_outside` (the user can pass its target to read it). A broken link to a transcript or a
    folder is reported in `unreadable`: its target was meant to be read and is gone (or leads back to
    itself); so is a pipe or device named like a transcript, which is never opened."""
    out: list[Path] = []
    seen: set[str] = set()  # real paths of the folders and files taken
    top = os.path.realpath(root)
    inside = [top]  # real paths whose trees are read: `root` and the project folders linked into it

    def note(path: str, reason: str) -> None:
        if unreadable is not None:
            unreadable.append((path, reason))

    def report(error: OSError) -> None:
        note(str(error.filename), f"cannot list this folder: {error.strerror or error}")

    for folder, dirs, names in os.walk(root, onerror=report, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs[:] = []  # reached again through a link: taken already (or a cycle)
            continue
        seen.add(real)
        entered: list[str] = []
        for name in sorted(d for d in dirs if not d.startswith(".") and d != "node_modules"):
            path = os.path.join(folder, name)
            target = os.path.realpath(path) if os.path.islink(path) else None
            if target is not None and real == top:
                inside.append(target)  # a linked project folder
            if target is None or any(os.path.commonpath((tree, target)) == tree for tree in inside):
                entered.append(name)
            elif linked_outside is not None:
                linked_outside.append((path, target))
        dirs[:] = entered
        chats = os.path.basename(folder) == "chats"
        for name in sorted(names):
            path = os.path.join(folder, name)
            link = os.path.islink(path)
            candidate = (
                name.endswith(".jsonl")
                or (chats and name.startswith("session-") and name.endswith(".json"))
                or _cursor_text(folder, name)
            )
            if link and not os.path.exists(path):
                # A transcript's link, or a folder's (no suffix), was meant to be read; a broken link
                # to anything else (notes.md -> a moved file) is none of batch-ingest's business.
                if not name.startswith(".") and (candidate or not os.path.splitext(name)[1]):
                    note(path, _broken_link(path))
            elif candidate and not os.path.isfile(path):
                # A named pipe or a device: opening it waits for a writer that may never come (an
                # ingest hung on a pipe named like a transcript); nothing of it is a transcript.
                note(path, "not a regular file (a pipe, socket or device): not read")
            elif candidate:
                real_file = os.path.realpath(path) if link else os.path.join(real, name)
                if real_file not in seen:
                    seen.add(real_file)
                    out.append(Path(path))
    return out


def _cursor_text(folder: str, name: str) -> bool:
    """Whether `name` in `folder` is a Cursor text transcript to read: ``<id>.txt`` in an
    ``agent-transcripts`` folder (or its ``<id>/`` folder), with no ``<id>.jsonl`` beside it that
    holds the same session."""
    stem, suffix = os.path.splitext(name)
    where = os.path.basename(folder)
    if suffix != ".txt" or not (
        where == "agent-transcripts"
        or (where == stem and os.path.basename(os.path.dirname(folder)) == "agent-transcripts")
    ):
        return False
    return not os.path.exists(os.path.join(folder, stem + ".jsonl"))


def _broken_link(path: str) -> str:
    """Why a link cannot be followed: its target is gone, or the links lead back to themselves."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"link loop: its target {os.readlink(path)} leads back to it"
    return f"broken link: its target {os.readlink(path)} does not exist"


def _subagents_owner(root: Path, path: Path) -> tuple[Path, str] | None:
    """(session folder, session id) when `path` lies in a ``<session>/subagents/`` tree, else None.

    Only folders at or below `root` count, plus `root` itself being a ``subagents`` folder, so a
    ``subagents`` folder higher up the user's own path is not mistaken for the layout.
    """
    dirs = path.relative_to(root).parts[:-1]
    for k in range(len(dirs) - 1, -1, -1):
        if dirs[k] == "subagents":
            if k >= 1:
                return root.joinpath(*dirs[: k - 1]), dirs[k - 1]
            return root.parent, root.name
    if root.name == "subagents":
        return root.parent.parent, root.parent.name
    return None


def _session_id_of_main(path: Path) -> str:
    if _UUID.match(path.stem):
        return path.stem
    return _peek_session_id(path) or path.stem


def _peek_session_id(path: Path) -> str | None:
    """The ``sessionId`` of the first top-level record that has one, reading as little as possible."""
    try:
        with path.open("rb") as f:
            read = 0
            for _ in range(_PEEK_MAX_LINES):
                line = f.readline(_PEEK_LINE_BYTES)
                if not line or read > _PEEK_MAX_BYTES:
                    return None
                read += len(line)
                if len(line) == _PEEK_LINE_BYTES and not line.endswith(b"\n"):
                    # A longer line (a pasted bundle): parsing it whole would hold it several times
                    # over; its key, when a record names one, opens the record in Claude Code's files.
                    found = _SESSION_ID_KEY.search(line)
                    if found:
                        return found.group(1).decode("utf-8", "replace")
                    while line and not line.endswith(b"\n"):  # the rest of the line, piece by piece
                        line = f.readline(_PEEK_LINE_BYTES)
                        read += len(line)
                    continue
                if b'"sessionId"' not in line:
                    continue
                try:
                    record: Any = json.loads(line)
                except (ValueError, RecursionError):
                    continue
                sid: Any = cast("dict[str, Any]", record).get("sessionId") if type(record) is dict else None
                if isinstance(sid, str) and sid:
                    return sid
    except OSError:
        return None
    return None


# --- sub-agent files -------------------------------------------------------------------------------


def _agent_id_from_name(path: Path) -> str:
    """``agent-<id>.jsonl`` → ``<id>``; any other name → its stem."""
    stem = path.stem
    return stem[len("agent-") :] if stem.startswith("agent-") and len(stem) > len("agent-") else stem


def _read_agent_meta(path: Path, report: SkipReport) -> AgentMeta | None:
    meta_path = path.with_name(path.stem + ".meta.json")
    try:
        text = meta_path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        raw: Any = json.loads(text)
    except (ValueError, RecursionError):
        raw = None
    if type(raw) is not dict:
        report.add(SkipReason.INVALID_AGENT_META)
        return None
    fields = cast("dict[str, Any]", raw)

    def text_field(key: str) -> str | None:
        value = fields.get(key)
        return value if isinstance(value, str) and value else None

    return AgentMeta(
        agent_type=text_field("agentType"),
        description=text_field("description"),
        tool_use_id=text_field("toolUseId"),
        worktree_path=text_field("worktreePath"),
    )
