"""A merge's preview at scale: ``causantic merge-projects SOURCE INTO`` (and ``split-project``) count
the chunks this member may not move, before and after that count was asked of the store
(``protected_counts``) instead of read from every chunk of the project leaving.

Usage::

    PYTHONPATH=src python benchmarks/project_moves.py [--store DIR] [--source NAME] [--into NAME] [--rounds 7]

``--store`` is a store's folder (``memory.db`` in it; default the 100k-chunk store
``benchmarks/search_latency.py --store-dir`` keeps), copied into a temporary folder first (opening it
runs the migrations). The default merge is of the largest project into the next largest. "before"
is the same preview with the count made as it was: every chunk of the project read, those of the
moving sessions kept, the others' asked about. The two take turns, so both see the same machine
load; the figure is each one's median and their ratio.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from causantic.retrieval.regroup import merge_preview
from causantic.store.memory import MemoryStore
from causantic.store.records import ChunkScope


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/work/bench-stores/100000"))
    parser.add_argument("--source", help="the project merged (default: the largest)")
    parser.add_argument("--into", help="the project it is merged into (default: the next largest)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="causantic-moves-") as tmp:
        db = Path(tmp) / "memory.db"
        shutil.copyfile(args.store / "memory.db", db)
        with MemoryStore(db) as store:
            largest = sorted(store.project_summaries(), key=lambda p: -p.chunks)
            source = args.source or largest[0].name
            into = args.into or largest[1].name
            counted_now = store.protected_counts

            def counted_before(session_ids: Sequence[str]) -> dict[str, int]:
                """The count as the preview made it before: the project's every chunk read."""
                project = store.find_projects(source)[0]
                chosen = set(session_ids)
                theirs = [
                    (c.id, c.user)
                    for c in store.chunks_in(ChunkScope(project_ids=(project.id,)))
                    if c.session_id in chosen and c.user is not None
                ]
                refused = store.protected_chunks([i for i, _ in theirs])
                return dict(Counter(user for i, user in theirs if i in refused and user is not None))

            ways = {"before": counted_before, "store count": counted_now}
            times: dict[str, list[float]] = {name: [] for name in ways}
            previews = {}
            for _ in range(args.rounds):
                for name, count in ways.items():
                    store.protected_counts = count  # type: ignore[method-assign]
                    start = time.perf_counter()
                    previews[name] = merge_preview(store, source, into, None)
                    times[name].append((time.perf_counter() - start) * 1000)
            assert previews["before"] == previews["store count"], "the two previews differ"
            shown = previews["before"]
            print(
                f"merge preview of {source!r} ({len(shown.session_ids):,} sessions, {shown.chunks:,} chunks) "
                f"into {into!r}; {args.rounds} previews each, in turn"
            )
            for name, spent in times.items():
                print(f"  {name:<12} p50 {statistics.median(spent):8.1f} ms   max {max(spent):8.1f} ms")
            ratio = statistics.median(times["store count"]) / statistics.median(times["before"])
            load = f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"
            print(f"store count / before: x{ratio:.3f}   {load}")


if __name__ == "__main__":
    main()
