"""Topics a user gets from a memory of five real Claude Code projects (the real embedding model,
``causantic ingest`` then ``causantic cluster`` and ``causantic clusters --json`` as a user runs them).

Before ``clustering.maxTopicShare`` one topic held 116 of 279 chunks (42%: one project's every
session), and with ``min_samples`` 2 alone one held 414 of 425, labelled "app, project, file"; two
topics of one memory were both called "enabled, maps, telemetry" (benchmarks/topics.py).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from process_support import causantic

pytestmark = [pytest.mark.slow, pytest.mark.shared]

FIVE_A = (
    "chiphuyen__sniffly",
    "d-kimuson__claude-code-viewer",
    "obra__episodic-memory",
    "ConfabulousDev__confab-web",
    "thedotmack__claude-mem",
)
FIVE_B = (
    "ai4curation__ai-blame",
    "kfischer-okarin__scripts-and-tools",
    "randlee__claude-history",
    "computermode__test-repo",
    "blackgirlbytes__entire-token-costs-benchmark-tests",
)


def _topics_of(corpus_dir: Path, projects: tuple[str, ...]) -> tuple[int, list[dict[str, Any]]]:
    """(embedded chunks, topics as ``causantic clusters --json`` lists them) of a memory of ``projects``."""
    done = causantic("ingest", *(str(corpus_dir / project) for project in projects), timeout=900)
    assert done.returncode == 0, done.stderr
    clustered = causantic("cluster", "--json", timeout=300)
    assert clustered.returncode == 0, clustered.stderr
    chunks = json.loads(clustered.stdout)["chunk_count"]
    listed = causantic("clusters", "--json")
    assert listed.returncode == 0, listed.stderr
    return chunks, json.loads(listed.stdout)["topics"]


def test_no_topic_of_five_real_projects_swallows_a_project(corpus_dir: Path) -> None:
    chunks, topics = _topics_of(corpus_dir, FIVE_B)

    largest = max(topic["size"] for topic in topics)
    assert chunks > 200
    assert largest <= 0.25 * chunks, f"one topic holds {largest} of {chunks} chunks"
    assert len(topics) >= 8  # each project's subjects, not one topic per project
    # Topics mean one thing: nearly all of them lie inside one project.
    assert sum(len(topic["projects"]) == 1 for topic in topics) >= 0.8 * len(topics)


def test_topics_of_five_real_projects_bear_labels_that_tell_them_apart(corpus_dir: Path) -> None:
    chunks, topics = _topics_of(corpus_dir, FIVE_A)

    labels = [topic["label"] for topic in topics]
    twice = [label for label, n in Counter(labels).items() if n > 1]
    assert not twice, f"topics share a label: {twice}"
    assert max(topic["size"] for topic in topics) <= 0.25 * chunks
    words = Counter(word for label in labels for word in set(label.split(", ")))
    # A label's words are its own: few name another topic too, none names many.
    assert sum(n == 1 for n in words.values()) >= 0.9 * len(words)
    assert max(words.values()) <= 2
    assert not words.keys() & {"drwxr", "xr", "staff"}  # a long listing's columns
