"""read_file: real corpus files with hand-counted numbers, and synthetic edge cases."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import pytest
from transcript_records import assistant, jsonl, line, text, tool_result, tool_use, user, write

from causantic.errors import TranscriptError
from causantic.transcripts import SkipReason, assemble_turns, read_file, reader
from causantic.transcripts.model import TextBlock, ThinkingBlock, ToolCall, ToolResult
from causantic.transcripts.reader import DEEP_VALUE, MAX_DEPTH

# --- the whole corpus --------------------------------------------------------------------------------


def test_every_claude_code_file_in_the_corpus_parses_without_an_exception(corpus_dir: Path) -> None:
    files = sorted(corpus_dir.rglob("*.jsonl"))
    assert len(files) > 350
    for path in files:
        transcripts, report = read_file(path)
        assert report.total >= 0
        for transcript in transcripts:
            assert transcript.messages, path
            for message in transcript.messages:
                assert message.line_no >= 1
                assert message.timestamp is None or message.timestamp.tzinfo is UTC
                assert message.session_id == transcript.session_id
                assert message.agent_id == transcript.agent_id
            assemble_turns(transcript)


def test_the_only_broken_lines_in_the_corpus_are_the_known_ones(corpus_dir: Path) -> None:
    broken: dict[str, dict[str, int]] = {}
    for path in sorted(corpus_dir.rglob("*.jsonl")):
        _, report = read_file(path)
        bad = {
            str(reason): n
            for reason, n in report.counts.items()
            if reason not in (SkipReason.NON_MESSAGE, SkipReason.DUPLICATE_RECORD, SkipReason.EMPTY_MESSAGE)
        }
        if bad:
            broken[path.relative_to(corpus_dir).as_posix()] = bad
    assert broken == {
        # hand-made fixtures: user records carrying only a toolUseResult, no message
        "ai4curation__ai-blame/tests/data/traces/agent-session2.jsonl": {"malformed message": 1},
        "ai4curation__ai-blame/tests/data/traces/session1.jsonl": {"malformed message": 2},
        "daaain__claude-code-log/test/test_data/edge_cases.jsonl": {
            "not a json object": 3,
            "malformed message": 2,
        },
        "thedotmack__claude-mem/tests/fixtures/claude-code-session.jsonl": {"truncated last line": 1},
    }


# --- real files, counted by hand ---------------------------------------------------------------------


def test_the_causantic_sample_session_has_14_messages_4_turns_and_2_ignored_records(corpus_dir: Path) -> None:
    [transcript], report = read_file(corpus_dir / "Entrolution__causantic/test/fixtures/sample-session.jsonl")
    assert transcript.session_id == "sess-001"
    assert transcript.cwd == "/test"
    assert len(transcript.messages) == 14
    assert dict(report.counts) == {"non-message record": 2}  # one hook progress, one snapshot
    turns = assemble_turns(transcript)
    assert [t.prompt for t in turns][0] == "How do I read a file in Node.js?"
    assert len(turns) == 4
    assert turns[0].start_time == datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
    assert [type(b) for b in turns[1].messages[1].blocks] == [ThinkingBlock, ToolCall]


def test_inline_sidechains_of_a_1_0_session_become_five_sub_agent_transcripts(corpus_dir: Path) -> None:
    path = corpus_dir / (
        "d-kimuson__claude-code-viewer/mock-global-claude-dir/projects/sample-project/"
        "fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"
    )
    transcripts, report = read_file(path)
    counts = {t.agent_id: len(t.messages) for t in transcripts}
    assert counts == {
        None: 23,
        "sidechain-6690d10e": 18,
        "sidechain-60dade70": 68,
        "sidechain-f4546a51": 80,
        "sidechain-0d692b0f": 50,
        "sidechain-f4ab2bf6": 106,
    }
    assert dict(report.counts) == {"non-message record": 1}  # the leading summary line
    main = transcripts[0]
    assert not any(m.is_sidechain for m in main.messages)
    assert all(m.is_sidechain for t in transcripts[1:] for m in t.messages)
    assert [t.prompt for t in assemble_turns(main)] == [
        "/orchestrator create TODO app by Next.js",
        "Thanks! Please update CLAUDE.md for current changes",
    ]
    first_sub = assemble_turns(transcripts[1])
    assert len(first_sub) == 1
    assert first_sub[0].prompt.startswith("Create React components for the TODO app")


def test_two_records_written_on_one_line_are_both_recovered(corpus_dir: Path) -> None:
    [transcript], report = read_file(corpus_dir / "entireio__cli/37/995ebed6e4/2/full.jsonl")
    assert len(transcript.messages) == 89
    # Line 128 holds an assistant record (the text part of the API message begun on line 127)
    # immediately followed by a summary record; line 131 repeats the assistant record.
    assert dict(report.counts) == {"non-message record": 20, "duplicate record": 1}
    [message] = [m for m in transcript.messages if m.line_no == 127]
    thinking, answer = message.blocks
    assert isinstance(thinking, ThinkingBlock)
    assert isinstance(answer, TextBlock)
    assert answer.text.startswith("Done. I updated `TestLogging_IncludesContextValues`")


def test_a_plan_mode_prompt_written_under_the_old_session_id_joins_the_session_that_answers_it(
    corpus_dir: Path,
) -> None:
    [transcript], _ = read_file(corpus_dir / "entireio__cli/8c/fa910f8ef9/5/full.jsonl")
    assert transcript.session_id == "4931d45a-d447-44b4-8475-1e6fcfcc28bf"
    assert len(transcript.messages) == 118
    first = transcript.messages[0]
    assert first.line_no == 2
    assert assemble_turns(transcript)[0].prompt.startswith("Implement the following plan:")


def test_agent_progress_records_link_spawning_tool_calls_to_agent_ids(corpus_dir: Path) -> None:
    path = corpus_dir / "marot__spotter/test/fixtures/transcripts/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
    # Both agents have files of their own beside this one (read separately).
    [transcript], report = read_file(path, known_agents=frozenset({"a93ccab", "aa84377"}))
    assert len(transcript.messages) == 358
    assert [(p.agent_id, p.parent_tool_use_id) for p in transcript.progress] == [
        ("a93ccab", "toolu_01Y64XEaRvUYinzv9rW9qZXd"),
        ("aa84377", "toolu_013mmyY3eDBg4Ji6oAszYt6p"),
    ]
    spawns = {
        block.id
        for m in transcript.messages
        for block in m.blocks
        if isinstance(block, ToolCall) and block.name in ("Task", "Agent")
    }
    assert {p.parent_tool_use_id for p in transcript.progress} <= spawns
    # The 94 agent_progress records fold into those two links; the other 1,238 progress records,
    # 27 snapshots, 6 system records and 1 queue operation are ignored kinds.
    assert dict(report.counts) == {"non-message record": 1238 + 27 + 6 + 1}
    # Read without those files, the messages the progress records carry become the agents' streams.
    alone, _ = read_file(path)
    assert [t.agent_id for t in alone] == [None, "a93ccab", "aa84377"]
    assert all(t.messages and all(m.is_sidechain for m in t.messages) for t in alone[1:])


def test_harness_injected_user_text_is_marked_meta_and_real_prompts_are_not(corpus_dir: Path) -> None:
    transcripts, report = read_file(corpus_dir / "daaain__claude-code-log/test/test_data/edge_cases.jsonl")
    by_uuid = {m.uuid: m for t in transcripts for m in t.messages}
    assert by_uuid["edge_006"].is_meta  # "Caveat: The messages below were generated…"
    assert by_uuid["edge_008"].is_meta  # <local-command-stdout>
    assert not by_uuid["edge_007"].is_meta  # a slash command with arguments is a request
    assert not by_uuid["edge_001"].is_meta
    assert by_uuid["edge_010"].blocks == (TextBlock("wow error"),)  # a bare string inside a block list
    assert dict(report.counts) == {"not a json object": 3, "malformed message": 2, "non-message record": 2}
    assert [(t.session_id, len(t.messages)) for t in transcripts] == [
        ("edge_cases", 11),
        ("todowrite_session", 1),
    ]


def test_a_malformed_last_line_is_counted_as_truncated(corpus_dir: Path) -> None:
    transcripts, report = read_file(corpus_dir / "thedotmack__claude-mem/tests/fixtures/claude-code-session.jsonl")
    assert dict(report.counts) == {"truncated last line": 1}
    assert [(t.agent_id, len(t.messages)) for t in transcripts] == [(None, 14), ("sidechain-L8", 2)]
    compact_summary = next(m for m in transcripts[0].messages if m.line_no == 10)
    assert compact_summary.is_meta


def test_split_assistant_records_merge_even_with_tool_results_between_them(corpus_dir: Path) -> None:
    path = corpus_dir / (
        "daaain__claude-code-log/test/test_data/real_projects/-experiments-worktrees/"
        "ef958aa1-0e93-49f0-bb71-150f63befcd1.jsonl"
    )
    [transcript], report = read_file(path)
    # 45 user and 62 assistant records; 45 assistant records continue an earlier API message.
    assert len(transcript.messages) == 62
    assert dict(report.counts) == {"non-message record": 73}
    # Lines 18-35: one API message written as thinking (empty: Claude Code 2.1.114 keeps only its
    # signature, so it is dropped), text and six TaskCreate records, each tool call followed by its
    # tool result and a hook attachment.
    message = next(m for m in transcript.messages if m.line_no == 18)
    assert isinstance(message.blocks[0], TextBlock)
    assert [b.name for b in message.blocks[1:] if isinstance(b, ToolCall)] == ["TaskCreate"] * 6
    results = [m for m in transcript.messages if 21 <= m.line_no <= 36]
    assert [m.line_no for m in results] == [21, 24, 27, 30, 33, 36]
    lines = [m.line_no for m in transcript.messages]
    assert lines == sorted(lines)


# --- synthetic edge cases ----------------------------------------------------------------------------


def test_a_missing_file_raises_a_transcript_error_that_names_it(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match="nope.jsonl"):
        read_file(tmp_path / "nope.jsonl")


def test_a_directory_cannot_be_read_as_a_transcript(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError):
        read_file(tmp_path)


def test_an_empty_file_yields_nothing_and_skips_nothing(tmp_path: Path) -> None:
    transcripts, report = read_file(write(tmp_path / "empty.jsonl", b""))
    assert transcripts == []
    assert report.total == 0


def test_blank_lines_a_bom_and_crlf_endings_are_not_problems(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbf" + line(user("hi")) + b"\r\n\r\n   \n" + line(assistant([text("yo")])) + b"\r\n"
    [transcript], report = read_file(write(tmp_path / "a.jsonl", data))
    assert [m.role for m in transcript.messages] == ["user", "assistant"]
    assert report.total == 0


def test_an_invalid_json_line_is_skipped_and_counted(tmp_path: Path) -> None:
    data = jsonl(user("one")) + b"{not json\n" + jsonl(user("two"))
    [transcript], report = read_file(write(tmp_path / "a.jsonl", data))
    assert len(transcript.messages) == 2
    assert dict(report.counts) == {"invalid json": 1}


def test_an_invalid_utf8_byte_loses_only_that_character(tmp_path: Path) -> None:
    """Issue 18: one bad byte per line used to drop every line (20 of 20)."""
    data = b"".join(jsonl(user(f"message {i} caf\u00e9")).replace("caf\u00e9".encode(), b"caf\xe9") for i in range(20))
    assert data.count(b"caf\xe9") == 20
    [transcript], report = read_file(write(tmp_path / "a.jsonl", data))
    assert [m.blocks[0].text for m in transcript.messages] == [f"message {i} caf\ufffd" for i in range(20)]
    assert report.total == 0


def _nested(levels: int) -> bytes:
    return b'{"a":' * levels + b"1" + b"}" * levels


class _DepthLimitedOrjson:
    """orjson as 3.9.15 on reads: refusing JSON nested deeper than 1024 levels (whatever is installed)."""

    JSONDecodeError = orjson.JSONDecodeError

    @staticmethod
    def loads(data: bytes | str) -> Any:
        if (b'{"a":' if isinstance(data, bytes) else '{"a":') * 1025 in data:
            raise orjson.JSONDecodeError("Recursion limit reached", "", 0)
        return orjson.loads(data)


@pytest.mark.parametrize("orjson_reads", ["as-installed", "to-1024-levels"])
@pytest.mark.parametrize("stray", [b"", b"\xe9"], ids=["as-written", "with-a-byte-orjson-refuses"])
def test_a_tool_payload_nested_2000_levels_deep_keeps_its_message_with_the_deep_value_cut(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, orjson_reads: str, stray: bytes
) -> None:
    """orjson 3.9.15 on refuses JSON nested deeper than 1024 levels, and the standard library's
    fallback then ran out of recursion: the tool result was skipped as a damaged line where an older
    orjson kept it whole. Every version now keeps the message, its payload cut below a set depth,
    and counts the cut (also when a stray byte sends the line down the slow path on every version)."""
    if orjson_reads == "to-1024-levels":
        monkeypatch.setattr(reader, "orjson", _DepthLimitedOrjson)
    deep_input = line(assistant([tool_use("t1", "mcp__db__schema", table="orders", filter="DEEP")]))
    result = user([tool_result("t1", [text("orders: 3 columns")])], toolUseResult="DEEP")
    data = (
        jsonl(user("what does the orders table hold?"))
        + deep_input.replace(b'"DEEP"', _nested(2_000))
        + b"\n"
        + line(result).replace(b'"DEEP"', _nested(2_000)).replace(b"3 columns", b"3 columns" + stray)
        + b"\n"
        + jsonl(assistant([text("It holds id, total and placed_at.")]))
    )
    [transcript], report = read_file(write(tmp_path / "deep.jsonl", data))
    blocks = [b for m in transcript.messages for b in m.blocks]
    [call] = [b for b in blocks if isinstance(b, ToolCall)]
    [kept] = [b for b in blocks if isinstance(b, ToolResult)]
    assert kept.text.startswith("orders: 3 columns") and call.input["table"] == "orders"
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    cut, levels = call.input["filter"], 5  # above it: the record, message, content, block and input
    while isinstance(cut, dict):
        cut, levels = cut["a"], levels + 1
    assert (cut, levels) == (DEEP_VALUE, MAX_DEPTH)
    assert dict(report.counts) == {SkipReason.DEEP_VALUE: 2}


def test_a_cut_last_line_is_a_truncated_line_not_a_broken_one(tmp_path: Path) -> None:
    data = jsonl(user("one")) + line(user("two"))[:25]
    [transcript], report = read_file(write(tmp_path / "live.jsonl", data))
    assert len(transcript.messages) == 1
    assert dict(report.counts) == {"truncated last line": 1}


def test_a_file_without_one_json_line_is_in_another_format_unless_its_lines_are_records_cut_short(
    tmp_path: Path,
) -> None:
    """Text, or a JSON document over several lines, is no damaged transcript; a record cut short is."""
    _, report = read_file(write(tmp_path / "live.jsonl", line(user("one"))[:25]))
    assert (dict(report.counts), report.other_format) == ({"truncated last line": 1}, [])
    readme = b'# Setup\n\nAdd this to settings:\n\n```json\n{"mcpServers": {"causantic":\n```\n\nThen restart.\n'
    for name, data in [
        ("notes.txt", b"hello\nworld\n"),
        ("settings.json", b'{\n  "a": [1,\n 2]\n}\n'),
        ("README.md", readme),  # a snippet's line starts an object, the text around it does not
    ]:
        other = write(tmp_path / name, data)
        _, report = read_file(other)
        assert (dict(report.counts), report.other_format) == ({"file in another format": 1}, [other])


def test_a_record_without_a_newline_before_the_next_is_recovered(tmp_path: Path) -> None:
    data = line(user("a")) + line({"type": "summary", "summary": "s", "leafUuid": "x"}) + b"\n"
    data += line(user("b")) + line(user("c")) + b"\n"
    [transcript], report = read_file(write(tmp_path / "a.jsonl", data))
    assert [m.line_no for m in transcript.messages] == [1, 2, 2]
    assert dict(report.counts) == {"non-message record": 1}


def test_unknown_record_types_are_counted_apart_from_broken_lines(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = [
        {"type": "summary", "summary": "x", "leafUuid": "y"},
        {"type": "file-history-snapshot", "messageId": "m", "snapshot": {}},
        {"type": "queue-operation", "operation": "enqueue"},
        {"type": "brand-new-kind", "sessionId": "s1"},
        {"no": "type"},
        user("real"),
    ]
    [transcript], report = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert len(transcript.messages) == 1
    assert dict(report.counts) == {"non-message record": 5}


def test_content_blocks_of_every_kind_are_typed_and_unknown_ones_dropped(tmp_path: Path) -> None:
    records = [
        user([text("look"), {"type": "image", "source": {"type": "base64", "data": "AAAA"}}]),
        assistant(
            [
                {"type": "thinking", "thinking": "hmm", "signature": "sig"},
                {"type": "redacted_thinking", "data": "xxx"},
                {"type": "fallback", "from": {"model": "x"}},
                tool_use("t1", "Read", file_path="/a.py"),
            ]
        ),
        user(
            [
                tool_result(
                    "t1",
                    [
                        text("line 1"),
                        {"type": "image", "source": {}},
                        {"type": "tool_reference", "tool_name": "WebSearch"},
                    ],
                    is_error=True,
                )
            ],
            toolUseResult={"filePath": "/a.py", "agentId": "a1", "file": {"content": "the file read, again"}},
        ),
    ]
    [transcript], _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    prompt, answer, result = transcript.messages
    assert prompt.blocks == (TextBlock("look"), TextBlock("[image]"))
    assert answer.blocks == (ThinkingBlock("hmm"), ToolCall("t1", "Read", {"file_path": "/a.py"}))
    assert result.blocks == (ToolResult("t1", "line 1\n[image]\n[tool: WebSearch]", is_error=True),)
    assert result.tool_use_result == {"agentId": "a1"}  # what linking reads of it; not its copy of the output


def test_a_message_left_without_blocks_is_counted_as_empty(tmp_path: Path) -> None:
    records = [user("q"), assistant([{"type": "redacted_thinking", "data": "x"}]), user("")]
    [transcript], report = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert len(transcript.messages) == 1
    assert dict(report.counts) == {"empty message": 2}


def test_repeated_split_records_merge_into_one_message_without_duplicate_blocks(tmp_path: Path) -> None:
    first = assistant([text("plan")], message_id="msg_1")
    second = assistant([tool_use("t1")], message_id="msg_1")
    repeat = assistant([tool_use("t1")], message_id="msg_1")  # a new uuid, the same block again
    records = [user("go"), first, second, user([tool_result("t1", "ok")]), repeat, first]
    [transcript], report = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    merged = transcript.messages[1]
    assert merged.uuid == first["uuid"]
    assert merged.blocks == (TextBlock("plan"), ToolCall("t1", "Bash", {}))
    assert len(transcript.messages) == 3
    assert dict(report.counts) == {"duplicate record": 1}


def test_timestamps_become_utc_and_missing_or_bad_ones_none(tmp_path: Path) -> None:
    records = [
        user("a", ts="2026-01-15T10:00:00.123Z"),
        user("b", ts="2026-01-15T12:00:00+02:00"),
        user("c", ts="2026-01-15T10:00:00"),
        user("d", ts=None),
        user("e", ts="yesterday"),
    ]
    [transcript], _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    times = [m.timestamp for m in transcript.messages]
    assert times[0] == datetime(2026, 1, 15, 10, 0, 0, 123000, tzinfo=UTC)
    assert times[1] == datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
    assert times[2] == datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
    assert times[3:] == [None, None]


def test_out_of_order_timestamps_keep_file_order(tmp_path: Path) -> None:
    records = [user("late", ts="2026-01-15T11:00:00Z"), user("early", ts="2026-01-15T09:00:00Z")]
    [transcript], _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert [m.blocks[0] for m in transcript.messages] == [TextBlock("late"), TextBlock("early")]


def test_each_session_id_in_a_file_gets_its_own_transcript(tmp_path: Path) -> None:
    records = [user("a", session="s1"), assistant([text("x")], session="s1"), user("b", session="s2")]
    transcripts, _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert [(t.session_id, len(t.messages)) for t in transcripts] == [("s1", 2), ("s2", 1)]


def test_a_sub_agent_file_keeps_one_session_even_when_resumed_records_change_it(tmp_path: Path) -> None:
    prompt = user("Warmup", session="old", isSidechain=True, agentId="a1")
    reply = assistant([text("ok")], session="new", parent=prompt["uuid"], isSidechain=True, agentId="a1")
    [transcript], _ = read_file(write(tmp_path / "agent-a1.jsonl", jsonl(prompt, reply)), agent_id="a1")
    assert (transcript.session_id, transcript.agent_id, len(transcript.messages)) == ("old", "a1", 2)


def test_a_sub_agent_file_without_agent_ids_takes_the_id_it_is_read_with(tmp_path: Path) -> None:
    records = [user("task"), assistant([text("done")])]
    [transcript], _ = read_file(write(tmp_path / "agent-x.jsonl", jsonl(*records)), agent_id="x")
    assert transcript.agent_id == "x"
    assert {m.agent_id for m in transcript.messages} == {"x"}


def test_sidechain_records_with_an_agent_id_form_that_agents_stream(tmp_path: Path) -> None:
    records = [
        user("main prompt"),
        user("sub prompt", isSidechain=True, agentId="abc1234"),
        assistant([text("sub answer")], isSidechain=True, agentId="abc1234"),
        assistant([text("main answer")]),
    ]
    transcripts, _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert [(t.agent_id, len(t.messages)) for t in transcripts] == [(None, 2), ("abc1234", 2)]


def test_interleaved_inline_sidechains_are_told_apart_by_their_parent_chains(tmp_path: Path) -> None:
    a1 = user("task A", uuid="aaaaaaaa-1", isSidechain=True)
    b1 = user("task B", uuid="bbbbbbbb-1", isSidechain=True)
    a2 = assistant([text("A done")], uuid="aaaaaaaa-2", parent="aaaaaaaa-1", isSidechain=True)
    b2 = assistant([text("B done")], uuid="bbbbbbbb-2", parent="bbbbbbbb-1", isSidechain=True)
    orphan = assistant([text("B more")], uuid="cccccccc-3", parent="missing", isSidechain=True)
    transcripts, _ = read_file(write(tmp_path / "a.jsonl", jsonl(a1, b1, a2, b2, orphan)))
    assert [(t.agent_id, [m.uuid for m in t.messages]) for t in transcripts] == [
        ("sidechain-aaaaaaaa", ["aaaaaaaa-1", "aaaaaaaa-2"]),
        ("sidechain-bbbbbbbb", ["bbbbbbbb-1", "bbbbbbbb-2", "cccccccc-3"]),
    ]


def test_records_with_an_agent_id_but_no_sidechain_flag_stay_in_the_main_stream(tmp_path: Path) -> None:
    records = [user("q"), assistant([text("a")], agentId="stray")]
    [transcript], _ = read_file(write(tmp_path / "a.jsonl", jsonl(*records)))
    assert transcript.agent_id is None
    assert len(transcript.messages) == 2


def test_a_file_of_another_tool_yields_no_transcript(corpus_dir: Path) -> None:
    codex = corpus_dir.parent / "codex" / "jazzyalex__agent-sessions" / "Resources/Fixtures/codex_050_legacy.jsonl"
    if not codex.is_file():
        pytest.skip("codex sample not present")
    transcripts, report = read_file(codex)
    assert transcripts == []
    assert report.total > 0
