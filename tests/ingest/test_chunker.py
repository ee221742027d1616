"""Chunking is turn-based, respects code fences, and keeps ids stable as a session grows."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.config import Config
from causantic.ingest.chunker import chunk_id, iter_chunks, long_lines_summarised, split_text
from causantic.ingest.longtext import WindowedText
from causantic.ingest.render import RenderedTurn, Section
from causantic.ingest.tokens import approx_tokens


def _turn(*texts: str) -> RenderedTurn:
    sections = tuple(Section(t, f"uuid-{i}", None) for i, t in enumerate(texts))
    return RenderedTurn(0, texts[0] if texts else "", sections, False, 0, "uuid-0")


def test_a_short_turn_is_one_chunk() -> None:
    drafts = list(iter_chunks(_turn("[User]\nhello", "[Assistant]\nhi there"), max_tokens=400))
    assert len(drafts) == 1
    assert drafts[0].text == "[User]\nhello\n\n[Assistant]\nhi there"


def test_a_long_turn_splits_between_sections_within_the_limit() -> None:
    sections = [f"[Assistant]\n{'word ' * 100}{i}" for i in range(10)]
    drafts = list(iter_chunks(_turn(*sections), max_tokens=400))
    assert len(drafts) > 1
    assert all(approx_tokens(d.text) <= 400 for d in drafts)
    assert [d.part for d in drafts] == list(range(len(drafts)))
    assert "".join(d.text for d in drafts).count("word") == 1000


def test_a_code_block_is_never_split_when_it_fits() -> None:
    code = "```python\n" + "\n".join(f"x_{i} = {i}" for i in range(60)) + "\n```"
    text = ("intro paragraph\n\n" * 30) + code + "\n\noutro"
    pieces = split_text(text, max_chars=1400)
    holding = [p for p in pieces if "x_0 = 0" in p]
    assert len(holding) == 1 and "x_59 = 59" in holding[0]


def test_an_oversized_code_block_is_split_by_lines() -> None:
    code = "```\n" + "\n".join(f"line {i} " + "y" * 50 for i in range(200)) + "\n```"
    pieces = split_text(code, max_chars=1400)
    assert len(pieces) > 1
    assert all(len(p) <= 1400 for p in pieces)
    assert all(p.split("\n")[-1].endswith("y") or p.endswith("```") for p in pieces)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=0, max_size=5000), st.integers(min_value=50, max_value=2000))
def test_splitting_never_loses_words_or_exceeds_the_limit(text: str, max_chars: int) -> None:
    pieces = split_text(text, max_chars)
    assert all(len(p) <= max_chars for p in pieces)
    assert "".join("".join(p.split()) for p in pieces) == "".join(text.split())


def test_chunk_ids_are_stable_and_distinct() -> None:
    assert chunk_id("s", "main", "u1", 0) == chunk_id("s", "main", "u1", 0)
    assert (
        len(
            {
                chunk_id("s", "main", "u1", 0),
                chunk_id("s", "main", "u1", 1),
                chunk_id("s", "agent", "u1", 0),
                chunk_id("t", "main", "u1", 0),
            }
        )
        == 4
    )


def test_a_long_line_is_kept_whole_for_search_and_summarised_for_embedding() -> None:
    line = "".join(f"var a{i}=function(b){{return b*{i}}};" for i in range(3000))  # minified, no newline
    assert len(line) > 20_000
    pieces = split_text(f"Why does this bundle fail?\n{line}", 1400, long_line_chars=20_000)
    assert all(len(p) <= 1400 for p in pieces)
    slices = [p for p in pieces if "[long line " in p]
    kept = "".join(re.sub(r"^.*\[long line \d+/\d+ of [\d,]+ characters\] ", "", s, flags=re.S) for s in slices)
    assert kept == line  # every character stays searchable
    summaries = {long_lines_summarised(p) for p in slices}
    assert len(summaries) == 2 and all(len(s) < 400 for s in summaries)
    assert long_lines_summarised("an ordinary chunk") == "an ordinary chunk"


@pytest.mark.slow
def test_a_50_mb_line_is_cut_into_chunks_in_one_pass_keeping_every_character() -> None:
    """Slicing used to copy the rest of the line per slice: 50 MB did not finish ingesting in 590 s
    (issue 18, ``_cut_long_lines``). Cut here as ingest cuts it, from a string and from the windows a
    pasted text of megabytes is held as; ingesting such a line end to end (redaction, saving in
    batches, search) is test_pipeline's 8 MB line and test_streamed_write's 9 MB one."""
    line = ("const x=require('y');" * 2_500_000)[:50_000_000]
    text = f"look at this:\n{line}"
    windows = WindowedText()
    for start in range(0, len(text), 1 << 20):
        windows.append(text[start : start + (1 << 20)])
    max_tokens = Config().chunking.max_tokens
    for long in (None, windows):
        section = Section("" if long else text, "u1", None, long=long)
        drafts = list(iter_chunks(RenderedTurn(0, "look at this:", (section,), False, 0, "u1"), max_tokens))
        assert len(drafts) > 35_000
        kept = "".join(_LONG_LINE_SLICE.sub("", d.text) for d in drafts)
        assert drafts[0].text.startswith("look at this:\n")
        same = kept == line  # (not compared inside assert: a diff of 50 MB strings takes minutes)
        assert same, f"characters lost, added or moved: {len(kept):,} kept of {len(line):,}"


_LONG_LINE_SLICE = re.compile(r"^.*?\[long line \d+/\d+ of [\d,]+ characters\] ", flags=re.S)


# The paragraph rule as it was written with two regular expressions before a text could be held as
# windows (issue 18): the oracle of the version that reads a string and a WindowedText alike.
_OLD_FENCE = re.compile(r"\s*(```|~~~)")
_OLD_BLANK = re.compile(r"\s*")


def _old_paragraphs_and_fences(text: str) -> list[tuple[int, int]]:
    blocks: list[tuple[int, int]] = []
    first: int | None = None
    last = 0
    in_fence = False
    start = 0
    lines = []
    while True:
        stop = text.find("\n", start)
        lines.append((start, len(text) if stop < 0 else stop))
        if stop < 0:
            break
        start = stop + 1
    for start, end in lines:
        if _OLD_FENCE.match(text, start, end):
            if not in_fence and first is not None:
                blocks.append((first, last))
                first = None
            first = start if first is None else first
            last = end
            if in_fence:
                blocks.append((first, last))
                first = None
            in_fence = not in_fence
            continue
        if not in_fence and _OLD_BLANK.fullmatch(text, start, end):
            if first is not None:
                blocks.append((first, last))
                first = None
            continue
        first = start if first is None else first
        last = end
    if first is not None:
        blocks.append((first, last))
    return blocks


PIECES = st.sampled_from(
    ["```", "~~~", "\n", "\n\n", "  ", "\u3000", "\u2028", "\x85", "word", "😀", "é", "x" * 90, " ```py", "\t~~~"]
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.one_of(PIECES, st.text(max_size=12)), max_size=80).map("".join),
    st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=30),
    st.integers(min_value=20, max_value=300),
)
def test_a_text_held_as_windows_splits_as_the_string_does(text: str, sizes: list[int], max_chars: int) -> None:
    from causantic.ingest.chunker import _paragraphs_and_fences
    from causantic.ingest.longtext import WindowedText

    assert _paragraphs_and_fences(text) == _old_paragraphs_and_fences(text)
    windowed = WindowedText()
    at, n = 0, 0
    while at < len(text):
        windowed.append(text[at : at + sizes[n % len(sizes)]])
        at, n = at + sizes[n % len(sizes)], n + 1
    assert len(windowed) == len(text) and windowed[:] == text
    assert split_text(windowed, max_chars, long_line_chars=max_chars * 3) == split_text(
        text, max_chars, long_line_chars=max_chars * 3
    )
