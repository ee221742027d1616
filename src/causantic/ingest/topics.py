"""Keeping topic clusters current: full reclusters and the cheap assignment in between.

- :func:`recluster` runs HDBSCAN over every vector of the active model (a chunk it leaves as noise
  joins the topic most of its nearest chunks are in: ``clustering.joinNeighbours``), keeps each continuing
  topic's id (a new cluster inherits an old one when most of its members came from it), labels
  topics offline by their distinctive terms, and stores memberships with each member's angular
  distance to its centroid.
- :func:`assign_new_chunks` puts chunks embedded since the last full run into the nearest topic
  when they lie as near its centroid as most of its own members do (``clustering.joinQuantile``) or
  within ``clustering.threshold`` of it (seed 001), else leaves them noise for the next full run.
- :func:`maintain_topics` decides which of the two an ingest needs.

Which vectors the topics have seen is kept as the number of the newest vector the last full run or
assignment read (meta ``topics_seen_vectors``), saved in the transaction that stores its memberships:
an ingest killed after its chunks were embedded and before they joined topics leaves them for the
next ingest, which finds them after that number even though it adds no chunk itself.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from causantic.config import ClusteringConfig
from causantic.errors import CausanticError
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol
from causantic.wording import counted

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

_LABEL_SAMPLE = 60  # member texts per topic read for its label (nearest the centroid first)
_META_LAST_COUNT = "clustered_vectors"
_META_SEEN = "topics_seen_vectors"  # the newest vector (VectorIndexProtocol.newest_seq) topics have seen
UNNAMED = "unnamed topic"  # a topic whose texts hold no word worth a label (numbers, ids, markers only)


@dataclass(frozen=True, slots=True)
class ClusterReport:
    clusters: int
    clustered_chunks: int
    noise_chunks: int
    kept_identities: int
    seconds: float


def recluster(
    store: MemoryStoreProtocol,
    index: VectorIndexProtocol,
    config: ClusteringConfig,
    on_progress: Callable[[str], None] | None = None,
) -> ClusterReport:
    import numpy as np

    from causantic.cluster import TOPICS_HINT, carry_over, topics_available

    if not topics_available():
        raise CausanticError(TOPICS_HINT)
    started = time.perf_counter()
    say = on_progress or (lambda _msg: None)
    say("reading vectors")
    seen = index.newest_seq()  # before the read: a vector written meanwhile is left for the next assignment
    ids, matrix = index.all_vectors()
    say(f"clustering {counted(len(ids), 'vector')}")
    found = form_topics(store, ids, matrix, config, on_progress=say)
    members, centres = found.members, found.centres
    # The topics kept are read in the transaction that replaces them: another process's run (a second
    # `causantic cluster`, another session's ingest) may have replaced them since HDBSCAN began, and a
    # kept id it deleted failed this run on the foreign key. On team memory a read does not wait for
    # another member's writer: the topics' lock does (store.lock_topics).
    with store.atomic():
        store.lock_topics(index.model_id, [cid for group in members.values() for cid, _ in group])
        inherited = carry_over(
            store.cluster_members(index.model_id), {label: {c for c, _ in group} for label, group in members.items()}
        )
        previous = {r.id: r.label for r in store.cluster_rows(index.model_id)}
        names = topic_names(found, {label: previous.get(old, "") for label, old in inherited.items()})
        rows = [
            (inherited.get(label), names[label] or UNNAMED, centres[label].astype(np.float32).tobytes(), group)
            for label, group in sorted(members.items())
        ]
        store.replace_clusters(index.model_id, rows)
        store.set_meta(_META_LAST_COUNT, str(len(ids)))
        store.set_meta(_META_SEEN, str(seen))
    clustered = sum(len(g) for g in members.values())
    return ClusterReport(len(rows), clustered, len(ids) - clustered, len(inherited), time.perf_counter() - started)


@dataclass(frozen=True, slots=True)
class FoundTopics:
    """What one HDBSCAN run found, before it is stored: per cluster (``0..k-1``) its members, nearest
    the centroid first, with their angular distances to it, its centroid, and its scored label terms
    (best first)."""

    members: dict[int, list[tuple[str, float]]]
    centres: dict[int, NDArray[np.float32]]
    scored: dict[int, list[tuple[str, float]]]


def form_topics(
    store: MemoryStoreProtocol,
    ids: Sequence[str],
    matrix: NDArray[np.float32],
    config: ClusteringConfig,
    on_progress: Callable[[str], None] | None = None,
) -> FoundTopics:
    """Cluster ``matrix`` (the vectors of chunks ``ids``) as ``config`` says and score each cluster's
    label terms from its member texts in ``store``; writes nothing (``benchmarks/topics.py`` compares
    settings with it)."""
    import numpy as np

    from causantic.cluster import STEADY_TERMS, angular_distances, centroids, cluster_vectors, scored_terms

    say = on_progress or (lambda _msg: None)
    if not len(ids):
        return FoundTopics({}, {}, {})
    labels = cluster_vectors(
        matrix,
        config.min_cluster_size,
        min_samples=config.min_samples,
        max_cluster_size=largest_topic(config, len(ids)),
        join_neighbours=config.join_neighbours,
    )
    centres = centroids(matrix, labels)
    members: dict[int, list[tuple[str, float]]] = {}
    for label, centre in centres.items():
        member_rows = np.flatnonzero(labels == label)
        distances = angular_distances(matrix[member_rows], centre[None, :])[:, 0]
        order = np.argsort(distances)
        members[label] = [(ids[member_rows[i]], float(distances[i])) for i in order]
    say("labelling topics")
    texts = store.chunk_texts([cid for group in members.values() for cid, _ in group[:_LABEL_SAMPLE]])
    scored = scored_terms(
        {label: [texts[c] for c, _ in group[:_LABEL_SAMPLE] if c in texts] for label, group in members.items()},
        terms=STEADY_TERMS,
    )
    return FoundTopics(members, centres, scored)


def topic_names(found: FoundTopics, previous: Mapping[int, str]) -> dict[int, str]:
    """Each found topic's label: a continuing topic keeps its name (``previous``, by found topic) while
    its terms still describe it (:func:`causantic.cluster.steady_label`); no two topics share a label
    (:func:`causantic.cluster.distinct_labels`, the largest topic keeping its own)."""
    from causantic.cluster import distinct_labels, steady_label

    names = {label: steady_label(previous.get(label, ""), found.scored[label]) for label in found.members}
    order = sorted(found.members, key=lambda label: (-len(found.members[label]), label))
    return distinct_labels(names, found.scored, order)


def largest_topic(config: ClusteringConfig, chunks: int) -> int | None:
    """The most chunks one topic of a memory of ``chunks`` may hold (None: no limit), from
    ``clustering.maxTopicShare``; never under twice ``minClusterSize``, so a small memory's topics can
    still split in two."""
    if config.max_topic_share >= 1:
        return None
    return max(2 * config.min_cluster_size, math.ceil(config.max_topic_share * chunks))


def assign_new_chunks(
    store: MemoryStoreProtocol,
    index: VectorIndexProtocol,
    chunk_ids: Sequence[str],
    config: ClusteringConfig,
    seen: int | None = None,
) -> int:
    """Join chunks to their nearest existing topic when they lie within ``config.threshold`` of its
    centroid (seed 001) or no farther from it than ``config.join_quantile`` of the topic's own members
    (a bar fixed for all topics joined none: real topics' spreads differ); return how many joined.

    The topics are read in the transaction that joins chunks to them: a full run in another process
    between the two replaced them, and the chunks then joined a deleted topic (a foreign key failure
    that failed the ingest) or, its id reused, an unrelated one. On team memory, where a read waits
    for no other member's writer, the topics' lock (``store.lock_topics``) is taken before reading.

    ``seen``: the newest vector this assignment has looked at (every vector up to it is in
    ``chunk_ids`` or already in a topic), recorded with the memberships."""
    import numpy as np

    from causantic.cluster import angular_distances, assign_new, join_bars

    if not chunk_ids:
        return 0
    vectors = index.vectors(chunk_ids)
    ids = [c for c in chunk_ids if c in vectors]
    matrix = np.stack([vectors[c] for c in ids]) if ids else None
    with store.atomic():
        store.lock_topics(index.model_id, ids)
        if seen is not None and seen > int(store.meta_value(_META_SEEN) or 0):
            store.set_meta(_META_SEEN, str(seen))
        clusters = store.cluster_rows(index.model_id)
        if not clusters or matrix is None:
            return 0
        centres = {r.id: np.frombuffer(r.centroid, dtype=np.float32) for r in clusters}
        bars = join_bars(store.cluster_distances(index.model_id), config.join_quantile) if config.join_quantile else {}
        labels = assign_new(matrix, centres, config.threshold, bars)
        joined = []
        for chunk_id, label, row in zip(ids, labels, matrix, strict=True):
            if label >= 0:
                distance = float(angular_distances(row[None, :], centres[int(label)][None, :])[0, 0])
                joined.append((chunk_id, int(label), distance))
        store.add_cluster_members(joined)
    return len(joined)


def maintain_topics(
    store: MemoryStoreProtocol, index: VectorIndexProtocol, config: ClusteringConfig, new_chunk_ids: Sequence[str]
) -> str:
    """After an ingest: a full recluster once enough new vectors arrived, else cheap assignment."""
    from causantic.cluster import TOPICS_INSTALL, topics_available

    if not topics_available():  # the CLI's summary leaves this out: `stats`, `clusters` and `cluster` say it
        return f"off (needs scikit-learn: `{TOPICS_INSTALL}`)"
    total = index.count()
    last = int(store.meta_value(_META_LAST_COUNT) or 0)
    threshold = config.recluster_after_new_chunks
    if threshold and total >= config.min_cluster_size * 2 and total - last >= threshold:
        report = recluster(store, index, config)
        total = report.clustered_chunks + report.noise_chunks
        return (
            f"reclustered: {counted(report.clusters, 'topic')} over {report.clustered_chunks:,} of "
            f"{counted(total, 'chunk')}, {report.noise_chunks:,} in no topic"
        )
    if not store.cluster_rows(index.model_id):  # nothing to join: say when topics will form
        when = f"after {counted(threshold, 'new embedded chunk')} ({total - last:,} so far) or " if threshold else ""
        if last:  # not "none yet … or with `causantic cluster`" right after a clustering that found none
            return (
                f"none: the last clustering found no {config.min_cluster_size} alike chunks "
                f"(clustering.minClusterSize); it runs again {when}with `causantic cluster`"
            )
        return f"none yet: they form {when}with `causantic cluster`"
    # Chunks embedded since the topics last looked, in none: an ingest killed before it joined them
    # to topics left them, and the ingest now running may add none of its own. (A store whose topics
    # an older release formed has no such mark: what its topics saw is not known, and only this run's
    # chunks are looked at.)
    now = index.newest_seq()
    seen = store.meta_value(_META_SEEN)
    ours = set(new_chunk_ids)
    left: list[str] = []
    if seen is not None and (left := [c for c in index.written_after(int(seen)) if c not in ours]):
        held = {c for members in store.cluster_members(index.model_id).values() for c in members}
        left = [c for c in left if c not in held]
    if not new_chunk_ids and not left:  # not "0 new chunks joined existing topics", which reads as if some were new
        return "unchanged: no new chunks"
    joined = assign_new_chunks(store, index, [*new_chunk_ids, *left], config, seen=now)
    return f"{joined:,} of {counted(len(new_chunk_ids) + len(left), 'new chunk')} joined existing topics"
