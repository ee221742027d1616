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
from causantic.transcripts.model import SkipReport, TextBlock, Transcript
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


def _read_peak(path: Path) -> tuple[list[Transcript], SkipReport, int]:
    """What :func:`read_file` reads of ``path``, and the most memory it held at once (bytes)."""
    read_file(path)  # imports and caches: not counted
    tracemalloc.start()
    try:
        transcripts, report = read_file(path)
        return transcripts, report, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_damaged_long_lines_are_read_without_being_held_whole(tmp_path: Path) -> None:
    # Lines of megabytes: two records written on one line (Claude Code 2.1.7-2.1.12 did), a record
    # damaged after its long text, and a last line cut inside it (a file being written). They read
    # as the ordinary path reads them, whole records kept, damaged ones counted, long texts left in
    # the file, holding no more than one good line of that text does: the lines were read again
    # whole and decoded, four bytes a character with an emoji in them (2.8x one good line's peak).
    long = "worker 7 took job quokka in 12ms ✓ 😀\n" * 100_000  # 4.1 MB of UTF-8

    def line(text: str, uuid: str) -> bytes:
        return _encoded(_record(text, uuid), ascii_only=False)

    good = tmp_path / "good.jsonl"
    good.write_bytes(line(long, "u0"))
    *_, one_line = _read_peak(good)
    run_together = line(long, "u1")[:-1] + line("and then", "u2")
    damaged = line(long, "u3").replace(b': "2026', b': X"2026', 1)  # an invalid token, after the text
    path = tmp_path / "s.jsonl"
    cut = line(long, "u5")[:3_000_000]  # a line of megabytes still (the ordinary path reads a shorter one)
    path.write_bytes(run_together + damaged + line("after", "u4") + cut)
    [transcript], report, peak = _read_peak(path)
    assert [m.uuid for m in transcript.messages] == ["u1", "u2", "u4"]
    assert dict(report.counts) == {"invalid json": 1, "truncated last line": 1}
    block = transcript.messages[0].blocks[0]
    assert isinstance(block, TextBlock) and block.long is not None and "".join(block.long.windows()) == long
    assert peak < 1.2 * one_line, f"peak {peak / 1e6:.1f} MB, one good line's {one_line / 1e6:.1f} MB"


def test_a_stray_byte_in_a_long_text_costs_its_character_not_the_record(tmp_path: Path) -> None:
    # As the ordinary path decodes a line holding a byte that is no UTF-8: that byte reads as U+FFFD.
    long = "naïve ✓ " * 400_000
    line = _encoded(_record(long, "u1"), ascii_only=False)
    path = tmp_path / "s.jsonl"
    path.write_bytes(line.replace("✓".encode(), b"\xff", 1))
    [transcript], report = read_file(path)
    block = transcript.messages[0].blocks[0]
    assert isinstance(block, TextBlock) and block.long is not None and report.total == 0
    assert "".join(block.long.windows()) == long.replace("✓", "\ufffd", 1)


def test_a_file_with_no_record_is_told_damaged_or_another_format_without_being_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Megabytes of JSON lines all cut short hold no record: damaged lines, told apart from a JSON
    # document by their first line, the file read a piece at a time. It was read whole, its lines
    # listed and the whole parsed (2.3x the file at the peak). A document whose lines start objects
    # (objects over lines, most opening one) is read whole, as before: it is valid JSON, another format.
    cut = b'{"type": "user", "uuid": "u", "message": {"content": "worker 7 took job quokka ' + "✓".encode() + b"\n"
    # A 4 KiB probe instead of a megabyte keeps the file small: parsing the probe costs orjson up to 13
    # times its size (3.13; 4 times in 3.8), which a 64 KiB probe made half this file's size.
    monkeypatch.setattr(reader, "_DOCUMENT_PROBE", 1 << 12, raising=False)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_bytes(cut * 20_000)
    transcripts, report, peak = _read_peak(damaged)
    assert transcripts == [] and dict(report.counts) == {"invalid json": 20_000}
    assert peak < 0.25 * damaged.stat().st_size, f"peak {peak / 1e6:.1f} MB for {damaged.stat().st_size / 1e6:.1f} MB"
    array = tmp_path / "array.jsonl"
    entry = b'{"n": %d, "inner":\n{"text": "worker 7 took job quokka", "more":\n1}}'
    array.write_bytes(b"[" + b",\n".join(entry % n for n in range(2_000)) + b"]\n")
    assert array.stat().st_size > 1 << 16  # past what is parsed alone
    transcripts, report, _ = _read_peak(array)
    assert transcripts == [] and (dict(report.counts), report.other_format) == ({"file in another format": 1}, [array])
