"""Keeping the vector index in step with the chunk store.

Vectors live in SQLite beside their chunks (``store/vectors.py``) and go with them when a chunk is
deleted. :func:`sync_vectors` embeds every chunk that has no vector for the active model (or whose
text changed), reusing stored vectors of identical text, then brings the derived ANN index up to
date (rebuilding it when its file was lost). It runs after each ingest and can be re-run at any
time: each batch of vectors commits on its own, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from causantic.ingest.chunker import long_lines_summarised
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.store.records import VectorRecord


def sync_vectors(
    store: MemoryStoreProtocol,
    index: VectorIndexProtocol,
    embed_documents: Callable[[list[str]], object],
    *,
    batch_size: int = 256,
    on_progress: Callable[[int, int], None] | None = None,
    written: set[str] | None = None,
) -> int:
    """Embed what is missing, drop what is orphaned; return the number of vectors written (their
    chunks' ids are added to ``written``).

    Holds the index's write lock throughout, so two processes never embed the same chunks twice.
    """
    with index.writing():
        return _sync(store, index, embed_documents, batch_size, on_progress, written if written is not None else set())


def _sync(
    store: MemoryStoreProtocol,
    index: VectorIndexProtocol,
    embed_documents: Callable[[list[str]], object],
    batch_size: int,
    on_progress: Callable[[int, int], None] | None,
    written: set[str],
) -> int:
    total = store.count_chunks_needing_vectors(index.model_id)
    done = 0
    if on_progress and total:
        on_progress(0, total)
    while True:
        rows = store.chunks_needing_vectors(index.model_id, batch_size)
        if not rows:
            break
        cached = index.vectors_by_content([r.content_hash for r in rows])
        to_embed = [r for r in rows if r.content_hash not in cached]
        if to_embed:
            # Slices of one long line share a summary: each distinct text is embedded once.
            texts = [long_lines_summarised(r.content) for r in to_embed]
            unique = list(dict.fromkeys(texts))
            by_text = dict(zip(unique, embed_documents(unique), strict=True))  # type: ignore[call-overload]
            for row, text in zip(to_embed, texts, strict=True):
                cached[row.content_hash] = by_text[text]
        index.upsert([VectorRecord(r.id, r.content_hash, cached[r.content_hash]) for r in rows])
        written.update(r.id for r in rows)
        done += len(rows)
        if on_progress:
            on_progress(done, total)
    index.ensure_ann_index()
    return done


_SECTION = re.compile(r"^\[(?:User|Assistant|Tool:[^\]]*|Result:[^\]]*|Error:[^\]]*)\]")


def embedding_text(content: str, tool_result_chars: int) -> str:
    """What of a chunk the embedding model reads: its words, not its payloads.

    Each tool result keeps its label and first ``tool_result_chars`` characters (file dumps and logs
    cost model time and say little a query asks for; keyword search still has all of it); a line
    repeated within the chunk and a line without a letter are left out.
    """
    out: list[str] = []
    seen: set[str] = set()
    budget = -1  # characters of the current tool result still to keep; -1: not in a tool result
    for line in content.split("\n"):
        label = _SECTION.match(line)
        if label:
            budget = tool_result_chars if line.startswith(("[Result:", "[Error:")) else -1
        if budget >= 0:
            if budget == 0:
                continue
            line = line[:budget]
            budget -= len(line)
        key = line.strip()
        if key and (key in seen or not any(ch.isalpha() for ch in key)):
            continue
        seen.add(key)
        out.append(line)
    return "\n".join(out)
