"""Keyword queries are built safely and find code identifiers."""

from __future__ import annotations

import re
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


# The first implementation of identifier_terms, kept as the oracle the faster one is held to: the
# keyword index of a chunk must not depend on which version wrote it.
_ORACLE_IDENT = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*\b|\b[A-Z]{2,}[a-z][A-Za-z0-9]*\b")
_ORACLE_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def _oracle_identifier_terms(text: str, limit: int = 400) -> str:
    seen: dict[str, None] = {}
    for match in _ORACLE_IDENT.finditer(text):
        for part in _ORACLE_PART.findall(match.group()):
            if len(part) > 1:
                seen.setdefault(part.lower(), None)
        if len(seen) >= limit:
            break
    return " ".join(seen)


# Where a token-based scan could part from the regex's word boundaries: underscores and non-ASCII
# letters inside a run, emoji and typographic marks between runs, digits, capitals in every place.
_IDENT_PIECES = st.sampled_from(
    [
        "getUserName",
        "JSONParser",
        "parseXMLHttpRequest",
        "AB1",
        "A1Bc",
        "aB",
        "The",
        "README",
        "x",
        "Q",
        "9",
        "_",
        "foo_barBaz",
        "café",
        "Ünïcode",
        "数据",
        "🙂",
        "“",
        "\u2028",
        "\x85",
        " ",
        ".",
        "\n",
        "-",
        "ǅ",
        "İ",
    ]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(_IDENT_PIECES, st.text(max_size=6)), max_size=40), st.sampled_from([3, 400]))
def test_identifier_terms_match_the_plain_regex_version(pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    assert identifier_terms(text, limit) == _oracle_identifier_terms(text, limit)
