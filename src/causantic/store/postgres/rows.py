"""Rows read by name or position, as ``sqlite3.Row`` is, so code over either store reads them alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


class Row(tuple[Any, ...]):
    """A result row: ``row["name"]``, ``row[0]``, ``row.keys()`` and ``dict(zip(row.keys(), row))``."""

    _names: dict[str, int]

    def __new__(cls, values: Sequence[Any], names: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._names = names
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._names[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._names)


def row_factory(cursor: Any) -> Any:
    """A psycopg row factory making :class:`Row` values."""
    names = {column.name: i for i, column in enumerate(cursor.description or ())}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, names)

    return make
