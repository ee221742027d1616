"""Fusing the vector and keyword lists: convex score fusion (default) and RRF."""

from __future__ import annotations

import pytest

from causantic.retrieval.ranking import (
    blend_fusion,
    convex_fusion,
    keep_list_tops,
    reciprocal_rank_fusion,
    session_evidence,
)
from causantic.retrieval.search import SearchRequest
from causantic.services import Services


def test_score_gaps_count_where_rank_fusion_sees_only_positions() -> None:
    # The keyword list is sure of its first hit and unsure of the rest; the vector list is sure of
    # its first hit too. Ranks alone put the keyword runner-up above the vector's clear winner.
    keyword = [("exact", 18.0), ("k2", 2.0), ("k3", 1.9)]
    vector = [("v1", 0.90), ("v2", 0.30), ("k3", 0.29)]
    weights = {"vector": 0.5, "keyword": 1.0}
    convex = [i for i, *_ in convex_fusion({"vector": vector, "keyword": keyword}, weights)]
    ranks = [
        i
        for i, *_ in reciprocal_rank_fusion(
            {n: [i for i, _ in h] for n, h in (("vector", vector), ("keyword", keyword))}, 5, weights
        )
    ]
    assert convex[:2] == ["exact", "v1"]
    assert ranks.index("k3") < ranks.index("v1")


def test_scores_are_weighted_shares_of_each_lists_best() -> None:
    lists = {"vector": [("a", 0.8), ("b", 0.4)], "keyword": [("a", 10.0)]}
    fused = {i: s for i, s, _ in convex_fusion(lists, {"vector": 1.0, "keyword": 3.0})}
    assert fused["a"] == pytest.approx(1.0)  # best in both lists
    assert fused["b"] == pytest.approx(0.25 * 0.5)  # half the vector list's best, in a list weighing a quarter
    opposite = convex_fusion({"vector": [("a", 0.5), ("away", -0.1)]}, {"vector": 1.0})
    assert [i for i, *_ in opposite] == ["a"]  # pointing away from the query is no evidence
    all_away = convex_fusion(
        {"vector": [("b", -0.05), ("c", -0.6)], "keyword": [("k", 12.0), ("j", 1.0)]}, {"vector": 0.5, "keyword": 1.0}
    )
    assert [i for i, *_ in all_away] == ["k", "j"]
    only_keyword = convex_fusion({"keyword": [("x", 2.0), ("y", 1.0)]}, {"keyword": 1.0, "vector": 0.5})
    assert [(i, round(s, 6)) for i, s, _ in only_keyword] == [("x", 1.0), ("y", 0.5)]


def test_spread_lets_a_narrow_cosine_band_order_the_fusion_as_much_as_bm25_s_wide_one() -> None:
    # Cosines crowd between 0.40 and 0.62: as shares of the best, the vector list's weakest
    # candidate still gets two thirds of its winner's credit. Spread between the list's weakest and
    # best candidate (BM25's too), its winner "v1" passes the keyword hit "k2", and its weakest, "x",
    # stays a candidate with no credit.
    keyword = [("k0", 10.0), ("k1", 6.0), ("k2", 5.2), ("k3", 1.0)]
    vector = [("v1", 0.62), ("k3", 0.45), ("k0", 0.44), ("x", 0.40)]
    lists, weights = {"vector": vector, "keyword": keyword}, {"vector": 0.5, "keyword": 1.0}
    share_of_best = [i for i, *_ in convex_fusion(lists, weights)]
    spread = {i: s for i, s, _ in convex_fusion(lists, weights, spread=("vector", "keyword"))}
    assert share_of_best.index("k2") < share_of_best.index("v1")
    assert spread["v1"] > spread["k2"]
    assert spread["x"] == 0.0
    assert spread["k0"] == pytest.approx(2 / 3 + (0.04 / 0.22) / 3)
    single = convex_fusion({"vector": [("only", 0.5)]}, {"vector": 1.0}, spread=("vector", "keyword"))
    assert single == [("only", 1.0, ("vector",))]  # one candidate: nothing to spread between


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


def test_a_list_s_clear_winner_is_not_buried_when_its_top_hits_are_kept() -> None:
    # The keyword list fills the fused top with its own hits; the vector list's best hit ("v1"),
    # absent from the keyword list, falls to sixth. Keeping each list's top hit lifts it to third.
    keyword = [(f"k{i}", 10.0 - i) for i in range(6)]
    vector = [("v1", 0.9), ("k0", 0.5)]
    lists = {"vector": vector, "keyword": keyword}
    fused = convex_fusion(lists, {"vector": 0.5, "keyword": 1.0})
    assert [i for i, *_ in fused].index("v1") > 3
    kept = keep_list_tops(fused, {n: [i for i, _ in h] for n, h in lists.items()}, 1)
    assert [i for i, *_ in kept][:3] == ["k0", "k1", "v1"]
    assert [i for i, *_ in kept if i != "v1"] == [i for i, *_ in fused if i != "v1"]  # the rest keeps its order
    assert keep_list_tops(fused, {n: [i for i, _ in h] for n, h in lists.items()}, 0) == fused


def test_several_good_chunks_of_one_session_outweigh_one_equal_hit_alone() -> None:
    scores = [0.50, 0.50, 0.40, 0.30]
    sessions = ["lone", "busy", "busy", "busy"]
    supported = session_evidence(scores, sessions, weight=0.25, others=2)
    assert supported[1] > supported[0] == 0.50  # same own score; the busy session's hit leads
    assert supported[1] == pytest.approx(0.50 + 0.25 * (0.40 + 0.30))
    assert supported[3] == pytest.approx(0.30 + 0.25 * (0.50 + 0.40))
    assert session_evidence(scores, sessions, weight=0.0, others=2) == scores


def test_a_blend_lets_agreement_between_the_lists_beat_one_list_s_huge_lead() -> None:
    # "listing" holds every query word (BM25 far ahead) but the vector list misses it; "work" is
    # second in both lists. Convex fusion follows the keyword lead; half RRF puts agreement first.
    keyword = [("listing", 30.0), ("work", 12.0), ("k3", 11.0)]
    vector = [("v1", 0.62), ("work", 0.60), ("v3", 0.58)]
    lists = {"vector": vector, "keyword": keyword}
    weights = {"vector": 0.5, "keyword": 1.0}
    convex = convex_fusion(lists, weights)
    ranked = reciprocal_rank_fusion({n: [i for i, _ in h] for n, h in lists.items()}, 10, weights)
    assert convex[0][0] == "listing"
    blended = blend_fusion(convex, ranked, 0.5)
    assert blended[0][0] == "work"
    assert [i for i, *_ in blend_fusion(convex, ranked, 1.0)] == [i for i, *_ in convex]
    assert 0 < blended[-1][1] <= blended[0][1] <= 1.0
