"""A chunk's word stems and bulky-payload share come out the same whether its text is ASCII (split
by a translation table) or not (split by regular expressions): the fast path changes no ranking."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from causantic.store.features import _ASCII_WORDS, _PROSE_WORD, _prose_words, bulk_share, own_word_stems, word_stems

# ASCII with the characters the two ways of splitting could disagree on: line breaks str.splitlines()
# knows (\x0b \x0c \x1c-\x1e), a whitespace it does not (\x1f), quotes and colons of JSON, digits
# and underscores inside words, and long unbroken runs.
_PIECES = st.sampled_from(
    [
        "a",
        "Zq",
        "_",
        "9",
        " ",
        "\t",
        "\n",
        "\r",
        "\r\n",
        "\x0b",
        "\x0c",
        "\x1c",
        "\x1d",
        "\x1e",
        "\x1f",
        '"',
        ":",
        '"key": ',
        "{",
        ",",
        ".",
        "-",
        "x" * 61,
        "word " * 9,
        "ab1",
    ]
)
_ASCII = st.lists(_PIECES, max_size=60).map("".join)
_NON_ASCII = "\u00e9"  # é: a word character outside ASCII, which sends a text down the regex path
# (an emoji would not: outside every word, it is replaced by a space and the text split as ASCII)


@given(_ASCII)
def test_ascii_text_has_the_stems_of_the_regex_split(text: str) -> None:
    # An extra line holding one non-ASCII word splits by the regexes; it adds that word alone.
    assert word_stems(text + "\n" + _NON_ASCII) == word_stems(text) | {_NON_ASCII}


@given(_ASCII)
def test_ascii_text_has_the_bulk_share_of_the_regex_split(text: str) -> None:
    # A last line holding one non-ASCII word character is neither prose nor payload and joins no
    # run: the share scales by the length alone.
    widened = text + "\n" + _NON_ASCII
    expected = bulk_share(text) * len(text) / len(widened)
    assert abs(bulk_share(widened) - expected) < 1e-12


@given(_ASCII)
def test_ascii_lines_count_the_prose_words_the_regex_finds(text: str) -> None:
    # The payload test of each line compares its prose words with its length: both ways agree.
    lines, translated = text.splitlines(), text.translate(_ASCII_WORDS).splitlines()
    assert len(lines) == len(translated)
    for line, words in zip(lines, translated, strict=True):
        assert _prose_words(words.split()) == len(_PROSE_WORD.findall(line))


def test_an_openings_stems_leave_out_listing_output_and_follow_a_rewrite() -> None:
    text = "[User] fix the parser\n[Result:Bash] commit 1a2b tokenizer"
    assert own_word_stems(text) == word_stems("[User] fix the parser\n")
    rewritten = text.replace("parser", "lexer")
    assert "lexer" in own_word_stems(rewritten)
    assert "parser" not in own_word_stems(rewritten)
    assert "parser" in own_word_stems(text)  # the earlier text, still kept, keeps its own stems
