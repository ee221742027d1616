"""A pasted text of many megabytes: cleaned and redacted window by window, nothing lost (issue 18)."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.config import Config
from causantic.ingest import longtext, render, streams
from causantic.ingest.longtext import cleaned_long_text
from causantic.ingest.redact import redactor_from
from causantic.ingest.service import ingest_paths
from causantic.services import open_services
from causantic.store import features
from causantic.store.fts import identifier_terms
from causantic.transcripts import discover, longvalue, reader, without_injected
from causantic.transcripts.model import TextBlock

REDACT = redactor_from(Config().redaction)

# Secrets of the kinds the redactor knows, several of them found only by the words before them.
SECRETS = (
    "ghp_" + "Kd8s7F6g5H4j3K2l1Z0x" * 2,
    "AKIA" + "Q7RT2WX9ZK4MB3N5",
    "the secret key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYz8Kq3Lm9Tv",
    "password = hunter2hunter2",
    "Bearer eyJ0eXAiOiJKV1QiLCJhbGciOi",
    "https://hooks.slack.com/services/T0ABCDEFG/B0HIJKLMN/aBcDeFgHiJkLmNoPqRsTuVwX",
    "AccountKey=" + "Zm9vYmFyYmF6cXV4" * 6 + "==",
)
WORDS = st.sampled_from(("the", "build", "fails", "😀", "é", "token", "key", "x" * 30, "\n", "  ", "<b>", "ok."))


def _text(words: list[str], secrets: list[tuple[int, str]]) -> str:
    parts = list(words)
    for at, secret in secrets:
        parts.insert(min(at, len(parts)), secret)
    return " ".join(parts)


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(WORDS, min_size=200, max_size=900),
    secrets=st.lists(st.tuples(st.integers(0, 900), st.sampled_from(SECRETS)), max_size=6),
    injected=st.booleans(),
)
def test_windowed_cleaning_equals_cleaning_the_whole_text(
    words: list[str], secrets: list[tuple[int, str]], injected: bool
) -> None:
    # Windows of a few hundred characters, so secrets fall across cuts wherever they are planted.
    text = "Why does this fail? " + "w" * 300 + " " + _text(words, secrets)
    whole = REDACT(without_injected(text) if injected else text.strip())
    windowed = cleaned_long_text(text, REDACT, injected=injected, window=300, reach=200)[:]
    assert windowed == whole
    assert not any(s.split()[-1] in windowed for _, s in secrets)
    # The same text left in a transcript file and read back in windows of a few hundred bytes.
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(longvalue, "LONG_VALUE_BYTES", 100)
        patch.setattr(longvalue, "WINDOW_BYTES", 257)
        left = _left_in_file(text, Path(folder) / "s.jsonl")
        assert cleaned_long_text(left, REDACT, injected=injected, window=300, reach=200)[:] == whole


# Each example starts a helper process; where secrets fall across cuts is searched by the test above
# (150 examples, one process), this one checks that windows cleaned in two processes join in order.
@settings(max_examples=10, deadline=None)
@given(
    words=st.lists(WORDS, min_size=300, max_size=900),
    secrets=st.lists(st.tuples(st.integers(0, 900), st.sampled_from(SECRETS)), max_size=6),
    injected=st.booleans(),
)
def test_windows_cleaned_in_two_processes_equal_cleaning_the_whole_text(
    words: list[str], secrets: list[tuple[int, str]], injected: bool
) -> None:
    # Past PARALLEL_CLEAN_CHARS (lowered here) a helper process cleans some of the windows, this
    # process the others; they come back in order, the same text as cleaning it whole.
    text = "Why does this fail? " + "w" * 300 + " " + _text(words, secrets)
    whole = REDACT(without_injected(text) if injected else text.strip())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(longtext, "PARALLEL_CLEAN_CHARS", 0)
        assert cleaned_long_text(text, REDACT, injected=injected, window=300, reach=200)[:] == whole


_PARENT = os.getpid()


class _DiesInTheHelper:
    """The redactor, except that the helper process dies at the second window it is handed (the
    first two windows always go to it)."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> str:
        if os.getpid() != _PARENT:
            self.calls += 1
            if self.calls == 2:
                os._exit(1)
        return REDACT(text)


def test_a_killed_cleaning_helper_loses_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The helper dies holding a window: this process cleans that window and the rest itself.
    monkeypatch.setattr(longtext, "PARALLEL_CLEAN_CHARS", 0)
    text = " ".join(f"word{i} {SECRETS[i % len(SECRETS)]}" for i in range(400)) + " tail" * 2000
    whole = REDACT(text.strip())
    assert cleaned_long_text(text, _DiesInTheHelper(), injected=False, window=3000, reach=200)[:] == whole


def _left_in_file(text: str, path: Path) -> longvalue.LongText:
    """``text`` as the long message value of a transcript line, left in the file ``path``."""
    data = json.dumps({"message": {"content": text}}).encode()
    path.write_bytes(data)
    parsed = longvalue.parse_long_line(data, 0, len(data), path)
    assert parsed is not None
    (value,) = parsed[1].values()
    return value.text


def test_a_text_whose_words_all_fall_in_one_window_is_stripped_at_both_ends() -> None:
    # Mostly blank (a paste padded with spaces and blank lines): the one window holding words, with
    # a secret redacted in it, starts and ends with blanks, which the whole text's cleaning strips.
    text = " " * 700 + "\n   the build fails with " + SECRETS[0] + " \n" + " " * 700
    whole = REDACT(text.strip())
    windowed = cleaned_long_text(text, REDACT, injected=False, window=300, reach=200)[:]
    assert windowed == whole and windowed.startswith("the build fails")


def test_a_secret_across_a_window_boundary_is_redacted() -> None:
    for secret in SECRETS:
        value = secret.split()[-1]
        for shift in range(0, len(secret) + 2, 3):  # the window's first cut falls at every point of it
            text = "a " * ((1000 - shift) // 2) + secret + " b" * 1500
            out = cleaned_long_text(text, REDACT, injected=True, window=1000, reach=300)[:]
            assert value not in out and "[REDACTED:" in out, (secret, shift)
            assert out == REDACT(without_injected(text))


def test_an_injected_reminder_across_a_window_boundary_is_removed() -> None:
    reminder = "<system-reminder>The user opened a file in the IDE.</system-reminder>"
    text = "a " * 490 + reminder + " b" * 1500
    out = cleaned_long_text(text, REDACT, injected=True, window=1000, reach=300)[:]
    assert "system-reminder" not in out and "opened a file" not in out
    assert out == without_injected(text)


def _one_line_session(folder: Path, line: str, *, broken_copy: bool = False) -> Path:
    record = {
        "type": "user",
        "uuid": "u1",
        "sessionId": "s-huge",
        "cwd": "/tmp/huge",
        "timestamp": "2026-01-01T10:00:00Z",
        "message": {"role": "user", "content": f"Why does this fail?\n{line}"},
    }
    answer = {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "sessionId": "s-huge",
        "cwd": "/tmp/huge",
        "timestamp": "2026-01-01T10:01:00Z",
        "message": {"id": "m1", "role": "assistant", "content": [{"type": "text", "text": "The loader is minified."}]},
    }
    lines = [json.dumps(record), json.dumps(answer)]
    if broken_copy:  # the same huge record again, cut short: a damaged line inside the file
        lines.insert(1, json.dumps({**record, "uuid": "u0"})[: len(lines[0]) // 2])
    path = folder / "huge.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture(params=["parsed", "left in the file"])
def line_reading(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The huge line parsed whole, or (limits lowered to its size) its text left in the file and
    decoded window by window, as a line of 50 MB is (transcripts/longvalue.py)."""
    if request.param == "parsed":
        monkeypatch.setattr(reader, "LONG_LINE_BYTES", 1 << 40)
    else:
        monkeypatch.setattr(reader, "LONG_LINE_BYTES", 1 << 20)
        monkeypatch.setattr(longvalue, "LONG_VALUE_BYTES", 1 << 19)
        monkeypatch.setattr(longvalue, "WINDOW_BYTES", 100_003)
    return str(request.param)


@pytest.mark.slow
def test_a_huge_emoji_line_keeps_every_character_its_words_are_found_and_its_secret_is_not(
    tmp_path: Path, line_reading: str
) -> None:
    # 3 million characters holding emoji and accents (Python stores such text at four bytes a
    # character), a secret straddling the first window's end and words at its start, middle and end.
    unit = "naïve café 😀 loader → bundle ✓ the key is in the config; 中文 text "
    filler = (unit * (3_000_000 // len(unit) + 1))[:3_000_000]
    secret = "ghp_" + "Kd8s7F6g5H4j3K2l1Z0x" * 2
    cut, middle = longtext.WINDOW_CHARS - 20, 2_000_000  # the secret sits where the first window would end
    line = f"quokkaopening {filler[:cut]} {secret} {filler[cut:middle]} quokkamiddle {filler[middle:]} quokkaclosing"
    path = _one_line_session(tmp_path, line)
    block = reader.read_file(path)[0][0].messages[0].blocks[0]
    assert isinstance(block, TextBlock) and (block.long is not None) == (line_reading == "left in the file")
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        found = {w: services.store.keyword_search(w) for w in ("quokkaopening", "quokkamiddle", "quokkaclosing")}
        contents = [r[0] for r in services.store.conn.execute("SELECT content FROM chunks ORDER BY turn_index, part")]
    assert report.errors == [] and report.broken_lines == 0
    assert all(found.values()), found
    stored = "".join(contents)
    assert secret not in stored and secret[:20] not in stored and "[REDACTED:github-token]" in stored
    slices = [c for c in contents if "[long line " in c]
    kept = "".join(re.sub(r"^.*?\[long line \d+/\d+ of [\d,]+ characters\] ", "", c, flags=re.S) for c in slices)
    kept = kept.removesuffix("\n\n[Assistant]\nThe loader is minified.")  # the reply shares the last chunk
    same = kept == REDACT(line)  # every character, emoji included, in order, once
    assert same, "the stored slices are not the line"  # (a diff of 3 MB strings would take minutes)


@pytest.mark.slow
def test_a_broken_huge_line_is_skipped_and_counted_and_the_rest_is_kept(tmp_path: Path, line_reading: str) -> None:
    line = ("minified();var a=1;😀 " * 150_000) + " quokkaclosing"
    path = _one_line_session(tmp_path, line, broken_copy=True)
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        found = services.store.keyword_search("quokkaclosing")
        answer = services.store.keyword_search("loader minified")
    assert [group.session_id for group in discover(path)] == ["s-huge"]  # read without parsing the line
    assert report.broken_lines == 1
    assert report.as_dict()["skipped_lines"] == {"total": 1, "by_reason": {"invalid json": 1}}
    assert found and answer


def test_a_huge_lines_chunks_get_their_search_terms_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Past the parallel thresholds (lowered here) the line is cleaned in two processes and its
    # chunks' search terms are made by the store beside the writes: each chunk gets those of its own
    # text, and a camelCase part of an identifier in the line is found.
    monkeypatch.setattr(reader, "LONG_LINE_BYTES", 1 << 16)
    monkeypatch.setattr(longvalue, "LONG_VALUE_BYTES", 1 << 15)
    monkeypatch.setattr(render, "HUGE_TEXT_CHARS", 1 << 16)
    monkeypatch.setattr(longtext, "PARALLEL_CLEAN_CHARS", 0)
    monkeypatch.setattr(streams, "PARALLEL_CLEAN_CHARS", 0)
    monkeypatch.setattr(features, "PARALLEL_FEATURE_CHARS", 0)
    calls: list[str] = []  # search terms made while planning
    monkeypatch.setattr(streams, "identifier_terms", lambda text: calls.append(text) or identifier_terms(text))
    line = "minified();var a=1;😀 getUserName(x); " * 20_000 + " parseQuokkaTree(y)"
    path = _one_line_session(tmp_path, line)
    with open_services(Config()) as services:
        report = ingest_paths(services, [path], embed=False, workers=1)
        rows = list(services.store.conn.execute("SELECT content, search_terms FROM chunks"))
        found = services.store.keyword_search("quokka")
    assert report.errors == [] and len(rows) > 100
    assert all(terms == identifier_terms(content) for content, terms in rows)
    assert len(found) == 1
    assert calls == [], "made while planning"
