from __future__ import annotations

import numpy as np
import pytest

from causantic.cluster import angular_distances, assign_new, centroids, join_bars


def angular_distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(angular_distances(a, b)[0, 0])


def _at_angle(fraction_of_pi: float, dims: int = 8) -> np.ndarray:
    """A unit vector at ``fraction_of_pi * pi`` from the first axis, in the plane of the first two."""
    vector = np.zeros(dims, np.float32)
    vector[0], vector[1] = np.cos(np.pi * fraction_of_pi), np.sin(np.pi * fraction_of_pi)
    return vector


def test_angular_distance_is_zero_same_half_orthogonal_and_one_opposite() -> None:
    e1, e2 = _at_angle(0.0), _at_angle(0.5)
    assert angular_distance(e1, e1) == pytest.approx(0.0, abs=1e-6)
    assert angular_distance(e1, e2) == pytest.approx(0.5)
    assert angular_distance(e1, -e1) == pytest.approx(1.0)
    assert angular_distance(e1, 3 * _at_angle(0.2)) == pytest.approx(0.2)


def test_centroids_are_unit_mean_directions_and_noise_has_none() -> None:
    vectors = np.stack([_at_angle(0.0), _at_angle(0.1), _at_angle(0.5), _at_angle(0.7), _at_angle(0.9)])
    found = centroids(vectors, np.array([0, 0, 3, 3, -1]))
    assert sorted(found) == [0, 3]
    assert angular_distance(found[0], _at_angle(0.05)) == pytest.approx(0.0, abs=1e-6)
    assert angular_distance(found[3], _at_angle(0.6)) == pytest.approx(0.0, abs=1e-6)
    assert all(np.linalg.norm(c) == pytest.approx(1.0) for c in found.values())


def test_assign_new_joins_the_nearest_cluster_only_under_the_threshold() -> None:
    clusters = {7: _at_angle(0.0), 9: _at_angle(0.5)}
    arrivals = np.stack([_at_angle(0.05), _at_angle(0.45), _at_angle(0.12), _at_angle(0.25), _at_angle(-0.08)])
    assert assign_new(arrivals, clusters, threshold=0.09).tolist() == [7, 9, -1, -1, 7]
    assert assign_new(arrivals, clusters, threshold=0.13).tolist() == [7, 9, 7, -1, 7]


def test_assign_new_with_no_clusters_or_no_vectors_assigns_nothing() -> None:
    assert assign_new(np.stack([_at_angle(0.0)]), {}, 0.09).tolist() == [-1]
    assert assign_new(np.zeros((0, 8), np.float32), {1: _at_angle(0.0)}, 0.09).tolist() == []


def test_a_new_vector_joins_a_loose_topic_as_far_out_as_most_of_its_members_lie_but_not_a_tight_one() -> None:
    """Seed 001's fixed 0.09 joined no new chunk of real memories: their topics' members lie a median
    0.18-0.20 from the centre. Each topic's own spread is its bar now (clustering.joinQuantile)."""
    loose, tight = _at_angle(0.0), _at_angle(0.5)
    spread = join_bars({7: [0.10, 0.14, 0.16, 0.20, 0.30], 9: [0.02, 0.03, 0.03, 0.04, 0.05]}, 0.6)
    assert spread == {7: pytest.approx(0.176), 9: pytest.approx(0.034)}
    arrivals = np.stack([_at_angle(0.15), _at_angle(0.45), _at_angle(0.04), _at_angle(0.5 - 0.12)])
    # 0.15 from the loose topic joins it; 0.05 and 0.12 from the tight one join only within 0.09.
    assert assign_new(arrivals, {7: loose, 9: tight}, 0.09, spread).tolist() == [7, 9, 7, -1]
    assert assign_new(arrivals, {7: loose, 9: tight}, 0.09).tolist() == [-1, 9, 7, -1]
    assert join_bars({3: []}, 0.6) == {}  # a topic without members has no spread to go by
