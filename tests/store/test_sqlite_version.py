"""An SQLite too old for the store's schema gets a clear error naming both versions."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from causantic.errors import StoreError
from causantic.store.sqlite import connect


def test_an_old_sqlite_is_refused_with_both_versions_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sqlite3, "sqlite_version_info", (3, 30, 1))
    monkeypatch.setattr(sqlite3, "sqlite_version", "3.30.1")
    with pytest.raises(StoreError, match=r"3\.31\.0 or newer.*3\.30\.1"):
        connect(tmp_path / "memory.db")
    assert not (tmp_path / "memory.db").exists()
