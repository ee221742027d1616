"""A session as the dashboard tells it (``Memory.session_view``): each sub-agent run is a stream of its
own, hung on the chunk that started it, though several runs share one agent type.

Data: real transcripts of the shared corpus. claude-code-log's ``nested_agents`` (main starts two
mid-agents that each start two leaves, a chain main → depth 1 → 2 → 3, and one interrupted run; all
ten are "general-purpose") and an entire.io session where main starts "dev" four times and
"reviewer" twice between 23:52 and 01:17.
"""

from __future__ import annotations

from pathlib import Path

from causantic.facade import Memory
from causantic.retrieval.browse import Stream

NESTED = "daaain__claude-code-log/test/test_data/nested_agents"
NESTED_SESSION = "33330000-0000-4000-8000-000000000001"
ENTIRE = "entireio__cli/04/6bdcb08e27/0/full.jsonl"
ENTIRE_SESSION = "b82405ba-a054-4152-bc86-e9b0d4832b68"


def _tree(stream: Stream, depth: int = 0) -> list[tuple[int, str, int]]:
    """Each run under ``stream``, depth first: (depth, what it was asked, its chunk count)."""
    out: list[tuple[int, str, int]] = []
    for chunk in stream.chunks:
        for run in stream.spawned.get(chunk.id, []):
            out.append((depth + 1, run.task, len(run.chunks)))
            out.extend(_tree(run, depth + 1))
    return out


def test_ten_runs_of_one_agent_type_are_ten_streams_each_under_the_run_that_started_it(
    corpus_dir: Path, causantic_home: Path
) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([corpus_dir / NESTED], embed=False)
        view = memory.session_view(NESTED_SESSION)
    tree = _tree(view.main)
    # All ten were one 'general-purpose' stream of 10 chunks under main's first chunk.
    assert len(tree) == 10 and not view.detached, tree
    assert sorted(tree) == sorted(
        [
            (1, "You are at depth 1. Recurse.", 1),
            (2, "You are at depth 2. Recurse.", 1),
            (3, "You are at depth 3. Stop.", 1),
            (1, "Run forever.", 1),
            (1, "Spawn two leaves and report both answers.", 1),
            (2, "Answer your one-line task. Use no tools.", 1),
            (2, "Answer your one-line task. Use no tools.", 1),
            (1, "Spawn two leaves and report both answers.", 1),
            (2, "Answer your one-line task. Use no tools.", 1),
            (2, "Answer your one-line task. Use no tools.", 1),
        ]
    )
    chain = [depth for depth, task, _ in tree if "depth" in task]
    assert chain == [1, 2, 3]  # each level under the one before it, in the order told


def test_a_sub_agent_started_again_later_is_told_where_it_was_started_again(
    corpus_dir: Path, causantic_home: Path
) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([corpus_dir / ENTIRE], embed=False)
        view = memory.session_view(ENTIRE_SESSION)
    started = [
        (chunk.start_time, run.agent, run.chunks[0].start_time, len(run.chunks))
        for chunk in view.main.chunks
        for run in view.main.spawned.get(chunk.id, [])
    ]
    # Four 'dev' runs were one 55-chunk stream hung at 23:51, the 01:17 run's chunks among them.
    assert [(agent, n) for _, agent, _, n in started] == [
        ("dev", 12),
        ("dev", 11),
        ("reviewer", 11),
        ("dev", 22),
        ("reviewer", 9),
        ("dev", 10),
    ]
    assert all(call <= first for call, _, first, _ in started)  # each hangs on a chunk before its own first
    assert [first[:16] for _, _, first, _ in started] == sorted(first[:16] for _, _, first, _ in started)
    assert started[-1][2].startswith("2026-01-29T01:17")
    assert not view.detached  # and none is left over, unplaced
