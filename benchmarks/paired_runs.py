"""Pair two runs of ``benchmarks/coding.py --details`` query by query: a setting measured on a store
another code version built (a migration that changes the keyword index, say) against the default of
the version before, where one run's variants cannot be compared in the same store.

Usage::

    python benchmarks/paired_runs.py BASE.jsonl OURS.jsonl [--base-kind search|work] [--kind search:NAME|work:NAME]

Prints R@1/5/10 and MRR of both, the per-query sign test on reciprocal rank (coding.py's) and a
paired bootstrap 95% interval of the MRR and R@5 differences.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from coding import reciprocal_rank, sign_test  # noqa: E402


def load(path: Path, kind: str) -> dict[str, tuple[list[str], frozenset[str]]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {r["query"]: (r["sessions"], frozenset(r["relevant"])) for r in rows if r["kind"] == kind}


def bootstrap(diffs: list[float], rounds: int = 10_000, seed: int = 19) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(diffs, k=len(diffs))) for _ in range(rounds))
    return means[int(0.025 * rounds)], means[int(0.975 * rounds) - 1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("base", type=Path)
    parser.add_argument("ours", type=Path)
    parser.add_argument("--base-kind", default="search")
    parser.add_argument("--kind", default="search", help="the OURS lines to pair: search, or search:VARIANT")
    args = parser.parse_args()
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
