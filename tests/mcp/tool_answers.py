"""Reading MCP tool answers as the model reads them: the text (the tools send no structured content)."""

from __future__ import annotations

import re
from typing import Any

_HEADER = re.compile(r"^\[(Project: [^\]\n]*)\]$", re.MULTILINE)


def text(result: Any) -> str:
    assert result.content and result.content[0].type == "text"
    assert result.structured_content is None  # Claude Code would show the model that instead of the text
    return str(result.content[0].text)


def hit_headers(answer: str) -> list[dict[str, str]]:
    """The header of each chunk in a search answer: '[Project: acme-shop | Session: 4005b823 | …]'
    as {'Project': 'acme-shop', 'Session': '4005b823', …}, in order; a mark without a value
    ('weakly related') maps to ''."""
    return [dict(part.partition(": ")[::2] for part in header.split(" | ")) for header in _HEADER.findall(answer)]
