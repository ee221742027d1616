"""Keeping the vector index in step with the chunk store.

SQLite is the source of truth. :func:`sync_vectors` embeds every chunk that has no vector for the
active model (or whose text changed), reusing stored vectors of identical text, and removes vectors
whose chunk no longer exists. It runs after each ingest and can be re-run at any time, so a crash
between the SQLite and LanceDB writes is repaired by the next run.
"""

from __future__ import annotations

from collections.abc import Callable

from causantic.ingest.chunker import embedding_text
from causantic.store.memory import MemoryStore
from causantic.store.vectors import VectorIndex, VectorRecord


def sync_vectors(store: MemoryStore, index: VectorIndex, embed_documents: Callable[[list[str]], object],
                 *, batch_size: int = 256, on_progress: Callable[[int, int], None] | None = None) -> int:
    """Embed what is missing, drop what is orphaned; return the number of vectors written.

    Holds the index's write lock throughout, so two processes never embed the same chunks twice.
    """
    with index.writing():
        return _sync(store, index, embed_documents, batch_size, on_progress)


def _sync(store: MemoryStore, index: VectorIndex, embed_documents: Callable[[list[str]], object],
          batch_size: int, on_progress: Callable[[int, int], None] | None) -> int:
    removed_orphans(store, index)
    total = store.count_chunks_needing_vectors(index.model_id)
    done = 0
    if on_progress and total:
        on_progress(0, total)
    while True:
        rows = store.chunks_needing_vectors(index.model_id, batch_size)
        if not rows:
            break
        cached = index.vectors_by_content([r["content_hash"] for r in rows])
        to_embed = [r for r in rows if r["content_hash"] not in cached]
        if to_embed:
            # Slices of one long line share a summary: each distinct text is embedded once.
            texts = [embedding_text(r["content"]) for r in to_embed]
            unique = list(dict.fromkeys(texts))
            by_text = dict(zip(unique, embed_documents(unique), strict=True))  # type: ignore[call-overload]
            for row, text in zip(to_embed, texts, strict=True):
                cached[row["content_hash"]] = by_text[text]
        index.upsert([
            VectorRecord(r["id"], r["project_id"], r["agent"], r["content_hash"], cached[r["content_hash"]])
            for r in rows
        ])
        store.mark_embedded(index.model_id, [(r["id"], r["content_hash"]) for r in rows])
        done += len(rows)
        if on_progress:
            on_progress(done, total)
    if done:
        index.compact()
    return done


def removed_orphans(store: MemoryStore, index: VectorIndex) -> int:
    orphans = store.missing_chunk_ids(index.ids())
    if orphans:
        index.delete(orphans)
    return len(orphans)
