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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from causantic.store.fts import match_phrases


def split_sql(expression: str) -> str:
    """SQL splitting text at every run of characters that are not letters or digits, as unicode61 does."""
    return f"regexp_replace({expression}, '[^[:alnum:]]+', ' ', 'g')"


# ts_rank weights for {D, C, B, A}: content is A, search_terms B.
_WEIGHTS = "'{0.0, 0.0, 0.5, 1.0}'::float4[]"
_LENGTH_NORMALISATION = 1  # divide by 1 + log(document length)


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


def _tsqueries(conn: Any, phrases: Sequence[str]) -> list[str]:
    """Each phrase as tsquery text ('' when it holds only stop words)."""
    if not phrases:
        return []
    row = conn.execute(
        f"SELECT array_agg(phraseto_tsquery('causantic', {split_sql('p')})::text ORDER BY n)"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(p, n)",
        (list(phrases),),
    ).fetchone()
    return list(row[0] or [])


def document_counts(
    conn: Any, phrases: Sequence[str], scope: tuple[str, list[Any]], most: int | None = None
) -> list[int]:
    """Chunks in the scope holding each phrase (plain text), counted up to ``most`` when given."""
    queries = _tsqueries(conn, phrases)
    live = [q for q in queries if q]
    if not live:
        return [0] * len(phrases)
    clause, params = scope
    filters = ", ".join("count(*) FILTER (WHERE c.tsv @@ %s::tsquery)" for _ in live)
    row = conn.execute(
        f"SELECT {filters} FROM chunks c WHERE c.tsv @@ %s::tsquery{clause}",
        [*live, " | ".join(f"({q})" for q in live), *params],
    ).fetchone()
    found = iter(row)
    counts = [int(next(found)) if q else 0 for q in queries]
    return [min(n, most) for n in counts] if most is not None else counts


def search(conn: Any, query: str, scope: tuple[str, list[Any]], limit: int) -> list[tuple[str, float]]:
    """(chunk id, score) best first, higher is better.

    One pass over the matching chunks: each phrase's rank and whether it matched are computed per
    chunk, the phrases' document counts (for their IDF) summed over the same rows, then the scores."""
    phrases = phrase_texts(query)
    queries = [q for q in _tsqueries(conn, phrases) if q]
    if not queries:
        return []
    clause, params = scope
    total = conn.execute(f"SELECT count(*) FROM chunks c WHERE TRUE{clause}", params).fetchone()[0]
    per_phrase = ", ".join(
        f"ts_rank({_WEIGHTS}, c.tsv, %s::tsquery, {_LENGTH_NORMALISATION}) AS r{i}, (c.tsv @@ %s::tsquery)::int AS h{i}"
        for i in range(len(queries))
    )
    counts = ", ".join(f"sum(h{i}) AS n{i}" for i in range(len(queries)))
    score = " + ".join(
        f"ln(({int(total)} - n.n{i} + 0.5) / (n.n{i} + 0.5) + 1) * m.r{i} * m.h{i}" for i in range(len(queries))
    )
    rows = conn.execute(
        f"WITH m AS (SELECT c.id, c.rowid, {per_phrase} FROM chunks c WHERE c.tsv @@ %s::tsquery{clause}),"
        f" n AS (SELECT {counts} FROM m)"
        f" SELECT m.id, {score} AS score FROM m, n ORDER BY score DESC, m.rowid LIMIT %s",
        [*(q for q in queries for _ in range(2)), " | ".join(f"({q})" for q in queries), *params, limit],
    ).fetchall()
    return [(r[0], float(r[1])) for r in rows]
