"""Composition root: configuration in, opened stores and services out.

:class:`causantic.Memory` (``facade.py``) is built on these services, and it is what the CLI, the
MCP server, the hooks and the dashboard call; tests and benchmarks that measure a component alone
use :func:`open_services`. The embedding model and the vector index open on first use, so commands
that need no vectors never pay for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from causantic.errors import ConfigError
from causantic.home import causantic_home, db_path, vector_path
from causantic.store.memory import MemoryStore
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.vectors import VectorIndex

if TYPE_CHECKING:
    from causantic.config import Config
    from causantic.embedding import Embedder
    from causantic.retrieval.chains import ChainWalker
    from causantic.retrieval.episodes import EpisodeBuilder
    from causantic.retrieval.search import Searcher
    from causantic.store.postgres.team import ServerCheck, TeamStatus


@dataclass(slots=True)
class Services:
    config: Config
    store: MemoryStoreProtocol  # the seam (store/protocol.py): no caller depends on SQLite
    home: Path = field(default_factory=causantic_home)  # the data directory: its cache holds the model files
    _embedder: Embedder | None = field(default=None, repr=False)
    _vectors: VectorIndexProtocol | None = field(default=None, repr=False)
    _searcher: Searcher | None = field(default=None, repr=False)

    @property
    def embedder(self) -> Embedder:
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
            if self.config.storage.backend == "postgres":
                from causantic.store.postgres.vectors import PgVectorIndex

                team_index = PgVectorIndex(postgres_url(self.config), spec.id, spec.dims)
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
    if config.storage.backend == "postgres":
        from causantic.store.postgres.store import PostgresStore

        return PostgresStore(postgres_url(config), member=member_name(config))
    return MemoryStore(db_path(config), busy_timeout_ms=config.storage.busy_timeout_ms)


def postgres_url(config: Config) -> str:
    url = config.storage.postgres_url
    if url is None or not url.get_secret_value():
        # `team init/status` ask for the URL on the default SQLite backend too: name what is missing,
        # not a backend the user never chose.
        needs = "storage.backend is 'postgres' but" if config.storage.backend == "postgres" else "No team database:"
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
    from causantic.store.postgres import team

    return team.init(url or postgres_url(load_config()))


def team_status(config: Config | None = None) -> TeamStatus:
    """Members, sizes and last ingests of the configured team database (`causantic team status`)."""
    from causantic.config import load_config
    from causantic.store.postgres import team

    return team.status(postgres_url(config or load_config()))
