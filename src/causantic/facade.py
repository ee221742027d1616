"""``Memory``: the one door to ingest, search, the episodic answers and the store's upkeep.

    from causantic import Memory

    with Memory("/tmp/my-memory") as memory:
        memory.ingest(["~/.claude/projects"])
        answer = memory.recall("how did we fix the login redirect loop")
        for episode in answer.episodes:
            ...

A ``Memory`` owns one store (SQLite, vectors) in a data directory (``home``; default from
:func:`causantic.config.causantic_home`) and the configuration it was opened with: the defaults and
files as :func:`causantic.config.load_config` reads them (the user file being that home's
``config.json``), then ``overrides`` (dotted keys, as in
``causantic config``). An ``embedder`` may be passed in to share one loaded model between several
memories. The CLI, the MCP server, the hooks, the dashboard and the benchmarks all call these
methods, so a rule (a query check, a refusal, a default) holds the same everywhere.

Results are frozen: the retrieval dataclasses (a search's hits, an answer's episodes, a
reconstruction) for programs and text renderings, and for everything else the pydantic models of
:mod:`causantic.retrieval.output`, which are also the one JSON shape of ``--json`` and MCP.
Heavy parts (the embedding runtime, the ingest pipeline, clustering) load inside the methods that
need them, so importing this module stays cheap for ``causantic --help`` and the hooks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from causantic import __version__
from causantic.errors import CausanticError, InvalidQuery, checked_query
from causantic.home import causantic_home
from causantic.services import Services, open_store
from causantic.services import team_init as team_init  # team memory's set-up and status, for the CLI
from causantic.services import team_status as team_status

if TYPE_CHECKING:
    from causantic.config import Config, Source
    from causantic.embedding import Embedder
    from causantic.ingest.pipeline import ProgressCallback
    from causantic.ingest.topics import ClusterReport
    from causantic.retrieval.browse import Overview, SessionView, Timeline, TopicSize
    from causantic.retrieval.episodes import EpisodeAnswer
    from causantic.retrieval.forget import ForgetResult
    from causantic.retrieval.listing import ProjectSummary, SessionList, TopicSummary
    from causantic.retrieval.output import EmbedOut, IngestOut, StatsOut
    from causantic.retrieval.reconstruct import Reconstruction
    from causantic.retrieval.search import SearchResult
    from causantic.retrieval.topic_map import TopicMap
    from causantic.store.records import ProjectSessions
    from causantic.store.records import StoredChunk as StoredChunk  # a result type of topic_members

Progress = Callable[[int, int], None]  # (done, total)
TOPIC_MAP_CACHE = "cache/topic-map.json"


class Memory:
    def __init__(
        self,
        home: str | Path | None = None,
        *,
        config: Config | None = None,
        overrides: dict[str, Any] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        paths: dict[str, Any] = {}
        self.home = causantic_home() if home is None else Path(home).expanduser()
        if config is None:
            from causantic.config import load_config

            config = load_config(home=self.home)  # that home's config.json, not $CAUSANTIC_HOME's
        if home is not None:
            paths = {"storage.dbPath": str(self.home / "memory.db"), "storage.vectorPath": str(self.home / "vectors")}
        if paths or overrides:
            config = config.with_overrides({**paths, **(overrides or {})})
        self.config = config
        self._services = Services(config, open_store(config), home=self.home, _embedder=embedder)

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._services.close()

    def warm_up(self) -> None:
        """Open the vector index and load the embedding model now, so the first search does not wait
        (nothing loads while no vector is stored)."""
        if self._services.vectors.count() > 0:
            self._services.embedder.embed_query("warm up")

    # ---- writing ---------------------------------------------------------------------------

    def ingest(
        self,
        paths: Sequence[str | Path],
        *,
        force: bool = False,
        embed: bool = True,
        workers: int = 1,
        on_progress: ProgressCallback | None = None,
        on_discovered: Progress | None = None,
        on_embed_progress: Progress | None = None,
        as_examples: bool = False,
    ) -> IngestOut:
        """Ingest transcript files and folders (idempotent: unchanged files are skipped); what it did.

        ``as_examples``: the bundled example sessions, kept apart from real memory (see
        :func:`causantic.ingest.service.ingest_paths`)."""
        from causantic.ingest.service import ingest_paths
        from causantic.retrieval.output import ingest_out

        report = ingest_paths(
            self._services,
            [Path(p).expanduser() for p in paths],
            force=force,
            embed=embed,
            workers=workers,
            on_progress=on_progress,
            on_discovered=on_discovered,
            on_embed_progress=on_embed_progress,
            as_examples=as_examples,
        )
        return ingest_out(report)

    def holds_real_sessions(self) -> bool:
        """Whether memory holds sessions besides the bundled examples."""
        from causantic.ingest.service import holds_real_sessions

        return holds_real_sessions(self._services.store)

    def embed_pending(self, on_progress: Progress | None = None) -> EmbedOut:
        """Embed every chunk that has no vector yet (resumable at any point)."""
        from causantic.ingest.service import embed_pending

        added = embed_pending(self._services, on_progress=on_progress)
        return self._embedded(added)

    def reindex(self, on_progress: Progress | None = None) -> EmbedOut:
        """Re-embed every chunk with the configured model, from scratch."""
        from causantic.ingest.service import reindex

        added = reindex(self._services, on_progress=on_progress)
        return self._embedded(added)

    def _embedded(self, added: int) -> EmbedOut:
        from causantic.retrieval.output import EmbedOut

        vectors = self._services.vectors
        return EmbedOut(model=vectors.model_id, vectors_added=added, vectors=vectors.count())

    def recluster(self, on_progress: Callable[[str], None] | None = None) -> ClusterReport:
        """Group every embedded chunk into topics (a full HDBSCAN run; continuing topics keep their ids)."""
        from causantic.ingest.topics import recluster

        s = self._services
        return recluster(s.store, s.vectors, s.config.clustering, on_progress=on_progress)

    def forget(
        self,
        project: str,
        *,
        before: datetime | None = None,
        after: datetime | None = None,
        session_id: str | None = None,
        query: str | None = None,
        threshold: float = 0.6,
        whole_project: bool = False,
        dry_run: bool = True,
        expected: int | None = None,
        only_ids: frozenset[str] | None = None,
        preview_size: int = 5,
    ) -> ForgetResult:
        """Preview (the default) or delete chosen chunks of one project, or the whole project.

        No filter means the whole project. A real run given ``expected`` (the previewed count)
        deletes nothing when the matches have changed since; given ``only_ids`` (what a preview
        listed) it deletes only those; :meth:`forget_previewed` deletes exactly what a preview
        matched. A ``query`` compares meanings, so it is refused while no vectors are stored (it
        would match nothing and look like success)."""
        from causantic.retrieval.forget import ForgetRequest, forget

        if query is not None:
            query = checked_query(query)
        s = self._services
        if query and s.vectors.count() == 0:
            raise CausanticError(
                "Forgetting by query compares meanings, and no vectors are stored yet (run `causantic embed`); "
                "use before, after or session_id instead."
            )
        request = ForgetRequest(
            project,
            _utc(before),
            _utc(after),
            session_id,
            query,
            threshold,
            dry_run,
            whole_project=whole_project,
            expected=expected,
            only_ids=only_ids,
        )
        return forget(s.store, s.vectors, s.embedder.embed_query if query else None, request, preview_size)

    def forget_previewed(self, preview: ForgetResult) -> ForgetResult:
        """Delete exactly the chunks a :meth:`forget` preview matched (any ingested since stay)."""
        from causantic.retrieval.forget import delete_previewed

        return delete_previewed(self._services.store, self._services.vectors, preview)

    # ---- answers ---------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        source: Source | None = None,
        user: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        limit: int | None = None,
        max_tokens: int | None = None,
        mode: Literal["hybrid", "keyword", "vector"] | None = None,
    ) -> SearchResult:
        """The best-matching chunks, most relevant first. ``source`` keeps one coding agent's
        sessions (claude-code, codex or gemini), ``user`` one team member's (team memory); times
        without a zone are UTC."""
        from causantic.retrieval.search import SearchRequest

        since, until = _window(since, until, days_back)
        request = SearchRequest(
            checked_query(query),
            project=project,
            agent=agent,
            source=source,
            user=user,
            since=since,
            until=until,
            limit=limit,
            max_tokens=max_tokens,
            mode=mode,
        )
        return self._services.searcher.search(request)

    def recall(
        self,
        query: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        max_tokens: int | None = None,
        mode: Literal["episodes", "chain"] | None = None,
    ) -> EpisodeAnswer:
        """The story behind something: the turns that led to the best matches, in time order."""
        from causantic.retrieval.search import SearchRequest

        request = SearchRequest(checked_query(query), project=project, agent=agent, max_tokens=max_tokens)
        return self._services.episodes.recall(request, mode)

    def predict(
        self,
        context: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        max_tokens: int | None = None,
        mode: Literal["episodes", "chain"] | None = None,
    ) -> EpisodeAnswer:
        """What came next after work like this, in time order."""
        from causantic.retrieval.search import SearchRequest

        request = SearchRequest(checked_query(context, "context"), project=project, agent=agent, max_tokens=max_tokens)
        return self._services.episodes.predict(request, mode)

    def reconstruct(
        self,
        project: str,
        *,
        session_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        previous_session: bool = False,
        current_session_id: str | None = None,
        keep_newest: bool = True,
        agent: str | None = None,
        max_tokens: int | None = None,
        full: bool = False,
        page: int = 1,
        limit: int | None = None,
    ) -> Reconstruction:
        """A project's sessions in time order: one entry each (the timeline), or their text."""
        from causantic.retrieval.reconstruct import DEFAULT_TIMELINE_SESSIONS, ReconstructRequest, reconstruct

        since, until = _window(since, until, None)
        request = ReconstructRequest(
            project,
            session_id=session_id,
            since=since,
            until=until,
            days_back=days_back,
            previous_session=previous_session,
            current_session_id=current_session_id,
            keep_newest=keep_newest,
            agent=agent,
            max_tokens=max_tokens,
            full=full,
            page=page,
            limit=limit or DEFAULT_TIMELINE_SESSIONS,
        )
        return reconstruct(self._services.store, request, self.config.tokens.mcp_max_response)

    # ---- what memory holds -----------------------------------------------------------------

    @property
    def keyword_search(self) -> bool:
        """Whether this SQLite has FTS5 (without it, search runs on vectors alone)."""
        return self._services.store.fts_enabled

    def projects(self) -> list[ProjectSummary]:
        from causantic.retrieval.listing import list_projects

        return list_projects(self._services.store)

    def sessions(
        self,
        project: str,
        *,
        since: datetime | None = None,
        until: datetime | None = None,
        days_back: float | None = None,
        limit: int = 30,
        agent: str | None = None,
    ) -> SessionList:
        """A project's sessions, newest first (at most ``limit``), and how many matched in all."""
        from causantic.retrieval.listing import SessionList, list_sessions

        since, until = _window(since, until, days_back)
        proj, sessions, total = list_sessions(
            self._services.store, project, since=since, until=until, limit=limit, agent=agent
        )
        return SessionList(proj.name, proj.path, tuple(sessions), total)

    def project(self, name: str) -> ProjectSummary:
        """The project a name, path or folder inside it names (:class:`ProjectNotFound` when none or several)."""
        from causantic.errors import ProjectNotFound
        from causantic.retrieval.listing import resolve_project

        found = resolve_project(self._services.store, name)
        summary = next((p for p in self.projects() if p.path == found.path), None)
        if summary is None:  # a project whose chunks were all forgotten
            raise ProjectNotFound(f"Project {found.name!r} holds no memory.")
        return summary

    def topics(self, project: str | None = None) -> list[TopicSummary]:
        """Topics (HDBSCAN clusters) with a label, size and date range; sizes count ``project`` only when given."""
        from causantic.retrieval.listing import list_topics

        return list_topics(self._services.store, self._services.vectors.model_id, project)

    # ---- browsing (the dashboard's pages) --------------------------------------------------

    def overview(self) -> Overview:
        """What memory holds and how fresh it is, from counts that stay cheap at any size."""
        from causantic.retrieval.browse import overview

        return overview(self._services.store, self._services.vectors)

    def change_stamp(self) -> tuple[int, int]:
        """Changes whenever memory does (any commit, by any process): what derived views are keyed by."""
        return self._services.store.change_stamp()

    def project_activity(self) -> list[ProjectSessions]:
        from causantic.retrieval.browse import project_activity

        return project_activity(self._services.store)

    def project_names(self) -> list[str]:
        from causantic.retrieval.browse import project_names

        return project_names(self._services.store)

    def timeline(self, project: str) -> Timeline:
        """A project's sessions, newest first, with titles and their agent trees."""
        from causantic.retrieval.browse import timeline

        return timeline(self._services.store, project)

    def session_view(self, session_id: str) -> SessionView:
        """One session's text, agent by agent (:class:`SessionNotFound` when memory holds no such session)."""
        from causantic.retrieval.browse import session_view

        return session_view(self._services.store, session_id)

    def topic_sizes(self) -> list[TopicSize]:
        from causantic.retrieval.browse import topic_sizes

        return topic_sizes(self._services.store, self._services.vectors.model_id)

    def topic_members(self, topic_id: int) -> tuple[TopicSummary, list[StoredChunk]]:
        from causantic.retrieval.browse import topic_members

        return topic_members(self._services.store, self._services.vectors.model_id, topic_id)

    def topic_map(self, topics: Sequence[TopicSize]) -> TopicMap:
        """The 2-D map of the topics, cached in ``<home>/cache`` while the topics stay the same."""
        from causantic.retrieval.topic_map import topic_map

        s = self._services
        return topic_map(s.store, s.vectors, self.home / TOPIC_MAP_CACHE, [(t.id, t.label, t.size) for t in topics])

    def stats(self) -> StatsOut:
        """Counts of what memory holds. A vector index that cannot be read does not hide the
        rest: its figures are null and ``vector_error`` says why (the CLI and MCP alike)."""
        from causantic.retrieval.output import EdgeCounts, SourceCounts, StatsOut, project_out

        store = self._services.store
        counts: dict[str, Any] = dict(store.counts())
        vectors: int | None = None
        missing: int | None = None
        ann, error, vector_bytes = "error", None, None
        try:
            health = self._services.vectors.health(fresh=True)
            vectors, missing, ann = health.vectors, health.missing, health.ann
            vector_bytes = self._services.vectors.size_bytes()
        except (CausanticError, OSError) as exc:
            error = str(exc)
        return StatsOut(
            version=__version__,
            chunks=counts["chunks"],
            vectors=vectors,
            chunks_without_vectors=missing,
            vector_index=ann,
            vector_error=error,
            edges=EdgeCounts(**counts["edges"]),
            sessions=counts["sessions"],
            projects=counts["projects"],
            agents=counts["agents"],
            clusters=counts["clusters"],
            skipped_lines=counts["skipped_lines"],
            keyword_index=counts["keyword_index"],
            sources={k: SourceCounts(**v) for k, v in counts["sources"].items()},
            sqlite_bytes=store.size_bytes(),
            vector_bytes=vector_bytes,
            projects_detail=[project_out(p) for p in self.projects()],
        )


def _utc(value: datetime | None) -> datetime | None:
    """Times without a zone are UTC (click.DateTime and ISO dates without an offset give those)."""
    return value.replace(tzinfo=UTC) if value is not None and value.tzinfo is None else value


def _window(
    since: datetime | None, until: datetime | None, days_back: float | None
) -> tuple[datetime | None, datetime | None]:
    since, until = _utc(since), _utc(until)
    if days_back is not None:
        if since is not None:
            raise InvalidQuery("Give either days back or a start time, not both.")
        since = datetime.now(UTC) - timedelta(days=days_back)
    if since is not None and until is not None and until <= since:
        raise InvalidQuery(f"The end ({until.isoformat()}) must be later than the start ({since.isoformat()}).")
    return since, until
