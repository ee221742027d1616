from __future__ import annotations

import numpy as np
import pytest
from blob_support import embedding_like_blobs
from scipy.sparse.csgraph import connected_components
from sklearn.cluster import HDBSCAN
from sklearn.metrics import adjusted_rand_score

from causantic.cluster import angular_distances, cluster_vectors, density


@pytest.fixture(params=["exact", "projected"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a test with exact neighbours, and with candidates from a projection as above 30,000."""
    if request.param == "projected":
        monkeypatch.setattr(density, "PROJECT_ABOVE", 0)
    return request.param


def test_separated_blobs_are_found_as_clusters_and_scattered_vectors_stay_noise(blobs, path) -> None:
    vectors, truth = blobs
    labels = cluster_vectors(vectors, min_cluster_size=4)
    assert labels.dtype == np.int64 and labels.shape == truth.shape
    for group in range(5):
        found = labels[truth == group]
        assert (found == found[0]).all() and found[0] != -1
    assert len({labels[truth == g][0] for g in range(5)}) == 5
    # HDBSCAN may let a few scattered vectors ride along with the cluster nearest to them.
    assert (labels[truth == -1] == -1).mean() >= 0.8
    assert set(np.unique(labels)) <= {-1, *range(labels.max() + 1)}


def test_a_group_smaller_than_min_cluster_size_gets_no_cluster_of_its_own(path) -> None:
    vectors, truth = embedding_like_blobs([30, 20, 6], outliers=40, seed=3)
    small = truth == 2
    found = cluster_vectors(vectors, min_cluster_size=4)
    assert len(set(found[small])) == 1 and (found == found[small][0]).sum() == 6
    found = cluster_vectors(vectors, min_cluster_size=8)
    # Its vectors become noise or ride along with a larger cluster; none is mostly theirs.
    for label in set(found[small]) - {-1}:
        assert small[found == label].mean() < 0.5


def test_labels_agree_with_a_default_scikit_learn_run(path) -> None:
    vectors, _ = embedding_like_blobs([50, 30, 20, 10, 8, 5, 5], outliers=150, spread=0.4, seed=7)
    default = HDBSCAN(min_cluster_size=4, copy=False).fit_predict(vectors)  # copy: silences a FutureWarning
    assert adjusted_rand_score(default, cluster_vectors(vectors, 4)) > 0.95


def test_groups_the_neighbour_lists_leave_apart_are_joined_and_still_clustered() -> None:
    # With 16 neighbours per vector, a group of 20+ near-identical vectors only links to itself.
    vectors, truth = embedding_like_blobs([20, 25, 40], spread=0.01, seed=11)
    neighbours, distances = density.nearest_neighbours(vectors, density.NEIGHBOURS)
    graph = density._symmetric_graph(neighbours, distances)
    assert connected_components(graph, directed=False)[0] == 3

    core = distances[:, 2]
    joined = density._connect_components(graph, vectors, core)
    assert connected_components(joined, directed=False)[0] == 1
    bridges = (joined - graph).tocoo()
    assert bridges.nnz == 4  # two bridges, stored both ways
    # Each is the cheapest mutual-reachability edge out of a component that is not the largest.
    euclid = 2 * np.sin(np.pi * angular_distances(vectors, vectors) / 2)
    reach = np.maximum(euclid, np.maximum.outer(core, core))
    for group in (0, 1):
        inside = truth == group
        touching = [reach[r, c] for r, c in zip(bridges.row, bridges.col, strict=True) if inside[r]]
        assert reach[np.ix_(inside, ~inside)].min() == pytest.approx(min(touching))

    labels = cluster_vectors(vectors, 4)
    for group in range(3):
        assert len(set(labels[truth == group])) == 1 and labels[truth == group][0] != -1
    assert len(set(labels)) == 3


def test_identical_vectors_cluster_without_errors(path) -> None:
    vectors, _ = embedding_like_blobs([20], outliers=30, seed=5)
    repeated = np.concatenate([vectors, np.repeat(vectors[:1], 12, axis=0)])
    labels = cluster_vectors(repeated, 4)
    assert len(set(labels[-12:])) == 1 and labels[-1] != -1


def test_too_few_vectors_are_all_noise() -> None:
    vectors, _ = embedding_like_blobs([3])
    assert cluster_vectors(vectors, 4).tolist() == [-1, -1, -1]
    assert cluster_vectors(np.zeros((0, 384), np.float32), 4).shape == (0,)


def test_non_finite_vectors_are_refused_with_a_way_out() -> None:
    vectors, _ = embedding_like_blobs([10])
    vectors[3, 5] = np.nan
    with pytest.raises(ValueError, match="re-embed"):
        cluster_vectors(vectors, 4)


def test_nearest_neighbours_are_exact_without_projection_and_close_with_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    vectors, _ = embedding_like_blobs([200, 150, 100], outliers=300, spread=0.6, seed=2)
    exact = 2 * np.sin(np.pi * angular_distances(vectors, vectors) / 2)
    np.fill_diagonal(exact, np.inf)
    truth = np.argsort(exact, axis=1)[:, :8]

    def recall(found: np.ndarray) -> float:
        return float(np.mean([len(set(a) & set(b)) / 8 for a, b in zip(found, truth, strict=True)]))

    monkeypatch.setattr(density, "PROJECT_ABOVE", 0)
    projected, distances = density.nearest_neighbours(vectors, 8)
    assert recall(projected) > 0.9
    assert np.allclose(distances, np.take_along_axis(exact, projected, axis=1), atol=1e-6)
    assert (np.diff(distances, axis=1) >= 0).all()

    monkeypatch.setattr(density, "PROJECT_ABOVE", len(vectors))
    full, _ = density.nearest_neighbours(vectors, 8)
    assert recall(full) == 1.0


def test_two_groups_that_pick_the_same_bridge_get_it_once_at_its_true_length() -> None:
    rng = np.random.default_rng(4)
    axes = np.eye(64, dtype=np.float32)
    near_a, near_b, far = axes[0], axes[0] + 0.5 * axes[1], axes[2]
    vectors = np.concatenate(
        [
            centre / np.linalg.norm(centre) + rng.normal(0, 0.002, (size, 64)).astype(np.float32)
            for centre, size in ((near_a, 20), (near_b, 20), (far, 40))
        ]
    )
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    neighbours, distances = density.nearest_neighbours(vectors, density.NEIGHBOURS)
    graph = density._symmetric_graph(neighbours, distances)
    joined = density._connect_components(graph, vectors, distances[:, 2])
    bridges = (joined - graph).tocoo()
    # The two small groups both choose the edge between them; a later round joins the far group.
    assert bridges.nnz == 4
    for row, col, value in zip(bridges.row, bridges.col, bridges.data, strict=True):
        assert value == pytest.approx(float(np.linalg.norm(vectors[row] - vectors[col])), rel=1e-6)


def test_a_noise_vector_joins_the_cluster_most_of_its_neighbours_are_in() -> None:
    # Rows 0-3 are cluster 0, rows 4-7 cluster 1; rows 8-11 are noise with five neighbours each.
    labels = np.array([0, 0, 0, 0, 1, 1, 1, 1, -1, -1, -1, -1])
    neighbours = np.array(
        [[1, 2, 3, 4, 5]] * 8
        + [
            [0, 1, 2, 4, 5],  # three of five in cluster 0: joins it
            [4, 0, 1, 10, 11],  # two and two: joins neither
            [8, 9, 0, 1, 11],  # its neighbours are mostly noise, one of them just joined: stays out
            [9, 10, 4, 5, 6],  # three in cluster 1: joins it
        ]
    )
    distances = np.tile(np.linspace(0.1, 0.5, 5), (12, 1))
    joined = density.join_noise(labels, neighbours, distances)
    assert joined[8:].tolist() == [0, -1, -1, 1]
    assert labels[8:].tolist() == [-1] * 4  # the input is left as it was
    # A cluster at its size limit takes no more.
    assert density.join_noise(labels, neighbours, distances, max_cluster_size=4)[8:].tolist() == [-1] * 4


def test_a_cluster_near_its_size_limit_takes_the_best_voted_noise_first() -> None:
    labels = np.array([0, 0, 0, -1, -1])
    neighbours = np.array([[1, 2, 3]] * 3 + [[0, 1, 4], [0, 1, 2]])
    distances = np.tile([0.1, 0.2, 0.3], (5, 1))
    assert density.join_noise(labels, neighbours, distances, max_cluster_size=4).tolist() == [0, 0, 0, -1, 0]
