"""Questions whose answer is in another project: what recall says asked from a project, and kept to it.

Usage: PYTHONPATH=src python benchmarks/cross_project.py [PATH] [--words 12]

PATH defaults to the real Claude Code projects of daaain__claude-code-log in the shared corpus. It
is ingested into a fresh ``CAUSANTIC_HOME`` (with vectors); each session's opening prompt (its first
``--words`` words, five at least) is asked of ``Memory.recall`` from every other project's folder,
once as the working directory (``here``) and once as the ``project`` filter, as an agent in that
other project would ask it. Reported:

- asked from the folder: the answers saying "asked from X: its own matches placed above other
  projects' higher-scoring ones", and how many of them tell no episode of X (the note then reads as
  if X's matches were there);
- asked from the folder, the episodes whose best match search (asked the same way) lists too, and
  how many of them print another figure for it than search does;
- kept to the project: the answers with nothing relevant (every episode weakly related, or none),
  how many of them name the project that holds the answer, and the tokens their episodes print
  (``episodes.elsewhereTokens``; ``--set KEY=VALUE`` overrides a configuration key).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PATH = REPO.parent / "shared" / "corpus" / "claude-code" / "daaain__claude-code-log" / "test" / "test_data"
DEFAULT_PATH /= "real_projects"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--words", type=int, default=12, help="words of each opening prompt asked")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a configuration override")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "src"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import statistics

    from causantic import Memory
    from causantic.retrieval.format import is_weak
    from causantic.retrieval.format import relevance_percent as percent

    overrides = dict(item.split("=", 1) for item in args.set)
    with tempfile.TemporaryDirectory(prefix="causantic-cross-") as home, Memory(home, overrides=overrides) as memory:
        memory.ingest([args.path])
        projects = [p for p in memory.projects() if p.path.startswith("/")]
        questions = [
            (p.name, " ".join((s.title or "").split()[: args.words]))
            for p in projects
            for s in memory.sessions(p.path, limit=500).sessions
            if len((s.title or "").split()) >= 5
        ]
        asked = noted = noted_without_own = weak = weak_named = 0
        weak_tokens: list[int] = []
        compared = differ = 0  # episodes whose best match search lists too, and those it prints another figure for
        for owner, question in questions:
            for other in (p for p in projects if p.name != owner):
                asked += 1
                here = memory.recall(question, here=other.path)
                listed = memory.search(question, here=other.path)
                printed = {h.chunk.id: percent(r) for h, r in zip(listed.hits, listed.shown_relevance, strict=True)}
                for episode in here.episodes:
                    best = max((c for c in episode.chunks if c.is_hit), key=lambda c: c.relevance or 0.0)
                    if best.chunk.id in printed:
                        compared += 1
                        differ += printed[best.chunk.id] != percent(episode.relevance)
                if any(n.startswith(f"asked from {other.name}:") for n in here.notes):
                    noted += 1
                    noted_without_own += not any(e.chunks[0].chunk.project == other.name for e in here.episodes)
                kept = memory.recall(question, project=other.path)
                if all(is_weak(e.relevance) for e in kept.episodes):
                    weak += 1
                    weak_named += any(
                        n.startswith("relevant matches in other projects") and owner in n for n in kept.notes
                    )
                    weak_tokens.append(kept.tokens)
    print(f"{len(projects)} projects, {len(questions)} questions, {asked} asks from another project's folder")
    print(
        f"asked from the folder: 'asked from …' note in {noted} answers, {noted_without_own} telling no episode of it"
    )
    print(
        f"kept to the project: nothing relevant in {weak} answers, {weak_named} naming the project holding the answer"
    )
    print(f"asked from the folder: {compared} episodes' best matches search lists too, {differ} with another figure")
    if weak_tokens:
        print(
            f"  their episodes: {sum(weak_tokens):,} tokens in all, median {statistics.median(weak_tokens):,.0f}, "
            f"most {max(weak_tokens):,}; {sum(1 for t in weak_tokens if t)} answers tell an episode"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
