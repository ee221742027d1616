"""A chunk's text split into its speakers' sections, for the hooks that quote chunks (the
session-start briefing, prompt memory); its own light module so that the prompt hook can use it
without the briefing's imports."""

from __future__ import annotations

import re

_MARKER = re.compile(r"^\[(User|Assistant|Tool:[^\]\n]*|Result:[^\]\n]*|Error:[^\]\n]*)\]\s?")


def sections(content: str) -> list[tuple[str, str]]:
    """A chunk's text as (role, text) pairs: User, Assistant, Tool:X, Result:X, Error:X, or ""."""
    out: list[tuple[str, str]] = []
    for para in content.split("\n\n"):
        match = _MARKER.match(para)
        if match:
            out.append((match.group(1), para[match.end() :].strip()))
        elif out:
            out[-1] = (out[-1][0], f"{out[-1][1]}\n\n{para}")
        else:
            out.append(("", para))
    return out or [("", "")]
