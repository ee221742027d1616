"""A 2-D map of memory: topic members projected onto their first two principal components.

PCA (scikit-learn) runs on a fixed-seed sample of clustered chunks, at most :data:`SAMPLE_SIZE`, so
the map costs the same at 10k or 1M chunks. The result is cached in one JSON file keyed by the
clustering it was drawn from (when it ran, and the topics' sizes): a page view reads the cache; a
recluster or new members make the next view recompute it. Coordinates are scaled to 0..1.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from causantic.files import atomic_write, secure_dir
from causantic.store.protocol import MemoryStoreProtocol, VectorIndexProtocol

SAMPLE_SIZE = 3000
_SEED = 15


@dataclass(frozen=True, slots=True)
class MapPoint:
    chunk_id: str
    session_id: str
    topic_id: int
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class MapTopic:
    topic_id: int
    label: str
    size: int
    x: float  # where its sampled members are on average
    y: float


@dataclass(frozen=True, slots=True)
class TopicMap:
    key: str
    points: list[MapPoint]
    topics: list[MapTopic]


def topic_map(
    store: MemoryStoreProtocol,
    vectors: VectorIndexProtocol,
    cache_file: Path,
    topics: Sequence[tuple[int, str, int]] | None = None,
) -> TopicMap:
    """The map for the current topics, from ``cache_file`` when it still describes them.

    ``topics``: (id, label, size) of every topic, when the caller has read them already.
    """
    rows = list(topics) if topics is not None else store.topic_sizes(vectors.model_id)
    key = json.dumps([vectors.model_id, store.meta_value("clustered_at"), [(i, size) for i, _, size in rows]])
    cached = _read(cache_file, key)
    if cached is not None:
        return cached
    result = _compute(store, vectors, key, {i: label for i, label, _ in rows})
    secure_dir(cache_file.parent)
    atomic_write(cache_file, json.dumps(asdict(result)))
    return result


def _compute(store: MemoryStoreProtocol, vectors: VectorIndexProtocol, key: str, labels: dict[int, str]) -> TopicMap:
    members = store.cluster_members(vectors.model_id)
    pairs = sorted((chunk_id, topic) for topic, ids in members.items() if topic in labels for chunk_id in ids)
    if len(pairs) > SAMPLE_SIZE:
        pairs = sorted(random.Random(_SEED).sample(pairs, SAMPLE_SIZE))
    found = vectors.vectors([chunk_id for chunk_id, _ in pairs])
    sessions = {c.id: c.session_id for c in store.get_chunks([chunk_id for chunk_id, _ in pairs]).values()}
    pairs = [(chunk_id, topic) for chunk_id, topic in pairs if chunk_id in found and chunk_id in sessions]
    if len(pairs) < 3:
        return TopicMap(key, [], [])
    import numpy as np
    from sklearn.decomposition import PCA

    matrix = np.stack([found[chunk_id] for chunk_id, _ in pairs])
    xy = PCA(n_components=2, random_state=_SEED).fit_transform(matrix)
    low, high = xy.min(axis=0), xy.max(axis=0)
    xy = (xy - low) / np.where(high > low, high - low, 1.0)
    points = [
        MapPoint(chunk_id, sessions[chunk_id], topic, round(float(x), 4), round(float(y), 4))
        for (chunk_id, topic), (x, y) in zip(pairs, xy, strict=True)
    ]
    topics = []
    for topic, label in labels.items():
        mine = [p for p in points if p.topic_id == topic]
        if mine:
            topics.append(
                MapTopic(
                    topic,
                    label,
                    len(members.get(topic, ())),
                    round(sum(p.x for p in mine) / len(mine), 4),
                    round(sum(p.y for p in mine) / len(mine), 4),
                )
            )
    return TopicMap(key, points, sorted(topics, key=lambda t: -t.size))


def _read(cache_file: Path, key: str) -> TopicMap | None:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return TopicMap(key, [MapPoint(**p) for p in data["points"]], [MapTopic(**t) for t in data["topics"]])
    except (OSError, ValueError, TypeError, KeyError):
        return None
