"""Moving sessions between projects: merging two projects into one, splitting a folder's sessions out.

A project is the folder a session was recorded in, and clones of one repository (one ``origin``
remote, :func:`causantic.transcripts.projects.repository_key`) are one project wherever each is
kept. Two cases that rule cannot settle alone:

- **merge**: projects recorded before repositories were (a release before clones were joined) stay
  one per path; ``causantic merge-projects SOURCE INTO`` moves SOURCE's sessions and folders into INTO;
- **split**: two projects started from one template that kept its ``origin`` are one project of two
  folders; ``causantic split-project FOLDER`` moves the sessions recorded in FOLDER (or below it) out
  into a project of their own, and sessions later recorded there join that one, as do other clones
  of that folder's name (another member's ``blog``: :meth:`~causantic.store.base.SqlStore.clone_key`).

Both preview first (the default) and move only what the preview listed: the sessions are named by id,
and when they have changed since (a chunk added, a session gone) nothing is moved. With ``--yes`` no
one saw the preview, and what moves is what the project holds once the move holds its locks. In team memory the
server decides who may move a chunk as who may forget it (row-level security): another member's
chunks are moved only by them, by an admin, or by a member sharing their login.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from causantic.errors import CausanticError, ProjectNotFound
from causantic.retrieval.listing import resolve_project
from causantic.store.protocol import MemoryStoreProtocol
from causantic.store.records import Project, SessionTotals
from causantic.transcripts.projects import canonical_project_path, repository_key
from causantic.wording import counted


@dataclass(frozen=True, slots=True)
class ProjectMove:
    """A merge or split: previewed (``dry_run``) or done."""

    action: Literal["merge", "split"]
    source: str  # the project the sessions leave, by name
    source_path: str
    target: str  # the project they join (a split: the one it makes, named as it will be)
    target_path: str
    session_ids: tuple[str, ...]
    sessions: tuple[SessionTotals, ...]  # those holding chunks, newest first
    chunks: int
    aliases: tuple[str, ...]  # the folders (and repositories) that move with them: later sessions follow
    left: int  # sessions that stay in the source (it is deleted when none does)
    unrecorded: int  # a split: sessions of the source whose folder is not recorded (ingested before it was)
    others: tuple[tuple[str, int], ...]  # team memory: other members' chunks this member may not move
    dry_run: bool = True


def merge_preview(store: MemoryStoreProtocol, source: str, into: str, member: str | None) -> ProjectMove:
    """What merging the project ``source`` into ``into`` moves: all of its sessions and folders."""
    moving = resolve_project(store, source, emptied=True)
    target = resolve_project(store, into, emptied=True)
    if moving.id == target.id:
        raise CausanticError(
            f"{source!r} and {into!r} name one project ({moving.name}, {moving.path}): nothing to merge."
        )
    ids = tuple(sorted(store.session_folders(moving.id)))
    return _preview(store, "merge", moving, target.name, target.path, ids, store.project_aliases(moving.id), 0, member)


def split_preview(store: MemoryStoreProtocol, folder: str, project: str | None, member: str | None) -> ProjectMove:
    """What splitting the sessions recorded in ``folder`` (an absolute path) or below it out of their
    project moves; ``project`` names that project when the folder alone does not."""
    folder = _without_separator(folder)
    holder = resolve_project(store, project, emptied=True) if project else store.project_by_path(folder)
    if holder is None:
        raise ProjectNotFound(
            f"No project holds sessions recorded in {folder} (list-projects shows each project with its path; "
            "give it with --project)."
        )
    folders = store.session_folders(holder.id)
    if _within(holder.path, folder):
        joined = sorted({cwd for cwd in folders.values() if cwd is not None and not _within(cwd, holder.path)})
        which = f": {', '.join(joined[:3])}{' …' if len(joined) > 3 else ''}" if joined else ""
        raise CausanticError(
            f"{folder} is where {holder.name!r} itself lives ({holder.path}): split out the other folder whose "
            f"sessions joined it{which}."
        )
    ids = tuple(sorted(s for s, cwd in folders.items() if cwd is not None and _within(cwd, folder)))
    aliases = [a for a in store.project_aliases(holder.id) if _within(a, folder)]
    repository = repository_key(canonical_project_path(folder))
    if repository is not None:  # another clone of this folder's name (another member's) joins it too
        aliases.append(store.clone_key(repository, folder))
    unrecorded = sum(1 for cwd in folders.values() if cwd is None)
    name = store.new_project_name(folder)
    return _preview(store, "split", holder, name, folder, ids, aliases, unrecorded, member)


def apply_move(
    store: MemoryStoreProtocol, preview: ProjectMove, member: str | None, *, as_previewed: bool = True
) -> ProjectMove:
    """Move exactly what ``preview`` listed, in one transaction; nothing when the same question
    (the same projects, the same folder) has another answer now. Not ``as_previewed`` (``--yes``: no
    one saw the preview), what the answer is once the move holds the locks, which no ingest changes
    meanwhile: an ingest of the project writing while the move waited for memory's lock made every
    ``merge-projects --yes`` fail ('memory changed since … preview again')."""
    with store.atomic():
        # Held before the answer is read again, so no ingest adds to it meanwhile: the folder names'
        # locks first, then the projects', as every writer takes them.
        paths = (preview.source_path, preview.target_path)
        store.lock_project_names(paths)
        store.lock_projects([p.id for p in map(store.project_by_path, paths) if p is not None])
        if preview.action == "merge":
            now = merge_preview(store, preview.source_path, preview.target_path, member)
        else:
            now = split_preview(store, preview.target_path, preview.source_path, member)
        if as_previewed and (now.session_ids, now.chunks) != (preview.session_ids, preview.chunks):
            previewed = _what(len(preview.session_ids), preview.chunks)
            raise CausanticError(
                f"{_what(len(now.session_ids), now.chunks)} of {preview.source!r} match now, not the {previewed} "
                "previewed (memory changed since). Nothing was moved; preview again."
            )
        if now.others:
            raise CausanticError(f"{move_summary(now)} Nothing was moved.")
        if not now.session_ids:
            return now
        source = store.project_by_path(now.source_path)
        assert source is not None  # the preview just found it
        into = store.project_by_path(now.target_path) if now.action == "merge" else None
        joined = store.move_sessions(now.session_ids, source, into or now.target_path, now.aliases)
    return replace(now, target=joined.name, dry_run=False)


def move_summary(move: ProjectMove) -> str:
    """One sentence of what the move does (or did): the lead line of its preview and its report."""
    what = _what(len(move.session_ids), move.chunks)
    if not move.session_ids:
        return _nothing(move)
    verb = "cannot move" if move.others else "would move" if move.dry_run else "moved"
    if move.action == "merge":
        lead = f"{what} of {move.source!r} ({move.source_path}) {verb} into {move.target!r} ({move.target_path})"
        if move.others:
            return f"{lead}: {_refusal(move)}"
        return lead + ("." if move.left else f"; {move.source!r} is {'then ' if move.dry_run else ''}gone.")
    lead = f"{what} recorded in {move.target_path} {verb} out of {move.source!r}"
    if move.others:
        return f"{lead}: {_refusal(move)}"
    own = "its" if len(move.session_ids) == 1 else "their"
    return f"{lead} into a project of {own} own, {move.target!r}; sessions recorded there later join it."


def move_notes(move: ProjectMove) -> list[str]:
    """What else the reader of a move should know: what stays, and what a split cannot tell apart."""
    notes: list[str] = []
    if move.action == "split" and move.unrecorded:
        notes.append(
            f"{counted(move.unrecorded, 'session')} of {move.source!r} {_were(move.unrecorded)} ingested before "
            "sessions recorded their folder, and cannot be told apart: `causantic batch-ingest --force` records "
            "it; then split again."
        )
    if move.action == "merge" and move.left and move.dry_run:
        notes.append(f"{counted(move.left, 'session')} of {move.source!r} without chunks stay in it.")
    return notes


def _preview(
    store: MemoryStoreProtocol,
    action: Literal["merge", "split"],
    source: Project,
    target: str,
    target_path: str,
    ids: tuple[str, ...],
    aliases: list[str],
    unrecorded: int,
    member: str | None,
) -> ProjectMove:
    chosen = set(ids)
    sessions = tuple(t for t in store.session_summaries(source.id) if t.session_id in chosen)
    # The chunks this member may not move, counted by the store: reading the project's chunks to count
    # them took a large project's preview seconds (benchmarks/project_moves.py).
    others = {user: n for user, n in store.protected_counts(ids).items() if user != member}
    left = len(store.session_folders(source.id)) - len(ids)
    chunks = sum(t.chunks for t in sessions)
    return ProjectMove(
        action,
        source.name,
        source.path,
        target,
        target_path,
        ids,
        sessions,
        chunks,
        tuple(aliases),
        left,
        unrecorded,
        tuple(sorted(others.items())),
    )


def _refusal(move: ProjectMove) -> str:
    """Why the move cannot be made by this member: the other members' chunks among it."""
    (first, n), *rest = move.others
    whose = f"{counted(n, 'chunk')} {'is' if n == 1 else 'are'} {first}'s" + "".join(
        f" and {counted(m, 'chunk')} {user}'s" for user, m in rest
    )
    who = first if not rest else "their owners"
    return f"of them, {whose}, which only {who} or a team admin (causantic_admin) may move."


def _nothing(move: ProjectMove) -> str:
    if move.action == "merge":
        return f"{move.source!r} holds no session: nothing to merge into {move.target!r}."
    return f"No session of {move.source!r} is recorded in {move.target_path}: nothing to split out."


def _what(sessions: int, chunks: int) -> str:
    return f"{counted(sessions, 'session')} ({counted(chunks, 'chunk')})"


def _were(n: int) -> str:
    return "was" if n == 1 else "were"


def _without_separator(path: str) -> str:
    return path.rstrip("/\\") or path


def _within(path: str, folder: str) -> bool:
    """Whether ``path`` is ``folder`` or inside it."""
    path, folder = _without_separator(path), _without_separator(folder)
    return path == folder or path.startswith(folder.rstrip("/\\") + ("\\" if "\\" in folder else "/"))
