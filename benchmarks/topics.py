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
with HDBSCAN's noise left in no topic (*no join*: ``clustering.joinNeighbours`` 0), with words met only
in paths scoring as prose words do (*paths as prose*: labels as they were before
:data:`causantic.cluster.labels.PATH_ONLY_SHARE`), and with shell commands' programs and options and
Claude Code's tools' status lines read as prose (*commands as prose*: labels as they were before), in
the same run. Per memory and setting:

- *topics*, *largest*: how many topics, and the share of all embedded chunks in the largest one;
- *in none*: the share of chunks in no topic;
- *cohesion*: the mean cosine between two members of one topic (over all topics' pairs of members);
- *distinct labels*: the share of label words that appear in one topic's label only (words every
  topic shares tell none apart);
- *path words*: the share of label words that none of the topic's texts uses outside a path's folders,
  a branch name (``alex`` of ``.worktrees/alex/ent-108-add-ai-summaries/``) or a command's program or
  option (``cd``);
- *shell/tool words*: the share of label words in :data:`SHELL_AND_TOOL_WORDS` (shell programs, the
  words of Claude Code's tools' status lines);
- *common words*: the share of label words that :data:`COMMON` of memory's chunks or more use;
- *said words*: the share of label words that the user or the agent wrote in the topic's chunks (not
  only met in tool calls and results): a label of what the conversation was about;
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
import re
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
# Words that name how an agent worked, not what about: common shell programs, and the words of Claude
# Code's own tools' status lines ("The file … has been updated. Here's the result of running `cat -n`
# on a snippet of the edited file"). A fixed list, so that the figure does not follow the labeller.
SHELL_AND_TOOL_WORDS = frozenset(
    """
    cd ls cat grep rg sed awk head tail echo printf mkdir rm cp mv ln find wc sort uniq xargs tee touch
    chmod pwd tree diff tar curl wget jq git gh npm npx pnpm yarn bun pip pip3 uv uvx python python3 node
    go cargo make mise docker sudo env bash sh zsh la
    updated edited snippet running todos modified track progress created found matches applied
    """.split()
)
# The prose of a chunk: what the user and the agent wrote, up to the next tool call or result.
SAID = re.compile(r"^\[(?:User|Assistant)\]\n?((?:(?!\[(?:Tool|Result|Error|Assistant|User)[:\]])[^\n]*\n?)*)", re.M)
COMMON = 0.1  # a label word that this share of memory's chunks use or more names no topic apart


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


def measure(
    home: Path, settings: dict[str, Any], *, paths_as_prose: bool = False, commands_as_prose: bool = False
) -> dict[str, Any]:
    """The figures of one memory clustered under ``settings`` (nothing is written)."""
    from causantic.cluster import labels as label_terms
    from causantic.cluster import steady_label
    from causantic.cluster.labels import tokenize
    from causantic.ingest.topics import topic_names

    kept = (label_terms.PATH_ONLY_SHARE, label_terms._COMMAND_LINE, label_terms._STATUS_LINE)
    if paths_as_prose:
        label_terms.PATH_ONLY_SHARE = 1.0
    if commands_as_prose:  # labels before commands' programs and tools' status lines were told apart
        label_terms._COMMAND_LINE = label_terms._STATUS_LINE = re.compile(r"(?!)")
    label_terms._terms_of.cache_clear()
    try:
        found, ids, chunks, matrix = _found_topics(home, settings)
    finally:
        label_terms.PATH_ONLY_SHARE, label_terms._COMMAND_LINE, label_terms._STATUS_LINE = kept
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

    used_by = Counter(word for chunk in chunks.values() for word in set(tokenize(chunk.content)))
    common = {word for word, n in used_by.items() if n >= COMMON * total}
    said_words = 0
    for topic, label in labels.items():
        said = {
            term.lower()
            for cid, _ in found.members[topic]
            for prose in SAID.findall(chunks[cid].content)
            for term in tokenize(prose)
        }
        said_words += sum(word.lower() in said for word in label)
    path_words = 0
    for topic, label in labels.items():
        prose = {term for cid, _ in found.members[topic] for term in label_terms._marked_terms(chunks[cid].content)}
        path_words += sum(bool(word) and word not in prose for word in label)

    def share(test: Any) -> float:
        return sum(map(test, label_words)) / len(label_words) if label_words else 0.0

    largest = sorted(sizes, key=lambda topic: -sizes[topic])[:SHOWN]
    return {
        "chunks": total,
        "projects": len({c.project for c in chunks.values()}),
        "topics": len(sizes),
        "largest_share": max(sizes.values()) / total if sizes else 0.0,
        "in_none_share": (total - clustered) / total if total else 0.0,
        "path_words": path_words / len(label_words) if label_words else 0.0,
        "shell_tool_words": share(lambda word: word.lower() in SHELL_AND_TOOL_WORDS),
        "common_words": share(lambda word: word in common),
        "said_words": said_words / len(label_words) if label_words else 0.0,
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
            "commands as prose": measure(home, after, commands_as_prose=True),
            "after": measure(home, after),
        }
        first = results[name]["before"]
        print(f"\n{name}: {first['chunks']:,} chunks of {first['projects']} projects")
        print(" " * 20 + "topics  largest  in none  cohesion  project  session")
        for setting, r in results[name].items():
            print(
                f"  {setting:17} {r['topics']:>6} {r['largest_share']:>8.1%} {r['in_none_share']:>8.1%} "
                f"{r['cohesion']:>9.3f} {r['project_purity']:>8.1%} {r['session_purity']:>8.1%}"
            )
        print(" " * 20 + "distinct  path words  shell/tool words  common words  said words  same label")
        for setting, r in results[name].items():
            print(
                f"  {setting:17} {r['distinct_labels']:>9.1%} {r['path_words']:>11.1%} "
                f"{r['shell_tool_words']:>17.1%} {r['common_words']:>13.1%} {r['said_words']:>11.1%} "
                f"{str(r['same_label_undivided']) + ' -> ' + str(r['same_label']):>11}"
            )
        for setting, r in results[name].items():
            print(f"  {setting}, largest topics:")
            for topic in r["largest_topics"]:
                print(f"    {topic['chunks']:>5}  {topic['label']}  ({counted(topic['projects'], 'project')})")
    print(f"\nbefore: {BEFORE}; minSamples 2 only: {SAMPLES_ONLY}; no join: after with {NO_JOIN}")
    print(f"after: the configured settings{' with ' + str(after) if after else ''}")
    print("paths as prose: after, with words met only in paths' folders or branch names scoring as prose words")
    print("commands as prose: after, with shell commands' programs and options and tools' status lines as prose")
    print("cohesion: the mean cosine between two members of one topic")
    print(f"shell/tool words: label words in SHELL_AND_TOOL_WORDS; common words: used by {COMMON:.0%}+ of chunks")
    print("said words: label words the user or the agent wrote in the topic's chunks")
    print("same label: topics whose label another topic bears, without -> with labels.distinct_labels")
    if args.json:
        args.json.write_text(json.dumps({"before_settings": BEFORE, "after_settings": after, "memories": results}))


if __name__ == "__main__":
    main()
