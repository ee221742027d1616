"""The store's one transaction mechanism: atomic blocks, grouped by batch (issue 12).

What a user would notice: a failure mid-ingest keeps every group already committed and none of the
failed group; a batch that ends normally has committed everything (another process sees it)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from causantic.store.memory import MemoryStore


class Boom(Exception):
    pass


def _seen_by_another_process(path: Path) -> set[str]:
    with sqlite3.connect(path) as other:
        return {r[0] for r in other.execute("SELECT key FROM meta WHERE key LIKE 'group-%'")}


def test_an_atomic_block_is_all_or_nothing(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "memory.db") as store:
        with pytest.raises(Boom), store.atomic():
            store.set_meta("group-1", "a")
            with store.atomic():  # nested: a savepoint of the same transaction
                store.set_meta("group-1b", "b")
            raise Boom
        assert store.meta_value("group-1") is None and store.meta_value("group-1b") is None


@pytest.mark.parametrize(("commit_every", "kept"), [(0.0, {"group-1"}), (3600.0, set())])
def test_a_failure_in_a_batch_loses_only_the_groups_not_yet_committed(
    tmp_path: Path, commit_every: float, kept: set[str]
) -> None:
    path = tmp_path / "memory.db"
    with MemoryStore(path) as store:
        with pytest.raises(Boom), store.batch(commit_every):
            with store.atomic():
                store.set_meta("group-1", "done")
            with store.atomic():
                store.set_meta("group-2", "half")
                raise Boom  # the process fails mid-group
        assert _seen_by_another_process(path) == kept
        assert store.meta_value("group-2") is None  # never half a group


def test_a_batch_commits_everything_on_leaving_and_a_nested_batch_joins_it(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    with MemoryStore(path) as store:
        with store.batch(3600.0):
            with store.atomic():
                store.set_meta("group-1", "x")
            with store.batch(0.0), store.atomic():  # joins the outer batch: no commit of its own
                store.set_meta("group-2", "y")
            assert _seen_by_another_process(path) == set()  # WAL: uncommitted work is invisible
        assert _seen_by_another_process(path) == {"group-1", "group-2"}
