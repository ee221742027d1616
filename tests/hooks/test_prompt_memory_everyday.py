"""The user-prompt-submit hook on a store of one real project's coding sessions (the entireio CLI of
the shared corpus, 37 sessions from several clones of the repository): a question from the
developer's everyday life gets nothing added, one asked in memory's own words gets its session."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from process_support import run_hook, subprocess_env

from causantic.runs import read_status

PROJECT = "/Users/soph/Work/entire/devenv/cli"  # the clone with the most sessions (need not exist here)
# In-process (no warm process left behind); the warm path has its own tests.
ON = {"CAUSANTIC_PROMPT_MEMORY_ENABLED": "true", "CAUSANTIC_PROMPT_MEMORY_WARM_MINUTES": "0"}
# Everyday questions (benchmarks/relevance_floor.py EVERYDAY) whose words this project's sessions also
# use ("release", "password", "review", "team"): each has some keyword match, none is about the work.
EVERYDAY = (
    "What time is the team standup tomorrow?",
    "How do I deal with burnout after a long release?",
    "How do I reset my corporate laptop password?",
    "What should I say in my self-review for the performance cycle?",
    "What is the wifi password for the guest network at the office?",
)


@pytest.fixture(scope="module")
def cli_store(corpus_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home with the entireio CLI's sessions ingested (no vectors: the hook reads none), built once."""
    from causantic.ingest.service import ingest_paths
    from causantic.services import open_services

    home = tmp_path_factory.mktemp("entireio-cli") / "home"
    with pytest.MonkeyPatch.context() as patch:  # as the autouse causantic_home does for a test
        for name in [n for n in os.environ if n.startswith("CAUSANTIC_")]:
            patch.delenv(name)
        patch.setenv("CAUSANTIC_HOME", str(home))
        with open_services() as services:
            report = ingest_paths(services, [corpus_dir / "entireio__cli"], embed=False, workers=1)
    assert report.errors == [] and report.chunks_added > 0
    return home


@pytest.fixture
def cli_memory(cli_store: Path, causantic_home: Path) -> Path:
    """This test's home: a copy of that store, so one test's hook runs (status, state) never reach another."""
    shutil.copytree(cli_store, causantic_home)
    return causantic_home


def ask(prompt: str, session: str) -> subprocess.CompletedProcess[str]:
    body = {
        "session_id": session,
        "transcript_path": f"/nowhere/{session}.jsonl",
        "cwd": PROJECT,
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    done, _ = run_hook("user-prompt-submit", body, env=subprocess_env(**ON))
    assert done.returncode == 0 and done.stderr == ""
    return done


def test_everyday_questions_get_nothing_added_though_memory_shares_their_words(cli_memory: Path) -> None:
    for i, prompt in enumerate(EVERYDAY):
        assert ask(prompt, f"0c1d2e3f-0000-4000-8000-00000000000{i}").stdout == ""
        run = read_status()["user-prompt-submit"]
        assert "injected" not in run
        # hook status says why: a keyword match was found, but no session led or the lead said too little
        assert "no session clearly led" in run["outcome"] or "the best match covers" in run["outcome"]


def test_a_prompt_in_memorys_own_words_gets_the_session_that_did_the_work(cli_memory: Path) -> None:
    done = ask("fix concurrent session handling", "0c1d2e3f-0000-4000-8000-0000000000aa")
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "session 839b35f7" in context  # the session that made this commit
    injected = read_status()["user-prompt-submit"]["injected"]
    assert injected[0]["sessionId"] == "839b35f7-4dbd-4d93-9772-3c272cc87caa"
