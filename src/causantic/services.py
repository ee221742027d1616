"""Composition root: configuration in, opened stores and services out.

:class:`causantic.Memory` (``facade.py``) is built on these services, and it is what the CLI, the
MCP server, the hooks and the dashboard call; tests and benchmarks that measure a component alone
use :func:`open_services`. The embedding model and the vector index open on first use, so commands
that need no vectors never pay for them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from causantic.errors import ConfigError, StoreError, TeamDownReason, TeamUnavailable
from causantic.home import causantic_home, db_path, is_team_memory, vector_path
from causantic.store.memory import MemoryStore
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.vectors import VectorIndex

if TYPE_CHECKING:
    from causantic.config import Config, SettingChange
    from causantic.embedding import Embedder
    from causantic.retrieval.chains import ChainWalker
    from causantic.retrieval.episodes import EpisodeBuilder
    from causantic.retrieval.search import Searcher
    from causantic.store.postgres.team import JoinCheck, ServerCheck, TeamStatus


@dataclass(slots=True)
class Services:
    config: Config
    store: MemoryStoreProtocol  # the seam (store/protocol.py): no caller depends on SQLite
    home: Path = field(default_factory=causantic_home)  # the data directory: its cache holds the model files
    _embedder: Embedder | None = field(default=None, repr=False)
    _embedder_from: Callable[[], Embedder | None] | None = field(default=None, repr=False)  # one model, two stores
    _vectors: VectorIndexProtocol | None = field(default=None, repr=False)
    _searcher: Searcher | None = field(default=None, repr=False)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None and self._embedder_from is not None:
            self._embedder = self._embedder_from()
        if self._embedder is None:
            from causantic.embedding import load_embedder

            cfg = self.config.embedding
            self._embedder = load_embedder(
                cfg.model,
                batch_size=cfg.batch_size,
                threads=cfg.threads,
                max_windows=cfg.max_windows,
                document_word_pieces=cfg.document_word_pieces,
                cache_dir=self.home / "cache",
            )
        return self._embedder

    @property
    def vectors(self) -> VectorIndexProtocol:
        if self._vectors is None:
            from causantic.embedding.models import get_spec

            spec = get_spec(self.config.embedding.model)
            if is_team_memory(self.config.storage):
                from causantic.store.postgres.vectors import PgVectorIndex

                team_index = PgVectorIndex(
                    postgres_url(self.config),
                    spec.id,
                    spec.dims,
                    connect_timeout=self.config.team.connect_timeout_seconds,
                )
                self._vectors = team_index
                return team_index
            self._vectors = VectorIndex(
                db_path(self.config),
                vector_path(self.config),
                spec.id,
                spec.dims,
                busy_timeout_ms=self.config.storage.busy_timeout_ms,
            )
        return self._vectors

    @property
    def searcher(self) -> Searcher:
        if self._searcher is None:
            from causantic.retrieval.expansion import ClusterExpander
            from causantic.retrieval.search import Searcher

            cfg = self.config
            self._searcher = Searcher(
                self.store,
                lambda: self.vectors,
                lambda text: self.embedder.embed_query(text),
                cfg.retrieval,
                cfg.cluster_expansion,
                cfg.tokens.mcp_max_response,
                expanders=[ClusterExpander(self.store, cfg.cluster_expansion)],
                relevance=cfg.relevance,
            )
        return self._searcher

    @property
    def chains(self) -> ChainWalker:
        from causantic.retrieval.chains import ChainWalker

        return ChainWalker(self.store, self.searcher, self.vectors, self.config.traversal.max_depth)

    def close(self) -> None:
        if self._vectors is not None:
            self._vectors.close()
        self.store.close()

    @property
    def episodes(self) -> EpisodeBuilder:
        from causantic.retrieval.episodes import EpisodeBuilder

        return EpisodeBuilder(self.store, self.searcher, self.vectors, self.config.episodes, self.chains)


def open_store(config: Config) -> MemoryStoreProtocol:
    """The store ``storage.backend`` names: the local SQLite file, or the team's PostgreSQL."""
    if is_team_memory(config.storage):
        from causantic.store.postgres.store import PostgresStore

        return PostgresStore(
            postgres_url(config), member=member_name(config), connect_timeout=config.team.connect_timeout_seconds
        )
    return MemoryStore(db_path(config), busy_timeout_ms=config.storage.busy_timeout_ms)


@dataclass(frozen=True, slots=True)
class TeamDown:
    """Why team memory is not answering: ``reason`` (:class:`~causantic.errors.TeamUnavailable`'s,
    or ``error`` for any other failure) and the sentence saying which server, why and what to do."""

    reason: TeamDownReason
    message: str

    @classmethod
    def of(cls, exc: StoreError) -> TeamDown:
        return cls(exc.reason if isinstance(exc, TeamUnavailable) else "error", str(exc))


RETRY_SECONDS = 30.0  # how soon a long-lived process (the MCP server) asks unreachable team memory again


class TeamAndLocal:
    """Team memory's two stores (storage.backend postgres): shared projects live in PostgreSQL,
    the others in the local SQLite file (``team.shareProjects``).

    Team memory that cannot be reached (at opening, or it stops answering) leaves the local store
    to answer alone, saying why (``team_down``); it is asked again at most every ``RETRY_SECONDS``,
    so a long-lived process (the MCP server) comes back to it without a restart."""

    def __init__(self, config: Config, home: Path, embedder: Embedder | None = None) -> None:
        self.config = config
        self.home = home
        self._embedder = embedder
        self.team: Services | None = None
        self.team_down: TeamDown | None = None
        self._retry_at = 0.0
        self.local: Services | None = None  # None: every project is shared, and nothing is local
        self._open_team()
        if config.team.share_projects != "all" or db_path(config).exists() or self.team is None:
            self.local = self._open_local()

    @property
    def main(self) -> Services:
        """What a single-store answer reads: team memory, or the local store while it is unreachable."""
        return self.team if self.team is not None else self.local_store()

    def local_store(self) -> Services:
        """The local store, opened now if every project is shared and it was not needed so far."""
        if self.local is None:
            self.local = self._open_local()
        return self.local

    def lost(self, exc: StoreError) -> None:
        """Team memory stopped answering: the local store answers until it is reachable again."""
        if self.team is not None:
            with suppress(StoreError):  # its connection is gone already
                self.team.close()
        self.team, self.team_down = None, TeamDown.of(exc)
        self._retry_at = time.monotonic() + RETRY_SECONDS

    def reconnect(self) -> None:
        """Ask unreachable team memory again, once ``RETRY_SECONDS`` have passed since it failed."""
        if self.team is None and time.monotonic() >= self._retry_at:
            self._open_team()

    def close(self) -> None:
        for services in (self.team, self.local):
            if services is not None:
                services.close()

    def _open_team(self) -> None:
        embedder = self._embedder or (self.local._embedder if self.local is not None else None)
        try:
            self.team = Services(self.config, open_store(self.config), home=self.home, _embedder=embedder)
            self.team_down = None
        except StoreError as exc:
            self.team_down = TeamDown.of(exc)
            self._retry_at = time.monotonic() + RETRY_SECONDS

    def _open_local(self) -> Services:
        store = MemoryStore(db_path(self.config), busy_timeout_ms=self.config.storage.busy_timeout_ms)
        local_config = self.config.with_overrides({"storage.backend": "sqlite"})
        return Services(local_config, store, home=self.home, _embedder=self._embedder, _embedder_from=self._team_model)

    def _team_model(self) -> Embedder | None:
        """One embedding model for both stores: team memory's (None while it is unreachable)."""
        return self.team.embedder if self.team is not None else None


def postgres_url(config: Config) -> str:
    url = config.storage.postgres_url
    if url is None or not url.get_secret_value():
        # `team init/status` ask for the URL on the default SQLite backend too: name what is missing,
        # not a backend the user never chose.
        needs = "storage.backend is 'postgres' but" if is_team_memory(config.storage) else "No team database:"
        raise ConfigError(
            f"{needs} storage.postgresUrl is not set: set it (or CAUSANTIC_STORAGE_POSTGRES_URL) to the "
            "team database's libpq URL."
        )
    return url.get_secret_value()


def member_name(config: Config) -> str:
    """Whose rows this machine writes to team memory: ``team.user``, else the login name."""
    import getpass

    return config.team.user or getpass.getuser()


@contextmanager
def open_services(config: Config | None = None) -> Iterator[Services]:
    if config is None:
        from causantic.config import load_config

        config = load_config()
    store = open_store(config)
    services = Services(config, store)
    try:
        yield services
    finally:
        services.close()


def team_init(url: str | None = None) -> ServerCheck:
    """Check a team database (``url``, else storage.postgresUrl) and create or upgrade its schema."""
    from causantic.config import load_config
    from causantic.embedding.models import get_spec
    from causantic.store.postgres import team
    from causantic.store.postgres.vectors import index_models

    config = load_config()
    url = url or postgres_url(config)
    timeout = config.team.connect_timeout_seconds
    found = team.init(url, connect_timeout=timeout)
    spec = get_spec(config.embedding.model)
    return replace(found, ann_indexes_made=tuple(index_models(url, (spec.id, spec.dims), connect_timeout=timeout)))


@dataclass(frozen=True, slots=True)
class ProjectShare:
    """A project of the member's local memory, as `causantic team join` says where it will go."""

    name: str
    path: str
    sessions: int  # in local memory
    local_only: int  # of those, the sessions team memory lacks (shared: `batch-ingest --force` uploads them)


@dataclass(frozen=True, slots=True)
class TeamJoin:
    """What `causantic team join` found and wrote, and what the next ingest will share."""

    check: JoinCheck
    user: str  # the name on this member's rows (team.user, else the login name)
    user_set: bool  # team.user names it (else it is the login name)
    config_file: Path
    changes: tuple[SettingChange, ...]  # the keys it wrote whose value changed
    overridden: tuple[tuple[str, str], ...]  # (key, where set): a value that wins over config.json's
    share_all: bool
    shared: tuple[ProjectShare, ...]  # local memory's projects the next ingest shares
    kept_local: tuple[ProjectShare, ...]  # and those that stay local
    unmatched: tuple[str, ...]  # names in team.shareProjects no project of local memory answers to (yet)


def team_join(url: str, share: tuple[str, ...] | None = None, user: str | None = None) -> TeamJoin:
    """Check team memory at ``url`` as this member (:func:`~causantic.store.postgres.team.join_check`),
    then point the user's config.json at it: storage.backend postgres, storage.postgresUrl ``url``,
    and ``user`` (team.user) and ``share`` (team.shareProjects: names, paths or ``("all",)``) when
    given. Nothing is written when the check fails."""
    from causantic.config import load_config
    from causantic.store.postgres import team

    url = url.strip()
    config = load_config()
    check = team.join_check(url, connect_timeout=config.team.connect_timeout_seconds)
    settings: dict[str, object] = {"storage.backend": "postgres", "storage.postgresUrl": url}
    if user is not None:
        settings["team.user"] = user
    if share is not None:
        settings["team.shareProjects"] = "all" if share == ("all",) else list(share)
    written = _write_settings(settings)
    config = written.config
    shared, kept, unmatched = _share_preview(config)
    return TeamJoin(
        check,
        member_name(config),
        config.team.user is not None,
        written.file,
        written.changes,
        written.overridden,
        config.team.share_projects == "all",
        shared,
        kept,
        unmatched,
    )


@dataclass(frozen=True, slots=True)
class SettingsWritten:
    """Keys a command wrote to the user's config.json (`team join`, `team leave`)."""

    file: Path
    changes: tuple[SettingChange, ...]  # the keys whose value changed
    overridden: tuple[tuple[str, str], ...]  # (key, where set): a value that wins over config.json's
    config: Config  # the configuration in force now


def _write_settings(settings: dict[str, object]) -> SettingsWritten:
    from causantic.config import load_config, user_config_file, write_user_settings

    changes = write_user_settings(settings)
    sources: dict[str, str] = {}
    config = load_config(sources=sources)
    file = user_config_file()
    overridden = tuple((key, sources[key]) for key in settings if sources.get(key, str(file)) != str(file))
    return SettingsWritten(file, tuple(changes), overridden, config)


def team_leave() -> SettingsWritten:
    """Point this member back at local memory alone (storage.backend sqlite in config.json); the
    URL and the shared projects stay in the file, and what was shared stays in team memory."""
    return _write_settings({"storage.backend": "sqlite"})


def _share_preview(config: Config) -> tuple[tuple[ProjectShare, ...], tuple[ProjectShare, ...], tuple[str, ...]]:
    """Local memory's projects the next ingest shares and those it keeps local, and the names of
    team.shareProjects that name none of them: decided as ingest decides (a clone of a repository
    team memory holds joins its name there)."""
    from causantic.config import TeamConfig, shares_project
    from causantic.ingest.service import shared_projects
    from causantic.store.postgres.store import PostgresStore

    named = () if config.team.share_projects == "all" else config.team.share_projects
    if not db_path(config).exists():
        return (), (), tuple(named)
    team = PostgresStore(
        postgres_url(config), member=member_name(config), connect_timeout=config.team.connect_timeout_seconds
    )
    local = MemoryStore(db_path(config), busy_timeout_ms=config.storage.busy_timeout_ms)
    try:
        shared = shared_projects(config.team, team)
        out: dict[bool, list[ProjectShare]] = {True: [], False: []}
        for p in local.project_summaries():
            sessions = [s.session_id for s in local.session_summaries(p.id)]
            goes = shared(p.path)
            missing = len(set(sessions) - set(team.session_sizes(sessions))) if goes else len(sessions)
            out[goes].append(ProjectShare(p.name, p.path, p.sessions, missing))
        seen = [p.path for p in out[True]]
        unmatched = tuple(n for n in named if not any(shares_project(TeamConfig(share_projects=(n,)), q) for q in seen))
    finally:
        local.close()
        team.close()
    return tuple(out[True]), tuple(out[False]), unmatched


def team_members(config: Config) -> list[str]:
    """The members with rows in the configured team database, by name."""
    from causantic.store.postgres import team

    return team.members(postgres_url(config), connect_timeout=config.team.connect_timeout_seconds)


def team_status(config: Config | None = None) -> TeamStatus:
    """Members, sizes and last ingests of the configured team database (`causantic team status`)."""
    from causantic.config import load_config
    from causantic.store.postgres import team

    config = config or load_config()
    return team.status(postgres_url(config), connect_timeout=config.team.connect_timeout_seconds)
