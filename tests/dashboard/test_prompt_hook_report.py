"""What the prompt hook did on each recent prompt reads the same in `causantic hook status`, the MCP
`hook-status` tool and the dashboard's overview (retrieval.prompt_report words it once).

Two real prompt-hook runs over the bundled example project (no corpus needed): one about the invoice
test adds 2 moments of session 7a378dd6, a later one about the weather adds none.
"""

from __future__ import annotations

import html
import re
from typing import Any

import anyio
import pytest
from dashboard_support import Dashboard, _env, causantic, http_request
from mcp import Client
from process_support import run_hook

from causantic.mcp.server import build_server

INVOICE = "How did we fix the invoice due date test that failed in another time zone?"
WEATHER = "What is the weather like on the moon tonight, roughly?"
HEADING = "Recent prompts (newest first): memory added or not, and why"


@pytest.fixture(scope="module")
def prompted(example_dashboard: Dashboard) -> Dashboard:
    env = {**_env(example_dashboard.home), "CAUSANTIC_PROMPT_MEMORY_ENABLED": "true"}
    env["CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES"] = "0"  # no warm process left behind
    for prompt in (INVOICE, WEATHER):
        payload = {
            "session_id": "0c0ffee0-0000-4000-8000-000000000001",
            "cwd": "/home/dev/acme-shop",
            "hook_event_name": "UserPromptSubmit",
            "prompt": prompt,
        }
        done, _ = run_hook("user-prompt-submit", payload, env=env)
        assert done.returncode == 0, done.stderr
    return example_dashboard


def _report(text: str) -> list[str]:
    """The recent-prompts lines, stripped of each interface's indentation."""
    lines = text.splitlines()
    start = lines.index(HEADING) + 1
    return [line.strip() for line in lines[start:] if line.strip()]


def test_cli_mcp_and_dashboard_list_every_recent_prompt_in_the_same_words(
    prompted: Dashboard, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # the CLI wraps to the terminal; the others leave wrapping to the reader
    cli = _report(causantic(prompted.home, "hook", "status"))
    heads = [line for line in cli if " UTC, project acme-shop: " in line]
    assert [h.split(": ", 1)[1] for h in heads] == ["no memory added.", "memory added: 2 past moments."]
    moments = [line for line in cli if re.match(r"\d\. acme-shop, session 7a378dd6 \(2026-11-03\): relevance", line)]
    assert len(moments) == 2 and all("of the prompt's words" in m for m in moments)

    monkeypatch.setenv("CAUSANTIC_HOME", str(prompted.home))

    async def ask() -> Any:
        async with Client(build_server(warm=False), mode="legacy") as client:
            return await client.call_tool("hook-status", {})

    mcp = anyio.run(ask).content[0].text
    assert _report(mcp) == cli  # both prompts, not only the last, worded alike
    assert "- user-prompt-submit: last ran" in mcp and "— no memory added" in mcp

    _, _, page = http_request(prompted, "GET", "/")
    section = page[page.index(HEADING) : page.index("</ul>", page.index(HEADING))]
    shown = [
        html.unescape(" ".join(re.sub(r"<[^>]+>", " ", div).split())) for div in re.findall(r"<div.*?</div>", section)
    ]
    assert shown == cli
    assert section.count('href="/session/7a378dd6-f9b6-52f1-ad8d-dd8aa785f035?') == 2  # each moment links its session
