"""Stable cluster identities across full reclusters.

HDBSCAN numbers its clusters afresh on every run, so a topic the user has seen as cluster 12 could
come back as cluster 3. :func:`carry_over` decides which new clusters are the old ones continued; the
caller then copies the old id onto them (and the old label while it still fits:
:func:`causantic.cluster.labels.steady_label`) and gives every other new cluster a new id.

The rule is a majority, one-to-one: a new cluster inherits an old identity only when more than half
of its members were members of that one old cluster; when an old cluster split, only the new part
holding most of its members inherits. Storing ids, names and labels is the caller's business.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Set
from typing import TypeVar

Old = TypeVar("Old", bound=Hashable)
New = TypeVar("New", bound=Hashable)
Member = TypeVar("Member", bound=Hashable)


def carry_over(
    old_members: Mapping[Old, Set[Member]],
    new_members: Mapping[New, Set[Member]],
) -> dict[New, Old]:
    """Which new cluster continues which old one: ``{new_label: old_id}``.

    A new cluster qualifies when strictly more than half of its members came from one old cluster.
    Each old id goes to at most one new cluster: the qualifying one sharing the most members with it
    (ties: the larger share of the new cluster, then the order of ``new_members``).
    """
    owner: dict[Member, Old] = {}
    for old_id, members in old_members.items():
        for member in members:
            # A member listed under two old clusters counts for the first; reclusters never
            # produce that, but a hand-edited store could.
            owner.setdefault(member, old_id)

    candidates: list[tuple[int, float, int, New, Old]] = []
    for order, (new_label, members) in enumerate(new_members.items()):
        if not members:
            continue
        counts = Counter(owner[m] for m in members if m in owner)
        if not counts:
            continue
        old_id, shared = counts.most_common(1)[0]
        if 2 * shared > len(members):
            candidates.append((shared, shared / len(members), -order, new_label, old_id))

    result: dict[New, Old] = {}
    taken: set[Old] = set()
    for _, _, _, new_label, old_id in sorted(candidates, key=lambda c: c[:3], reverse=True):
        if old_id not in taken:
            taken.add(old_id)
            result[new_label] = old_id
    return result
