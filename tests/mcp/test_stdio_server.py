"""`causantic serve` as a real subprocess, driven over stdio by the official SDK's client.

One server process serves every test in this module, on a store ingested from the example
sessions and three real projects of the shared corpus (keyword search: no vectors).
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from process_support import McpProcess, run_hook, subprocess_env
from tool_answers import hit_headers, text

from causantic.retrieval import options
from causantic.sources import SOURCES

TOOLS = {
    "search",
    "recall",
    "predict",
    "reconstruct",
    "list-projects",
    "list-sessions",
    "stats",
    "forget",
    "hook-status",
}


def ok(server: McpProcess, tool: str, arguments: dict[str, Any] | None = None) -> str:
    result = server.call(tool, arguments)
    assert not result.is_error, text(result)
    return text(result)


def test_the_server_lists_nine_tools_with_schemas_descriptions_and_hints(served: McpProcess) -> None:
    tools = {t.name: t for t in served.list_tools().tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) < 2048, name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is None, name  # the model reads the text: see causantic.mcp.tools
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.read_only_hint is (name != "forget"), name
    assert tools["forget"].annotations.destructive_hint is True
    assert {
        "from",
        "to",
        "days_back",
        "previous_session",
        "current_session",
        "keep_oldest",
        "agent",
        "max_tokens",
        "session",
    } <= set(tools["reconstruct"].input_schema["properties"])
    assert tools["reconstruct"].input_schema["required"] == ["project"]
    assert "yesterday" in tools["reconstruct"].description
    # The CLI's lower limit (retrieval/options.py); the upper one keeps an answer out of Claude Code's file.
    for name in ("search", "recall", "predict", "reconstruct"):
        budget = tools[name].input_schema["properties"]["max_tokens"]
        assert (budget["minimum"], budget["maximum"]) == (options.MAX_TOKENS.low, options.MCP_MAX_TOKENS), name
    assert "how" in tools["recall"].description.lower() and "why" in tools["recall"].description.lower()


def test_the_tool_list_costs_few_tokens(served: McpProcess) -> None:
    """Every session pays for it: it was 41,174 characters, two thirds of them output schemas no
    model reads, and pydantic's titles, "or null" variants and docstring indentation."""
    tools = served.list_tools().tools
    listed = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools])
    assert len(listed) < 14_000
    for tool in tools:
        assert "\n    " not in tool.description and tool.description == tool.description.strip(), tool.name
        for name, field in tool.input_schema["properties"].items():
            assert "title" not in field and {"type": "null"} not in field.get("anyOf", []), (tool.name, name)
    search = next(t for t in tools if t.name == "search").input_schema["properties"]
    assert search["limit"] == {
        "type": "integer",
        "minimum": options.LIMIT.low,
        "maximum": options.LIMIT.high,
        "description": options.LIMIT.help,
    }
    assert search["source"]["enum"] == list(SOURCES)  # every agent ingest reads


def test_the_server_introduces_itself_with_guidance_on_which_tool_to_use(served: McpProcess) -> None:
    info = served.initialized
    assert info.server_info.name == "causantic"
    assert "reconstruct" in info.instructions and "recall" in info.instructions
    assert len(info.instructions) < 2048


def test_search_finds_the_safari_redirect_loop_in_the_acme_shop_project(served: McpProcess) -> None:
    body = ok(served, "search", {"query": "Safari redirect loop", "project": "acme-shop"})
    assert body.startswith("Found ") and "keyword-only" in body.splitlines()[0]
    hits = hit_headers(body)
    assert "Safari" in body and hits and {h["Project"] for h in hits} == {"acme-shop"}


def test_the_model_reads_whole_chunks_not_their_first_160_characters(served: McpProcess) -> None:
    """Claude Code hands the model a result's structuredContent instead of its text when it has one;
    the search's structured hits held 160-character previews, so the model never read the chunks
    (anthropics/claude-code#79944). The answer is its text alone, the whole chunk in it."""
    for tool, arguments in [
        ("search", {"query": "dev-docs work folder convention clmail", "limit": 1}),
        ("recall", {"query": "dev-docs work folder convention clmail"}),
    ]:
        result = served.call(tool, arguments)
        assert not result.is_error and result.structured_content is None, tool
        chunk = result.content[0].text.split("]\n", 1)[1]
        assert len(chunk) > 400 and "clmail" in chunk, tool


def test_search_across_projects_finds_a_real_session_by_its_words(served: McpProcess) -> None:
    body = ok(served, "search", {"query": "dev-docs work folder convention clmail", "limit": 3})
    hits = hit_headers(body)
    assert 0 < len(hits) <= 3 and {h["Project"] for h in hits} == {"project"}
    assert "clmail" in body


def test_recall_tells_the_best_story_first(served: McpProcess) -> None:
    body = ok(served, "recall", {"query": "regression test for the Safari redirect loop", "project": "acme-shop"})
    # the best match's episode first, each episode told from its first chunk on; a short session
    # told whole is the answer alone, and its heading counts the weaker sessions left out
    best = [int(m) for m in re.findall(r"^== Episode \d+ of \d+ · .* · best match (\d+)%", body, re.M)]
    assert best and best[0] == max(best)
    assert len(best) > 1 or "left out (the story's session told whole)" in body.splitlines()[0]
    positions = [(int(i), int(n)) for i, n in re.findall(r"^\[(\d+)/(\d+) \|", body, re.M)]
    assert len(positions) > 1
    told = [i for i, _ in positions]
    assert told == [i for n in [n for i, n in positions if i == 1] for i in range(1, n + 1)]
    assert body.startswith("Recall: the story behind it")
    assert "Safari" in body and "== Episode 1 of" in body


def test_predict_answers_from_memory(served: McpProcess) -> None:
    body = ok(
        served,
        "predict",
        {"context": "users stuck in a login redirect loop on Safari", "project": "acme-shop"},
    )
    assert body.startswith("Predict: what came next") and "== Episode 1 of" in body


def test_nothing_relevant_is_an_answer_not_an_error(served: McpProcess) -> None:
    body = ok(served, "recall", {"query": "zzqx nonexistent gibberish qqq"})
    assert body.startswith("Nothing relevant in memory") and "Episode" not in body


def test_an_off_topic_search_is_told_nothing_relevant_and_a_real_one_keeps_its_answer(served: McpProcess) -> None:
    for query in ("recipe for banana bread", "Wie wird das Wetter morgen in Berlin?", "zxqv"):
        body = ok(served, "search", {"query": query})
        assert body.startswith("Nothing relevant in memory") and not hit_headers(body), query
    body = ok(served, "search", {"query": "How did we set up the Vite dev server so it works cross-platform?"})
    hits = hit_headers(body)
    shown = [int(h["Relevance"].split("%")[0]) for h in hits]
    assert hits and "JSSoundRecorder" in hits[0]["Project"]
    # the figure tells the hits apart: it used to read "100%" on the first few of such a search
    assert shown == sorted(shown, reverse=True) and shown[0] < 100 and shown[0] > shown[-1]
    assert "Relevance: 100%" not in body


def test_reconstruct_replays_a_project_in_time_order(served: McpProcess) -> None:
    body = ok(served, "reconstruct", {"project": "acme-shop"})
    assert body.startswith("acme-shop: 3 sessions, oldest first")
    lines = body.splitlines()[1:]
    assert len(lines) == 3 and all(line.startswith("2026-11-0") for line in lines)
    assert body.index("Safari") < body.index("rate limiting")  # Nov 2 before Nov 4


def test_reconstruct_gives_the_session_before_the_current_one(served: McpProcess) -> None:
    body = ok(
        served,
        "reconstruct",
        {
            "project": "acme-shop",
            "previous_session": True,
            "current_session": "4005b823-fa0d-5890-9dc8-e686765e4267",
        },
    )
    assert "7a378dd6" in body and "4005b823" not in body and "2a2ee33e" not in body


def test_previous_session_follows_a_clear_and_says_when_the_current_session_is_unknown(served: McpProcess) -> None:
    """The server keeps the CLAUDE_CODE_SESSION_ID it was started with: after /clear it answered with
    the session before the cleared one. Under Codex or Gemini CLI (no such variable) it failed with
    'previous_session needs current_session_id', which the agent had no way to know."""
    before_clear = "7a378dd6-f9b6-52f1-ad8d-dd8aa785f035"  # acme-shop's sessions: 2a2ee33e, 7a378dd6, 4005b823
    ask = {"project": "acme-shop", "previous_session": True}
    with McpProcess(env={**served.env, "CLAUDE_CODE_SESSION_ID": before_clear}) as claude_code:
        assert "2a2ee33e" in ok(claude_code, "reconstruct", ask)
        cleared = {
            "session_id": "c1ea0000-0000-4000-8000-000000000001",
            "cwd": "/home/dev/acme-shop",
            "source": "clear",
        }
        done, _ = run_hook(
            "session-start", {**cleared, "hook_event_name": "SessionStart", "source": "clear"}, env=served.env
        )
        assert done.returncode == 0
        after = ok(claude_code, "reconstruct", ask)
        assert "4005b823" in after and "7a378dd6" not in after and "not given" not in after
    env = {k: v for k, v in served.env.items() if k not in ("CLAUDE_CODE_SESSION_ID", "CODEX_THREAD_ID")}
    with McpProcess(env=env) as codex:  # started after the note: its parent's note is not newer than it
        unknown = ok(codex, "reconstruct", ask)
    assert "4005b823" in unknown and "The current session's id was not given" in unknown


def test_list_projects_names_every_ingested_project(served: McpProcess) -> None:
    body = ok(served, "list-projects")
    names = {line[2:].split(" (")[0] for line in body.splitlines()[1:]}
    assert {"acme-shop", "JSSoundRecorder", "worktrees", "project"} <= names
    assert body.startswith("Projects in memory (dates in UTC):")


def test_list_sessions_lists_newest_first_and_says_when_it_cut(served: McpProcess) -> None:
    body = ok(served, "list-sessions", {"project": "acme-shop", "limit": 2})
    assert body.startswith("Sessions of acme-shop (2 of 3, newest first; times in UTC):")
    starts = re.findall(r"^- \S+ \(claude-code, ([0-9-]+ [0-9:]+)", body, re.MULTILINE)
    assert len(starts) == 2 and starts == sorted(starts, reverse=True)
    assert "showing 2 of 3" in body


def test_stats_counts_what_was_ingested(served: McpProcess) -> None:
    body = ok(served, "stats")
    chunks = re.search(r"^- Chunks: ([\d,]+)$", body, re.MULTILINE)[1]  # type: ignore[index]
    count = int(chunks.replace(",", ""))
    assert count > 100 and chunks == f"{count:,}"
    assert "- Projects: 4\n" in body and "- Edges: 0\n" not in body
    assert "codex" not in body  # no Codex session was ingested: no "codex 0 (0 chunks)"


def test_forget_only_previews_unless_dry_run_is_false(served: McpProcess) -> None:
    body = ok(served, "forget", {"project": "acme-shop", "before": "2026-11-03T00:00:00Z"})
    assert body.startswith("Dry run: 2 chunks in 1 session would be deleted")
    assert "call again with dry_run=false and expected_count=2" in body
    assert "Safari" in ok(served, "search", {"query": "Safari redirect loop", "project": "acme-shop"})


def test_hook_status_shows_the_hooks_last_runs(served: McpProcess) -> None:
    payload = {
        "session_id": "9e0c1d2e-0000-4000-8000-000000000001",
        "cwd": "/home/dev/acme-shop",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done, _ = run_hook("session-start", payload, env=served.env)  # the server's store, either backend
    assert done.returncode == 0 and json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    body = ok(served, "hook-status")
    assert re.search(r"^- session-start: last ran .* \(success, \d+ ms\) for acme-shop", body, re.MULTILINE), body


@pytest.mark.parametrize(
    ("tool", "arguments", "message"),
    [
        ("search", {"query": ""}, "The query is empty"),
        ("search", {"query": " \t\n "}, "The query is empty"),
        ("search", {"query": "redis\u0000"}, "NUL character"),
        ("recall", {"query": "   "}, "The query is empty"),
        ("predict", {"context": ""}, "The context is empty"),
        ("forget", {"project": "acme-shop", "query": " "}, "The query is empty"),
        ("search", {"query": "x", "limit": 0}, "greater than or equal to 1"),
        ("search", {"query": "x", "mode": "telepathy"}, "hybrid"),
        ("recall", {}, "query"),
        ("reconstruct", {"project": "acme-shop", "from": "last tuesday"}, "from"),
        (
            "reconstruct",
            {"project": "acme-shop", "from": "2026-11-04", "to": "2026-11-01"},
            "must be later than",
        ),
        ("reconstruct", {"project": "acme-shop", "session_id": "4005b823"}, "(did you mean session?)"),
        ("reconstruct", {"project": "no-such-project"}, "No project named 'no-such-project'"),
        ("list-sessions", {"project": "acme-shop", "days_back": -1}, "greater than 0"),
        ("forget", {"project": "acme-shop", "dry_run": False}, "needs expected_count"),
        ("forget", {"project": "acme-shop", "dry_run": False, "expected_count": 1}, "has shown no preview"),
        ("forget", {"project": "acme-shop", "query": "redis"}, "no vectors are stored"),
        ("no-such-tool", {}, "Unknown tool"),
    ],
)
def test_bad_arguments_come_back_as_tool_errors_and_the_server_keeps_serving(
    served: McpProcess, tool: str, arguments: dict[str, Any], message: str
) -> None:
    result = served.call(tool, arguments)
    assert result.is_error
    assert message in text(result)
    assert not served.call("stats").is_error


def test_a_lone_surrogate_in_a_query_gets_a_clear_error_reply(memory: Path) -> None:
    """Raw JSON-RPC lines (the SDK's client cannot even send this): the message used to be dropped
    unanswered, leaving the client waiting forever."""
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-03-26",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "redis \ud800 cache"}},
        },
        {
            "jsonrpc": "2.0",
            "id": 3,
            "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "Safari redirect"}},
        },
    ]
    wire = "".join(json.dumps(line) + "\n" for line in lines)  # json.dumps writes "\\ud800", as clients do
    assert "\\ud800" in wire
    proc = subprocess.Popen(
        [sys.executable, "-m", "causantic", "serve", "--no-warm"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=subprocess_env(),
    )
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(wire)
        proc.stdin.flush()
        replies = {}
        while len(replies) < 3:
            reply = json.loads(proc.stdout.readline())
            replies[reply["id"]] = reply
    finally:
        proc.kill()
        proc.communicate(timeout=30)
    assert replies[2]["result"]["isError"] is True
    assert "invalid character" in replies[2]["result"]["content"][0]["text"]
    assert replies[3]["result"]["isError"] is False  # and the server goes on serving


def test_a_long_answer_by_default_stays_inline_in_claude_code(served: McpProcess) -> None:
    """Claude Code moves a tool result over 50,000 characters to a file and hands the model a path and
    a preview; the default budget (20,000 tokens) made a project's text 67,352 characters."""
    for tool, arguments in [
        ("reconstruct", {"project": "worktrees", "full": True}),
        ("search", {"query": "worktree", "limit": 100}),
    ]:
        body = ok(served, tool, arguments)
        assert 20_000 < len(body) < 50_000, (tool, len(body))


def test_a_server_run_by_hand_in_a_terminal_says_what_it_is_and_stops_on_ctrl_c() -> None:
    """`causantic serve` typed in a terminal printed nothing and waited; Ctrl-C did not stop it (the
    SDK's stdin reader thread stayed blocked, and the event loop waited for it), only a kill did."""
    controller, terminal = pty.openpty()
    server = subprocess.Popen(
        [sys.executable, "-m", "causantic", "serve", "--no-warm"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=subprocess_env(),
    )
    os.close(terminal)
    try:
        said = b""
        deadline = time.monotonic() + 60
        while b"Press Ctrl-C to stop." not in said and time.monotonic() < deadline:
            if select.select([controller], [], [], 0.5)[0]:
                said += os.read(controller, 4096)
        assert b"Causantic MCP server on stdio" in said and b"`causantic init` registers it" in said
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        os.close(controller)
