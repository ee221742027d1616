from __future__ import annotations

from causantic.cluster import carry_over


def test_a_new_cluster_inherits_the_old_identity_holding_most_of_its_members() -> None:
    old = {"c-auth": {1, 2, 3, 4, 5}, "c-ci": {10, 11, 12}}
    new = {0: {10, 11, 12, 13}, 1: {1, 2, 3, 4, 20}}
    assert carry_over(old, new) == {0: "c-ci", 1: "c-auth"}


def test_without_a_majority_from_one_old_cluster_a_new_cluster_gets_a_new_identity() -> None:
    old = {"a": {1, 2, 3}, "b": {4, 5, 6}}
    new = {0: {1, 2, 4, 5}, 1: {3, 30, 31}, 2: {6, 40, 41, 42}}
    assert carry_over(old, new) == {}


def test_exactly_half_is_not_a_majority() -> None:
    assert carry_over({"a": {1, 2}}, {0: {1, 2, 3, 4}}) == {}
    assert carry_over({"a": {1, 2}}, {0: {1, 2, 3}}) == {0: "a"}


def test_when_an_old_cluster_splits_only_the_part_with_most_of_its_members_inherits() -> None:
    old = {"a": set(range(10))}
    new = {0: {0, 1, 2}, 1: {3, 4, 5, 6, 7}, 2: {8, 9, 50}}
    assert carry_over(old, new) == {1: "a"}


def test_each_old_identity_goes_to_one_new_cluster_and_each_new_cluster_gets_one() -> None:
    old = {"a": set(range(0, 20)), "b": set(range(20, 40))}
    new = {i: set(range(5 * i, 5 * i + 5)) for i in range(8)}
    result = carry_over(old, new)
    assert sorted(result.values()) == ["a", "b"]
    assert len(result) == len(set(result.values()))


def test_empty_inputs_carry_nothing_over() -> None:
    assert carry_over({}, {0: {1, 2}}) == {}
    assert carry_over({"a": {1}}, {}) == {}
    assert carry_over({"a": {1}}, {0: set()}) == {}
