"""How counts, ages and cut text read wherever people read them: below every layer, so the ingest
status, the CLI, the MCP text, the hooks and the dashboard all say "1 file", "2,310 chunks", "3 h ago"
and "The login page ret…" alike.

Words only; what is counted and when it is shown is each caller's.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """'1 chunk', '2,310 chunks': a count with thousands separators and its noun in the right number
    (``plural`` where adding an s is wrong: 'match', 'matches')."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def listed(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c': items in a sentence; '' for none."""
    return " and ".join(filter(None, (", ".join(items[:-1]), items[-1]))) if items else ""


def with_names(names: Sequence[str], most: int = 8) -> str:
    """'2: Explore, Plan', '19: Bash, Explore, … and 11 more': how many, then the first ``most`` of
    them by name (a count alone left the reader guessing which); '0' for none."""
    if not names:
        return "0"
    more = f" and {len(names) - most:,} more" if len(names) > most else ""
    return f"{len(names):,}: {', '.join(names[:most])}{more}"


def sentence(clause: str) -> str:
    """A clause said after a dash or 'note:' ('team memory at … lacks …') as a sentence of its own:
    its first letter a capital, a full stop at its end."""
    return f"{clause[:1].upper()}{clause[1:]}{'' if clause.endswith('.') else '.'}"


def shortened(text: str, limit: int) -> str:
    """``text`` as it is when it fits in ``limit`` characters, else cut to ``limit`` with an ellipsis
    as the last one (spaces before the cut dropped)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def ago(iso_text: str | None, now: datetime | None = None) -> str:
    """How long before ``now`` an ISO 8601 time was, in its largest unit: 'just now', '5 min ago',
    '3 h ago', '1 day ago'; 'never' without a time, 'at an unknown time' for text that is not one."""
    if not iso_text:
        return "never"
    try:
        then = datetime.fromisoformat(iso_text.replace("Z", "+00:00"))
    except ValueError:
        return "at an unknown time"
    seconds = ((now or datetime.now(UTC)) - then).total_seconds()
    for unit, size in (("day", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            value = int(seconds // size)
            return f"{counted(value, unit) if unit == 'day' else f'{value:,} {unit}'} ago"
    return "just now"
