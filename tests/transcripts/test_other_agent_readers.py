"""Copilot CLI, Cursor, Factory Droid and Pi sessions: read from the real files in the corpus (Entire
checkpoint copies, ``other-agents/`` and ``cursor/``) and from small files for the edge cases."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from causantic.transcripts.discovery import discover, read_session, source_of
from causantic.transcripts.model import TextBlock, ThinkingBlock, ToolCall, ToolResult, Transcript
from causantic.transcripts.turns import assemble_turns

ENTIRE = "computermode__test-repo"


def _one(path: Path) -> Transcript:
    [files] = discover(path)
    [session], _ = read_session(files)
    assert session.main is not None
    return session.main


def _texts(transcript: Transcript, kind: type = TextBlock) -> list[tuple[str, str]]:
    return [(m.role, getattr(b, "text", "")) for m in transcript.messages for b in m.blocks if type(b) is kind]


def test_a_copilot_cli_event_log_reads_as_its_prompt_calls_results_and_reply(agents_corpus: Path) -> None:
    path = agents_corpus / "other-agents" / ENTIRE / "69/9504f045e2/0/full.jsonl"
    assert source_of(path) == "copilot"
    main = _one(path)
    assert (main.source, main.session_id) == ("copilot", "31b0eadb-c44b-41ef-b46b-16c3f8e1fdd6")
    assert main.cwd == "/Users/ninawork/entire/test-repos/test-repo/copilot-cli-attach"
    # The prompt as typed: not the transformedContent Copilot wraps in <current_datetime> and reminders.
    assert _texts(main) == [
        ("user", "create a file in this folder that states this is for testing copilot cli"),
        ("assistant", "Created `README.md` in this folder with the message."),
    ]
    calls = [b for m in main.messages for b in m.blocks if isinstance(b, ToolCall)]
    results = {b.tool_use_id: b.text for m in main.messages for b in m.blocks if isinstance(b, ToolResult)}
    assert [(c.name, c.input.get("path")) for c in calls] == [
        ("report_intent", None),
        ("create", "/Users/ninawork/entire/test-repos/test-repo/copilot-cli-attach/README.md"),
    ]
    assert results[calls[1].id].startswith("Created file") and len(results) == 2
    assert _texts(main, ThinkingBlock) == [("assistant", "Create a simple file in the current working directory.")]
    assert len(assemble_turns(main)) == 1


def test_a_cursor_transcript_keeps_the_users_query_and_tells_reasoning_summaries_apart(agents_corpus: Path) -> None:
    path = agents_corpus / "cursor" / ENTIRE / "b8/b6fbd5f55f/0/full.jsonl"
    assert source_of(path) == "cursor"
    main = _one(path)
    prompts = [t.prompt for t in assemble_turns(main)]
    # The 20 kB of GitHub page Cursor put in <external_links> is not what the user asked.
    assert prompts[0] == "review changes in https://github.com/entireio/cli/pull/688"
    assert len(prompts) == 5 and all(len(p) < 200 for p in prompts)
    assert not any("Skip to content" in text for _, text in _texts(main))
    thinking = [text for _, text in _texts(main, ThinkingBlock)]
    assert "Planning JSON parsing with jq" in thinking and len(thinking) == 38
    # No times in the file: every message has the file's.
    mtime = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    assert {m.timestamp for m in main.messages} == {mtime}


def test_a_cursor_tool_call_without_an_id_gets_one(agents_corpus: Path) -> None:
    main = _one(agents_corpus / "cursor" / ENTIRE / "f5/5b1d3b434a/0/full.jsonl")
    [call] = [b for m in main.messages for b in m.blocks if isinstance(b, ToolCall)]
    assert (call.id, call.name) == ("line-2-call1", "Write")
    assert [t.prompt for t in assemble_turns(main)] == [
        "create a markdown file stating this is for testing cursor",
        "how do I quit this cli",
    ]


def test_a_cursor_checkpoint_copy_is_the_session_its_metadata_names_wherever_it_lives(
    agents_corpus: Path, tmp_path: Path
) -> None:
    checkpoint = agents_corpus / "cursor" / ENTIRE / "f5/5b1d3b434a/0"
    copies = [tmp_path / "a" / "0", tmp_path / "elsewhere" / "b" / "0"]
    for copy in copies:
        copy.mkdir(parents=True)
        for name in ("full.jsonl", "metadata.json"):
            (copy / name).write_bytes((checkpoint / name).read_bytes())
    assert {_one(copy / "full.jsonl").session_id for copy in copies} == {"fcab959a-cca4-4bc7-8521-92a5ea313ca4"}
    # Without metadata (or with one that is damaged) two copies stay two sessions, not one.
    (copies[0] / "metadata.json").unlink()
    (copies[1] / "metadata.json").write_text("{not json")
    ids = {_one(copy / "full.jsonl").session_id for copy in copies}
    assert len(ids) == 2 and all(i.startswith("full-") for i in ids)


def test_a_session_file_named_without_an_id_keeps_its_id_when_the_agents_folder_moves(
    agents_corpus: Path, tmp_path: Path
) -> None:
    """Its id hashed the whole path: a ~/.cursor moved (a new machine, a restored backup) made every
    such session a second, new one on the next ingest."""
    checkpoint = agents_corpus / "cursor" / ENTIRE / "f5/5b1d3b434a/0"
    copies = [tmp_path / where / "f5/5b1d3b434a/0" for where in ("home/.cursor", "backup/old-cursor")]
    for copy in copies:
        copy.mkdir(parents=True)
        (copy / "full.jsonl").write_bytes((checkpoint / "full.jsonl").read_bytes())
    [moved] = {_one(copy / "full.jsonl").session_id for copy in copies}
    assert moved.startswith("full-")


def test_cursor_transcripts_in_their_folder_have_the_project_folder_for_a_project(tmp_path: Path) -> None:
    folder = tmp_path / ".cursor" / "projects" / "Users-dev-shop" / "agent-transcripts"
    folder.mkdir(parents=True)
    session = "0f7a2b8e-9a41-4d5c-8e2f-3c1d5b6a7e80"
    lines = [
        {
            "role": "user",
            "message": {"content": [{"type": "text", "text": "<user_query>\nfix the cart\n</user_query>"}]},
        },
        {"role": "assistant", "message": {"content": [{"type": "text", "text": "Fixed the cart total."}]}},
    ]
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    (folder / session[::-1]).mkdir()  # newer versions: a folder per session
    (folder / session[::-1] / f"{session[::-1]}.jsonl").write_text(json.dumps(lines[0]) + "\n")
    found = discover(tmp_path / ".cursor" / "projects")
    assert [(f.source, f.folder.name) for f in found] == [("cursor", "Users-dev-shop")] * 2
    read = [s for files in found for s in read_session(files)[0]]
    assert sorted(s.session_id for s in read) == sorted([session, session[::-1]])


def test_a_factory_droid_session_leaves_out_its_reminders_and_its_usage_notice(agents_corpus: Path) -> None:
    path = agents_corpus / "other-agents" / ENTIRE / "a0/f8612fcb64/0/full.jsonl"
    assert source_of(path) == "droid"
    main = _one(path)
    assert (main.session_id, main.cwd) == (
        "a31fbbb0-0922-4b2b-be85-9e9f0283a4d8",
        "/Users/ninawork/entire/test-repos/test-repo/droid-attach",
    )
    turns = assemble_turns(main)
    # One prompt: the "Token limit reached" line is Droid's notice to the user, not a second prompt.
    assert [t.prompt for t in turns] == ["create a markdown file that explains this is for testing factory droid"]
    assert not any("system-reminder" in text for _, text in _texts(main))
    assert [m.is_meta for m in main.messages] == [False, True]


def test_a_pi_session_reads_its_thinking_calls_and_results(agents_corpus: Path) -> None:
    path = agents_corpus / "other-agents" / ENTIRE / "de/5a2f809927/0/full.jsonl"
    assert source_of(path) == "pi"
    main = _one(path)
    assert (main.session_id, main.cwd) == (
        "019dc132-b9ea-736e-aa6f-e20ee7d84b11",
        "/Users/ninawork/entire/test-repos/test-repo",
    )
    calls = [(b.name, b.input) for m in main.messages for b in m.blocks if isinstance(b, ToolCall)]
    assert calls[1] == ("bash", {"command": "mkdir -p pi/test"}) and len(calls) == 4
    results = [b for m in main.messages for b in m.blocks if isinstance(b, ToolResult)]
    assert [r.text for r in results[1:]] == [
        "(no output)",
        "Successfully wrote 131 bytes to pi/README.md",
        "Successfully wrote 0 bytes to pi/test/.gitkeep",
    ]
    assert len(_texts(main, ThinkingBlock)) == 1 and [t.prompt for t in assemble_turns(main)] == [
        "add a test folder and readme for pi"
    ]


def _pi_session(path: Path, entries: list[tuple[str, str | None, str, str]]) -> Path:
    """A Pi session of (id, parent id, role, text) message entries."""
    lines: list[dict[str, object]] = [
        {"type": "session", "version": 3, "id": "019dc999-0000-7000-8000-000000000001", "cwd": "/srv/shop"}
    ]
    for n, (entry, parent, role, text) in enumerate(entries):
        content = [{"type": "text", "text": text}]
        stamp = f"2026-11-20T10:00:{n:02d}Z"
        lines.append(
            {
                "type": "message",
                "id": entry,
                "parentId": parent,
                "timestamp": stamp,
                "message": {"role": role, "content": content},
            }
        )
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_pi_branch_the_user_went_back_from_is_kept_off_the_main_line(tmp_path: Path) -> None:
    # /tree in Pi: back to an entry and on from there; the file keeps the branch left behind.
    path = _pi_session(
        tmp_path / "2026-11-20T10-00-00_019dc999.jsonl",
        [
            ("a1", None, "user", "add a discount field"),
            ("a2", "a1", "assistant", "Added discount to the cart."),
            ("b1", "a2", "user", "store it as a float"),
            ("b2", "b1", "assistant", "Stored as a float."),
            ("c1", "a2", "user", "store it in cents as an integer"),
            ("c2", "c1", "assistant", "Stored in cents."),
        ],
    )
    [files] = discover(path)
    [session], _ = read_session(files)
    assert session.main is not None
    assert [t for _, t in _texts(session.main)] == [
        "add a discount field",
        "Added discount to the cart.",
        "store it in cents as an integer",
        "Stored in cents.",
    ]
    [branch] = session.subagents
    assert branch.agent_id == "rewound-b1" and [t for _, t in _texts(branch)] == [
        "store it as a float",
        "Stored as a float.",
    ]


@pytest.mark.parametrize(
    ("first", "good"),
    [
        (
            {"type": "session.start", "data": {"sessionId": "cop-1", "context": {"cwd": "/srv/shop"}}},
            {"type": "user.message", "data": {"content": "fix the cart total"}, "id": "e2"},
        ),
        (
            {
                "role": "user",
                "message": {"content": [{"type": "text", "text": "<user_query>fix the cart total</user_query>"}]},
            },
            {"role": "assistant", "message": {"content": [{"type": "text", "text": "fix the cart total: done"}]}},
        ),
        (
            {"type": "session_start", "id": "droid-1", "cwd": "/srv/shop"},
            {
                "type": "message",
                "id": "m1",
                "message": {"role": "user", "content": [{"type": "text", "text": "fix the cart total"}]},
            },
        ),
        (
            {"type": "session", "version": 3, "id": "pi-1", "cwd": "/srv/shop"},
            {
                "type": "message",
                "id": "m1",
                "parentId": None,
                "message": {"role": "user", "content": "fix the cart total"},
            },
        ),
    ],
    ids=["copilot", "cursor", "droid", "pi"],
)
def test_a_broken_line_is_skipped_and_counted_never_fatal(
    tmp_path: Path, first: dict[str, object], good: dict[str, object]
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text(json.dumps(first) + "\n" + '{"type": "user.mess\n' + json.dumps(good) + "\n" + '{"cut": ')
    [files] = discover(path)
    [session], report = read_session(files)
    assert session.main is not None and any("fix the cart total" in t for _, t in _texts(session.main))
    assert report.counts["invalid json"] == 1 and report.counts["truncated last line"] == 1


# A Cursor text transcript (``agent-transcripts/<id>.txt``, Cursor's format before JSON lines), laid
# out as the real one copied into Lorlah/Return-It (``.cursor/previous-session.md`` at 16fbf5d3):
# role lines, the prompt in <user_query>, [Thinking] / [Tool call] with indented arguments /
# [Tool result] with no output; the words are this test's own.
CURSOR_TEXT = """user:
<user_query>
start the shop, I want to see it in the browser
</user_query>

assistant:
[Thinking] **Preparing to run dev server**
[Tool call] Shell
  command: npm run dev
  working_directory: /srv/shop
  description: Start the dev server

[Tool result] Shell

assistant:
[Thinking] **Noticing basePath causes 404 at root**

The root is set to /shop, so / answers 404.
The app is configured with a `basePath` of `/shop`.
Open it at `http://localhost:3000/shop`.

user:
<user_query>
why 404 on the cart page
</user_query>

assistant:
[Thinking] 
[Tool call] Task
  description: Find the cart route
  prompt: Look for the cart page route.
Return:
1. the file
  subagent_type: explore

[Tool result] Task

assistant:
The cart page lives in app/cart/page.tsx and was never exported.
"""


def test_a_cursor_text_transcript_reads_as_its_prompts_calls_and_replies(tmp_path: Path) -> None:
    folder = tmp_path / ".cursor" / "projects" / "Users-dev-shop" / "agent-transcripts"
    folder.mkdir(parents=True)
    session = "4c1d9e2a-7b3f-4e8a-9d6c-1a2b3c4d5e6f"
    (folder / f"{session}.txt").write_text(CURSOR_TEXT)
    (folder / "notes.txt").write_text("not a transcript\n")  # no role line: not read as one
    [files] = discover(tmp_path / ".cursor" / "projects")
    assert (files.source, files.session_id, files.folder.name) == ("cursor", session, "Users-dev-shop")
    [session_read], report = read_session(files)
    main = session_read.main
    assert main is not None and report.total == 0
    assert [t.prompt for t in assemble_turns(main)] == [
        "start the shop, I want to see it in the browser",
        "why 404 on the cart page",
    ]
    assert [t for _, t in _texts(main, ThinkingBlock)] == [
        "Preparing to run dev server",
        "Noticing basePath causes 404 at root",
    ]
    calls = [b for m in main.messages for b in m.blocks if type(b) is ToolCall]
    assert [(c.name, c.input) for c in calls] == [
        ("Shell", {"command": "npm run dev", "working_directory": "/srv/shop", "description": "Start the dev server"}),
        (
            "Task",
            {
                "description": "Find the cart route",
                "prompt": "Look for the cart page route.\nReturn:\n1. the file",
                "subagent_type": "explore",
            },
        ),
    ]
    assert len({c.id for c in calls}) == 2
    # After the [Thinking] paragraph, the reply's words (a summary's body paragraph cannot be told apart).
    assert [text for text in _texts(main) if text[0] == "assistant"] == [
        (
            "assistant",
            "The root is set to /shop, so / answers 404.\nThe app is configured with a `basePath` of `/shop`.\n"
            "Open it at `http://localhost:3000/shop`.",
        ),
        ("assistant", "The cart page lives in app/cart/page.tsx and was never exported."),
    ]


def test_a_cursor_text_transcript_beside_the_same_sessions_json_lines_is_not_read_twice(tmp_path: Path) -> None:
    folder = tmp_path / "agent-transcripts"
    folder.mkdir()
    session = "4c1d9e2a-7b3f-4e8a-9d6c-1a2b3c4d5e6f"
    (folder / f"{session}.txt").write_text(CURSOR_TEXT)
    line = {"role": "user", "message": {"content": [{"type": "text", "text": "<user_query>fix it</user_query>"}]}}
    (folder / f"{session}.jsonl").write_text(json.dumps(line) + "\n")
    assert [f.main.name for f in discover(tmp_path) if f.main is not None] == [f"{session}.jsonl"]
