"""Cluster-guided expansion (seed 002): related context neither search found alone.

After fusion, the topics of the top hits are opened and their members nearest each topic's
centroid join the candidates, scored as the hit's score times their closeness to the centroid
(1 − angular distance). MMR then decides whether a sibling adds enough to earn a place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from causantic.retrieval.search import Candidate, SearchScope
from causantic.store.protocol import MemoryStoreProtocol

if TYPE_CHECKING:
    import numpy as np

    from causantic.config import ClusterExpansionConfig

_HITS_EXAMINED = 10


class ClusterExpander:
    def __init__(self, store: MemoryStoreProtocol, config: ClusterExpansionConfig) -> None:
        self.store = store
        self.config = config

    def expand(self, fused: list[Candidate], scope: SearchScope, query_vector: np.ndarray | None) -> list[Candidate]:
        if not fused or self.config.max_clusters == 0 or self.config.max_siblings == 0:
            return fused
        top = fused[:_HITS_EXAMINED]
        memberships = self.store.clusters_of([c.chunk_id for c in top])
        present = {c.chunk_id for c in fused}
        opened: set[int] = set()
        siblings: list[Candidate] = []
        for hit in top:
            for cluster_id, _ in memberships.get(hit.chunk_id, []):
                if cluster_id in opened or len(opened) >= self.config.max_clusters:
                    continue
                opened.add(cluster_id)
                added = 0
                for chunk_id, distance in self.store.cluster_siblings(
                    cluster_id,
                    limit=self.config.max_siblings + len(present),
                    project_ids=scope.project_ids,
                    agent=scope.agent,
                ):
                    if chunk_id in present:
                        continue
                    present.add(chunk_id)
                    siblings.append(Candidate(chunk_id, hit.score * max(0.0, 1.0 - distance), ("cluster",)))
                    added += 1
                    if added >= self.config.max_siblings:
                        break
        if not siblings:
            return fused
        return sorted([*fused, *siblings], key=lambda c: -c.score)
