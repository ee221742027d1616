"""Topics a user gets from a memory of five real Claude Code projects (the real embedding model,
``causantic ingest`` then ``causantic cluster`` and ``causantic clusters --json`` as a user runs them).

Before ``clustering.maxTopicShare`` one topic held 116 of 279 chunks (42%: one project's every
session), and with ``min_samples`` 2 alone one held 414 of 425, labelled "app, project, file"; two
topics of one memory were both called "enabled, maps, telemetry" (benchmarks/topics.py). With the
size limit alone 48% of five-b's chunks were in no topic: HDBSCAN's noise, many of them chunks whose
nearest chunks are nearly all in one topic (``clustering.joinNeighbours``).
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


def _topics_of(corpus_dir: Path, projects: tuple[str, ...]) -> tuple[int, dict[str, Any]]:
    """(embedded chunks, ``causantic clusters --json``: its topics, chunks in no topic) of a memory of
    ``projects``."""
    done = causantic("ingest", *(str(corpus_dir / project) for project in projects), timeout=900)
    assert done.returncode == 0, done.stderr
    clustered = causantic("cluster", "--json", timeout=300)
    assert clustered.returncode == 0, clustered.stderr
    chunks = json.loads(clustered.stdout)["chunk_count"]
    listed = causantic("clusters", "--json")
    assert listed.returncode == 0, listed.stderr
    return chunks, json.loads(listed.stdout)


def test_no_topic_of_five_real_projects_swallows_a_project(corpus_dir: Path) -> None:
    chunks, listed = _topics_of(corpus_dir, FIVE_B)
    topics = listed["topics"]

    largest = max(topic["size"] for topic in topics)
    assert chunks > 200
    assert largest <= 0.25 * chunks, f"one topic holds {largest} of {chunks} chunks"
    assert len(topics) >= 8  # each project's subjects, not one topic per project
    # Topics mean one thing: nearly all of them lie inside one project.
    assert sum(len(topic["projects"]) == 1 for topic in topics) >= 0.8 * len(topics)
    # Most chunks are in a topic (48% were in none when HDBSCAN's noise stayed there), as the list says.
    assert listed["in_no_topic"] <= 0.4 * chunks
    left_out = listed["in_no_topic"]
    shown = causantic("clusters").stdout.splitlines()[-1]
    assert shown == f"{left_out} of {chunks} chunks ({left_out / chunks:.0%}) belong to no topic.", shown


def test_topics_of_five_real_projects_bear_labels_that_tell_them_apart(corpus_dir: Path) -> None:
    chunks, listed = _topics_of(corpus_dir, FIVE_A)
    topics = listed["topics"]

    labels = [topic["label"] for topic in topics]
    twice = [label for label, n in Counter(labels).items() if n > 1]
    assert not twice, f"topics share a label: {twice}"
    assert max(topic["size"] for topic in topics) <= 0.25 * chunks
    words = Counter(word for label in labels for word in set(label.split(", ")))
    # A label's words are its own: few name another topic too, none names many.
    assert sum(n == 1 for n in words.values()) >= 0.9 * len(words)
    assert max(words.values()) <= 2
    assert not words.keys() & {"drwxr", "xr", "staff"}  # a long listing's columns


def test_labels_of_five_real_projects_name_what_the_work_was_about_not_the_shell_it_ran_in(
    corpus_dir: Path,
) -> None:
    """Every command of one project's sessions began with a `cd` into a worktree, and its largest topic
    was labelled "cd, git, branch"; Claude Code's edit and to-do acknowledgements gave "updated"."""
    _, listed = _topics_of(corpus_dir, FIVE_B)

    words = {word for topic in listed["topics"] for word in topic["label"].split(", ")}
    assert not words & {"cd", "git", "ls", "la", "cat", "grep", "head", "tail", "npm", "python3"}, words
    assert not words & {"updated", "edited", "snippet", "todos", "modified"}, words
