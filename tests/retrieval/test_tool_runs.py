"""A hit that is mostly a listing of tool calls reads as one line per run of calls in the CLI and
the MCP text, while ``--json`` keeps the stored text whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from causantic.cli.main import cli
from causantic.facade import Memory
from causantic.retrieval.format import render_search

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
