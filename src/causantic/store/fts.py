"""Keyword-index text preparation and safe FTS5 query building.

The FTS5 tokenizer (unicode61) already splits ``snake_case``, ``file.py`` and ``a/b/c`` into
parts, and a quoted phrase query matches those parts in order, so the exact identifier is found.
It keeps ``camelCase`` whole, though: :func:`identifier_terms` adds the parts of such identifiers
(``getUserName`` → ``get user name``) to a second indexed column, so a query for "user name"
finds it too.

User text never reaches ``MATCH`` raw: :func:`match_phrases` quotes every term, so ``foo-bar "x``,
``AND``, ``*`` or ``NEAR(`` are searched as words, never parsed as FTS5 syntax.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from causantic.store.features import ascii_view

_CAMEL_IDENT = re.compile(r"\b[A-Za-z][a-z0-9]*(?:[A-Z][a-z0-9]+)+[A-Za-z0-9]*\b|\b[A-Z]{2,}[a-z][A-Za-z0-9]*\b")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# Each token of the text (ASCII, every non-word character made a space) that starts like an
# identifier: a letter, then lower case or digits, then a capital. The leading space lets the scan
# skip from token to token.
_IDENT_CANDIDATE = re.compile(r" [A-Za-z][a-z0-9]*+[A-Z]\w*")
_WORD_RUNS = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_")})
_QUERY_TERM = re.compile(r"[\w][\w.\-/:]*[\w]|[\w]", re.UNICODE)

# Words that carry no meaning for keyword matching; dropped from queries (not from the index),
# because terms are OR-ed and BM25 would otherwise reward chunks full of "the" and "how".
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had
    has have having he her here hers herself him himself his how i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over
    own same she should so some such than that the their theirs them themselves then there these
    they this those through to too under until up very was we were what when where which while who
    whom why will with would you your yours yourself yourselves""".split()
)


def identifier_terms(text: str, limit: int = 400) -> str:
    """Space-separated parts of camelCase/PascalCase identifiers in ``text`` (deduplicated)."""
    identifiers = dict.fromkeys(_identifiers(text))  # a repeat adds no part: only the first counts
    # One findall over the identifiers joined by spaces (a part never spans a space) is several
    # times faster than a findall per identifier; the loop below is only needed when ``limit``
    # may cut the list short, as it stops after the identifier that reaches it.
    found = dict.fromkeys(_CAMEL_PART.findall(" ".join(identifiers)))  # no part holds a space
    parts = [p for p in dict.fromkeys(" ".join(found).lower().split()) if len(p) > 1]
    if len(parts) < limit:
        return " ".join(parts)
    seen: dict[str, None] = {}
    for identifier in identifiers:
        for part in _CAMEL_PART.findall(identifier):
            if len(part) > 1:
                seen.setdefault(part.lower(), None)
        if len(seen) >= limit:
            break
    return " ".join(seen)


def _identifiers(text: str) -> list[str]:
    """``_CAMEL_IDENT.findall(text)``, in a half to a fifth of its time (prose to minified code).

    An identifier is a whole run of word characters (the pattern's ``\\b`` at both ends, and only
    word characters between), so in ``text`` with every other character made a space it is a
    space-separated token. The regex is then run only on the tokens that can hold one (a letter,
    lower case or digits, then a capital), found by a scan that skips from space to space: the
    full pattern tried at every position of the text is what made it slow. Text with a non-ASCII
    word character (é, 数) has no such ASCII view and is scanned as it is."""
    view = ascii_view(text)
    if view is None:
        return _CAMEL_IDENT.findall(text)
    return _CAMEL_IDENT.findall("".join(_IDENT_CANDIDATE.findall(" " + view.translate(_WORD_RUNS))))


def query_terms(text: str) -> list[str]:
    """The meaningful terms of a user query, in order, without duplicates or stop words."""
    terms: dict[str, None] = {}
    for raw in _QUERY_TERM.findall(text):
        term = raw.strip(".-/:")
        if not term or term.lower() in STOPWORDS:
            continue
        terms.setdefault(term, None)
    return list(terms)


def match_phrases(text: str) -> list[str]:
    """The query's FTS5 phrases, each quoted, without duplicates; a camelCase term is also searched
    by its parts."""
    clauses: list[str] = []
    for term in query_terms(text):
        clauses.append(quote_phrase(term))
        parts = identifier_terms(term).split()
        if len(parts) > 1:
            clauses.append(quote_phrase(" ".join(parts)))
    return list(dict.fromkeys(clauses))


def any_of(phrases: Sequence[str]) -> str:
    """Phrases OR-ed, not AND-ed: natural-language questions rarely share every word with the
    answer, and BM25 already ranks chunks that match more (and rarer) terms first."""
    return " OR ".join(phrases)


def split_by_scoring_budget(
    phrases: Sequence[str], doc_counts: Mapping[str, int], budget: int
) -> tuple[list[str], list[str]]:
    """Split phrases into (rare, common): the rarest phrases whose chunk counts together stay within
    ``budget`` (at least one), and the rest. ``budget`` 0 keeps every phrase rare.

    Scoring every chunk that contains any query word is what makes BM25 slow on a large store:
    a typical question has a word or two found in tens of thousands of chunks. Those words have
    the lowest IDF, so a chunk that contains nothing but them ranks low. The keyword search
    therefore ranks only chunks with a rare phrase, scoring each with every phrase of the query
    (:mod:`causantic.store.keyword`); that ranking is exact for them.
    """
    ordered = sorted(phrases, key=lambda p: doc_counts[p])
    if budget <= 0:
        return ordered, []
    rare: list[str] = []
    total = 0
    for phrase in ordered:
        if rare and total + doc_counts[phrase] > budget:
            break
        rare.append(phrase)
        total += doc_counts[phrase]
    return rare, ordered[len(rare) :]


def quote_phrase(term: str) -> str:
    """``term`` as one quoted FTS5 phrase: searched as words, never parsed as query syntax."""
    return '"' + term.replace('"', '""') + '"'
