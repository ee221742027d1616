"""benchmarks/paired_runs.py: two coding.py --details runs paired query by query."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _details(path: Path, kind: str, ranks: list[int]) -> None:
    """One line per query whose relevant session ``right`` sits at ``rank`` (0: not found)."""
    lines = []
    for i, rank in enumerate(ranks):
        sessions = [f"other{j}" for j in range(10)]
        if rank:
            sessions[rank - 1] = "right"
        lines.append({"query": f"q{i}", "kind": kind, "sessions": sessions, "relevant": ["right"]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_a_variant_of_one_run_is_paired_with_the_default_of_another(tmp_path: Path) -> None:
    base, ours = tmp_path / "base.jsonl", tmp_path / "ours.jsonl"
    _details(base, "search", [1, 2, 6, 0])
    _details(ours, "search:fields", [1, 1, 1, 0])  # two queries up, none down
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "paired_runs.py"), str(base), str(ours), "--kind", "search:fields"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "4 queries paired" in out
    assert "base  R@1  25.0  R@5  50.0  R@10  75.0  MRR 0.417" in out
    assert "ours  R@1  75.0  R@5  75.0  R@10  75.0  MRR 0.750" in out
    assert "+2 −0 (p=0.50)" in out


def test_runs_with_no_query_in_common_are_refused(tmp_path: Path) -> None:
    base, ours = tmp_path / "base.jsonl", tmp_path / "ours.jsonl"
    _details(base, "search", [1])
    _details(ours, "work", [1])
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "paired_runs.py"), str(base), str(ours)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2 and "no query is in both runs" in done.stderr


def _locomo_details(path: Path, retriever: str, recalls: list[float]) -> None:
    """locomo.py --details lines: one question per recall (the same at every budget), plus a bm25 line."""
    lines = [
        {
            "sample_id": "conv-1",
            "qa_index": i,
            "retriever": name,
            "turn_recall": dict.fromkeys(("5", "10", "25", "50"), recall),
            "rr10": recall,
        }
        for i, recall in enumerate(recalls)
        for name in (retriever, "bm25")
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def test_two_locomo_runs_are_paired_question_by_question_for_one_retriever(tmp_path: Path) -> None:
    base, ours = tmp_path / "base.jsonl", tmp_path / "ours.jsonl"
    _locomo_details(base, "hybrid", [0.0, 0.0, 1.0, 1.0])
    _locomo_details(ours, "hybrid", [1.0, 1.0, 1.0, 1.0])  # two questions found, none lost
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "paired_runs.py"), str(base), str(ours)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "4 questions paired" in out and "(hybrid)" in out
    assert "T@5    50.0 -> 100.0  +50.0 [+0.0, +100.0]" in out
    assert "MRR@10 0.500 -> 1.000" in out
