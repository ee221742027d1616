"""`causantic serve` as a real subprocess, driven over stdio by the official SDK's client.

One server process serves every test in this module, on a store ingested from the example
sessions and three real projects of the shared corpus (keyword search: no vectors).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from process_support import McpProcess, run_hook, subprocess_env

from causantic.retrieval import options
from causantic.retrieval.output import SearchOut

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


def text(result: Any) -> str:
    assert result.content and result.content[0].type == "text"
    return str(result.content[0].text)


def ok(server: McpProcess, tool: str, arguments: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    result = server.call(tool, arguments)
    assert not result.is_error, text(result)
    return text(result), result.structured_content


def test_the_server_lists_nine_tools_with_schemas_descriptions_and_hints(served: McpProcess) -> None:
    tools = {t.name: t for t in served.list_tools().tools}
    assert set(tools) == TOOLS
    for name, tool in tools.items():
        assert tool.description and len(tool.description) < 2048, name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, name
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.read_only_hint is (name != "forget"), name
    assert tools["forget"].annotations.destructive_hint is True
    assert {
        "from",
        "to",
        "days_back",
        "previous_session",
        "current_session_id",
        "keep_newest",
        "agent",
        "max_tokens",
        "session_id",
    } <= set(tools["reconstruct"].input_schema["properties"])
    assert tools["reconstruct"].input_schema["required"] == ["project"]
    assert "yesterday" in tools["reconstruct"].description
    # The limits are the CLI's (retrieval/options.py), so a budget one accepts the other does too.
    for name in ("search", "recall", "predict", "reconstruct"):
        budget = tools[name].input_schema["properties"]["max_tokens"]["anyOf"][0]
        assert (budget["minimum"], budget["maximum"]) == (options.MAX_TOKENS.low, options.MAX_TOKENS.high), name
    assert tools["search"].output_schema == SearchOut.model_json_schema()
    assert "how" in tools["recall"].description.lower() and "why" in tools["recall"].description.lower()


def test_the_server_introduces_itself_with_guidance_on_which_tool_to_use(served: McpProcess) -> None:
    info = served.initialized
    assert info.server_info.name == "causantic"
    assert "reconstruct" in info.instructions and "recall" in info.instructions
    assert len(info.instructions) < 2048


def test_search_finds_the_safari_redirect_loop_in_the_acme_shop_project(served: McpProcess) -> None:
    body, data = ok(served, "search", {"query": "Safari redirect loop", "project": "acme-shop"})
    assert body.startswith("Found ")
    assert "Safari" in body and "[Project: acme-shop" in body
    assert data["hits"] and all(h["project"] == "acme-shop" for h in data["hits"])
    assert data["mode"] == "keyword-only"


def test_search_across_projects_finds_a_real_session_by_its_words(served: McpProcess) -> None:
    body, data = ok(served, "search", {"query": "dev-docs work folder convention clmail", "limit": 3})
    assert len(data["hits"]) <= 3
    assert {h["project"] for h in data["hits"]} == {"project"}
    assert "clmail" in body


def test_recall_tells_the_story_oldest_first(served: McpProcess) -> None:
    body, data = ok(served, "recall", {"query": "regression test for the Safari redirect loop", "project": "acme-shop"})
    dates = [c["date"] for e in data["episodes"] for c in e["chunks"]]
    assert dates and dates == sorted(dates) and not data["nothing_relevant"]
    assert data["mode"] == "episodes" and body.startswith("Recall: the story behind it")
    assert "Safari" in body and "== Episode 1 of" in body


def test_predict_answers_from_memory(served: McpProcess) -> None:
    body, data = ok(
        served,
        "predict",
        {"context": "users stuck in a login redirect loop on Safari", "project": "acme-shop"},
    )
    assert data["episodes"] and data["kind"] == "predict"
    assert body.startswith("Predict: what came next")


def test_nothing_relevant_is_an_answer_not_an_error(served: McpProcess) -> None:
    body, data = ok(served, "recall", {"query": "zzqx nonexistent gibberish qqq"})
    assert data["nothing_relevant"] is True and data["episodes"] == []
    assert body.startswith("Nothing relevant in memory")


def test_an_off_topic_search_is_told_nothing_relevant_and_a_real_one_keeps_its_answer(served: McpProcess) -> None:
    for query in ("recipe for banana bread", "Wie wird das Wetter morgen in Berlin?", "zxqv"):
        body, data = ok(served, "search", {"query": query})
        assert data["nothing_relevant"] is True and data["hits"] == [], query
        assert body.startswith("Nothing relevant in memory")
    body, data = ok(served, "search", {"query": "How did we set up the Vite dev server so it works cross-platform?"})
    shown = [h["relevance"] for h in data["hits"]]
    assert not data["nothing_relevant"] and "JSSoundRecorder" in data["hits"][0]["project"]
    # the figure tells the hits apart: it used to read "100%" on the first few of such a search
    assert shown == sorted(shown, reverse=True) and round(shown[0] * 100) < 100 and shown[0] > shown[-1]
    assert "Relevance: 100%" not in body


def test_reconstruct_replays_a_project_in_time_order(served: McpProcess) -> None:
    body, data = ok(served, "reconstruct", {"project": "acme-shop"})
    assert body.startswith("acme-shop: 3 sessions, oldest first")
    assert len(data["sessions"]) == 3 and data["mode"] == "timeline" and data["view"] == "timeline"
    assert body.index("Safari") < body.index("rate limiting")  # Nov 2 before Nov 4
    assert all(s["title"] for s in data["sessions"]) and not data["chunks"]


def test_reconstruct_gives_the_session_before_the_current_one(served: McpProcess) -> None:
    _, data = ok(
        served,
        "reconstruct",
        {
            "project": "acme-shop",
            "previous_session": True,
            "current_session_id": "4005b823-fa0d-5890-9dc8-e686765e4267",
        },
    )
    assert data["mode"] == "previous-session"
    assert [s["session_id"] for s in data["sessions"]] == ["7a378dd6-f9b6-52f1-ad8d-dd8aa785f035"]


def test_list_projects_names_every_ingested_project(served: McpProcess) -> None:
    body, data = ok(served, "list-projects")
    names = {p["name"] for p in data["projects"]}
    assert {"acme-shop", "JSSoundRecorder", "worktrees", "project"} <= names
    assert body.startswith("Projects in memory:")


def test_list_sessions_lists_newest_first_and_says_when_it_cut(served: McpProcess) -> None:
    body, data = ok(served, "list-sessions", {"project": "acme-shop", "limit": 2})
    assert data["total"] == 3 and len(data["sessions"]) == 2
    starts = [s["started_at"] for s in data["sessions"]]
    assert starts == sorted(starts, reverse=True)
    assert "showing 2 of 3" in body


def test_stats_counts_what_was_ingested(served: McpProcess) -> None:
    body, data = ok(served, "stats")
    assert data["chunks"] > 100 and data["projects"] == 4 and data["edges"]["total"] > 0
    assert f"- Chunks: {data['chunks']}" in body


def test_forget_only_previews_unless_dry_run_is_false(served: McpProcess) -> None:
    body, data = ok(served, "forget", {"project": "acme-shop", "before": "2026-11-03T00:00:00Z"})
    assert data["dry_run"] is True and data["count"] == 2 and data["deleted"] == 0
    assert "call again with dry_run=false and expected_count=2" in body
    _, after = ok(served, "stats")
    assert after["projects"] == 4 and after["chunks"] > 100


def test_hook_status_shows_the_hooks_last_runs(served: McpProcess) -> None:
    payload = {
        "session_id": "9e0c1d2e-0000-4000-8000-000000000001",
        "cwd": "/home/dev/acme-shop",
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done, _ = run_hook("session-start", payload, env=served.env)  # the server's store, either backend
    assert done.returncode == 0 and json.loads(done.stdout)["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    body, data = ok(served, "hook-status")
    run = data["hooks"]["session-start"]
    assert run["success"] is True and run["project"] == "acme-shop"
    assert "session-start: last ran" in body and "success" in body


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
        ("reconstruct", {"project": "acme-shop", "previous_session": True}, "current_session_id"),
        ("reconstruct", {"project": "no-such-project"}, "No project named 'no-such-project'"),
        ("list-sessions", {"project": "acme-shop", "days_back": -1}, "greater than 0"),
        ("forget", {"project": "acme-shop", "dry_run": False}, "needs expected_count"),
        ("forget", {"project": "acme-shop", "dry_run": False, "expected_count": 1}, "not the 1 previewed"),
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
