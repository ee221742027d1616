"""Topics a user can use: how the clustering settings split a real memory into topics.

Usage::

    python benchmarks/topics.py [--work DIR] [--large HOME ...] [--json OUT] [--set key=value ...]

Memories: each of :data:`SMALL_MEMORIES` (five real Claude Code projects of
``../shared/corpus/claude-code``, linked from ``--work DIR``, never copied, and ingested there with the
product's ``causantic batch-ingest`` and embedding model; kept for reruns) and each ``--large HOME``,
an existing memory read without writing (``/work/bench-stores/coding-dist``: the whole Claude Code
corpus).

Each memory's vectors are clustered and labelled by :func:`causantic.ingest.topics.form_topics` (what
``causantic cluster`` runs, without storing) under :data:`BEFORE` (the settings before
``clustering.minSamples`` and ``clustering.maxTopicShare``: scikit-learn's ``min_samples`` default,
no size limit, no noise joined), under the configured settings (with ``--set`` overrides), under those
with HDBSCAN's noise left in no topic (*no join*: ``clustering.joinNeighbours`` 0), and under those with words
met only in paths scoring as prose words do (*paths as prose*: labels as they were before
:data:`causantic.cluster.labels.PATH_ONLY_SHARE`), in the same run. Per memory and setting:

- *topics*, *largest*: how many topics, and the share of all embedded chunks in the largest one;
- *in none*: the share of chunks in no topic;
- *cohesion*: the mean cosine between two members of one topic (over all topics' pairs of members);
- *distinct labels*: the share of label words that appear in one topic's label only (words every
  topic shares tell none apart);
- *path words*: the share of label words that none of the topic's texts uses outside a path's folders
  or a branch name (``alex`` of ``.worktrees/alex/ent-108-add-ai-summaries/``);
- *same label*: topics whose label another topic bears too, with fresh labels alone
  (:func:`causantic.cluster.steady_label`) -> as stored (:func:`causantic.cluster.distinct_labels`);
- *project purity*, *session purity*: the share of topic members in their topic's commonest project
  (session), a weak proxy for topics that mean one thing (a topic may rightly span projects);
- the largest topics with their labels, as ``causantic clusters`` would name them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO / "src") not in sys.path:
    sys.path.insert(0, str(REPO / "src"))

CORPUS = REPO.parent / "shared" / "corpus" / "claude-code"
SMALL_MEMORIES = {
    "five-a": (
        "chiphuyen__sniffly",
        "d-kimuson__claude-code-viewer",
        "obra__episodic-memory",
        "ConfabulousDev__confab-web",
        "thedotmack__claude-mem",
    ),
    "five-b": (
        "ai4curation__ai-blame",
        "kfischer-okarin__scripts-and-tools",
        "randlee__claude-history",
        "computermode__test-repo",
        "blackgirlbytes__entire-token-costs-benchmark-tests",
    ),
}
BEFORE = {"clustering.minSamples": 4, "clustering.maxTopicShare": 1.0, "clustering.joinNeighbours": 0}
# no size limit: one topic swallows
SAMPLES_ONLY = {"clustering.minSamples": 2, "clustering.maxTopicShare": 1.0, "clustering.joinNeighbours": 0}
NO_JOIN = {"clustering.joinNeighbours": 0}  # HDBSCAN's noise left in no topic
SHOWN = 5  # largest topics printed per memory and setting


def build_small(work: Path, name: str, projects: tuple[str, ...]) -> Path:
    """A memory of ``projects`` under ``work/name`` (ingested once; reused when it is there)."""
    home = work / name / "home"
    if (home / "memory.db").exists():
        return home
    source = work / name / "projects"
    source.mkdir(parents=True, exist_ok=True)
    for project in projects:
        link = source / project
        if not link.exists():
            link.symlink_to(CORPUS / project, target_is_directory=True)
    env = {**os.environ, "CAUSANTIC_HOME": str(home), "PYTHONPATH": str(REPO / "src")}
    subprocess.run(
        [sys.executable, "-m", "causantic", "batch-ingest", str(source), "--json"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return home


def measure(home: Path, settings: dict[str, Any], *, paths_as_prose: bool = False) -> dict[str, Any]:
    """The figures of one memory clustered under ``settings`` (nothing is written)."""
    from causantic.cluster import labels as label_terms
    from causantic.cluster import steady_label
    from causantic.ingest.topics import topic_names

    path_only_share = label_terms.PATH_ONLY_SHARE
    if paths_as_prose:
        label_terms.PATH_ONLY_SHARE = 1.0
    try:
        found, ids, chunks, matrix = _found_topics(home, settings)
    finally:
        label_terms.PATH_ONLY_SHARE = path_only_share
    total = len(ids)
    names = topic_names(found, {})
    labels = {topic: name.split(", ") for topic, name in names.items()}
    undivided = Counter(steady_label("", scored) for scored in found.scored.values())
    words = Counter(word for label in labels.values() for word in set(label))
    label_words = [word for label in labels.values() for word in label]
    sizes = {topic: len(group) for topic, group in found.members.items()}
    clustered = sum(sizes.values())

    def purity(key: str) -> float:
        held = 0
        for group in found.members.values():
            held += Counter(getattr(chunks[cid], key) for cid, _ in group).most_common(1)[0][1]
        return held / clustered if clustered else 0.0

    def cohesion() -> float:
        """The mean cosine between two members of one topic, over all topics' pairs of members."""
        import numpy as np

        from causantic.cluster import normalise

        total, pairs = 0.0, 0
        for group in found.members.values():
            unit = normalise(np.stack([matrix[cid] for cid, _ in group]))
            summed = unit.sum(axis=0)
            total += float(summed @ summed) - len(group)  # sum over ordered pairs of distinct members
            pairs += len(group) * (len(group) - 1)
        return total / pairs if pairs else 0.0

    path_words = 0
    for topic, label in labels.items():
        prose = {term for cid, _ in found.members[topic] for term in label_terms._marked_terms(chunks[cid].content)}
        path_words += sum(bool(word) and word not in prose for word in label)

    largest = sorted(sizes, key=lambda topic: -sizes[topic])[:SHOWN]
    return {
        "chunks": total,
        "projects": len({c.project for c in chunks.values()}),
        "topics": len(sizes),
        "largest_share": max(sizes.values()) / total if sizes else 0.0,
        "in_none_share": (total - clustered) / total if total else 0.0,
        "path_words": path_words / len(label_words) if label_words else 0.0,
        "same_label_undivided": sum(n for n in undivided.values() if n > 1),
        "same_label": sum(n for n in Counter(names.values()).values() if n > 1),
        "distinct_labels": sum(words[w] == 1 for w in label_words) / len(label_words) if label_words else 0.0,
        "cohesion": cohesion(),
        "project_purity": purity("project"),
        "session_purity": purity("session_id"),
        "largest_topics": [
            {
                "chunks": sizes[t],
                "label": ", ".join(labels[t]),
                "projects": len({chunks[c].project for c, _ in found.members[t]}),
                "shared_words": sorted(w for w in labels[t] if words[w] > 1),
            }
            for t in largest
        ],
    }


def _found_topics(home: Path, settings: dict[str, Any]) -> tuple[Any, list[str], dict[str, Any], Any]:
    """The topics ``causantic cluster`` would form in ``home`` under ``settings``, the embedded chunks'
    ids, the chunks and their vectors (by id)."""
    from causantic import Memory
    from causantic.ingest.topics import form_topics

    with Memory(home, overrides=settings) as memory:
        services = memory._services  # the benchmark reads the store's parts, as causantic cluster does
        ids, matrix = services.vectors.all_vectors()
        found = form_topics(services.store, ids, matrix, memory.config.clustering)
        chunks = services.store.get_chunks(ids)
    return found, list(ids), chunks, dict(zip(ids, matrix, strict=True))


def main() -> None:
    from causantic.wording import counted

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="where the small memories are built and kept")
    parser.add_argument("--large", type=Path, action="append", default=[], help="an existing memory (read only)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a config override")
    args = parser.parse_args()
    after: dict[str, Any] = {}
    for item in args.set:
        key, _, value = item.partition("=")
        after[key] = json.loads(value)
    work = args.work or Path(tempfile.mkdtemp(prefix="topics-bench-"))
    homes = {name: build_small(work, name, projects) for name, projects in SMALL_MEMORIES.items()}
    homes.update({home.name: home for home in args.large})

    results: dict[str, dict[str, Any]] = {}
    for name, home in homes.items():
        results[name] = {
            "before": measure(home, BEFORE),
            "minSamples 2 only": measure(home, SAMPLES_ONLY),
            "no join": measure(home, {**after, **NO_JOIN}),
            "paths as prose": measure(home, after, paths_as_prose=True),
            "after": measure(home, after),
        }
        first = results[name]["before"]
        print(f"\n{name}: {first['chunks']:,} chunks of {first['projects']} projects")
        print(" " * 20 + "topics  largest  in none  cohesion  distinct  path words  project  session same label")
        for setting, r in results[name].items():
            print(
                f"  {setting:17} {r['topics']:>6} {r['largest_share']:>8.1%} {r['in_none_share']:>8.1%} "
                f"{r['cohesion']:>9.3f} {r['distinct_labels']:>9.1%} {r['path_words']:>11.1%} "
                f"{r['project_purity']:>8.1%} {r['session_purity']:>8.1%} "
                f"{str(r['same_label_undivided']) + ' -> ' + str(r['same_label']):>10}"
            )
        for setting, r in results[name].items():
            print(f"  {setting}, largest topics:")
            for topic in r["largest_topics"]:
                print(f"    {topic['chunks']:>5}  {topic['label']}  ({counted(topic['projects'], 'project')})")
    print(f"\nbefore: {BEFORE}; minSamples 2 only: {SAMPLES_ONLY}; no join: after with {NO_JOIN}")
    print(f"after: the configured settings{' with ' + str(after) if after else ''}")
    print("paths as prose: after, with words met only in paths' folders or branch names scoring as prose words")
    print("cohesion: the mean cosine between two members of one topic")
    print("same label: topics whose label another topic bears, without -> with labels.distinct_labels")
    if args.json:
        args.json.write_text(json.dumps({"before_settings": BEFORE, "after_settings": after, "memories": results}))


if __name__ == "__main__":
    main()
