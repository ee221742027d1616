"""The chunk where files were changed (an Edit, Write or apply_patch call) outranks talk about the same
change (retrieval.workEvidence)."""

from __future__ import annotations

from pathlib import Path

from transcript_files import write_messages

from causantic import Memory
from causantic.config import RetrievalConfig
from causantic.retrieval.mentions import edits_files
from causantic.store.records import StoredChunk

TOOLS = RetrievalConfig().work_tools
SUBJECT = "retry failed uploads with exponential backoff"


def _chunk(text: str) -> StoredChunk:
    return StoredChunk("c", "s", 1, "p", "main", 0, 0, "", "", text, "", 0, ())


def test_a_chunk_edits_files_when_it_calls_an_editing_tool_of_any_agent() -> None:
    for call in (
        "[Tool:Edit] uploader/client.py",  # Claude Code
        "[Tool:Write] uploader/backoff.py",
        "[Tool:MultiEdit] uploader/client.py",
        "[Tool:apply_patch] *** Begin Patch",  # Codex
        "[Tool:write_file] uploader/client.py",  # Gemini CLI
        "[Tool:replace] uploader/client.py",
        "[Tool:Create] uploader/backoff.py",  # Factory Droid
        "[Tool:ApplyPatch] *** Begin Patch",
        "[Tool:create] uploader/backoff.py",  # Copilot CLI
        "[Tool:edit] uploader/client.py",  # Copilot CLI, Pi
        "[Tool:write] uploader/backoff.py",  # Pi
    ):
        assert edits_files(_chunk(f"[Assistant]\nI'll change it.\n\n{call}"), TOOLS), call


def test_reading_running_or_talking_about_an_edit_is_not_editing() -> None:
    for text in (
        "[Tool:Read] uploader/client.py\n\n[Result:Read] def upload(): ...",
        "[Tool:Bash] git diff\n\n[Result:Bash] +retry = 5",
        "[Tool:EditorConfig] .editorconfig",  # a tool whose name only begins like one
        "[Assistant]\nNext I would call [Tool:Edit] on the client.",  # not a call: mid-line
        "[Result:Edit] The file uploader/client.py has been updated.",  # the result, its call in another chunk
        "Caroline: I edited the photos from the trip",  # chat
    ):
        assert not edits_files(_chunk(text), TOOLS), text


def _sessions(folder: Path) -> Path:
    """Session "talk" weighs how uploads could retry and changes nothing; "work" makes the change."""
    folder.mkdir(parents=True, exist_ok=True)
    talk = [
        ("user", "should failed uploads retry, with exponential backoff?"),
        ("assistant", "Yes: failed uploads could retry with exponential backoff, if you want me to change the client."),
    ]
    work = [
        ("user", "failed uploads should retry, with exponential backoff"),
        (
            "assistant",
            [
                {"type": "text", "text": "I'll make failed uploads retry with exponential backoff."},
                {"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "uploader/client.py"}},
            ],
        ),
        ("user", [{"type": "tool_result", "tool_use_id": "t1", "content": "The file was updated."}]),
    ]
    # Other work in the same project: the candidates both lists spread their scores over.
    others = [
        [("user", text), ("assistant", f"Done: {text}.")]
        for text in (
            "add a dark theme to the settings page",
            "bump the linter to the latest version",
            "fix the flaky clock test in the scheduler",
            "show upload progress as a percentage",
            "log the size of each uploaded file",
            "rename the bucket setting to storage",
        )
    ]
    named = [("talk", talk), ("work", work), *((f"other{n}", t) for n, t in enumerate(others))]
    for name, turns in named:
        write_messages(folder / f"{name}.jsonl", name, "/work/uploader", turns)
    return folder


def test_the_session_that_changed_the_files_outranks_one_that_only_talked_about_it(tmp_path: Path) -> None:
    folder = _sessions(tmp_path / "sessions")
    with Memory(tmp_path / "home") as memory:  # the default settings
        memory.ingest([folder])
        sessions = list(dict.fromkeys(h.chunk.session_id for h in memory.search(SUBJECT, limit=10).hits))
        assert sessions[:2] == ["work", "talk"], sessions
    with Memory(tmp_path / "home", overrides={"retrieval.workEvidence": "0"}) as memory:
        unweighed = memory.search(SUBJECT, limit=10)
        assert unweighed.hits[0].chunk.session_id == "talk"  # what the weighing corrects
