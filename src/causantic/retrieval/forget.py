"""Forgetting: delete chosen chunks of one project from every store, after a preview.

Filters combine (AND): ``before``/``after`` on chunk time, ``session_id``, and a semantic
``query`` whose matches must reach ``threshold`` cosine similarity. A dry run (the default) only
says what would go. A real run removes the chunks with their edges, keyword-index rows, vectors and
cluster memberships — nothing else — and re-links the project's remaining sessions in order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from causantic.errors import CausanticError
from causantic.retrieval.listing import resolve_project
from causantic.store.memory import MemoryStore
from causantic.store.records import StoredChunk, iso
from causantic.store.vectors import VectorIndex


@dataclass(frozen=True, slots=True)
class ForgetRequest:
    project: str
    before: datetime | None = None
    after: datetime | None = None
    session_id: str | None = None
    query: str | None = None
    threshold: float = 0.6
    dry_run: bool = True
    # When set, a real run deletes only matches among these ids: what a preview listed, so memory
    # ingested between the preview and the confirmation is never deleted unseen.
    only_ids: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class ForgetResult:
    project: str
    dry_run: bool
    count: int
    preview: tuple[tuple[StoredChunk, float | None], ...]  # top matches (with similarity for a query)
    deleted: int


def forget(store: MemoryStore, vectors: VectorIndex, embed_query: object, request: ForgetRequest,
           preview_size: int = 5) -> ForgetResult:
    if request.query is not None and not request.query.strip():
        raise CausanticError("The forget query is empty; give a query or use before/after/session_id.")
    if not 0 < request.threshold <= 1:
        raise CausanticError("threshold must be a cosine similarity in (0, 1], e.g. 0.6.")
    if not any((request.before, request.after, request.session_id, request.query)):
        raise CausanticError("Name what to forget: before, after, session_id or query (the whole project is "
                             "never deleted by accident).")
    project = resolve_project(store, request.project)
    where, params = ["c.project_id = ?"], [project.id]
    if request.before:
        where.append("c.start_time < ?")
        params.append(iso(request.before))
    if request.after:
        where.append("c.start_time >= ?")
        params.append(iso(request.after))
    if request.session_id:
        where.append("c.session_id LIKE ? || '%'")
        params.append(request.session_id)
    matches = list(store.iter_chunks(" AND ".join(where), params))
    similarity: dict[str, float] = {}
    if request.query:
        vector = embed_query(request.query)  # type: ignore[operator]
        hits = vectors.search(vector, limit=max(vectors.count(), 1), project_ids=[project.id])
        similarity = {h.chunk_id: h.similarity for h in hits if h.similarity >= request.threshold}
        matches = sorted((c for c in matches if c.id in similarity), key=lambda c: -similarity[c.id])
    if request.only_ids is not None:
        matches = [c for c in matches if c.id in request.only_ids]
    preview = tuple((c, similarity.get(c.id)) for c in matches[:preview_size])
    if request.dry_run or not matches:
        return ForgetResult(project.name, request.dry_run, len(matches), preview, 0)
    ids = [c.id for c in matches]
    deleted = store.delete_chunks(ids)
    vectors.delete(ids)
    from causantic.ingest.pipeline import relink_sessions

    relink_sessions(store, project.id)
    return ForgetResult(project.name, False, len(matches), preview, deleted)
