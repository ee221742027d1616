"""Query feedback (retrieval.feedbackWeight): a vague request gets the topic its best hits share."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from causantic import Memory
from causantic.retrieval.feedback import feedback_factors

# Four real sessions of the entireio/cli project (../shared/corpus/claude-code/entireio__cli).
# The commit "enable automatic entire/sessions pushing" came from session cab865ac; 86cc3044 made
# `entire resume` fetch entire/sessions automatically (the same topic, pulled the other way);
# 78368290 and 4e836284 are other work on the same CLI.
SESSIONS = ("58/419674de6b/0", "5a/c45bc32212/0", "05/a188c59540/0", "30/e81e82f6ba/0")
WORKER, OTHER = "cab865ac-8278-406e-b5c2-c73d24d7f9ad", "78368290-ee0b-474f-8052-bb65a9a581d6"
QUERY = "enable automatic entire/sessions pushing"


def _unit(*values: float) -> np.ndarray:
    vector = np.array(values, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_a_candidate_on_the_best_hits_topic_is_lifted_above_one_as_close_to_the_words() -> None:
    query = _unit(1, 0, 0)
    best = [_unit(1, 1, 0), _unit(1, 1.2, 0)]  # the two best candidates share a topic (axis 1)
    on_topic, off_topic = _unit(1, 0.5, 0), _unit(1, 0, 0.5)  # equally close to the query itself
    assert float(on_topic @ query) == pytest.approx(float(off_topic @ query))
    factors = feedback_factors([0.9, 0.8, 0.3, 0.3], [*best, on_topic, off_topic], query, weight=0.4, depth=2)
    assert factors[2] > factors[3]
    assert all(1.0 <= f <= 1.4 for f in factors)


def test_feedback_off_or_without_vectors_leaves_every_score_alone() -> None:
    query = _unit(1, 0, 0)
    vectors = [_unit(1, 1, 0), None, _unit(0, 1, 1)]
    assert feedback_factors([0.9, 0.5, 0.1], vectors, query, weight=0, depth=5) == [1.0, 1.0, 1.0]
    lifted = feedback_factors([0.9, 0.5, 0.1], vectors, query, weight=0.4, depth=5)
    assert lifted[1] == 1.0  # a candidate without a vector is neither lifted nor pushed down
    assert feedback_factors([0.9], [_unit(1, 1, 0)], query, weight=0.4, depth=5) == [1.0]


@pytest.mark.slow
def test_a_vague_request_finds_the_session_that_did_the_work(corpus_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "sessions"
    folder.mkdir()
    for i, name in enumerate(SESSIONS):
        shutil.copy(corpus_dir / "entireio__cli" / name / "full.jsonl", folder / f"{i}.jsonl")
    # The worker's chunk calls Edit, which lifts it too (workEvidence): off, so that feedback is seen alone.
    alone = {"retrieval.workEvidence": "0"}
    with Memory(tmp_path / "home", overrides=alone) as memory:  # otherwise the defaults: feedback on
        memory.ingest([folder])
        with_feedback = list(dict.fromkeys(h.chunk.session_id for h in memory.search(QUERY, limit=20).hits))
    with Memory(tmp_path / "home", overrides={**alone, "retrieval.feedbackWeight": "0"}) as memory:
        without = list(dict.fromkeys(h.chunk.session_id for h in memory.search(QUERY, limit=20).hits))
    assert with_feedback[0] == WORKER, with_feedback
    assert without[0] == OTHER, without  # what feedback corrects: other work on the CLI came first
