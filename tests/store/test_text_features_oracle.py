"""The features computed at ingest are the values the first, plainer implementation gave, whatever the
text: ASCII or not, emoji, CJK, combining marks, case that folds to more letters, every line break,
listing output or not. A kept value that drifted would rank a chunk differently depending on which
version wrote it, so the plain version is kept here as the oracle the faster one is held to."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.store.features import bulk_share, feature_values, own_word_stems, split_tool_output, stem, word_stems

_WORD = re.compile(r"\w+")
_PROSE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
_JSON_PAIR = re.compile(r'"[^"\n]{1,80}"\s*:')


def _oracle_stem(word: str) -> str:
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


def _oracle_stems(text: str) -> frozenset[str]:
    return frozenset(_oracle_stem(w) for w in _WORD.findall(text.casefold()))


def _oracle_bulk(text: str) -> float:
    if not text:
        return 0.0
    runs = sum(len(run) for run in text.split() if len(run) >= 60)
    payload = sum(
        len(line)
        for line in text.splitlines()
        if (len(line) > 40 and len(_PROSE_WORD.findall(line)) * 12 < len(line))
        or (line.lstrip().startswith('"') and _JSON_PAIR.search(line))
        or len(_JSON_PAIR.findall(line)) >= 2
    )
    return min(1.0, max(runs, payload) / len(text))


def _oracle_values(text: str) -> tuple[str, str | None, float]:
    own, output = split_tool_output(text)
    own_stems = " ".join(sorted(_oracle_stems(own))) if output else None
    return " ".join(sorted(_oracle_stems(text))), own_stems, _oracle_bulk(text)


# Pieces where a faster split could part from the regexes: section markers (listing and other tools),
# case (ASCII and not; ß and ﬁ fold to two letters; Σ; U+0345, a mark that folds to a letter), digits
# and underscores in words, emoji (with a joiner and a skin tone), CJK, combining marks, typographic
# quotes, every kind of line break and space, JSON pairs, long runs.
_PIECES = st.sampled_from(
    [
        "[User] ",
        "[Tool:Bash] ",
        "\n[Result:Bash] ",
        "\n[Result:Grep] ",
        "\n[Error:WebFetch] ",
        "\n[Result:Read] ",
        "\n[Assistant] ",
        "Parsing Configs ",
        "fixed the parsing of configs ",
        "parse_config ",
        "getUserName",
        "ab1",
        "Q",
        "STRASSE Straße ﬁles ΣΊΣΥΦΟΣ ",
        "café ",
        "cafe\u0301 ",
        "数据库",
        "👩\u200d💻",
        "👍🏽",
        "🙂",
        "“quoted” it’s — ok…",
        "\u0345",
        "İstanbul ",
        "\u212a",
        "\u00b2",
        "\r\n",
        *" \t\n\r\x0b\x0c\x1c\x1e\x1f\x85\u2028\u2029\u3000\u00a0",  # each line break and space alone
        '"key": "value", ',
        '"',
        ":",
        "x" * 61,
        "word " * 9,
    ]
)
TEXTS = st.one_of(
    st.lists(_PIECES, max_size=50).map("".join),
    st.text(max_size=400),
    st.text(st.characters(max_codepoint=127), max_size=400),
)


@settings(max_examples=600, deadline=None)
@given(TEXTS)
def test_features_equal_the_plain_implementation(text: str) -> None:
    assert feature_values(text) == _oracle_values(text)
    assert word_stems(text) == _oracle_stems(text)
    assert bulk_share(text) == _oracle_bulk(text)
    assert own_word_stems(text) == _oracle_stems(split_tool_output(text)[0])


def test_every_ascii_character_splits_words_as_the_regex_does() -> None:
    # ASCII text is split by a translation table: each character around a word, alone and in pairs.
    for code in range(128):
        for text in (f"ab{chr(code)}cd", f"{chr(code)}x{chr(code)}", chr(code) * 3):
            assert word_stems(text) == _oracle_stems(text)
            assert feature_values(text * 20) == _oracle_values(text * 20)


@given(st.text(max_size=30))
def test_a_word_stems_as_before(word: str) -> None:
    assert stem(word) == _oracle_stem(word)
