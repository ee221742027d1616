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

New chunks between full reclusters (:func:`held_out`): some of memory's chunks are held out, the rest
clustered as ``causantic cluster`` would, and the held-out ones assigned to those topics as an ingest
between two full runs does (:func:`causantic.cluster.assign_new`) under each rule of :data:`RULES`;
a full recluster of all chunks is what they are compared with. Held out, each time fewer chunks than
``clustering.reclusterAfterNewChunks`` (with more an ingest reclusters): the *newest sessions*, *random
sessions* (drawn with a fixed seed) and, in the small memories, *new projects* (each project in turn,
summed). Per rule:

- *in none*: the share of held-out chunks that joined no topic (they wait for the next full run);
- *agree*: the share placed as the full recluster places them: joined the topic whose members the
  recluster puts them with (the recluster topic holding most of its members), or left in none when the
  recluster puts them with no old topic's members (in none, or in a topic of new chunks);
- *right joins*: the share of joined chunks that joined that topic;
- *other project*: the share of held-out chunks that joined a topic holding no chunk of their project
(the corpus's worktrees of one repository are different projects: ``spotter-a0y``, ``spotter-0rt``).
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
# How a held-out chunk may join a topic (besides seed 001's 0.09, which every rule keeps): per rule, the
# quantile of a topic's members' distances to its centre a chunk must be within (None: the configured
# clustering.joinQuantile; 0: none, seed 001 alone; above 1: no bar) and whether the topic is the one its
# nearest chunks vote for (clustering.joinNeighbours' vote; held-out chunks are among the neighbours, as
# they are in the index, and do not vote) or else its nearest centroid.
RULES: dict[str, tuple[float | None, bool]] = {
    "seed (0.09 alone)": (0.0, False),
    "vote alone": (1.01, True),
    "vote, quantile 0.6": (0.6, True),
    "nearest, quantile 0.5": (0.5, False),
    "configured": (None, False),
    "nearest, quantile 0.75": (0.75, False),
    "nearest, quantile 1": (1.0, False),
}


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


def held_out(
    home: Path, settings: dict[str, Any], *, projects: bool
) -> tuple[float, dict[str, dict[str, dict[str, float]]]]:
    """Per way of holding chunks out and per rule of :data:`RULES`: where held-out chunks go between two
    full reclusters against where a full recluster puts them (nothing is written); with the configured
    ``clustering.joinQuantile``."""
    import random

    import numpy as np

    from causantic import Memory
    from causantic.cluster import NOISE, assign_new, join_bars, normalise
    from causantic.cluster.density import majority_votes, nearest_neighbours
    from causantic.ingest.topics import form_topics

    with Memory(home, overrides=settings) as memory:
        services, config = memory._services, memory.config.clustering
        ids, matrix = services.vectors.all_vectors()
        ids = list(ids)
        chunks = services.store.get_chunks(ids)
        full = form_topics(services.store, ids, matrix, config)
        pos = {cid: n for n, cid in enumerate(ids)}
        full_of = {cid: topic for topic, group in full.members.items() for cid, _ in group}
        started: dict[str, str] = {}
        for cid in ids:
            session = chunks[cid].session_id
            started[session] = min(started.get(session, chunks[cid].start_time), chunks[cid].start_time)
        sessions = sorted(started, key=lambda s: (started[s], s))
        size = Counter(chunks[cid].session_id for cid in ids)
        # An ingest assigns new chunks only while fewer than reclusterAfterNewChunks arrived since the
        # last full run (more, and it reclusters): held out are sessions up to that many chunks.
        limit = (config.recluster_after_new_chunks or len(ids)) - 1

        def sessions_up_to_limit(order: list[str]) -> set[str]:
            chosen: set[str] = set()
            total = 0
            for session in order:
                if total + size[session] <= limit:
                    chosen.add(session)
                    total += size[session]
            return chosen

        newest = sessions_up_to_limit(sessions[::-1])
        drawn = sessions_up_to_limit(random.Random(1).sample(sessions, len(sessions)))
        ways: dict[str, list[set[str]]] = {
            "newest sessions": [{c for c in ids if chunks[c].session_id in newest}],
            "random sessions": [{c for c in ids if chunks[c].session_id in drawn}],
        }
        if projects:
            by_project: dict[str, set[str]] = {}
            for cid in ids:
                by_project.setdefault(chunks[cid].project, set()).add(cid)
            ways["new projects"] = [held for held in by_project.values() if len(held) <= limit]
        out: dict[str, dict[str, dict[str, float]]] = {}
        for way, helds in ways.items():
            tally: dict[str, Counter[str]] = {rule: Counter() for rule in RULES}
            held_total = with_old = 0
            for held in helds:
                keep = [n for n, cid in enumerate(ids) if cid not in held]
                new = [n for n, cid in enumerate(ids) if cid in held]
                base = form_topics(services.store, [ids[n] for n in keep], matrix[keep], config)
                successor = {  # the recluster topic holding most of an old topic's members
                    topic: Counter(full_of[c] for c, _ in group if c in full_of).most_common(1)[0][0]
                    for topic, group in base.members.items()
                    if any(c in full_of for c, _ in group)
                }
                followed = set(successor.values())
                expected = [full_of.get(ids[n], -1) in followed for n in new]
                held_total += len(new)
                with_old += sum(expected)
                topics = sorted(base.centres)
                rows = np.full(len(ids), NOISE, dtype=np.int64)  # kept rows by topic, then held-out rows
                order = keep + new
                where = {n: i for i, n in enumerate(order)}
                for n, topic in enumerate(topics):
                    rows[[where[pos[c]] for c, _ in base.members[topic]]] = n
                neighbours, _ = nearest_neighbours(normalise(matrix[order]), config.join_neighbours or 5)
                voted = [topics[v] if v != NOISE else NOISE for v in majority_votes(rows, neighbours[len(keep) :])]
                spread = {t: [d for _, d in group] for t, group in base.members.items()}
                held_projects = {t: {chunks[c].project for c, _ in group} for t, group in base.members.items()}
                for rule, (quantile, vote) in RULES.items():
                    quantile = config.join_quantile if quantile is None else quantile
                    bars = (
                        dict.fromkeys(spread, 1.0) if quantile > 1 else join_bars(spread, quantile) if quantile else {}
                    )
                    if vote:  # the voted topic, when the chunk lies within its bar
                        placed = [
                            int(assign_new(matrix[n][None, :], {v: base.centres[v]}, config.threshold, bars)[0])
                            if v != NOISE
                            else NOISE
                            for n, v in zip(new, voted, strict=True)
                        ]
                    else:
                        placed = assign_new(matrix[new], base.centres, config.threshold, bars).tolist()
                    counts = tally[rule]
                    for n, topic, should in zip(new, placed, expected, strict=True):
                        right = topic >= 0 and successor.get(topic) == full_of.get(ids[n], -1)
                        counts["joined"] += topic >= 0
                        counts["right"] += right
                        counts["agree"] += right or (topic < 0 and not should)
                        counts["other project"] += topic >= 0 and chunks[ids[n]].project not in held_projects[topic]
            out[way] = {
                "held out": {"chunks": held_total, "recluster with old topics": with_old / max(held_total, 1)},
                **{
                    rule: {
                        "in none": 1 - c["joined"] / max(held_total, 1),
                        "agree": c["agree"] / max(held_total, 1),
                        "right joins": c["right"] / max(c["joined"], 1),
                        "other project": c["other project"] / max(held_total, 1),
                    }
                    for rule, c in tally.items()
                },
            }
    return config.join_quantile, out


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
    moved: dict[str, dict[str, dict[str, dict[str, float]]]] = {}
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
        quantile, moved[name] = held_out(home, after, projects=name in SMALL_MEMORIES)
        print(f"  new chunks between reclusters (configured: the nearest topic, joinQuantile {quantile}):")
        for way, rules in moved[name].items():
            held = rules["held out"]
            print(
                f"    {way}: {counted(int(held['chunks']), 'chunk')}, a full recluster puts "
                f"{held['recluster with old topics']:.1%} with old topics' members"
            )
            print(" " * 30 + "in none    agree  right joins  other project")
            for rule, r in rules.items():
                if rule != "held out":
                    print(
                        f"      {rule:22} {r['in none']:>8.1%} {r['agree']:>8.1%} {r['right joins']:>12.1%} "
                        f"{r['other project']:>14.1%}"
                    )
    print(f"\nbefore: {BEFORE}; minSamples 2 only: {SAMPLES_ONLY}; no join: after with {NO_JOIN}")
    print(f"after: the configured settings{' with ' + str(after) if after else ''}")
    print("paths as prose: after, with words met only in paths' folders or branch names scoring as prose words")
    print("commands as prose: after, with shell commands' programs and options and tools' status lines as prose")
    print("cohesion: the mean cosine between two members of one topic")
    print(f"shell/tool words: label words in SHELL_AND_TOOL_WORDS; common words: used by {COMMON:.0%}+ of chunks")
    print("said words: label words the user or the agent wrote in the topic's chunks")
    print("same label: topics whose label another topic bears, without -> with labels.distinct_labels")
    if args.json:
        args.json.write_text(
            json.dumps({"before_settings": BEFORE, "after_settings": after, "memories": results, "new_chunks": moved})
        )


if __name__ == "__main__":
    main()
