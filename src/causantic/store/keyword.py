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
nothing but common phrases go unranked, and those phrases have the lowest IDF. A project or agent
filter is part of every FTS5 query (:meth:`Scope.match`), so rarity is counted within it: a word
rare in the store may be absent from the project.

A search asked right after :meth:`KeywordSearch.document_counts` of its words in the same thread (as
search weighs the query's words first) reuses those counts instead of reading the postings again.
Counts of common phrases (:data:`SHARED_FROM` chunks or more) are also kept for every later search
until memory changes: counting one reads thousands of postings, and the same common words ("test",
"file", "error") come back query after query, while a rare word is counted in microseconds.

The counts and the two queries run on two read-only connections at once, so both cores share one
long query; concurrent searches share the connections, which SQLite serialises.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from causantic.errors import StoreError
from causantic.store import sqlite as sqlite_util
from causantic.store.fts import any_of, match_phrases, split_by_scoring_budget

if TYPE_CHECKING:  # imported where the pool starts: the prompt hook's one-connection search never needs it
    from concurrent.futures import ThreadPoolExecutor

T = TypeVar("T")
_Counted = tuple[int, int]  # (the cap a phrase was counted up to, its count)
SHARED_FROM = 2_000  # a count this high is kept for later searches until memory changes
_SHARED_MOST = 4_096  # phrases kept so; the cache starts over when full
R = TypeVar("R")
# Column weights: the text counts fully, the camelCase parts beside it (search_terms) half, the
# scope tokens (project, agent) not at all.
_BM25 = "bm25(chunks_fts, 1.0, 0.5, 0.0)"
_SCOPE_LIKE = re.compile(r"zz[pa]", re.IGNORECASE)


class KeywordSearch:
    def __init__(self, path: Path, busy_timeout_ms: int) -> None:
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._readers: list[sqlite3.Connection] = []
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._running = 0  # searches in progress, in any thread
        self._closed = False
        # The last document_counts of this thread: (scope, counts, data version), taken by the next
        # search; and the common phrases' counts: (data version, counted) by (scope, phrase).
        self._counted = threading.local()
        self._shared: dict[tuple[Scope, str], tuple[int, _Counted]] = {}

    def close(self) -> None:
        """Close the connections once no search uses them; later searches raise StoreError."""
        with self._lock:
            self._closed = True
            self._idle.wait_for(lambda: self._running == 0)
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None
            for conn in self._readers:
                conn.close()
            self._readers.clear()

    def search(
        self, query: str, *, project_ids: Sequence[int] | None, agent: str | None, limit: int, score_budget: int
    ) -> list[tuple[str, float]]:
        """(chunk id, BM25 score) best first, higher is better; ``score_budget`` 0 ranks exactly."""
        phrases = [text_only(p) for p in match_phrases(query)]
        if not phrases:
            return []
        scope = Scope(tuple(project_ids) if project_ids else None, agent)  # hashable: it keys counts
        with self._in_use():
            version = self._data_version()
            return self._search(phrases, scope, limit, score_budget, version, self._take_counted(scope, version))

    def document_counts(
        self, phrases: Sequence[str], *, project_ids: Sequence[int] | None, agent: str | None, most: int
    ) -> list[int]:
        """How many chunks in the scope hold each quoted phrase (as :func:`match_phrases` makes them),
        counted up to ``most``: the document frequencies a relevance score weighs query words by."""
        if not phrases:
            return []
        scope = Scope(tuple(project_ids) if project_ids else None, agent)
        with self._in_use():
            version = self._data_version()
            counts = self._counts([text_only(p) for p in phrases], most, scope, version)
        self._counted.last = (scope, {p: (most, n) for p, n in counts.items()}, version)
        return list(counts.values())

    @contextmanager
    def _in_use(self) -> Iterator[None]:
        """Hold the connections for one call; :meth:`close` waits for every holder to finish."""
        with self._lock:
            if self._closed:
                raise StoreError("The memory store is closed; open it again to search.")
            self._running += 1
        try:
            yield
        finally:
            with self._lock:
                self._running -= 1
                self._idle.notify_all()

    def _search(
        self, phrases: list[str], scope: Scope, limit: int, score_budget: int, version: int, known: dict[str, _Counted]
    ) -> list[tuple[str, float]]:
        if score_budget > 0 and self._fits(phrases, score_budget, scope):
            score_budget = 0
        if score_budget > 0:
            # Counting stops past the budget: such a phrase is common however far past it goes...
            counts = self._counts(phrases, score_budget + 1, scope, version, known)
            if min((n for n in counts.values() if n), default=0) > score_budget:
                # ...unless all found are: the rarest leads
                counts = self._counts(phrases, None, scope, version, known)
        else:
            counts = dict.fromkeys(phrases, 1)
        rare, common = split_by_scoring_budget([p for p in phrases if counts[p]], counts, score_budget)
        if not rare:
            return []
        expressions = [any_of(rare)] + ([f"({any_of(rare)}) AND ({any_of(common)})"] if common else [])
        scores: dict[str, float] = {}
        for hits in self._on_both(lambda c, e: _bm25(c, e, scope, limit), expressions):
            scores.update(hits)  # B after A: a chunk in both gets its full score
        return sorted(scores.items(), key=lambda hit: -hit[1])[:limit]

    def _fits(self, phrases: list[str], budget: int, scope: Scope) -> bool:
        """Whether every chunk with a query word fits the budget (a small store, or a small project
        of a large one), so exact ranking costs no more than bounded ranking."""
        reader = self._resources()[0]
        if (reader.execute("SELECT max(rowid) FROM chunks").fetchone()[0] or 0) <= budget:
            return True
        return scope.filtered and _count(reader, any_of(phrases), budget + 1, scope) <= budget

    def _counts(
        self, phrases: list[str], most: int | None, scope: Scope, version: int, known: dict[str, _Counted] | None = None
    ) -> dict[str, int]:
        """Each phrase's chunk count up to ``most``, read only where ``known`` or the common phrases'
        counts (taken at data version ``version``) do not settle it."""
        counts: dict[str, int] = {}
        known = known or {}
        for phrase in phrases:
            shared = self._shared.get((scope, phrase))
            for counted in (known.get(phrase), shared[1] if shared and shared[0] == version else None):
                n = _settled(counted, most)
                if n is not None:
                    counts[phrase] = n
                    break
        todo = [p for p in phrases if p not in counts]
        read = self._on_both(lambda conn, p: _count(conn, p, most, scope), todo)
        if len(self._shared) >= _SHARED_MOST:
            self._shared.clear()
        for phrase, n in zip(todo, read, strict=True):
            counts[phrase] = n
            if n >= SHARED_FROM:  # uncapped (None): exact, as a cap just above the count says
                self._shared[(scope, phrase)] = (version, (most if most is not None else n + 1, n))
        return {p: counts[p] for p in phrases}

    def _take_counted(self, scope: Scope, version: int) -> dict[str, _Counted]:
        """The counts this thread's last :meth:`document_counts` read in ``scope``, once."""
        last: tuple[Scope, dict[str, _Counted], int] | None = getattr(self._counted, "last", None)
        self._counted.last = None
        if last is None or last[0] != scope or last[2] != version:
            return {}  # another scope, or memory changed since
        return last[1]

    def _data_version(self) -> int:
        """Changes whenever another connection commits (every write: these connections only read)."""
        return int(self._resources()[0].execute("PRAGMA data_version").fetchone()[0])

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
        with self._lock:  # a search holds _running, so close() cannot run between here and its end
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._readers = [
                    sqlite_util.connect(self._path, busy_timeout_ms=self._busy_timeout_ms, read_only=True)
                    for _ in range(2)
                ]
                self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="causantic-keyword")
            return self._readers[0], self._readers[1], self._pool


@dataclass(frozen=True, slots=True)
class Scope:
    """Which chunks a search covers: some projects, one agent, or (the default) all."""

    project_ids: Sequence[int] | None = None
    agent: str | None = None

    @property
    def filtered(self) -> bool:
        return bool(self.project_ids or self.agent)

    def match(self, expression: str) -> str:
        """``expression`` limited to the scope through the index's ``scope_terms`` column, whose
        tokens (``zzp<project id>zz``, ``zza<hex of agent>zz``) migration m004 generates; FTS5
        intersects them with the match instead of testing every matching row against ``chunks``."""
        parts = [f"({expression})"]
        if self.project_ids:
            parts.append("scope_terms : (" + " OR ".join(f'"zzp{int(p)}zz"' for p in self.project_ids) + ")")
        if self.agent:
            parts.append(f'scope_terms : "zza{self.agent.encode("utf-8").hex()}zz"')
        return " AND ".join(parts)


def text_only(phrase: str) -> str:
    """``phrase`` kept out of the scope column when it could match a scope token there.

    A column filter on every phrase cost a fifth of keyword search's time, so only a phrase that
    holds ``zzp``/``zza`` after the tokenizer's folding (diacritics, compatibility forms) gets one.
    """
    folded = "".join(c for c in unicodedata.normalize("NFKD", phrase) if not unicodedata.combining(c))
    return f"{{content search_terms}} : {phrase}" if _SCOPE_LIKE.search(folded) else phrase


def _settled(counted: _Counted | None, most: int | None) -> int | None:
    """A phrase's count up to ``most`` from one read before, when that read settles it: a count
    below its own cap is exact; one at its cap is good for any smaller cap."""
    if counted is None:
        return None
    cap, n = counted
    if n < cap or (most is not None and most <= cap):
        return n if most is None else min(n, most)
    return None


def _count(conn: sqlite3.Connection, phrase: str, most: int | None, scope: Scope) -> int:
    """Chunks in ``scope`` containing ``phrase``, counted up to ``most`` (all when None)."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (scope.match(phrase), -1 if most is None else most)).fetchone()[0])


def _bm25(conn: sqlite3.Connection, expression: str, scope: Scope, limit: int) -> list[tuple[str, float]]:
    # Rank inside the keyword index and look up only the best rows' ids: joining first would read
    # the chunks row of every match.
    sql = (
        f"SELECT c.id, f.rank FROM (SELECT rowid, {_BM25} AS rank FROM chunks_fts"
        " WHERE chunks_fts MATCH ? ORDER BY rank LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid"
        " ORDER BY f.rank"
    )
    return [(r[0], -float(r[1])) for r in conn.execute(sql, (scope.match(expression), limit))]
