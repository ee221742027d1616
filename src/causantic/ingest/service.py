"""The ingest service: transcripts into chunks and edges, then vectors, as one user-facing step."""

from __future__ import annotations

import functools
import json
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from causantic.config import Config, TeamConfig, shares_project
from causantic.errors import StoreError
from causantic.ingest.indexing import embedding_text, sync_vectors
from causantic.ingest.pipeline import IngestReport, ProgressCallback, Route, combined, ingest, remove_chunks
from causantic.ingest.plan import PlanSettings
from causantic.ingest.topics import maintain_topics
from causantic.ingest_runs import IngestProgress
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import Project
from causantic.transcripts.projects import repository_key
from causantic.wording import counted

if TYPE_CHECKING:
    from causantic.embedding import Embedder


class Services(Protocol):
    """What ingestion needs from the composition root (``causantic.services.Services`` has it)."""

    config: Config
    store: MemoryStoreProtocol
    home: Path  # the data directory: its run folder shows this ingest while it runs

    @property
    def vectors(self) -> VectorIndexProtocol: ...

    @property
    def embedder(self) -> Embedder: ...


def ingest_paths(
    services: Services,
    paths: Sequence[Path],
    *,
    force: bool = False,
    embed: bool = True,
    workers: int = 2,
    on_progress: ProgressCallback | None = None,
    on_discovered: Callable[[int, int], None] | None = None,
    on_embed_progress: Callable[[int, int], None] | None = None,
    as_examples: bool = False,
    route: Route | None = None,
    marked_elsewhere: Sequence[MemoryStoreProtocol] = (),
    status: IngestProgress | None = None,
) -> IngestReport:
    """Ingest files and folders; embed new chunks unless ``embed`` is off or deferred by config.

    Chunks are committed (and found by keyword search) before embedding starts; vectors follow,
    committed batch by batch, so an interrupted run loses no more than one batch.

    ``as_examples``: these are the bundled example sessions (the quick start on a machine without
    sessions). Their projects are recorded as examples, and the first ingest that finds sessions of
    any other project in memory removes them, so examples never mix with real memory.

    ``route`` and ``marked_elsewhere``: this store takes only some sessions (team memory, see
    :func:`ingest_routed` and :func:`causantic.ingest.pipeline.ingest`).

    ``status``: the running command's status, when this ingest is one part of it (team memory's).
    """
    # Seen by the dashboard and `causantic stats` while it runs (causantic.ingest_runs), removed at the end.
    with IngestProgress(services.home, list(paths)) if status is None else nullcontext(status) as progress:
        return _ingest_paths(
            services,
            paths,
            force=force,
            embed=embed,
            workers=workers,
            on_progress=_both(progress.read, on_progress),
            on_discovered=_both(progress.discovered, on_discovered),
            on_embed_progress=_both(progress.embedding, on_embed_progress),
            as_examples=as_examples,
            route=route,
            marked_elsewhere=marked_elsewhere,
        )


def _ingest_paths(
    services: Services,
    paths: Sequence[Path],
    *,
    force: bool,
    embed: bool,
    workers: int,
    on_progress: ProgressCallback,
    on_discovered: Callable[[int, int], None],
    on_embed_progress: Callable[[int, int], None],
    as_examples: bool,
    route: Route | None,
    marked_elsewhere: Sequence[MemoryStoreProtocol],
) -> IngestReport:
    started = time.perf_counter()
    report = ingest(
        services.store,
        paths,
        PlanSettings.from_config(services.config),
        workers=workers,
        force=force,
        on_progress=on_progress,
        on_discovered=on_discovered,
        route=route,
        marked_elsewhere=marked_elsewhere,
    )
    if services.store.schema_note:
        report.notes.append(services.store.schema_note)
    # Chunks stored before the text features were kept get them here, not in the migration that
    # added their columns: the first process to open an upgraded store may be a hook with seconds to
    # run (store.migrations.m009_text_features); ingest runs detached or at the user's request.
    if filled := services.store.fill_text_features(pending_only=True):
        report.notes.append(f"stored the search features of {counted(filled, 'chunk')} ingested by an earlier version")
    if stemmed := services.store.fill_session_stems():
        report.notes.append(f"counted the words of {counted(stemmed, 'session')} ingested by an earlier version")
    examples = example_projects(services.store)
    if as_examples:
        paths_now = {p.path for p in services.store.projects_by_id(report.project_ids)}
        services.store.set_meta(EXAMPLES_KEY, json.dumps(sorted(paths_now | set(examples))))
    elif examples and holds_real_sessions(services.store):
        # Not only when this run brought real sessions: a run killed before it removed the examples
        # stored its sessions, and the next one, reading nothing new, removes them instead.
        report.examples_removed = remove_examples(services)
    if embed and services.config.embedding.eager:
        embed_started = time.perf_counter()
        written: set[str] = set()
        report.vectors_added = embed_pending(services, on_progress=on_embed_progress, written=written)
        # Another process embedding at the same time (another member's ingest, in team memory) may
        # have taken this run's chunks with its own: they have vectors this run did not write.
        report.vectors_elsewhere = len(set(report.new_chunk_ids) - written)
        report.embed_seconds = time.perf_counter() - embed_started
        report.topics_note = maintain_topics(
            services.store, services.vectors, services.config.clustering, report.new_chunk_ids
        )
    # A reader elsewhere (an MCP server, the dashboard) kept the write-ahead log from being emptied
    # as it grew; it would stay that large for as long as any process holds memory open.
    services.store.release_space()
    report.seconds = time.perf_counter() - started
    return report


def _both(status: Callable[..., None], theirs: Callable[..., None] | None) -> Callable[..., None]:
    """The status file's callback, then the caller's (a progress bar), with the same counts."""

    def call(*counts: int) -> None:
        status(*counts)
        if theirs is not None:
            theirs(*counts)

    return call


def ingest_routed(
    local: Services | None,
    team: Services | None,
    shared: Callable[[str], bool],
    paths: Sequence[Path],
    team_down: str | None = None,
    **options: Any,
) -> IngestReport:
    """Team memory: sessions of shared projects into ``team``, the others into ``local`` (a session
    that also worked in an unshared folder, or shares its file with one that did, is local: Route).

    ``local`` is None when every project is shared; ``team`` is None when no project is, or when
    team memory cannot be reached (``team_down`` says why). The local part runs first, so it is
    done whatever happens to the server; shared sessions it could not upload stay unmarked, and the
    next run uploads them (team memory's own marks say what it already holds)."""
    either = local or team
    assert either is not None, "ingest_routed needs a store"
    # One status for the whole command, both parts: one start time, and no moment it looks finished.
    with IngestProgress(either.home, list(paths)) as status:
        return _ingest_routed(local, team, shared, paths, team_down, status=status, **options)


def _ingest_routed(
    local: Services | None,
    team: Services | None,
    shared: Callable[[str], bool],
    paths: Sequence[Path],
    team_down: str | None,
    **options: Any,
) -> IngestReport:
    report: IngestReport | None = None
    if local is not None:
        others = [team.store] if team is not None else []
        report = ingest_paths(local, paths, route=Route(shared, team=False), marked_elsewhere=others, **options)
        report.notes.extend(_kept_local_note(local.store, report.kept_local))
    if team is not None:
        others = [local.store] if local is not None else []
        try:
            uploaded = ingest_paths(team, paths, route=Route(shared, team=True), marked_elsewhere=others, **options)
        except StoreError as exc:
            if report is None:
                raise
            team_down = str(exc)
        else:
            report = uploaded if report is None else combined(report, uploaded)
            if local is not None and not options.get("force"):
                report.notes.extend(_kept_locally_note(local.store, team.store, shared))
            return report
    assert report is not None, "ingest_routed needs a store"
    if team_down is not None:
        n = report.files_waiting
        waiting = f"{counted(n, 'file')} of shared projects {'waits' if n == 1 else 'wait'} for it"
        report.notes.append(
            f"team memory unavailable: {team_down.rstrip('.')}; local memory was updated"
            + (f", and {waiting} (the next run uploads {'it' if n == 1 else 'them'})" if n else "")
        )
    return report


def shared_projects(team: TeamConfig, store: MemoryStoreProtocol | None) -> Callable[[str], bool]:
    """Whether ``team.shareProjects`` names a project, by its canonical path: by its own name or path
    (:func:`~causantic.config.shares_project`), or as the project of team memory (``store``) that
    this clone of a repository joins. A member's clone at ``~/src/shop-clone`` of the repository
    team memory holds as ``shop`` is ``shop`` there (clones of one repository are one project), so
    naming ``shop`` shares it: it stayed local, silently, and nobody else saw its sessions. Another
    repository of that folder name (a fork, a personal copy) joins no such project and stays local."""

    @functools.cache
    def shared(path: str) -> bool:
        if shares_project(team, path):
            return True
        repository = repository_key(path) if store is not None and path else None  # '': no project
        try:
            joined = store.project_by_path(repository) if store is not None and repository else None
        except StoreError:  # team memory stopped answering: its shared projects wait anyway
            return False
        return joined is not None and shares_project(team, joined.path)

    return shared


KEPT_LOCAL_KEY = "kept_local_sessions"  # meta: JSON list of the ids of IngestReport.kept_local's sessions


def _kept_local_note(local: MemoryStoreProtocol, kept: dict[str, str]) -> list[str]:
    """Sessions of shared projects kept local because they also worked in a folder not shared (or
    share their file with a session that did): say so, and remember them, so that the next runs do
    not send the member to `--force` to upload what it would keep local again."""
    if not kept:
        return []
    raw = local.meta_value(KEPT_LOCAL_KEY)
    local.set_meta(KEPT_LOCAL_KEY, json.dumps(sorted(set(json.loads(raw) if raw else []) | set(kept))))
    by_project = Counter(kept.values())
    names = ", ".join(f"{name} ({counted(n, 'session')})" for name, n in sorted(by_project.items()))
    return [
        f"kept in local memory only, as {'it' if len(kept) == 1 else 'they'} also worked in a folder not shared "
        f"(or {'shares its file' if len(kept) == 1 else 'share their files'} with a session that did): {names}"
    ]


def _kept_locally_note(
    local: MemoryStoreProtocol, team: MemoryStoreProtocol, shared: Callable[[str], bool]
) -> list[str]:
    """A project added to ``team.shareProjects`` after its sessions were kept locally: its files are
    unchanged, so ingest reads "Nothing new" while team memory lacks them. Say which and how to
    upload them (``--force``, docs/team-memory.md "Sharing a project later")."""
    projects = [p for p in local.projects_by_id(local.projects_with_chunks()) if shared(p.path)]
    if not projects:
        return []
    raw = local.meta_value(KEPT_LOCAL_KEY)
    private = set(json.loads(raw) if raw else [])  # kept local by the folders they worked in: no --force uploads them
    local_only = {
        p.name: missing
        for p in projects
        if (sessions := [s.session_id for s in local.session_summaries(p.id) if s.session_id not in private])
        and (missing := len(set(sessions) - set(team.session_sizes(sessions))))
    }
    if not local_only:
        return []
    names = ", ".join(f"{name} ({counted(missing, 'session')})" for name, missing in local_only.items())
    return [f"shared now but kept in local memory only: {names}; `causantic batch-ingest --force` uploads them"]


def embed_pending(
    services: Services, on_progress: Callable[[int, int], None] | None = None, written: set[str] | None = None
) -> int:
    """Embed every chunk that has no vector for the configured model (resumable at any point); the
    ids of the chunks embedded are added to ``written``."""
    result_chars = services.config.embedding.tool_result_chars

    def embed(texts: list[str]) -> object:
        return services.embedder.embed_documents([embedding_text(t, result_chars) for t in texts])

    added = sync_vectors(
        services.store,
        services.vectors,
        embed,
        batch_size=max(services.config.embedding.batch_size * 8, 64),
        on_progress=on_progress,
        written=written,
    )
    services.store.release_space()  # the vectors went through the write-ahead log; reindex freed the old ones
    return added


def reindex(services: Services, on_progress: Callable[[int, int], None] | None = None) -> int:
    """Re-embed every chunk with the configured model, from scratch; fill the text features of any
    chunk written without them (by an older version, after the store was migrated), and count the
    stems of sessions a migrated store has not counted yet."""
    services.store.fill_text_features()
    services.store.fill_session_stems()
    services.vectors.drop()
    return embed_pending(services, on_progress=on_progress)


EXAMPLES_KEY = "example_projects"  # meta: JSON list of the paths of projects holding example sessions


def example_projects(store: MemoryStoreProtocol) -> dict[str, Project]:
    """The projects that hold only the bundled example sessions, by path."""
    raw = store.meta_value(EXAMPLES_KEY)
    paths: list[str] = json.loads(raw) if raw else []
    return {path: project for path in paths if (project := store.project_by_path(path)) is not None}


def remove_examples(services: Services) -> list[str]:
    """Delete the example projects' chunks and vectors; return their names."""
    store = services.store
    projects = list(example_projects(store).values())
    ids = [i for project in projects for i in store.project_chunk_ids(project.id)]
    if ids:  # not remembered as forgotten: a later quick start on an emptied store shows them again
        remove_chunks(store, services.vectors, ids, remember=False)
    store.delete_meta(EXAMPLES_KEY)
    return [project.name for project in projects]


def holds_real_sessions(store: MemoryStoreProtocol) -> bool:
    """True when memory holds sessions of any project besides the bundled examples."""
    examples = {p.id for p in example_projects(store).values()}
    return any(project_id not in examples for project_id in store.projects_with_chunks())
