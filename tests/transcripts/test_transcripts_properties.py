"""Property tests: damaged files never raise, and every damaged line is counted exactly once."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from transcript_records import assistant, line, text, user

from causantic.transcripts import BROKEN_LINE_REASONS, SkipReason, assemble_turns, prompt_of, read_file
from causantic.transcripts.model import SkipReport, Transcript

# The autouse CAUSANTIC_HOME fixture only sets environment variables; sharing it across examples is fine.
PROPERTY_SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _read(data: bytes) -> tuple[list[Transcript], SkipReport]:
    """read_file over `data` (tmp_path is function-scoped, so each example makes its own folder)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.jsonl"
        path.write_bytes(data)
        return read_file(path)


def _messages(transcripts: list[Transcript]) -> list[str]:
    return [m.uuid for t in transcripts for m in t.messages]


# A conversation of distinct records: prompts, and assistant answers with their own message ids.
@st.composite
def conversations(draw: st.DrawFn) -> list[dict[str, Any]]:
    texts = draw(st.lists(st.text(max_size=30), min_size=1, max_size=12))
    records: list[dict[str, Any]] = []
    for i, body in enumerate(texts):
        uuid = f"u{i:04d}-{len(body)}"
        if i % 2 == 0:
            records.append(user("p " + body, uuid=uuid))
        else:
            records.append(assistant([text("a " + body)], uuid=uuid, message_id=f"msg_{i}"))
    return records


# Garbage that cannot start a JSON value and holds no newline.
garbage_lines = st.binary(max_size=40).map(lambda b: b"#" + b.replace(b"\n", b" "))


@PROPERTY_SETTINGS
@given(data=st.binary(max_size=2000))
def test_arbitrary_bytes_never_raise(data: bytes) -> None:
    transcripts, report = _read(data)
    assert report.total >= 0
    for transcript in transcripts:
        assert sum(len(t.messages) for t in assemble_turns(transcript)) == len(transcript.messages)


@PROPERTY_SETTINGS
@given(records=conversations(), garbage=st.lists(garbage_lines, max_size=8), seed=st.randoms())
def test_each_garbage_line_is_counted_once_and_every_record_survives(
    records: list[dict[str, Any]], garbage: list[bytes], seed: Any
) -> None:
    lines = [line(r) for r in records] + garbage
    seed.shuffle(lines)
    transcripts, report = _read(b"\n".join(lines) + b"\n")
    assert sorted(_messages(transcripts)) == sorted(r["uuid"] for r in records)
    broken = sum(n for reason, n in report.counts.items() if reason in BROKEN_LINE_REASONS)
    assert broken == report.total == len(garbage)
    assert set(report.counts) <= {SkipReason.INVALID_JSON, SkipReason.INVALID_UTF8}


@PROPERTY_SETTINGS
@given(records=conversations(), data=st.data())
def test_a_cut_last_line_is_counted_as_truncated_and_the_rest_survives(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    last = line(records[-1])
    cut = data.draw(st.integers(min_value=1, max_value=len(last) - 1))
    body = b"".join(line(r) + b"\n" for r in records[:-1]) + last[:cut]
    transcripts, report = _read(body)
    assert _messages(transcripts) == [r["uuid"] for r in records[:-1]]
    assert dict(report.counts) == {"truncated last line": 1}


@PROPERTY_SETTINGS
@given(records=conversations(), data=st.data())
def test_a_cut_line_in_the_middle_is_counted_as_invalid_json(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    damaged = data.draw(st.integers(min_value=0, max_value=len(records) - 1))
    raw = line(records[damaged])
    cut = data.draw(st.integers(min_value=1, max_value=len(raw) - 1))
    lines = [line(r) for r in records]
    lines[damaged] = raw[:cut]
    transcripts, report = _read(b"\n".join(lines) + b"\n")
    assert _messages(transcripts) == [r["uuid"] for i, r in enumerate(records) if i != damaged]
    assert dict(report.counts) == {"invalid json": 1}


@PROPERTY_SETTINGS
@given(records=conversations(), data=st.data())
def test_records_written_without_a_newline_between_them_are_all_recovered(
    records: list[dict[str, Any]], data: st.DataObject
) -> None:
    joins = data.draw(st.lists(st.booleans(), min_size=len(records), max_size=len(records)))
    body = b"".join(line(r) + (b"" if joined else b"\n") for r, joined in zip(records, joins, strict=True))
    transcripts, report = _read(body)
    assert _messages(transcripts) == [r["uuid"] for r in records]
    assert report.total == 0


@PROPERTY_SETTINGS
@given(records=conversations(), data=st.data(), seed=st.randoms())
def test_shuffled_and_repeated_lines_keep_each_record_once_in_file_order_and_count_the_repeats(
    records: list[dict[str, Any]], data: st.DataObject, seed: Any
) -> None:
    repeats = data.draw(st.lists(st.sampled_from(records), max_size=10))
    written = records + repeats
    seed.shuffle(written)
    transcripts, report = _read(b"\n".join(line(r) for r in written))
    assert _messages(transcripts) == list(dict.fromkeys(r["uuid"] for r in written))
    assert dict(report.counts) == ({"duplicate record": len(repeats)} if repeats else {})


@PROPERTY_SETTINGS
@given(records=conversations())
def test_turns_partition_the_messages_and_start_at_prompts(records: list[dict[str, Any]]) -> None:
    transcripts, _ = _read(b"".join(line(r) + b"\n" for r in records))
    [transcript] = transcripts
    turns = assemble_turns(transcript)
    assert [m for t in turns for m in t.messages] == list(transcript.messages)
    assert [t.index for t in turns] == list(range(len(turns)))
    for turn in turns:
        assert turn.prompt == prompt_of(turn.messages[0]) or (turn.index == 0 and turn.prompt == "")
        assert all(not prompt_of(m) for m in turn.messages[1:])
