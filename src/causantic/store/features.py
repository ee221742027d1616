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
import os
import re
import string
from collections.abc import Iterable, Iterator, Sequence

_WORD = re.compile(r"\w+", re.UNICODE)
_LONG_RUN = 60  # a run of this many non-spaces no prose has: base64, hashes, minified code, SVG paths
_PROSE_WORD = re.compile(r"\b[A-Za-z]{2,}\b")
# ASCII text (most chunks) is split into words by one table lookup per character and str.split(),
# a third of the regex's time: in ASCII, \w is [A-Za-z0-9_]. Every other character becomes a space,
# except the line breaks str.splitlines() splits at, so lines split as in the text itself.
_ASCII_WORDS = str.maketrans(
    {c: " " for c in map(chr, range(128)) if not (c.isalnum() or c == "_") and c not in "\n\r\x0b\x0c\x1c\x1d\x1e"}
    | {c: c.lower() for c in string.ascii_uppercase}  # lower-cased in the same pass
)
_JSON_PAIR = re.compile(r'"[^"\n]{1,80}"\s*:')  # "key": as in JSON, HAR logs and API dumps

# A section opens at a line starting with its marker; continuation lines belong to it.
_SECTION = re.compile(r"^\[(?:User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]", re.MULTILINE)
# Output that lists things: shell output (git log, gh pr list, a changelog diff), search results and
# fetched pages. A file the agent read (Read) or a sub-agent's report (Task) is the work's own
# material, not a mention of it: counting those demoted the right session on the coding set.
_LISTING_TOOLS = ("Bash", "Grep", "Glob", "WebSearch", "WebFetch")
OUTPUT_MARKERS = tuple(f"[{label}:{tool}]" for label in ("Result", "Error") for tool in _LISTING_TOOLS)


Features = tuple[str, str | None, float]  # the values of the columns stems, own_stems, bulk


def feature_values(text: str) -> Features:
    """The features the store keeps for a chunk of ``text`` (``records.TextFeatures``), as the
    values of the columns ``stems, own_stems, bulk``: its stems, its own words' stems when listing
    tools printed part of it (else None: they are the same), and its bulk share.

    The text is read once: its own part and the listing output are scanned apart and their words and
    bulk counts added up, since sections open at line starts (a line or a run never spans two)."""
    own, output = split_tool_output(text)
    words, runs, payload = _scan(own)
    if not output:
        return pack_stems(_stems(words)), None, _share(runs, payload, len(text))
    output_words, output_runs, output_payload = _scan(output)
    own_stems = _stems(words)
    return (
        pack_stems(own_stems | _stems(output_words)),
        pack_stems(own_stems),
        _share(runs + output_runs, payload + output_payload, len(text)),
    )


# Past this many characters of text, one write computes its chunks' features and search terms in a
# second process while it writes the rows (a 50 MB pasted line: 37,000 chunks, some 6 s of CPU
# beside some 6 s of SQLite work, done at once on two cores). Below it, the process's start (some
# 0.3 s) costs more than it saves; most sessions are far smaller.
PARALLEL_FEATURE_CHARS = 8_000_000
_FEATURE_BATCH = 1_000  # chunks a worker is handed at a time: the writer waits for the first only

TextColumns = tuple[str, str, str | None, float]  # the values of the columns search_terms, stems, own_stems, bulk


def text_columns(text: str, search_terms: str | None) -> TextColumns:
    """What the store derives from a chunk's ``text``: its search terms (``search_terms``, made now
    when None: :func:`~causantic.store.fts.identifier_terms`) and its features."""
    from causantic.store.fts import identifier_terms  # here: fts imports this module

    return (identifier_terms(text) if search_terms is None else search_terms, *feature_values(text))


def text_columns_in_order(chunks: Sequence[tuple[str, str | None]]) -> Iterator[TextColumns]:
    """:func:`text_columns` of each (text, search terms), in order; computed in another process, a
    batch at a time ahead of the caller, when the texts are long together
    (:data:`PARALLEL_FEATURE_CHARS`) and there is a second core to run it."""
    if sum(len(text) for text, _ in chunks) < PARALLEL_FEATURE_CHARS or (os.cpu_count() or 1) < 2:
        yield from (text_columns(text, terms) for text, terms in chunks)
        return
    # Imported here: multiprocessing costs every search and hook ~14 ms to import, for a path only
    # a huge write takes.
    from concurrent.futures import BrokenExecutor

    from causantic.processes import helper_process

    batches = [chunks[i : i + _FEATURE_BATCH] for i in range(0, len(chunks), _FEATURE_BATCH)]
    pool = helper_process()
    given = 0
    try:
        for values in pool.map(_batch_text_columns, batches):
            yield from values
            given += len(values)
    except BrokenExecutor:  # the worker died (killed): the rest is computed here
        yield from (text_columns(text, terms) for text, terms in chunks[given:])
    finally:  # a writer that stops early (an error) does not wait for the rest to be computed
        pool.shutdown(wait=True, cancel_futures=True)


def _batch_text_columns(chunks: Sequence[tuple[str, str | None]]) -> list[TextColumns]:
    return [text_columns(text, terms) for text, terms in chunks]


def pack_stems(stems: Iterable[str]) -> str:
    """Stems as one column value: sorted, space-separated (no stem holds whitespace: a stem is a
    run of word characters), so ``frozenset(packed.split())`` gives them back."""
    return " ".join(sorted(stems))


@functools.lru_cache(maxsize=1024)  # a candidate's text is split to score it and again to rerank it
def word_stems(text: str) -> frozenset[str]:
    """The light stems of the words in ``text``, as coverage compares them."""
    return _stems(_words(text))


def _words(text: str) -> set[str]:
    """The distinct words of ``text``, case-folded: its \\w runs."""
    view = ascii_view(text)
    return set(view.translate(_ASCII_WORDS).split() if view is not None else _WORD.findall(text.casefold()))


def ascii_view(text: str) -> str | None:
    """``text`` in ASCII that splits into the same words and lines, when it has one: each non-ASCII
    character that is in no word, even case-folded (an emoji, a typographic quote or space), replaced
    by a space or, a line break, by one ASCII splitlines() knows; None when one is in a word (é, 数).
    Corpus text with an emoji then takes the ASCII path, at half the time of the regexes."""
    if text.isascii():
        return text
    others = set(_NON_ASCII.findall(text))
    if len(others) > _MOST_STAND_INS:
        return None
    for char in others:
        stand_in = _stand_in(char)
        if stand_in is None:
            return None
        text = text.replace(char, stand_in)
    return text.encode("ascii").decode("ascii")  # a compact ASCII string, for translate()'s fast path


@functools.lru_cache(maxsize=4096)
def _stand_in(char: str) -> str | None:
    if any(c.isalnum() or c == "_" for c in char + char.casefold()):  # \w, before or after case folding
        return None
    return "\x1c" if char in _LINE_BREAKS else " "


_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_MOST_STAND_INS = 16  # more distinct non-ASCII characters: the regexes (a str.replace() each)
_LINE_BREAKS = "\x85\u2028\u2029"  # the ones outside ASCII that str.splitlines() splits at


def _stems(words: set[str]) -> frozenset[str]:
    """The stems of distinct ``words``: each looked up in the stems already made (words repeat)."""
    return frozenset(map(_STEMS.__getitem__, words))


def stem(word: str) -> str:
    """A light English stem (plural, -ing, -ed, -ly), enough to match a question's inflection of a
    word to the transcript's; identifiers and short words are left alone."""
    return _STEMS[word]


def _light_stem(word: str) -> str:
    if len(word) <= 4 or not word.isalpha():
        return word
    for suffix, keep in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: len(word) - len(suffix)] + keep
    return word


_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("ly", ""), ("s", ""))
_STEM_CACHE = 65_536  # distinct words kept stemmed; a text of endless distinct words empties it


class _StemCache(dict[str, str]):
    """Word -> stem, filled on first sight: a dict lookup from C (``map``) costs a fraction of a
    call through functools.lru_cache, and a chunk looks up some hundred words."""

    def __missing__(self, word: str) -> str:
        if len(self) >= _STEM_CACHE:
            self.clear()
        self[word] = stemmed = _light_stem(word)
        return stemmed


_STEMS = _StemCache()


@functools.lru_cache(maxsize=1024)  # a search asks it of each candidate twice: to score and to rerank
def bulk_share(text: str) -> float:
    """The share of ``text`` that is not prose: long unbroken runs (base64, SVG paths, minified code),
    lines with almost no words, and lines of JSON key-value pairs (HAR logs, API and config dumps)."""
    _, runs, payload = _scan(text)
    return _share(runs, payload, len(text))


def _share(runs: int, payload: int, length: int) -> float:
    return min(1.0, max(runs, payload) / length) if length else 0.0


def _scan(text: str) -> tuple[set[str], int, int]:
    """What the features count in ``text``: its distinct words (:func:`_words`), the characters in
    its long runs, and those of its payload lines: lines of JSON pairs, and lines over 40 characters
    with fewer than one prose word (two or more ASCII letters, ``\\b[A-Za-z]{2,}\\b``) per 12."""
    lengths = list(map(len, text.split()))  # of its runs of non-spaces: str.split() splits at \s
    runs = sum(n for n in lengths if n >= _LONG_RUN) if max(lengths, default=0) >= _LONG_RUN else 0
    lines = text.splitlines()
    view = ascii_view(text)
    if view is not None:
        # Each line's words are its translated line split at spaces; a prose word is one all letters.
        line_words = [line.split() for line in view.translate(_ASCII_WORDS).splitlines()]
        words: set[str] = set().union(*line_words)
        prose = [_prose_words(ws) if len(line) > 40 else 0 for line, ws in zip(lines, line_words, strict=True)]
    else:
        words = _words(text)
        prose = [len(_PROSE_WORD.findall(line)) if len(line) > 40 else 0 for line in lines]
    payload = sum(
        len(line)
        for line, line_prose in zip(lines, prose, strict=True)
        if (len(line) > 40 and line_prose * 12 < len(line))
        # both JSON tests need a quote: most lines have none
        or (
            '"' in line
            and (line.lstrip().startswith('"') and _JSON_PAIR.search(line) or len(_JSON_PAIR.findall(line)) >= 2)
        )
    )
    return words, runs, payload


def _prose_words(words: list[str]) -> int:
    """How many of an ASCII line's ``words`` (its \\w runs) are prose: all letters, two or more. Counted
    in C (filter, map, list.count) rather than by a loop over some hundred words per line."""
    letters_only = list(map(len, filter(str.isalpha, words)))
    return len(letters_only) - letters_only.count(1)


def split_tool_output(text: str) -> tuple[str, str]:
    """(the chunk's own words, what listing tools printed): sections split at their markers; the
    output of other tools (a file read, a sub-agent's report) counts as the chunk's own."""
    if not text.startswith("[") and "\n[" not in text:  # a marker opens a line; most texts have none
        return text, ""
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
