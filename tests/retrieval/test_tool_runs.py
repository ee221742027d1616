"""A hit that is mostly a listing of tool calls reads as one line per run of calls in the CLI and
the MCP text, while ``--json`` keeps the stored text whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.retrieval.format import render_search, shown_content

SESSION = "5e5510a0-0000-4000-8000-000000000001"
FILES = [f"/work/proj/src/parser/{name}.py" for name in ("lexer", "grammar", "ast", "errors", "tokens", "visitor")]


def _record(kind: str, content: object, n: int) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": f"00000000-0000-4000-8000-{n:012d}",
            "parentUuid": None if n == 1 else f"00000000-0000-4000-8000-{n - 1:012d}",
            "isSidechain": False,
            "sessionId": SESSION,
            "cwd": "/work/proj",
            "timestamp": f"2026-03-02T10:00:{n:02d}.000Z",
            "message": {"id": f"msg_{n}", "role": kind, "content": content},
        }
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    reads = [
        {"type": "tool_use", "id": f"toolu_{i}", "name": "Read", "input": {"file_path": f}} for i, f in enumerate(FILES)
    ]
    lines = [
        _record("user", "why does the tokenizer crash on nested brackets", 1),
        _record("assistant", [{"type": "text", "text": "Reading the tokenizer modules first."}, *reads], 2),
    ]
    folder = tmp_path / "projects" / "-work-proj"
    folder.mkdir(parents=True)
    (folder / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    home = tmp_path / "home"
    monkeypatch.setenv("CAUSANTIC_HOME", str(home))
    assert CliRunner().invoke(cli, ["ingest", str(folder), "--no-embed"]).exit_code == 0
    return home


def test_a_run_of_tool_calls_is_one_line_when_read_and_whole_in_json(home: Path) -> None:
    folded = "[Tool:Read] ×6 in /work/proj/src/parser/: lexer.py, grammar.py, ast.py, errors.py, tokens.py, visitor.py"
    shown = CliRunner().invoke(cli, ["search", "tokenizer crash nested brackets"])
    assert shown.exit_code == 0 and folded in shown.stdout
    assert shown.stdout.count("[Tool:Read]") == 1 and "Reading the tokenizer modules first." in shown.stdout
    assert shown.stdout.startswith("Found 1 relevant memory chunk (")  # one chunk, not "1 chunks"

    scripted = json.loads(CliRunner().invoke(cli, ["search", "tokenizer crash nested brackets", "--json"]).stdout)
    [hit] = scripted["hits"]
    assert [f"[Tool:Read] {f}" for f in FILES] == [s for s in hit["content"].split("\n\n") if s.startswith("[Tool:")]

    with Memory(home) as memory:  # the MCP search tool's text
        assert folded in render_search(memory.search("tokenizer crash nested brackets"))
    session = CliRunner().invoke(cli, ["reconstruct", "proj", "--session", SESSION[:8]])
    assert session.exit_code == 0 and folded in session.stdout and session.stdout.startswith("proj: 1 chunk from")


def test_messages_to_teammates_are_never_folded_into_a_listing() -> None:
    # A lead messaging its team: what each teammate was told is what a search finds, as a
    # sub-agent's task is, so each message stays on its own line, whole.
    told = [
        f"[Tool:SendMessage] to {who}: {what} — " + "take the parser module; the lexer drops nested brackets " * 3
        for who, what in (("alice", "lexer"), ("bob", "grammar"), ("carol", "visitor"))
    ]
    content = "\n\n".join(["Splitting the work three ways.", *told])
    assert shown_content(content) == content
    reads = "\n\n".join(f"[Tool:Read] {f}" for f in FILES[:3])
    assert shown_content(reads).startswith("[Tool:Read] ×3 in /work/proj/src/parser/")


def test_a_long_run_lists_every_name_the_calls_named() -> None:
    # 30 files read in a row: whichever one a search matched, its name is in the folded line.
    files = [f"/work/proj/src/module_{i:02d}_handler.py" for i in range(30)]
    shown = shown_content("\n\n".join(f"[Tool:Read] {f}" for f in files))
    assert shown.count("\n") == 0 and shown.startswith("[Tool:Read] ×30 in /work/proj/src/: module_00_handler.py, ")
    assert all(f.rsplit("/", 1)[1] in shown for f in files)


TODO_SESSION = "chiphuyen__sniffly/tests/mock-data/-Users-chip-dev-ai-music/d3ad4cdc-5657-435d-98fa-0035d53e383d.jsonl"
TODO_ACK = "Todos have been modified successfully. Ensure that you continue to use the todo list"


def test_todo_list_acknowledgements_are_left_out_of_a_session_read(
    corpus_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A real session that updates its todo list 13 times: each update's result is the same two
    # sentences of harness boilerplate, which buried the turn's words in the session text.
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    assert CliRunner().invoke(cli, ["ingest", str(corpus_dir / TODO_SESSION), "--no-embed"]).exit_code == 0
    shown = CliRunner().invoke(cli, ["reconstruct", "ai-music", "--session", "d3ad4cdc", "--max-tokens", "20000"])
    assert shown.exit_code == 0 and TODO_ACK not in shown.stdout
    assert shown.stdout.count("[Tool:TodoWrite] ") == 13  # the updates themselves are all still there
    # each as the list's words, several items to a line, not its JSON (keys, ids, priorities)
    first = "[Tool:TodoWrite] Examine existing ai_music.py to understand the workflow (pending); Create Jupyter"
    assert first in shown.stdout and '{"todos"' not in shown.stdout
    assert "[Result:Read]" in shown.stdout  # results that say something stay

    scripted = CliRunner().invoke(cli, ["reconstruct", "ai-music", "--session", "d3ad4cdc", "--json"]).stdout
    assert TODO_ACK in scripted  # programs still get the stored text whole


def test_acknowledged_writes_fold_like_reads_and_a_failure_or_a_result_with_content_stays() -> None:
    files = [f"/work/proj/src/{name}.py" for name in ("a", "b", "c")]
    written = "\n\n".join(f"[Tool:Write] {f}\n\n[Result:Write] File created successfully at: {f}" for f in files)
    assert shown_content(written) == "[Tool:Write] ×3 in /work/proj/src/: a.py, b.py, c.py"

    call = "[Tool:Edit] /work/proj/src/a.py"
    assert shown_content(f"{call}\n\n[Result:Edit] The file /work/proj/src/a.py has been updated successfully.") == call
    snippet = "[Result:Edit] The file /work/proj/src/a.py has been updated. Here's the result of running `cat -n`:\n1 x"
    failed = "[Error:TodoWrite] Todos have been modified successfully. (no: InputValidationError)"
    kept = "\n\n".join([call, snippet, "[Tool:TodoWrite] {}", failed])
    assert shown_content(kept) == kept
    lone = f"[Result:TodoWrite] {TODO_ACK} to track your progress."  # a chunk that is only the acknowledgement
    assert shown_content(lone) == lone
