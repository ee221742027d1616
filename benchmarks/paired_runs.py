"""Pair two runs of ``benchmarks/coding.py --details`` query by query: a setting measured on a store
another code version built (a migration that changes the keyword index, say) against the default of
the version before, where one run's variants cannot be compared in the same store.

Usage::

    python benchmarks/paired_runs.py BASE.jsonl OURS.jsonl [--base-kind search|work] [--kind search:NAME|work:NAME]

Prints R@1/5/10 and MRR of both, the per-query sign test on reciprocal rank (coding.py's) and a
paired bootstrap 95% interval of the MRR and R@5 differences.

Two runs of ``benchmarks/locomo.py --details`` (another embedding model, say:
``benchmarks/candidate_models.py``) pair question by question instead: ``--kind`` names the retriever
(default ``hybrid``; ``vector``, ``variant:NAME``...), and the figures are turn recall at 5/10/25/50
turns and MRR@10 of both, with a paired bootstrap 95% interval of each difference.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coding import reciprocal_rank, sign_test  # noqa: E402


def load(path: Path, kind: str) -> dict[str, tuple[list[str], frozenset[str]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["query"]: (r["sessions"], frozenset(r["relevant"])) for r in rows if r["kind"] == kind}


def bootstrap(diffs: list[float], rounds: int = 10_000, seed: int = 19) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def pair_locomo(base_path: Path, ours_path: Path, retriever: str) -> None:
    def load_questions(path: Path) -> dict[tuple[str, int], dict[str, Any]]:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return {(r["sample_id"], r["qa_index"]): r for r in rows if r["retriever"] == retriever}

    base, ours = load_questions(base_path), load_questions(ours_path)
    questions = sorted(base.keys() & ours.keys())
    if not questions:
        raise SystemExit(f"no {retriever!r} question is in both runs")
    print(f"{len(questions)} questions paired; {base_path} vs {ours_path} ({retriever})")
    for k in ("5", "10", "25", "50"):
        a = [100 * base[q]["turn_recall"][k] for q in questions]
        b = [100 * ours[q]["turn_recall"][k] for q in questions]
        low, high = bootstrap([y - x for x, y in zip(a, b, strict=True)])
        mean_a, mean_b = statistics.fmean(a), statistics.fmean(b)
        print(f"T@{k:<3} {mean_a:5.1f} -> {mean_b:5.1f}  {mean_b - mean_a:+.1f} [{low:+.1f}, {high:+.1f}]")
    a, b = [base[q]["rr10"] for q in questions], [ours[q]["rr10"] for q in questions]
    low, high = bootstrap([y - x for x, y in zip(a, b, strict=True)])
    print(f"MRR@10 {statistics.fmean(a):.3f} -> {statistics.fmean(b):.3f}  [{low:+.3f}, {high:+.3f}]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path)
    parser.add_argument("ours", type=Path)
    parser.add_argument("--base-kind", default="search")
    parser.add_argument("--kind", default="search", help="the OURS lines to pair: search, or search:VARIANT")
    args = parser.parse_args()
    first = args.base.read_text(encoding="utf-8").split("\n", 1)[0]
    if '"turn_recall"' in first:  # locomo.py --details
        pair_locomo(args.base, args.ours, "hybrid" if args.kind == "search" else args.kind)
        return
    base, ours = load(args.base, args.base_kind), load(args.ours, args.kind)
    queries = sorted(base.keys() & ours.keys())
    if not queries:
        parser.error("no query is in both runs")

    def scores(run: dict[str, tuple[list[str], frozenset[str]]]) -> dict[str, list[float]]:
        return {
            "rr": [reciprocal_rank(run[q][0], run[q][1]) for q in queries],
            **{f"r{k}": [float(bool(run[q][1] & set(run[q][0][:k]))) for q in queries] for k in (1, 5, 10)},
        }

    a, b = scores(base), scores(ours)
    print(f"{len(queries)} queries paired; {args.base}:{args.base_kind} vs {args.ours}:{args.kind}")
    for name, run in (("base", a), ("ours", b)):
        r = "  ".join(f"R@{k} {100 * statistics.fmean(run[f'r{k}']):5.1f}" for k in (1, 5, 10))
        print(f"{name:5} {r}  MRR {statistics.fmean(run['rr']):.3f}")
    test = sign_test(b["rr"], a["rr"])
    low, high = bootstrap([x - y for x, y in zip(b["rr"], a["rr"], strict=True)])
    low5, high5 = bootstrap([100 * (x - y) for x, y in zip(b["r5"], a["r5"], strict=True)])
    print(f"sign test on reciprocal rank: +{test['wins']} −{test['losses']} (p={test['p']:.2f})")
    print(f"MRR difference 95% bootstrap [{low:+.3f}, {high:+.3f}]; R@5 [{low5:+.1f}, {high5:+.1f}] points")


if __name__ == "__main__":
    main()
