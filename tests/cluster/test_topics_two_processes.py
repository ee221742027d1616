"""Topics written by two processes at once: an ingest joining new chunks to topics while another
process's full run (``causantic cluster``, another session's ingest) replaces them.

The ingest read the topics, then wrote its chunks' memberships; a full run finishing in between
deleted the topic they joined, and the ingest failed on the foreign key (a database error, after its
chunks were stored). Now the topics are read in the transaction that writes the memberships, so the
other run waits for it (as writers do) and then clusters what is there.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from process_support import EXAMPLES, REAL_PROJECTS, causantic, subprocess_env

from causantic.ingest.topics import assign_new_chunks
from causantic.services import open_services
from causantic.store.records import ClusterRecord

pytestmark = [pytest.mark.slow, pytest.mark.shared]
OTHER_RUN_S = 15.0  # how long the other run is given to finish between the read and the write (well
# under the 30 s busy timeout it waits behind this test's transaction without failing)


class _OtherRunAfterReading:
    """The real store; right after it reads the topics, another process runs ``causantic cluster``."""

    def __init__(self, store: Any) -> None:
        self._store = store
        self.other: subprocess.Popen[str] | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def cluster_rows(self, model: str) -> list[ClusterRecord]:
        rows: list[ClusterRecord] = self._store.cluster_rows(model)
        self.other = subprocess.Popen(
            [sys.executable, "-m", "causantic", "cluster"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=subprocess_env(),
        )
        try:
            self.other.wait(timeout=OTHER_RUN_S)
        except subprocess.TimeoutExpired:
            pass  # it waits for this transaction to end
        return rows


def test_an_ingest_joining_topics_that_another_process_replaces_meanwhile_neither_fails_nor_dangles(
    causantic_home: Path, corpus_dir: Path
) -> None:
    done = causantic("ingest", str(EXAMPLES), str(corpus_dir / REAL_PROJECTS / "-experiments-ideas"), timeout=600)
    assert done.returncode == 0, done.stderr  # embedded: topics need vectors
    clustered = causantic("cluster")
    assert clustered.returncode == 0, clustered.stderr
    with open_services() as services:
        store, model = services.store, services.vectors.model_id
        # A topic an earlier clustering left, around one chunk: the next full run keeps none of it (a new
        # topic inherits an old one only when most of its members came from it).
        chunk = sorted(services.vectors.ids())[0]
        centroid = np.asarray(services.vectors.vectors([chunk])[chunk], dtype=np.float32).tobytes()
        kept = [(r.id, r.label, r.centroid, sorted(m.items())) for r, m in _with_members(store, model)]
        ids = store.replace_clusters(model, [*kept, (None, "old topic", centroid, [(chunk, 0.0)])])
        old_topic = ids[-1]

        racing = _OtherRunAfterReading(store)
        joined = assign_new_chunks(
            racing, services.vectors, [chunk], services.config.clustering
        )  # used to raise StoreError

        assert racing.other is not None
        out, err = racing.other.communicate(timeout=300)
        assert racing.other.returncode == 0, err
        assert joined == 1
        topics = {r.id: r.size for r in store.cluster_rows(model)}
        members = store.cluster_members(model)
        assert old_topic not in topics  # the other run, after this ingest, dropped the old topic
        assert set(members) == set(topics) and all(len(members[t]) == size for t, size in topics.items())


def _with_members(store: Any, model: str) -> list[tuple[ClusterRecord, dict[str, float]]]:
    """Each stored topic with its members (distance 0: only who belongs matters here)."""
    members = store.cluster_members(model)
    return [(row, dict.fromkeys(sorted(members.get(row.id, set())), 0.0)) for row in store.cluster_rows(model)]
