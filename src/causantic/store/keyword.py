"""BM25 keyword search over the FTS5 index, bounded in cost on large stores.

FTS5 scores every row that matches any OR-ed phrase, and scoring is what costs (reading each
row's positions and length): at 100k chunks a typical question has a word found in tens of
thousands of chunks, and one query took over 100 ms. So, with a score budget:

1. each phrase's chunk count is read, up to the budget (counting reads postings, no scoring);
2. :func:`split_by_scoring_budget` splits the phrases into *rare* ones, whose chunks together fit
   the budget, and *common* ones;
3. query A ranks the chunks holding a rare phrase by the rare phrases; query B ranks the chunks
   holding a rare *and* a common phrase by all phrases. A chunk in B has its full BM25 score
   there; a chunk in A only lacks common phrases, so its A score is its full score.

Merged, A's and B's top ``limit`` are the exact top ``limit`` of every chunk with a rare phrase: a
chunk left out of both has ``limit`` chunks at least as good in one of them. Only chunks holding
nothing but common phrases go unranked, and those phrases have the lowest IDF. The counts and
the two queries run on two read-only connections at once, so both cores share a long query.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from causantic.store import sqlite as sqlite_util
from causantic.store.fts import any_of, match_phrases, split_by_scoring_budget

T = TypeVar("T")
R = TypeVar("R")
# Column weights: the text counts fully, the camelCase parts beside it (search_terms) half.
_BM25 = "bm25(chunks_fts, 1.0, 0.5)"


class KeywordSearch:
    def __init__(self, path: Path, busy_timeout_ms: int) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._readers: list[sqlite3.Connection] = []
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    def search(self, query: str, *, project_ids: Sequence[int] | None, agent: str | None, limit: int,
               score_budget: int) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first, higher is better; ``score_budget`` 0 ranks exactly."""
        phrases = match_phrases(query)
        if not phrases:
            return []
        if score_budget > 0:
            # Counting stops past the budget: such a phrase is common however far past it goes...
            counts = self._counts(phrases, score_budget + 1)
            if min(counts.values()) > score_budget:
                counts = self._counts(phrases, None)  # ...unless all are: then the rarest leads
        else:
            counts = dict.fromkeys(phrases, 1)
        rare, common = split_by_scoring_budget([p for p in phrases if counts[p]], counts, score_budget)
        if not rare:
            return []
        expressions = [any_of(rare)] + ([f"({any_of(rare)}) AND ({any_of(common)})"] if common else [])
        scores: dict[str, float] = {}
        for hits in self._on_both(lambda c, e: _bm25(c, e, project_ids, agent, limit), expressions):
            scores.update(hits)  # B after A: a chunk in both gets its full score
        return sorted(scores.items(), key=lambda hit: -hit[1])[:limit]

    def _counts(self, phrases: list[str], most: int | None) -> dict[str, int]:
        return dict(zip(phrases, self._on_both(lambda conn, p: _count(conn, p, most), phrases), strict=True))

    def _on_both(self, work: Callable[[sqlite3.Connection, T], R], items: Sequence[T]) -> list[R]:
        """``work(connection, item)`` for every item, in order; half of them on the pool thread."""
        first, second = list(items[0::2]), list(items[1::2])
        reader_a, reader_b, pool = self._resources()
        pending = pool.submit(lambda: [work(reader_b, item) for item in second]) if second else None
        done_first = [work(reader_a, item) for item in first]
        done_second = pending.result() if pending is not None else []
        out: list[R] = []
        for i, result in enumerate(done_first):
            out.append(result)
            if i < len(done_second):
                out.append(done_second[i])
        return out

    def _resources(self) -> tuple[sqlite3.Connection, sqlite3.Connection, ThreadPoolExecutor]:
        with self._lock:
            if self._pool is None:
                self._readers = [sqlite_util.connect(self._path, busy_timeout_ms=self._busy_timeout_ms,
                                                     read_only=True) for _ in range(2)]
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="causantic-keyword")
            return self._readers[0], self._readers[1], self._pool


def _count(conn: sqlite3.Connection, phrase: str, most: int | None) -> int:
    """Chunks containing ``phrase``, counted up to ``most`` (all when None)."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (phrase, -1 if most is None else most)).fetchone()[0])


def _bm25(conn: sqlite3.Connection, expression: str, project_ids: Sequence[int] | None, agent: str | None,
          limit: int) -> list[tuple[str, float]]:
    where, params = sqlite_util.scoped(["chunks_fts MATCH ?"], [expression], project_ids, agent)
    if len(where) == 1:
        # No filter: rank inside the keyword index and look up only the best rows' ids. Joining
        # first would read the chunks row of every match.
        sql = (f"SELECT c.id, f.rank FROM (SELECT rowid, {_BM25} AS rank FROM chunks_fts"
               " WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid"
               " ORDER BY f.rank")
    else:
        sql = (f"SELECT c.id, {_BM25} AS rank FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid"
               f" WHERE {' AND '.join(where)} ORDER BY rank LIMIT ?")
    return [(r[0], -float(r[1])) for r in conn.execute(sql, [*params, limit])]
