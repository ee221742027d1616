"""The Codex CLI and Gemini CLI readers on every real file of the shared corpus.

Counts are those of the files as stored (SOURCES.md describes them); a change in a count means the
reader now reads a file differently, which is worth a look.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from transcript_files import write_gemini_log

from causantic.transcripts.codex import peek_rollout_meta, read_rollout
from causantic.transcripts.discovery import discover, read_session, source_of
from causantic.transcripts.gemini import read_gemini
from causantic.transcripts.model import TextBlock, ThinkingBlock, ToolCall, ToolResult
from causantic.transcripts.turns import assemble_turns

POMODORO = "codex/yoavf__ai-sessions/examples/codex-pomodor-timer.jsonl"  # real, Codex 0.47
ENTIRE = "codex/blackgirlbytes__entire-token-costs-benchmark-tests/a7/1156299398/0/full.jsonl"  # real, 0.142
AI_BLAME = (
    "codex/ai4curation__ai-blame/tests/data/mixed-traces/codex-sessions/2025/12/29/"
    "rollout-2025-12-29T11-54-27-019b6b08-58f3-7580-9dca-fe3f30a10650.jsonl"
)  # real, 0.77
SPAWNS = "codex/ConfabulousDev__confab-web/backend/internal/codex/testdata/sample_rollout_parent_with_spawns.jsonl"
FUTURE = "codex/ConfabulousDev__confab-web/frontend/src/test-fixtures/codex-rollout.jsonl"
LEGACY = "codex/jazzyalex__agent-sessions/Resources/Fixtures"
DRIFT = "codex/jazzyalex__agent-sessions/Resources/Fixtures/stage0/agents/codex/large.jsonl"
GEMINI_LONG = "gemini/entireio__cli/ab/2b9748b105/0/full.jsonl"


def test_every_codex_and_gemini_file_is_read_without_an_exception(agents_corpus: Path) -> None:
    read = {"codex": 0, "gemini": 0, "claude-code": 0}
    for kind in ("codex", "gemini"):
        for files in discover(agents_corpus / kind):
            sessions, _ = read_session(files)
            read[files.source] += len(sessions)
    # 21 Codex files: 2 companions (not .jsonl), 17 rollouts of which 5 hold no message (usage-only
    # and legacy fixtures), 2 files of other tools (no session marker). 12 Gemini sessions, one of
    # them a lone CLI warning.
    assert read == {"codex": 12, "gemini": 11, "claude-code": 0}


@pytest.mark.parametrize(
    ("path", "messages", "turns", "prompts"),
    [
        (
            POMODORO,
            63,
            4,
            [
                "Build a simple Pomodoro timer web app",
                "add smooth transitions between states",
                "add a Pause/Resume feature",
            ],
        ),
        (AI_BLAME, 29, 4, None),
        (ENTIRE, 1165, 29, None),
    ],
)
def test_a_real_rollout_becomes_its_prompts_replies_and_tool_calls(
    agents_corpus: Path, path: str, messages: int, turns: int, prompts: list[str] | None
) -> None:
    transcript, meta, report = read_rollout(agents_corpus / path)
    assert transcript is not None and transcript.source == "codex"
    assert transcript.session_id == meta.thread_id and transcript.cwd == meta.cwd and meta.cwd
    assert len(transcript.messages) == messages
    built = assemble_turns(transcript)
    assert len(built) == turns
    if prompts:
        assert [t.prompt.split("\n")[0][: len(want)] for t, want in zip(built[1:], prompts, strict=True)] == prompts
    assert built[0].prompt == ""  # the injected <environment_context> opens every rollout: never a prompt
    calls = {b.id for m in transcript.messages for b in m.blocks if isinstance(b, ToolCall)}
    results = {b.tool_use_id for m in transcript.messages for b in m.blocks if isinstance(b, ToolResult)}
    assert calls and results <= calls
    assert report.total > 0 and not {"invalid json", "truncated last line"} & set(report.counts)


def test_reasoning_is_kept_as_thinking_and_encrypted_reasoning_is_dropped(agents_corpus: Path) -> None:
    transcript, _, report = read_rollout(agents_corpus / POMODORO)
    assert transcript is not None
    thinking = [b.text for m in transcript.messages for b in m.blocks if isinstance(b, ThinkingBlock)]
    assert len(thinking) == 20 and "**Examining repository structure**" in thinking
    texts = " ".join(b.text for m in transcript.messages for b in m.blocks if isinstance(b, TextBlock))
    assert "gAAAAAB" not in texts  # encrypted_content never becomes text
    entire, _, entire_report = read_rollout(agents_corpus / ENTIRE)
    assert entire is not None
    assert entire_report.counts["empty message"] == 213  # reasoning items holding only encrypted content


def test_legacy_and_usage_only_rollouts_name_their_thread_and_hold_no_message(agents_corpus: Path) -> None:
    for name, skipped in (
        ("codex_050_legacy", 4),
        ("codex_051_usage", 2),
        ("codex_052_raw", 5),
        ("codex_053_rate_limit", 4),
    ):
        path = agents_corpus / LEGACY / f"{name}.jsonl"
        assert source_of(path) == "codex"
        transcript, meta, report = read_rollout(path)
        assert transcript is None and meta.cwd == "/tmp/test" and meta.thread_id
        assert report.total == skipped and report.counts["non-message record"] == skipped


def test_unknown_record_and_item_types_are_counted_and_skipped(agents_corpus: Path) -> None:
    transcript, _, report = read_rollout(agents_corpus / FUTURE)
    assert transcript is not None and len(transcript.messages) == 12
    assert report.counts["unknown record type"] == 2  # a future top-level type and a future item type


def test_drifted_tool_records_pair_their_call_and_result(agents_corpus: Path) -> None:
    transcript, _, _ = read_rollout(agents_corpus / DRIFT)
    assert transcript is not None
    [call] = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolCall)]
    [result] = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert call.name == "run_shell_command" and call.input["command"].startswith("printf")
    assert result.tool_use_id == call.id and "line1" in result.text


def test_a_spawning_rollout_names_the_threads_it_started(agents_corpus: Path) -> None:
    transcript, meta, _ = read_rollout(agents_corpus / SPAWNS)
    assert transcript is not None and meta.thread_id == "019e-parent"
    spawned = [m.tool_use_result["agentId"] for m in transcript.messages if m.tool_use_result]
    assert spawned == ["019e-child-1", "019e-child-2"]
    assert peek_rollout_meta(agents_corpus / SPAWNS).thread_id == "019e-parent"


def test_damaged_lines_are_counted_and_the_rest_is_read(agents_corpus: Path, tmp_path: Path) -> None:
    copy = tmp_path / "rollout.jsonl"
    good = (agents_corpus / POMODORO).read_bytes()
    lines = good.split(b"\n")
    copy.write_bytes(
        b"\n".join([*lines[:5], b"{not json", b"\xff\xfe\xfd", *lines[5:-1]])
        + b"\n"
        + b'{"timestamp":"2025-10-21T20:20:00Z","type":"response_item","payload":{"type":"mes'
    )
    transcript, _, report = read_rollout(copy)
    original, _, _ = read_rollout(agents_corpus / POMODORO)
    assert transcript is not None and original is not None
    assert len(transcript.messages) == len(original.messages)
    # Undecodable bytes cost only themselves (each becomes U+FFFD), so that line is counted as no JSON.
    assert report.counts["invalid json"] == 2
    assert report.counts["truncated last line"] == 1


ENTIRE_CLI = "/Users/peytonmontei/Documents/entire/devenv/entireio/cli"


@pytest.mark.parametrize(
    ("path", "messages", "turns", "tool_calls", "thoughts", "cwd"),
    [
        (GEMINI_LONG, 21, 1, 9, 15, ENTIRE_CLI),
        ("gemini/entireio__cli/12/cbfeaa512b/0/full.jsonl", 8, 2, 2, 6, ENTIRE_CLI),
        ("gemini/computermode__test-repo/e6/b2f769a273/0/full.jsonl", 10, 2, 6, 0, None),
    ],
)
def test_a_real_gemini_session_becomes_prompts_replies_and_tool_calls(
    agents_corpus: Path, path: str, messages: int, turns: int, tool_calls: int, thoughts: int, cwd: str | None
) -> None:
    session, report = read_gemini(agents_corpus / path)
    transcript = session.transcript
    assert transcript is not None and transcript.source == "gemini"
    assert len(transcript.messages) == messages and len(assemble_turns(transcript)) == turns
    calls = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolCall)]
    results = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert len(calls) == tool_calls and [r.tool_use_id for r in results] == [c.id for c in calls]
    # The cwd is the folder, named in the session's text, whose sha256 is the projectHash; e6 names
    # none (relative paths only), so its hash stands for its project until another session names it.
    assert session.project_hash and len(session.project_hash) == 64 and session.cwd == cwd
    assert sum(isinstance(b, ThinkingBlock) for m in transcript.messages for b in m.blocks) == thoughts
    assert not {"invalid json", "truncated last line"} & set(report.counts)


def test_a_gemini_session_of_cli_notices_only_yields_no_transcript(agents_corpus: Path) -> None:
    session, report = read_gemini(agents_corpus / "gemini/entireio__cli/ec/38b74f08e3/2/full.jsonl")
    assert session.transcript is None and session.session_id == "29eb990e-c773-4302-a4e7-317f0af0001f"
    assert report.counts["non-message record"] == 1


def test_a_damaged_gemini_file_is_counted_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "session-2026-01-01T10-00-abcd1234.json"
    path.write_text('{"sessionId": "s1", "projectHash": "ab", "messages": [{"type": "user", "content": "hi"')
    session, report = read_gemini(path)
    assert session.transcript is None and report.counts["truncated last line"] == 1


def test_a_gemini_session_caught_while_it_is_rewritten_counts_as_one_cut_document(
    agents_corpus: Path, tmp_path: Path
) -> None:
    # Gemini CLI rewrites its pretty-printed session file as the session goes; an ingest that reads
    # it half written must not report a hundred damaged lines.
    whole = (agents_corpus / "gemini/computermode__test-repo/e6/b2f769a273/0/full.jsonl").read_bytes()
    path = tmp_path / "session-2026-03-24T20-12-e6.json"
    path.write_bytes(whole[:2500])
    session, report = read_gemini(path)
    assert session.transcript is None and dict(report.counts) == {"truncated last line": 1}
    path.write_bytes(whole.replace(b'"type": "user"', b'"type": "user",,', 1))  # damaged, not cut
    session, report = read_gemini(path)
    assert session.transcript is None and dict(report.counts) == {"invalid json": 1}


def test_gemini_reads_the_project_root_newer_versions_write(tmp_path: Path, agents_corpus: Path) -> None:
    chats = tmp_path / "tmp" / "myapp" / "chats"
    chats.mkdir(parents=True)
    (chats.parent / ".project_root").write_text("/home/dev/myapp\n")
    target = chats / "session-2026-01-10T02-08-faff42ab.json"
    target.write_bytes((agents_corpus / "gemini/entireio__cli/12/cbfeaa512b/0/full.jsonl").read_bytes())
    [files] = discover(tmp_path)
    assert files.source == "gemini"
    [session], _ = read_session(files)
    assert session.cwd == "/home/dev/myapp" and session.session_id == "faff42ab-6ea5-4f78-b8c4-f7dd6272af08"


@pytest.mark.parametrize(
    ("cwd", "named"),
    [
        ("/home/dev/app", "/home/dev/app/src/main.py"),
        ("C:\\Users\\dev\\app", "C:\\Users\\dev\\app\\src\\main.py"),
        (None, "/home/dev/other/main.py"),  # no folder named hashes to it: the hash stands in
    ],
)
def test_a_gemini_sessions_cwd_is_the_named_folder_whose_hash_it_records(
    tmp_path: Path, cwd: str | None, named: str
) -> None:
    digest = hashlib.sha256(b"/home/dev/app" if cwd is None else cwd.encode()).hexdigest()
    call = {"id": "c1", "name": "read_file", "args": {"file_path": named}, "status": "success", "result": []}
    document = {
        "sessionId": "s1",
        "projectHash": digest,
        "messages": [
            {"id": "u1", "type": "user", "content": "read main.py", "timestamp": "2026-01-01T10:00:00Z"},
            {"id": "g1", "type": "gemini", "content": "Reading.", "toolCalls": [call]},
        ],
    }
    path = tmp_path / "session-2026-01-01T10-00-s1.json"
    path.write_text(json.dumps(document))
    session, _ = read_gemini(path)
    assert session.cwd == cwd and session.project_hash == digest


def test_a_gemini_json_lines_log_is_replayed_each_message_once_in_its_last_version(tmp_path: Path) -> None:
    # Gemini CLI appends a message again each time it changes (tokens, tool calls), updates its header
    # with $set, and marks a rewind with $rewindTo: the conversation is what Gemini CLI replays.
    call = {"name": "read_file", "args": {"file_path": "/home/dev/app/main.py"}, "output": "print('hi')"}
    path = write_gemini_log(
        tmp_path / "chats",
        "/home/dev/app",
        "c0ffee00-1111-4222-8333-444455556666",
        [
            {"user": "what does main.py print"},
            {"gemini": "I will read it.", "calls": [call]},
            {"gemini": "It prints hi."},
            {"user": "delete main.py"},
            {"gemini": "Deleted it."},
            {"rewind": 3},  # the user took the deletion back
            {"user": "rename main.py to app.py", "hook": "Recent memory: app.py is the entry point"},
            {"gemini": "Renamed it."},
            {"user": "summarise @README.md", "read_in": "--- Content from referenced files ---\n# App"},
            {"gemini": "A one-line app."},
        ],
    )
    session, report = read_gemini(path)
    transcript = session.transcript
    assert transcript is not None and session.cwd == "/home/dev/app"
    said = [
        (m.role, b.text) for m in transcript.messages if m.rewound is None for b in m.blocks if isinstance(b, TextBlock)
    ]
    rewound = [(m.role, b.text) for m in transcript.messages if m.rewound for b in m.blocks if type(b) is TextBlock]
    assert rewound == [("user", "delete main.py"), ("assistant", "Deleted it.")]  # kept, off the main line
    assert said == [
        ("user", "what does main.py print"),
        ("assistant", "I will read it."),
        ("assistant", "It prints hi."),
        # What the user typed, as Gemini CLI shows it: no hook context, no file read in.
        ("user", "rename main.py to app.py"),
        ("assistant", "Renamed it."),
        ("user", "summarise @README.md"),
        ("assistant", "A one-line app."),
    ]
    calls = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolCall)]
    results = [b for m in transcript.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert [c.name for c in calls] == ["read_file"] and [r.text for r in results] == ["print('hi')"]
    times = [m.timestamp for m in transcript.messages if m.rewound is None]
    assert times == sorted(times) and transcript.messages[2].blocks == (results[0],)
    assert report.counts["duplicate record"] == 10 and not set(report.counts) & {"invalid json", "not a json object"}


def test_codex_turns_the_user_rolled_back_are_kept_off_the_main_line(tmp_path: Path) -> None:
    # Esc Esc in Codex: back to an earlier prompt to edit it; the thread loses the turns after it,
    # and memory keeps them as an abandoned attempt, not as part of the conversation.
    def item(second: int, payload: dict[str, object], kind: str = "response_item") -> dict[str, object]:
        return {"timestamp": f"2026-11-04T10:00:{second:02d}Z", "type": kind, "payload": payload}

    def said(role: str, text: str) -> dict[str, object]:
        kind = "input_text" if role == "user" else "output_text"
        return {"type": "message", "role": role, "content": [{"type": kind, "text": text}]}

    call = {"type": "function_call", "name": "shell", "arguments": '{"command": ["rm", "app.toml"]}', "call_id": "c1"}
    records = [
        {"timestamp": "2026-11-04T10:00:00Z", "type": "session_meta", "payload": {"id": "t1", "cwd": "/srv/app"}},
        item(1, said("user", "<environment_context><cwd>/srv/app</cwd></environment_context>")),
        item(2, said("user", "rename the flag to --dry")),
        item(3, said("assistant", "Renamed.")),
        item(4, said("user", "now delete the config file")),
        item(5, call),
        item(6, {"type": "function_call_output", "call_id": "c1", "output": "removed app.toml"}),
        item(7, said("assistant", "Deleted.")),
        item(8, {"type": "thread_rolled_back", "num_turns": 1}, "event_msg"),
        item(9, said("user", "now move the config file to etc/")),
        item(10, said("assistant", "Moved.")),
    ]
    path = tmp_path / "rollout-2026-11-04T10-00-00-t1.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    [files] = discover(path)
    [session], _ = read_session(files)
    assert session.main is not None
    texts = [b.text for m in session.main.messages if not m.is_meta for b in m.blocks if isinstance(b, TextBlock)]
    assert texts == ["rename the flag to --dry", "Renamed.", "now move the config file to etc/", "Moved."]
    assert not any(isinstance(b, ToolCall | ToolResult) for m in session.main.messages for b in m.blocks)
    [rewound] = session.subagents
    assert rewound.agent_id == "rewound-line-5" and rewound.meta is not None and rewound.meta.agent_type == "rewound"
    kept = [b.text if isinstance(b, TextBlock | ToolResult) else b.name for m in rewound.messages for b in m.blocks]
    assert kept == ["now delete the config file", "shell", "removed app.toml", "Deleted."]
