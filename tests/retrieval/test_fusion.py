"""Fusing the vector and keyword lists: convex score fusion (default) and RRF."""

from __future__ import annotations

import pytest

from causantic.retrieval.ranking import convex_fusion, reciprocal_rank_fusion
from causantic.retrieval.search import SearchRequest
from causantic.services import Services


def test_score_gaps_count_where_rank_fusion_sees_only_positions() -> None:
    # The keyword list is sure of its first hit and unsure of the rest; the vector list is sure of
    # its first hit too. Ranks alone put the keyword runner-up above the vector's clear winner.
    keyword = [("exact", 18.0), ("k2", 2.0), ("k3", 1.9)]
    vector = [("v1", 0.90), ("v2", 0.30), ("k3", 0.29)]
    weights = {"vector": 0.5, "keyword": 1.0}
    convex = [i for i, *_ in convex_fusion({"vector": vector, "keyword": keyword}, weights)]
    ranks = [i for i, *_ in reciprocal_rank_fusion({n: [i for i, _ in h] for n, h in
                                                    (("vector", vector), ("keyword", keyword))}, 5, weights)]
    assert convex[:2] == ["exact", "v1"]
    assert ranks.index("k3") < ranks.index("v1")


def test_scores_are_weighted_shares_of_each_lists_best() -> None:
    lists = {"vector": [("a", 0.8), ("b", 0.4)], "keyword": [("a", 10.0)]}
    fused = {i: s for i, s, _ in convex_fusion(lists, {"vector": 1.0, "keyword": 3.0})}
    assert fused["a"] == pytest.approx(1.0)  # best in both lists
    assert fused["b"] == pytest.approx(0.25 * 0.5)  # half the vector list's best, in a list weighing a quarter
    opposite = convex_fusion({"vector": [("a", 0.5), ("away", -0.1)]}, {"vector": 1.0})
    assert [i for i, *_ in opposite] == ["a"]  # pointing away from the query is no evidence
    all_away = convex_fusion({"vector": [("b", -0.05), ("c", -0.6)], "keyword": [("k", 12.0), ("j", 1.0)]},
                             {"vector": 0.5, "keyword": 1.0})
    assert [i for i, *_ in all_away] == ["k", "j"]
    only_keyword = convex_fusion({"keyword": [("x", 2.0), ("y", 1.0)]}, {"keyword": 1.0, "vector": 0.5})
    assert [(i, round(s, 6)) for i, s, _ in only_keyword] == [("x", 1.0), ("y", 0.5)]


@pytest.mark.parametrize("fusion", ["convex", "rrf"])
def test_both_fusions_find_the_exact_identifier_and_the_paraphrased_fix(examples: Services, fusion: str) -> None:
    searcher = examples.searcher
    default = searcher.config
    searcher.config = default.model_copy(update={"fusion": fusion})
    try:
        exact = searcher.search(SearchRequest("rate-limiter-flexible"))
        paraphrase = searcher.search(SearchRequest("why were users bounced back to the sign-in page on Safari"))
    finally:
        searcher.config = default
    assert "rate-limiter-flexible" in exact.hits[0].chunk.content
    assert "SameSite" in paraphrase.hits[0].chunk.content or "Safari" in paraphrase.hits[0].chunk.content
