"""New chunks between two full reclusters, on real transcripts (the real embedding model, ``causantic
ingest`` and ``causantic cluster`` as a user runs them; no recluster in between).

Seed 001's fixed bar (angular distance 0.09 from a topic's centre) joined none of them: only 0.6-3.2%
of real topics' own members lie that close, so a new session stayed in no topic until the next full
run. A new chunk now also joins its nearest topic when it lies as near the centre as 60% of the topic's
members do (``clustering.joinQuantile``); a new project's chunks still join no old project's topic.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from process_support import causantic, subprocess_env

pytestmark = [pytest.mark.slow, pytest.mark.shared]

HISTORY = "randlee__claude-history/docs/examples"  # two sessions of one project about one tool
OTHERS = ("ai4curation__ai-blame", "kfischer-okarin__scripts-and-tools", "computermode__test-repo")
# A new project near the old ones in kind (another viewer of Claude Code's history), about other work:
# joining within the farthest member's distance (joinQuantile 1) put 2 of its 92 chunks in old topics.
UNRELATED = "d-kimuson__claude-code-viewer"
JOINED = re.compile(r"^([\d,]+) of ([\d,]+) new chunks? joined existing topics$")


def _ingest(env: dict[str, str], *paths: Path) -> tuple[int, int]:
    """(chunks that joined topics, new chunks) of one ``causantic ingest``, as its topics note says."""
    done = causantic("ingest", *map(str, paths), "--json", env=env, timeout=900)
    assert done.returncode == 0, done.stderr
    note = json.loads(done.stdout)["topics_note"]
    found = JOINED.match(note)
    assert found, note
    joined, new = (int(n.replace(",", "")) for n in found.groups())
    return joined, new


def _topics(env: dict[str, str]) -> list[dict[str, Any]]:
    listed = causantic("clusters", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    topics: list[dict[str, Any]] = json.loads(listed.stdout)["topics"]
    return topics


def test_a_new_session_joins_its_project_s_topics_and_a_new_project_joins_none(
    corpus_dir: Path, tmp_path: Path
) -> None:
    # No full recluster on ingest: what an ingest between two full runs does is what is under test.
    env = subprocess_env(CAUSANTIC_HOME=str(tmp_path / "home"), CAUSANTIC_CLUSTERING_RECLUSTER_AFTER_NEW_CHUNKS="0")
    first = causantic(
        "ingest",
        *(str(corpus_dir / p) for p in OTHERS),
        str(corpus_dir / HISTORY / "claude-history-subagents"),
        env=env,
        timeout=900,
    )
    assert first.returncode == 0, first.stderr
    clustered = causantic("cluster", env=env, timeout=300)
    assert clustered.returncode == 0, clustered.stderr
    before = {topic["id"]: topic for topic in _topics(env)}
    assert any("claude-history" in topic["projects"] for topic in before.values())

    # The project's next session, about the same tool: some of its chunks join its topics at once (6 of
    # 77; seed 001's 0.09 alone joined none).
    joined, new = _ingest(env, corpus_dir / HISTORY / "claude-history-simple")
    grown = {t["id"]: t["size"] - before[t["id"]]["size"] for t in _topics(env) if t["size"] > before[t["id"]]["size"]}
    assert joined >= 3 and sum(grown.values()) == joined, (joined, new, grown)
    assert all("claude-history" in before[topic]["projects"] for topic in grown)

    # A new project: none of its chunks joins an old project's topic (they wait for the next full run).
    joined, new = _ingest(env, corpus_dir / UNRELATED)
    assert new > 20 and joined == 0, (joined, new)
    named = {project for topic in before.values() for project in topic["projects"]}
    assert {project for topic in _topics(env) for project in topic["projects"]} == named
