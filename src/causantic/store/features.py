"""A chunk's text features: what scoring a search hit reads from its text alone.

Search weighs each candidate by the share of the query's words it holds (compared by a light stem),
by the share of its text that is bulky payload rather than prose, and by which of its words are its
own rather than what a listing tool printed (:mod:`causantic.retrieval.relevance`,
:mod:`causantic.retrieval.mentions`). All three depend on the text only, so the store computes them
once when a chunk is written (:func:`feature_values`) and keeps them beside it; search reads them
with the chunk instead of splitting some hundred texts per query. A row written before they were
kept (``features`` None) is scored from its text, with the same functions, to the same result.

Pure text, no database: the store, the migrations that fill older rows, and retrieval share it.
"""

from __future__ import annotations

import functools
import re

_WORD = re.compile(r"\w+", re.UNICODE)
_LONG_RUN = 60  # a run of this many non-spaces no prose has: base64, hashes, minified code, SVG paths
_PROSE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
# ASCII text (most chunks) is split into words by one table lookup per character and str.split(),
# a third of the regex's time: in ASCII, \w is [A-Za-z0-9_]. Every other character becomes a space,
# except the line breaks str.splitlines() splits at, so lines split as in the text itself.
_ASCII_WORDS = str.maketrans(
    {c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_") and c not in "\n\r\x0b\x0c\x1c\x1d\x1e"}
)
_JSON_PAIR = re.compile(r'"[^"\n]{1,80}"\s*:')  # "key": as in JSON, HAR logs and API dumps

# A section opens at a line starting with its marker; continuation lines belong to it.
_SECTION = re.compile(r"^\[(?:User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]", re.MULTILINE)
# Output that lists things: shell output (git log, gh pr list, a changelog diff), search results and
# fetched pages. A file the agent read (Read) or a sub-agent's report (Task) is the work's own
# material, not a mention of it: counting those demoted the right session on the coding set.
_LISTING_TOOLS = ("Bash", "Grep", "Glob", "WebSearch", "WebFetch")
OUTPUT_MARKERS = tuple(f"[{label}:{tool}]" for label in ("Result", "Error") for tool in _LISTING_TOOLS)


def feature_values(text: str) -> tuple[str, str | None, float]:
    """The features the store keeps for a chunk of ``text`` (``records.TextFeatures``), as the
    values of the columns ``stems, own_stems, bulk``: its stems, its own words' stems when listing
    tools printed part of it (else None: they are the same), and its bulk share."""
    own, output = split_tool_output(text)
    return pack_stems(word_stems(text)), pack_stems(word_stems(own)) if output else None, bulk_share(text)


def pack_stems(stems: frozenset[str]) -> str:
    """Stems as one column value: sorted, space-separated (no stem holds whitespace: a stem is a
    run of word characters), so ``frozenset(packed.split())`` gives them back."""
    return " ".join(sorted(stems))


@functools.lru_cache(maxsize=1024)  # a candidate's text is split to score it and again to rerank it
def word_stems(text: str) -> frozenset[str]:
    """The light stems of the words in ``text``, as coverage compares them."""
    words = text.lower().translate(_ASCII_WORDS).split() if text.isascii() else _WORD.findall(text.casefold())
    return frozenset(map(stem, set(words)))  # each distinct word stemmed once


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """A light English stem (plural, -ing, -ed, -ly), enough to match a question's inflection of a
    word to the transcript's; identifiers and short words are left alone."""
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", ""))


@functools.lru_cache(maxsize=1024)  # a search asks it of each candidate twice: to score and to rerank
def bulk_share(text: str) -> float:
    """The share of ``text`` that is not prose: long unbroken runs (base64, SVG paths, minified code),
    lines with almost no words, and lines of JSON key-value pairs (HAR logs, API and config dumps)."""
    if not text:
        return 0.0
    runs = sum(len(run) for run in text.split() if len(run) >= _LONG_RUN)  # str.split() splits at \s
    lines = text.splitlines()
    ascii_text = text.isascii()  # once per text, not per line
    words = text.translate(_ASCII_WORDS).splitlines() if ascii_text else lines
    payload_lines = sum(
        len(line)
        for line, line_words in zip(lines, words, strict=True)
        if (len(line) > 40 and _prose_words(line, line_words, ascii_text) * 12 < len(line))
        # both JSON tests need a quote: most lines have none
        or (
            '"' in line
            and (line.lstrip().startswith('"') and _JSON_PAIR.search(line) or len(_JSON_PAIR.findall(line)) >= 2)
        )
    )
    return min(1.0, max(runs, payload_lines) / len(text))


def _prose_words(line: str, words: str, ascii_text: bool) -> int:
    """How many words of ``line`` are two or more ASCII letters (``\\b[A-Za-z]{2,}\\b``); ``words``
    is the line through :data:`_ASCII_WORDS` when the text is ASCII: its whitespace-separated runs are
    then the line's \\w runs, and a prose word is one that is all letters."""
    if not ascii_text:
        return len(_PROSE_WORD.findall(line))
    return len([word for word in words.split() if len(word) > 1 and word.isalpha()])  # a list: faster than sum()


def split_tool_output(text: str) -> tuple[str, str]:
    """(the chunk's own words, what listing tools printed): sections split at their markers; the
    output of other tools (a file read, a sub-agent's report) counts as the chunk's own."""
    starts = [m.start() for m in _SECTION.finditer(text)]
    if not starts:
        return text, ""
    own = [text[: starts[0]]]
    output: list[str] = []
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        section = text[begin:end]
        (output if section.startswith(OUTPUT_MARKERS) else own).append(section)
    return "".join(own), "".join(output)


@functools.lru_cache(maxsize=1024)
def own_word_stems(text: str) -> frozenset[str]:
    """:func:`word_stems` of the chunk's own words (:func:`split_tool_output`), kept for the texts
    asked most recently: a search weighs the opening prompts of its candidates' sessions, and the
    same sessions' openings come back query after query (1,752 distinct in 5,641 over 100 real
    queries at 100k chunks), while the stems' own cache turns over with the candidates."""
    return word_stems(split_tool_output(text)[0])


def opening_stems(text: str, stems: str | None, own_stems: str | None) -> frozenset[str]:
    """The stems of a session opening's own words, from its stored features (``stems`` None: a row
    written before they were kept, so its text is split now)."""
    if stems is None:
        return own_word_stems(text)
    return frozenset((stems if own_stems is None else own_stems).split())
