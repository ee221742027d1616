"""Keyword feedback (retrieval.termFeedbackWeight): a second BM25 query in the best hits' words
finds a chunk that shares no word with the request."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from postgres_server import BACKENDS, backend_settings
from transcript_files import write_session

from causantic import Memory
from causantic.retrieval.term_feedback import feedback_terms, merged_keyword_hits

QUERY = "ship the new release to production"


def _sessions(folder: Path) -> Path:
    sessions = {
        # found by the request's own words, in the work's vocabulary
        "release": [
            (
                "ship the new release to production",
                "Released: helm upgrade rolled the kubernetes manifests out as a canary first.",
            )
        ],
        # the same work's follow-up, in that vocabulary only: no word of the request
        "canary": [
            ("the canary looks stuck", "Fixed the helm chart: the kubernetes manifests now pin the canary image.")
        ],
        # other work, so that the vocabulary above is rare in memory
        "photos": [("photo uploads fail on slow links", "Added a retry budget for uploads.")],
        "docs": [("the README is out of date", "Rewrote the install section of the README.")],
        "tests": [("the flaky login test again", "Stubbed the clock in the login test.")],
    }
    for name, turns in sessions.items():
        write_session(folder, "/work/shop", name, turns)
    return folder


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_chunk_sharing_no_query_word_but_the_best_hits_vocabulary_is_found(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    folder = _sessions(tmp_path / "sessions")
    storage = backend_settings(request, backend)

    def keyword_sessions(weight: str) -> list[str]:
        # Keyword-only: in a store this small the vector list holds every chunk anyway. Floor 0:
        # the toy store's chunks are ranked, not hidden.
        config = storage.with_overrides({"relevance.floor": "0", "retrieval.termFeedbackWeight": weight})
        with Memory(tmp_path / "home", config=config) as memory:
            memory.ingest([folder])
            return list(dict.fromkeys(h.chunk.session_id for h in memory.search(QUERY, mode="keyword").hits))

    assert "canary" not in keyword_sessions("0")  # BM25 of the request alone cannot reach it
    found = keyword_sessions("0.35")
    assert found[0] == "release"  # the request's own match still leads
    assert "canary" in found


class _Counts:
    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts
        self.asked: list[str] = []

    def keyword_document_counts(
        self, terms: Sequence[str], *, project_ids: Sequence[int] | None = None, agent: str | None = None, most: int
    ) -> list[int]:
        self.asked.extend(terms)
        return [self.counts.get(t, 5) for t in terms]


def test_feedback_words_leave_out_the_query_paths_listings_and_words_only_one_chunk_holds() -> None:
    text = (
        "[User] deploy the helm chart\n[Assistant] Upgraded /Users/soph/devenv/helm and the kubernetes canary.\n"
        "[Tool:Bash] git log\n[Result:Bash] 3f2a1 bump changelog entries"
    )
    counts = _Counts({"canary": 3, "kubernetes": 2, "upgraded": 1})
    words = feedback_terms(
        [(text, 1.0)],
        frozenset({"deploy", "helm"}),
        counts,
        scope_chunks=100,
        project_ids=None,
        agent=None,
        most_counted=1000,
        terms=10,
    )
    assert set(words) >= {"canary", "kubernetes", "chart"}
    assert "helm" not in words and "deploy" not in words  # the query's own words
    assert "soph" not in words and "devenv" not in words  # a path's parts
    assert "changelog" not in counts.asked  # what a listing tool printed
    assert "upgraded" not in words  # no other chunk holds it: it can find nothing new
    assert words.index("canary") < words.index("chart")  # rarer in memory, first


def test_feedback_hits_join_the_keyword_list_below_the_original_query() -> None:
    merged = merged_keyword_hits([("a", 10.0), ("b", 5.0)], [("c", 8.0), ("b", 4.0)], 0.5)
    assert merged == [("a", 1.0), ("b", 0.75), ("c", 0.5)]
    assert merged_keyword_hits([("a", 2.0)], [], 0.5) == [("a", 1.0)]
