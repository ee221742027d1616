"""A string value of many megabytes decoded window by window; json.loads and orjson.loads are the oracle
(a lone half of a surrogate pair read as U+FFFD: no UTF-8 text may hold it)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.errors import TranscriptError
from causantic.transcripts import longvalue, reader
from causantic.transcripts.longvalue import (
    LineScanner,
    decode_window,
    parse_long_line,
    replace_lone_surrogates,
    safe_cut,
)
from causantic.transcripts.model import TextBlock, ToolCall, ToolResult
from causantic.transcripts.reader import read_file

# Characters whose JSON form is an escape, several bytes of UTF-8, or a surrogate pair.
SPECIAL = st.sampled_from(["\\", '"', "\n", "\t", "\x00", "\x1f", "/", "é", "中", "😀", "𝄞", "\ud83d", "\ude00", "a b"])
TEXTS = st.lists(st.one_of(SPECIAL, st.text(max_size=8)), max_size=60).map("".join)


def _encodings(text: str) -> list[bytes]:
    """The escaped JSON content of ``text`` as writers put it: ASCII-only with escapes (json.dumps),
    and raw UTF-8 with only the required escapes, when it has no lone surrogate."""
    out = [json.dumps(text)[1:-1].encode()]
    try:
        out.append(json.dumps(text, ensure_ascii=False)[1:-1].encode("utf-8"))
    except UnicodeEncodeError:
        pass
    return out


@settings(max_examples=400, deadline=None)
@given(TEXTS)
def test_every_cut_position_gives_windows_that_decode_to_the_value(text: str) -> None:
    for raw in _encodings(text):
        # Two halves of a pair written apart read as one character; a lone half as U+FFFD.
        expected = replace_lone_surrogates(json.loads(b'"' + raw + b'"'))
        for target in range(len(raw)):
            cut = safe_cut(raw, 0, target)
            assert cut <= target
            if cut == 0:  # nowhere to cut before target (it is within the first escape or character)
                continue
            assert decode_window(raw[:cut]) + decode_window(raw[cut:]) == expected, (raw, target, cut)


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(min_value=16, max_value=64))
def test_windows_joined_are_the_value_orjson_or_json_gives(text: str, window: int) -> None:
    for raw in _encodings(text):
        quoted = b'"' + raw + b'"'
        try:
            oracle = orjson.loads(quoted)
        except orjson.JSONDecodeError:  # a lone surrogate: json.loads reads it, and it becomes U+FFFD
            oracle = replace_lone_surrogates(json.loads(quoted))
        # A value read in pieces as its line is, checked a window at a time, then read back.
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(longvalue, "LONG_VALUE_BYTES", 0)
            patch.setattr(longvalue, "WINDOW_BYTES", window)
            patch.setattr(longvalue, "HEAD_CHARS", len(oracle))
            scanner = LineScanner(Path("unread.jsonl"), 0)
            for n in range(0, len(quoted), 7):
                scanner.feed(quoted[n : n + 7])
            scanned = scanner.finish()
        assert scanned is not None and scanned[0] == b'"\\u0000causantic-long-value-0"'
        (value,) = scanned[1].values()
        assert (value.head, value.text.chars, value.blank) == (oracle, len(oracle), not oracle.strip())


@settings(max_examples=300, deadline=None)
@given(TEXTS, st.integers(min_value=1, max_value=40), st.booleans())
def test_a_string_inside_a_value_read_in_pieces_is_what_json_loads_reads(text: str, piece: int, ascii: bool) -> None:
    # An older Codex's output: JSON text ``{"output": "<text>", "metadata": …}`` held in a value, read
    # from the value's windows (cut anywhere, as they are decoded) without the whole held.
    if not ascii and any("\ud800" <= c <= "\udfff" for c in text):  # no UTF-8 text holds a lone surrogate
        ascii = True
    wrapped = json.dumps({"output": text, "metadata": {"exit_code": 1}}, ensure_ascii=ascii)
    inner = wrapped[len('{"output": "') :]
    rest: list[str] = []
    windows = longvalue.string_windows(iter([inner[n : n + piece] for n in range(0, len(inner), piece)]), rest)
    assert "".join(windows) == replace_lone_surrogates(json.loads(wrapped)["output"])
    assert "".join(rest) == ', "metadata": {"exit_code": 1}}'


@pytest.mark.parametrize("bad", [b'abc"def', b"abc\\qdef", b"abc\\u12", b"abc\x01def", b"abc\xffdef", b"tail\\"])
def test_damaged_content_is_refused(bad: bytes) -> None:
    with pytest.raises(ValueError):
        decode_window(bad)


def _record(content: object, uuid: str = "u1") -> dict[str, object]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s-long",
        "timestamp": "2026-01-01T10:00:00Z",
        "message": {"role": "user", "content": content},
    }


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long lines and values of a few kilobytes, so the tests stay fast."""
    monkeypatch.setattr(reader, "LONG_LINE_BYTES", 4096)
    monkeypatch.setattr(longvalue, "LONG_VALUE_BYTES", 2048)
    monkeypatch.setattr(longvalue, "WINDOW_BYTES", 512)
    monkeypatch.setattr(longvalue, "HEAD_CHARS", 300)


@settings(max_examples=40, deadline=None)
@given(TEXTS.filter(lambda t: t.strip()), st.booleans())
def test_a_long_message_left_in_its_file_reads_back_as_json_loads_reads_it(
    tmp_path_factory: pytest.TempPathFactory, piece: str, as_blocks: bool
) -> None:
    folder = tmp_path_factory.mktemp("long")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "LONG_LINE_BYTES", 4096)
        patch.setattr(longvalue, "LONG_VALUE_BYTES", 2048)
        patch.setattr(longvalue, "HEAD_CHARS", 300)
        patch.setattr(longvalue, "WINDOW_BYTES", 512)
        text = "Why?\n" + piece * (6000 // max(1, len(json.dumps(piece)) - 2) + 1) + " end"
        content: object = [{"type": "text", "text": text}] if as_blocks else text
        path = folder / "s.jsonl"
        path.write_text(json.dumps(_record(content)) + "\n" + json.dumps(_record("short", "u2")) + "\n")
        transcripts, report = read_file(path)
        block = transcripts[0].messages[0].blocks[0]
        assert isinstance(block, TextBlock) and block.long is not None
        expected = replace_lone_surrogates(json.loads(json.dumps(text)))  # a pair written apart is one character
        assert block.text == expected[:300]
        assert "".join(block.long.windows(64)) == expected
        assert transcripts[0].messages[1].blocks == (TextBlock("short"),)
        assert report.total == 0


def test_a_long_value_elsewhere_is_decoded_whole(tmp_path: Path, small_limits: None) -> None:
    long = "x😀" * 3000
    call = {"type": "tool_use", "id": "c1", "name": "Write", "input": {"file_path": "a.txt", "content": long}}
    record = {**_record("hello"), "type": "assistant", "message": {"role": "assistant", "content": [call]}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    transcripts, _ = read_file(path)
    assert transcripts[0].messages[0].blocks == (ToolCall("c1", "Write", {"file_path": "a.txt", "content": long}),)


@pytest.mark.parametrize("as_blocks", [False, True])
def test_a_long_tool_output_stays_in_its_file_and_its_copy_is_not_held(
    tmp_path: Path, small_limits: None, as_blocks: bool
) -> None:
    # A Bash output of many megabytes, which Claude Code writes twice: in the tool_result and in
    # toolUseResult.stdout. Neither is held: the result reads back from the file, and of the copy
    # only what sub-agent and team linking read is kept (here nothing).
    long = "".join(f"line {n} 😀\n" for n in range(1000))
    content: object = [{"type": "text", "text": long}] if as_blocks else long
    result = {"type": "tool_result", "tool_use_id": "c1", "content": content, "is_error": True}
    record = {**_record([result]), "toolUseResult": {"stdout": long, "stderr": ""}}
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(record) + "\n")
    transcripts, report = read_file(path)
    message = transcripts[0].messages[0]
    (block,) = message.blocks
    assert isinstance(block, ToolResult) and block.long is not None
    assert (block.tool_use_id, block.is_error) == ("c1", True)
    assert block.text == long[:300] and block.tail == long[-longvalue.TAIL_CHARS :]
    assert "".join(block.long.windows()) == block.whole() == long
    assert message.tool_use_result == {} and report.total == 0


def test_a_damaged_long_line_is_skipped_and_counted(tmp_path: Path, small_limits: None) -> None:
    good = json.dumps(_record("a" * 6000))
    broken = good.replace("aaaa", 'a"aa', 1)  # an unescaped quote inside the long value
    path = tmp_path / "s.jsonl"
    path.write_text(broken + "\n" + json.dumps(_record("after", "u2")) + "\n")
    transcripts, report = read_file(path)
    assert [m.uuid for t in transcripts for m in t.messages] == ["u2"]
    assert report.counts[reader.SkipReason.INVALID_JSON] == 1


def test_a_file_changed_after_reading_is_noticed_not_ingested(tmp_path: Path, small_limits: None) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(_record("b" * 6000)) + "\n")
    transcripts, _ = read_file(path)
    block = transcripts[0].messages[0].blocks[0]
    assert isinstance(block, TextBlock) and block.long is not None
    path.write_text(json.dumps(_record("c" * 6000)) + "\n")  # same length, other text
    with pytest.raises(TranscriptError, match="changed while it was read"):
        "".join(block.long.windows())


def test_a_placeholder_lookalike_in_the_record_is_left_alone(tmp_path: Path, small_limits: None) -> None:
    data = json.dumps({**_record("d" * 6000), "note": "\x00causantic-long-value-0"}).encode()
    parsed = parse_long_line(data, 0, len(data), tmp_path / "x.jsonl")
    assert parsed is not None
    path = tmp_path / "s.jsonl"
    path.write_bytes(data + b"\n")
    transcripts, report = read_file(path)  # the lookalike is used twice: the line is read the ordinary way
    assert transcripts[0].messages[0].blocks == (TextBlock("d" * 6000),) and report.total == 0
