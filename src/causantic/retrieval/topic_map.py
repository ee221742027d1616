"""A 2-D map of memory: topic members projected onto their first two principal components.

PCA (numpy alone: team memory clustered elsewhere has topics to draw where scikit-learn is not
installed) runs on a fixed-seed sample of clustered chunks, at most :data:`SAMPLE_SIZE`, so the map
costs the same at 10k or 1M chunks. The result is cached in one JSON file keyed by the
clustering it was drawn from (when it ran, and the topics' sizes): a page view reads the cache; a
recluster or new members make the next view recompute it. Coordinates are scaled to 0..1.

Team memory beside the local store: both stores' topics are drawn on one map (both stores' vectors
come from one model), each point and topic naming its ``store``, since each store numbers its own
topics.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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
    store: str | None = None  # beside team memory: "team" or "local"


@dataclass(frozen=True, slots=True)
class MapTopic:
    topic_id: int
    label: str
    size: int
    x: float  # where its sampled members are on average
    y: float
    store: str | None = None


@dataclass(frozen=True, slots=True)
class MapSource:
    """One store's topics to draw: (id, label, size) of each, and the store's name beside another."""

    store: MemoryStoreProtocol
    vectors: VectorIndexProtocol
    topics: Sequence[tuple[int, str, int]]
    name: str | None = None


@dataclass(frozen=True, slots=True)
class TopicMap:
    key: str
    points: list[MapPoint]
    topics: list[MapTopic]


def topic_map(sources: Sequence[MapSource], cache_file: Path) -> TopicMap:
    """The map of every source's topics, from ``cache_file`` when it still describes them."""
    key = json.dumps(
        [
            [m.name, m.vectors.model_id, m.store.meta_value("clustered_at"), [(i, size) for i, _, size in m.topics]]
            for m in sources
        ]
    )
    cached = _read(cache_file, key)
    if cached is not None:
        return cached
    result = _compute(sources, key)
    secure_dir(cache_file.parent)
    atomic_write(cache_file, json.dumps(asdict(result)))
    return result


def _compute(sources: Sequence[MapSource], key: str) -> TopicMap:
    # Chunks and topics are told apart by store first: each store numbers its own. The store is
    # "" alone, so that the sampled (store, chunk, topic) triples sort.
    by_name = {m.name or "": m for m in sources}
    members = {name: m.store.cluster_members(m.vectors.model_id) for name, m in by_name.items()}
    labels = {(name, i): label for name, m in by_name.items() for i, label, _ in m.topics}
    pairs = sorted(
        (name, chunk_id, topic)
        for name, topics in members.items()
        for topic, ids in topics.items()
        if (name, topic) in labels
        for chunk_id in ids
    )
    if len(pairs) > SAMPLE_SIZE:
        pairs = sorted(random.Random(_SEED).sample(pairs, SAMPLE_SIZE))
    found: dict[tuple[str, str], Any] = {}
    sessions: dict[tuple[str, str], str] = {}
    for name, m in by_name.items():
        ids = [chunk_id for store, chunk_id, _ in pairs if store == name]
        found.update(((name, i), v) for i, v in m.vectors.vectors(ids).items())
        sessions.update(((name, c.id), c.session_id) for c in m.store.get_chunks(ids).values())
    readable = found.keys() & sessions.keys()  # a chunk forgotten or without a vector is left out
    pairs = [(name, chunk_id, topic) for name, chunk_id, topic in pairs if (name, chunk_id) in readable]
    if len(pairs) < 3:
        return TopicMap(key, [], [])
    import numpy as np

    from causantic.cluster.geometry import principal_components

    matrix = np.stack([found[(name, chunk_id)] for name, chunk_id, _ in pairs])
    xy = principal_components(matrix, 2)
    low, high = xy.min(axis=0), xy.max(axis=0)
    xy = (xy - low) / np.where(high > low, high - low, 1.0)
    points = [
        MapPoint(chunk_id, sessions[(name, chunk_id)], topic, round(float(x), 4), round(float(y), 4), name or None)
        for (name, chunk_id, topic), (x, y) in zip(pairs, xy, strict=True)
    ]
    topics = []
    for (name, topic), label in labels.items():
        mine = [p for p in points if p.topic_id == topic and (p.store or "") == name]
        if mine:
            topics.append(
                MapTopic(
                    topic,
                    label,
                    len(members[name].get(topic, ())),
                    round(sum(p.x for p in mine) / len(mine), 4),
                    round(sum(p.y for p in mine) / len(mine), 4),
                    name or None,
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
