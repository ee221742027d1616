"""Keyword search with PostgreSQL full-text search, matching code identifiers as SQLite's FTS5 does.

SQLite's ``unicode61`` tokenizer splits text at every character that is not a letter or digit, so
``snake_case``, ``file.py`` and ``a/b/c`` become their parts and a quoted phrase finds the parts in
order. PostgreSQL's default parser instead keeps ``file.py`` whole as a host name and ``a/b/c`` as a
path, so neither ``file`` nor ``py`` would match. The indexed ``tsvector`` (migration m001) and every
query therefore replace each run of other characters by a space first (:func:`split_sql`), then stem
with the ``causantic`` configuration (English); camelCase parts come from ``search_terms`` as in SQLite.

Ranking: FTS5 ranks by BM25. PostgreSQL has no BM25, so each chunk's score is the sum, over the
query's phrases it holds, of the phrase's IDF (BM25's formula, counted within the search scope) times
``ts_rank`` with length normalisation (which saturates term frequency and favours short chunks, as
BM25's length term does). Content weighs 1, identifier parts 0.5, as SQLite's column weights.
On a large store only the chunks holding the query's rarer phrases are ranked, as in SQLite
(:func:`search` says how, and why that keeps their scores exact).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from causantic.store.fts import match_phrases, split_by_scoring_budget


def split_sql(expression: str) -> str:
    """SQL splitting text at every run of characters that are not letters or digits, as unicode61 does."""
    return f"regexp_replace({expression}, '[^[:alnum:]]+', ' ', 'g')"


# ts_rank weights for {D, C, B, A}: content is A, search_terms B.
_WEIGHTS = "'{0.0, 0.0, 0.5, 1.0}'::float4[]"
_LENGTH_NORMALISATION = 1  # divide by 1 + log(document length)
# One row ranked by ts_rank costs about as much as this many scored by FTS5's BM25 (measured at
# 100k chunks: ~5 µs to read a tsvector plus ~2 µs per phrase, against well under 1 µs per row
# in FTS5), so the same retrieval.keywordScoreBudget bounds both backends' time alike.
RANK_COST = 4


def phrase_texts(query: str) -> list[str]:
    """The query's phrases (:func:`match_phrases`) as plain text for ``phraseto_tsquery``."""
    return [unquote(p) for p in match_phrases(query)]


def unquote(phrase: str) -> str:
    """An FTS5 quoted phrase back to its words."""
    if len(phrase) >= 2 and phrase[0] == phrase[-1] == '"':
        return phrase[1:-1].replace('""', '"')
    return phrase


def scope_sql(project_ids: Sequence[int] | None, agent: str | None, member: str | None) -> tuple[str, list[Any]]:
    """SQL over chunks aliased ``c`` restricting a search to projects, an agent and a member."""
    clause = ""
    params: list[Any] = []
    if project_ids:
        clause += " AND c.project_id = ANY(%s)"
        params.append([int(p) for p in project_ids])
    if agent:
        clause += " AND c.agent = %s"
        params.append(agent)
    if member:
        clause += " AND c.member = %s"
        params.append(member)
    return clause, params


def _single_word(tsquery: str) -> bool:
    """A tsquery of one lexeme; phraseto_tsquery joins several with <-> (or <N> over stop words)."""
    return "<" not in tsquery


def _idf(total: int, count: int) -> float:
    """BM25's inverse document frequency of a phrase in ``count`` of ``total`` chunks."""
    return math.log((total - count + 0.5) / (count + 0.5) + 1)


def tsqueries(conn: Any, phrases: Sequence[str]) -> list[str]:
    """Each phrase as tsquery text ('' when it holds only stop words)."""
    if not phrases:
        return []
    row = conn.execute(
        f"SELECT array_agg(phraseto_tsquery('causantic', {split_sql('p')})::text ORDER BY n)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(p, n)",
        (list(phrases),),
    ).fetchone()
    return list(row[0] or [])


# What counting found: (chunks in the scope, chunks matching each tsquery text).
Counted = tuple[int, dict[str, int]]


def document_counts(
    conn: Any, phrases: Sequence[str], scope: tuple[str, list[Any]], most: int | None = None
) -> tuple[list[int], Counted]:
    """Chunks in the scope holding each phrase (plain text), counted up to ``most`` when given, and
    the counts as :func:`search` can reuse them."""
    queries = tsqueries(conn, phrases)
    counted = count(conn, [q for q in queries if q], scope)
    found = [counted[1][q] if q else 0 for q in queries]
    return ([min(n, most) for n in found] if most is not None else found), counted


def count(conn: Any, queries: Sequence[str], scope: tuple[str, list[Any]], known: Counted | None = None) -> Counted:
    """The chunks in the scope and those matching each tsquery, exactly; what ``known`` (counted in
    the same scope with the store unchanged since) holds is not read again.

    Each count is a bitmap scan of an index: over the whole store PostgreSQL then reads no table
    page the visibility map marks all-visible, so a word in a quarter of 100k chunks is counted
    from its GIN posting list in tens of ms. The planner does not cost that saving and picks a
    sequential scan testing every row's tsvector for such a word (0.5 s), hence ``enable_seqscan``
    off for this statement; the total is then an index-only scan."""
    total, counts = known if known is not None else (None, {})
    todo = [q for q in dict.fromkeys(queries) if q not in counts]
    if total is not None and not todo:
        return total, counts
    clause, params = scope
    conditions = (["TRUE"] if total is None else []) + ["c.tsv @@ %s::tsquery"] * len(todo)
    values = ([*params] if total is None else []) + [v for q in todo for v in (q, *params)]
    selects = ", ".join(f"(SELECT count(*) FROM chunks c WHERE {condition}{clause})" for condition in conditions)
    with conn.transaction():
        conn.execute("SET LOCAL enable_seqscan = off")
        row = [int(n) for n in conn.execute(f"SELECT {selects}", values).fetchone()]
    if total is None:
        total, row = row[0], row[1:]
    return total, {**counts, **dict(zip(todo, row, strict=True))}


def search(
    conn: Any,
    query: str,
    scope: tuple[str, list[Any]],
    limit: int,
    score_budget: int = 0,
    known: Counted | None = None,
) -> list[tuple[str, float]]:
    """(chunk id, score) best first, higher is better.

    Ranking is what costs: ``ts_rank`` reads each chunk's tsvector (about 5 µs) and walks it once
    per phrase (about 2 µs each), so ranking every chunk with a query word took a second at 100k
    chunks. As SQLite's keyword search does (:mod:`causantic.store.keyword`), each phrase's chunks
    are counted first (cheap, see :func:`count`; ``known``: counts already read), the rarest
    phrases whose chunks fit the budget are kept (:func:`split_by_scoring_budget`), and only the
    chunks holding one of them are ranked, each scored with every phrase of the query: exactly the
    scores exact ranking gives them. Only chunks holding nothing but the commonest words (the
    lowest IDF) go unranked. Per row ``ts_rank`` costs
    several times FTS5's BM25, so the budget counts each ranked row as :data:`RANK_COST` of SQLite's.
    ``score_budget`` 0 ranks every match."""
    queries = list(dict.fromkeys(q for q in tsqueries(conn, phrase_texts(query)) if q))
    if not queries:
        return []
    total, counts = count(conn, queries, scope, known)
    found = [q for q in queries if counts[q]]
    if not found:
        return []
    rows = max(1, score_budget // RANK_COST) if score_budget > 0 else 0  # 0: every phrase is rare
    rare, _ = split_by_scoring_budget(found, counts, rows)
    clause, params = scope
    ranks = ", ".join(
        f"ts_rank({_WEIGHTS}, c.tsv, %s::tsquery, {_LENGTH_NORMALISATION}) AS r{i}" for i in range(len(found))
    )
    # A single word's rank is 0 exactly where it is absent; a phrase's rank ignores word order, so
    # whether the phrase itself is there takes a match.
    hits = [f"(m.r{i} > 0)" if _single_word(q) else "(m.tsv @@ %s::tsquery)" for i, q in enumerate(found)]
    score = " + ".join(
        f"CASE WHEN {hit} THEN {_idf(total, counts[q])} * m.r{i} ELSE 0 END"
        for i, (q, hit) in enumerate(zip(found, hits, strict=True))
    )
    rows = conn.execute(
        f"SELECT m.id, {score} AS score FROM (SELECT c.id, c.rowid, c.tsv, {ranks} FROM"
        # The stored tsvector is compressed: every function given it would decompress its own
        # copy, so each row's is decompressed once (the concatenation) and shared by the ranks.
        f" (SELECT c.id, c.rowid, c.tsv || ''::tsvector AS tsv FROM chunks c WHERE c.tsv @@ %s::tsquery{clause}"
        # OFFSET 0 keeps each subquery whole: merged into the outer query, a rank (or the
        # decompression) would be computed once per mention.
        " OFFSET 0) c OFFSET 0) m ORDER BY score DESC, m.rowid LIMIT %s",
        [
            *(q for q, h in zip(found, hits, strict=True) if "@@" in h),
            *found,
            " | ".join(f"({q})" for q in rare),
            *params,
            limit,
        ],
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]
