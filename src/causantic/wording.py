"""How counts read wherever people read them: one helper below every layer, so the ingest status,
the CLI, the MCP text, the hooks and the dashboard all say "1 file" and "2,310 chunks" alike.

Words only; what is counted and when it is shown is each caller's.
"""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 chunk', '2,310 chunks': a count with thousands separators and its noun in the right number
    (``plural`` where adding an s is wrong: 'match', 'matches')."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
