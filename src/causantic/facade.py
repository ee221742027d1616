"""``Memory``: the library's one door to ingest, search and the episodic answers.

    from causantic import Memory

    with Memory("/tmp/my-memory") as memory:
        memory.ingest(["~/.claude/projects"])
        answer = memory.recall("how did we fix the login redirect loop")
        for episode in answer.episodes:
            ...

A ``Memory`` owns one store (SQLite, vectors) in a data directory (``home``; default
``$CAUSANTIC_HOME`` or ``~/.causantic``) and the configuration it was opened with: the defaults and
files as :func:`causantic.config.load_config` reads them, then ``overrides`` (dotted keys, as in
``causantic config``). An ``embedder`` may be passed in to share one loaded model between several
memories. The CLI, the MCP server, hooks and benchmarks sit on the same services underneath.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Literal

from causantic.config import Config, Source, load_config
from causantic.services import Services, open_store

if TYPE_CHECKING:
    from causantic.embedding import Embedder
    from causantic.ingest.pipeline import IngestReport
    from causantic.retrieval.episodes import EpisodeAnswer
    from causantic.retrieval.search import SearchResult


@dataclass(frozen=True, slots=True)
class MemoryStats:
    chunks: int
    sessions: int
    projects: int
    vectors: int


class Memory:
    def __init__(
        self,
        home: str | Path | None = None,
        *,
        config: Config | None = None,
        overrides: dict[str, Any] | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        config = config or load_config()
        paths: dict[str, Any] = {}
        if home is not None:
            folder = Path(home).expanduser()
            paths = {"storage.dbPath": str(folder / "memory.db"), "storage.vectorPath": str(folder / "vectors")}
        if paths or overrides:
            config = config.with_overrides({**paths, **(overrides or {})})
        self.config = config
        self._services = Services(config, open_store(config), _embedder=embedder)

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        self._services.close()

    def ingest(self, paths: Sequence[str | Path], *, embed: bool = True, workers: int = 1) -> IngestReport:
        """Ingest transcript files and folders (idempotent: unchanged files are skipped)."""
        from causantic.ingest.service import ingest_paths

        return ingest_paths(self._services, [Path(p).expanduser() for p in paths], embed=embed, workers=workers)

    def search(
        self,
        query: str,
        *,
        project: str | None = None,
        agent: str | None = None,
        limit: int | None = None,
        max_tokens: int | None = None,
        mode: Literal["hybrid", "keyword", "vector"] | None = None,
        source: Source | None = None,
    ) -> SearchResult:
        """``source`` keeps the sessions of one coding agent: claude-code, codex or gemini."""
        from causantic.retrieval.search import SearchRequest

        return self._services.searcher.search(
            SearchRequest(
                query, project=project, agent=agent, limit=limit, max_tokens=max_tokens, mode=mode, source=source
            )
        )

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

        request = SearchRequest(query, project=project, agent=agent, max_tokens=max_tokens)
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

        request = SearchRequest(context, project=project, agent=agent, max_tokens=max_tokens)
        return self._services.episodes.predict(request, mode)

    def stats(self) -> MemoryStats:
        counts = self._services.store.counts()
        return MemoryStats(
            int(counts["chunks"]),  # type: ignore[call-overload]
            int(counts["sessions"]),  # type: ignore[call-overload]
            int(counts["projects"]),  # type: ignore[call-overload]
            self._services.vectors.count(),
        )
