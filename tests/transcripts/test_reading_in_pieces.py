"""A transcript file is read a line at a time, and a long line in pieces: never whole. What is read is
what ``json.loads`` reads line by line, and the crash-safety promises hold: a file growing while it
is read is read as it stood when opened, a line being written is its truncated last line, damaged
lines are skipped and counted."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causantic.transcripts import longvalue, reader
from causantic.transcripts.longvalue import Placeholders
from causantic.transcripts.model import SkipReport, TextBlock
from causantic.transcripts.reader import read_file, read_records

SPECIAL = st.sampled_from(["\\", '"', "\n", "\t", "\x00", "/", "é", "中", "😀", "\ud83d", "\ude00", "a b"])
TEXTS = st.lists(st.one_of(SPECIAL, st.text(max_size=6)), max_size=40).map("".join)


def _record(text: str, uuid: str) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s-pieces",
        "timestamp": "2026-11-25T10:00:00Z",
        "message": {"role": "user", "content": text},
    }


def _line(text: str, uuid: str) -> bytes:
    return json.dumps(_record(text, uuid)).encode() + b"\n"


def _whole(record: dict[str, Any], holes: Placeholders) -> dict[str, Any]:
    value: dict[str, Any] = holes.put_back(record)
    return value


def _encoded(record: dict[str, Any], ascii_only: bool) -> bytes:
    """The record's line as writers put it: ASCII with escapes, or raw UTF-8 (when it can be)."""
    try:
        return json.dumps(record, ensure_ascii=ascii_only).encode() + b"\n"
    except UnicodeEncodeError:  # a lone surrogate: only its escape can be written
        return json.dumps(record).encode() + b"\n"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(TEXTS, st.integers(0, 40), st.booleans()), min_size=1, max_size=6))
def test_lines_read_in_pieces_are_what_json_loads_reads(
    tmp_path_factory: pytest.TempPathFactory, lines: list[tuple[str, int, bool]]
) -> None:
    # Lines of a few bytes to a few kilobytes; with tiny limits, the longer ones are read in pieces of
    # 16 bytes (cutting escapes, characters and surrogate pairs), their longer strings checked and
    # left in the file, then put back (or, without a rule, the line read whole).
    path = tmp_path_factory.mktemp("pieces") / "s.jsonl"
    data = [_encoded(_record(text * repeat, f"u{n}"), ascii_only) for n, (text, repeat, ascii_only) in enumerate(lines)]
    path.write_bytes(b"".join(data))
    expected = [reader.loads(line) for line in data]  # json.loads, a lone half of a pair read as U+FFFD
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader, "LONG_LINE_BYTES", 256)
        patch.setattr(reader, "WINDOW_BYTES", 16)
        patch.setattr(longvalue, "LONG_VALUE_BYTES", 64)
        patch.setattr(longvalue, "WINDOW_BYTES", 32)
        for rule in (None, _whole):
            report = SkipReport()
            assert [record for _, _, record in read_records(path, report, rule)] == expected
            assert report.total == 0


class _Appending:
    """orjson, appending ``more`` to ``path`` when it first refuses a line: the writer finishes the
    line it was writing, and writes another, right after the reader found the line cut short."""

    JSONDecodeError = orjson.JSONDecodeError

    def __init__(self, path: Path, more: bytes) -> None:
        self.path, self.more = path, more

    def loads(self, data: Any) -> Any:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            if self.more:
                with self.path.open("ab") as handle:
                    handle.write(self.more)
                self.more = b""
            raise


def test_a_file_growing_while_it_is_read_is_read_as_it_stood_when_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Claude Code is writing line 2 when ingest opens the file; it finishes it, and writes line 3,
    # once the reader has found line 2 cut short. Line 2 is the truncated last line (the next ingest
    # reads it), not that and then a damaged line (its end) and line 3.
    path = tmp_path / "live.jsonl"
    two = _line("two", "u2")
    path.write_bytes(_line("one", "u1") + two[:30])
    monkeypatch.setattr(reader, "orjson", _Appending(path, two[30:] + _line("three", "u3")))
    transcripts, report = read_file(path)
    assert [m.uuid for t in transcripts for m in t.messages] == ["u1"]
    assert dict(report.counts) == {"truncated last line": 1}
    monkeypatch.undo()
    transcripts, report = read_file(path)  # the next ingest
    assert [m.uuid for t in transcripts for m in t.messages] == ["u1", "u2", "u3"] and report.total == 0


@pytest.fixture
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """Long lines and values of a few kilobytes, read in pieces of 512 bytes."""
    monkeypatch.setattr(reader, "LONG_LINE_BYTES", 4096)
    monkeypatch.setattr(reader, "WINDOW_BYTES", 512)
    monkeypatch.setattr(longvalue, "LONG_VALUE_BYTES", 2048)
    monkeypatch.setattr(longvalue, "WINDOW_BYTES", 512)
    monkeypatch.setattr(longvalue, "HEAD_CHARS", 300)


def test_a_long_line_cut_while_it_is_written_is_the_truncated_last_line(tmp_path: Path, small_limits: None) -> None:
    path = tmp_path / "live.jsonl"
    long = _line("why 😀 " * 2000, "u2")
    path.write_bytes(_line("one", "u1") + long[: len(long) // 2])  # cut inside its long value
    transcripts, report = read_file(path)
    assert [m.uuid for t in transcripts for m in t.messages] == ["u1"]
    assert dict(report.counts) == {"truncated last line": 1}
    with path.open("ab") as handle:  # written on: the next ingest reads it, left in the file
        handle.write(long[len(long) // 2 :])
    transcripts, report = read_file(path)
    block = transcripts[0].messages[1].blocks[0]
    assert isinstance(block, TextBlock) and block.long is not None and report.total == 0
    assert "".join(block.long.windows()) == "why 😀 " * 2000


def test_damaged_lines_among_long_ones_are_skipped_and_counted(tmp_path: Path, small_limits: None) -> None:
    good = _line("a" * 6000, "u1")
    path = tmp_path / "s.jsonl"
    lines = [
        good.replace(b"aaaa", b'a"aa', 1),  # an unescaped quote inside the long value
        good.replace(b"aaaa", b"a\\qa", 1).replace(b'"u1"', b'"u2"'),  # an escape JSON has not
        b"{" + b'"x": "' + b"b" * 5000 + b'"\n',  # a long line whose object is never closed
        _line("after", "u3"),
    ]
    path.write_bytes(b"".join(lines))
    transcripts, report = read_file(path)
    assert [m.uuid for t in transcripts for m in t.messages] == ["u3"]
    assert dict(report.counts) == {"invalid json": 3}


def test_a_session_file_is_read_without_holding_its_bytes_or_claude_codes_copies(tmp_path: Path) -> None:
    # 200 files read by the Read tool: Claude Code writes each one twice on its result's line (the
    # tool_result and toolUseResult.file.content), and linking reads neither copy.
    source = "def handler(event):\n    return {'status': 200, 'body': event['body'].upper()}  # naïve ✓\n" * 250
    lines = []
    for n in range(200):
        call = {"type": "tool_use", "id": f"c{n}", "name": "Read", "input": {"file_path": f"/work/app/m{n}.py"}}
        copy = {"type": "text", "file": {"filePath": f"/work/app/m{n}.py", "content": source, "numLines": 500}}
        result = {**_record("", f"r{n}"), "toolUseResult": copy}
        result["message"] = {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": f"c{n}", "content": source}],
        }
        lines += [
            {**_record("", f"a{n}"), "type": "assistant", "message": {"role": "assistant", "content": [call]}},
            result,
        ]
    path = tmp_path / "s-read.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines))
    size = path.stat().st_size
    read_file(path)  # imports and caches: not counted
    tracemalloc.start()
    try:
        [transcript], report = read_file(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(transcript.messages) == 400 and report.total == 0
    # Read whole, the file's bytes and both copies of every output were held: 2.9x the file at the
    # peak; read a line at a time, both copies: 1.9x. Now one copy, as the transcript keeps it: 1.0x
    # (the text, with a ✓, at two bytes a character).
    assert peak < 1.5 * size, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
