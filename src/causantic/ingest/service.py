"""The ingest service: transcripts into chunks and edges, then vectors, as one user-facing step."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from causantic.config import Config
from causantic.ingest.indexing import embedding_text, sync_vectors
from causantic.ingest.pipeline import IngestReport, ProgressCallback, ingest
from causantic.ingest.plan import PlanSettings
from causantic.ingest.topics import maintain_topics
from causantic.store.memory import MemoryStore
from causantic.store.vectors import VectorIndex

if TYPE_CHECKING:
    from causantic.embedding import Embedder


class Services(Protocol):
    """What ingestion needs from the composition root (``causantic.services.Services`` has it)."""

    config: Config
    store: MemoryStore

    @property
    def vectors(self) -> VectorIndex: ...

    @property
    def embedder(self) -> Embedder: ...


def ingest_paths(services: Services, paths: Sequence[Path], *, force: bool = False, embed: bool = True,
                 workers: int = 2, on_progress: ProgressCallback | None = None,
                 on_discovered: Callable[[int, int], None] | None = None,
                 on_embed_progress: Callable[[int, int], None] | None = None) -> IngestReport:
    """Ingest files and folders; embed new chunks unless ``embed`` is off or deferred by config.

    Chunks are committed (and found by keyword search) before embedding starts; vectors follow,
    committed batch by batch, so an interrupted run loses no more than one batch.
    """
    started = time.perf_counter()
    report = ingest(services.store, paths, PlanSettings.from_config(services.config), workers=workers,
                    force=force, on_progress=on_progress, on_discovered=on_discovered)
    if embed and services.config.embedding.eager:
        embed_started = time.perf_counter()
        report.vectors_added = embed_pending(services, on_progress=on_embed_progress)
        report.embed_seconds = time.perf_counter() - embed_started
        report.topics = maintain_topics(services.store, services.vectors, services.config.clustering,
                                        report.new_chunk_ids)
    report.seconds = time.perf_counter() - started
    return report


def embed_pending(services: Services, on_progress: Callable[[int, int], None] | None = None) -> int:
    """Embed every chunk that has no vector for the configured model (resumable at any point)."""
    result_chars = services.config.embedding.tool_result_chars

    def embed(texts: list[str]) -> object:
        return services.embedder.embed_documents([embedding_text(t, result_chars) for t in texts])

    return sync_vectors(services.store, services.vectors, embed,
                        batch_size=max(services.config.embedding.batch_size * 8, 64), on_progress=on_progress)


def reindex(services: Services, on_progress: Callable[[int, int], None] | None = None) -> int:
    """Re-embed every chunk with the configured model, from scratch."""
    services.vectors.drop()
    return embed_pending(services, on_progress=on_progress)
