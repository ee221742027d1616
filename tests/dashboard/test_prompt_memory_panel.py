"""The overview's hooks panel says what the prompt hook added and why, over real HTTP: a store
ingested from real transcripts by the CLI, the hook run as Claude Code runs it, the real server."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from dashboard_support import CORPUS, _env, causantic, start_dashboard

SOUND = CORPUS / "daaain__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-JSSoundRecorder"


def test_the_overview_names_each_added_moment_with_its_session_date_and_scores(tmp_path: Path) -> None:
    if not SOUND.is_dir():
        pytest.skip(f"the shared corpus is missing at {CORPUS}; CI provides ../shared beside the repo")
    home = tmp_path / "home"
    causantic(home, "ingest", str(SOUND), "--no-embed")
    hook = subprocess.run(
        [sys.executable, "-m", "causantic.hooks", "user-prompt-submit"],
        input=json.dumps(
            {
                "session_id": "panel-test",
                "cwd": "/Users/dain/workspace/JSSoundRecorder",
                "hook_event_name": "UserPromptSubmit",
                "prompt": "How did we set up the Vite dev server so it works cross-platform?",
            }
        ),
        capture_output=True,
        text=True,
        env={**_env(home), "CAUSANTIC_PROMPT_MEMORY_ENABLED": "true", "CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES": "0"},
        timeout=60,
    )
    assert "session 7acd37a8" in hook.stdout
    dashboard = start_dashboard(home)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", dashboard.port, timeout=60)
        conn.request("GET", "/", headers={"Cookie": f"causantic_dashboard_{dashboard.port}={dashboard.token}"})
        page = conn.getresponse().read().decode("utf-8")
        conn.close()
    finally:
        dashboard.stop()
    assert "user-prompt-submit" in page
    assert 'href="/session/7acd37a8-2745-4b58-a8a9-46164b22ad9e?' in page  # the moment links to its session
    # in `causantic hook status`'s words (retrieval.prompt_report): the moment, then why it was added
    assert re.search(r"\d\. JSSoundRecorder, session 7acd37a8 \(2025-11-18\): relevance \d+%, covers \d+% of the", page)
    assert "led the next by" in page or "no other session matched" in page
