"""Keyword queries are built safely and find code identifiers."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.store.fts import any_of, identifier_terms, match_phrases


def _fts_table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(content, search_terms, tokenize='porter unicode61 remove_diacritics 2')"
    )
    docs = [
        "def parse_config(path): raise ValueError('E0425 missing field')",
        "const getUserName = () => user.name",
        "edit src/auth/session.ts to set sameSite lax",
        "the weather is nice today",
    ]
    for doc in docs:
        conn.execute("INSERT INTO t VALUES (?, ?)", (doc, identifier_terms(doc)))
    return conn


def _hits(conn: sqlite3.Connection, query: str) -> list[str]:
    phrases = match_phrases(query)
    if not phrases:
        return []
    return [r[0] for r in conn.execute("SELECT content FROM t WHERE t MATCH ? ORDER BY rank", (any_of(phrases),))]


def test_snake_case_camel_case_paths_and_error_codes_are_found() -> None:
    conn = _fts_table()
    assert _hits(conn, "parse_config")[0].startswith("def parse_config")
    assert _hits(conn, "getUserName")[0].startswith("const getUserName")
    assert _hits(conn, "user name")[0].startswith("const getUserName")
    assert _hits(conn, "session.ts")[0].startswith("edit src/auth")
    assert _hits(conn, "E0425")[0].startswith("def parse_config")


def test_hostile_queries_return_results_not_errors() -> None:
    conn = _fts_table()
    for query in [
        'foo-bar "x',
        "AND",
        "OR NOT",
        "*",
        "NEAR(",
        "config)",
        '"""',
        "^weather",
        "a:b",
        "ünïcödé 日本語",
        "src/auth/session.ts",
        "-",
        "{}",
        "col:content",
    ]:
        _hits(conn, query)


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_becomes_a_valid_match_expression(query: str) -> None:
    _hits(_fts_table(), query)


def test_a_query_of_only_stop_words_searches_nothing() -> None:
    assert match_phrases("how did we do the") == []
