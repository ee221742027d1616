"""Approximate token counts: characters / 3.5, the product's one measure of text size.

A leaf module (it imports nothing of the package), so a hook or a search that only counts tokens
loads nothing else: importing the chunker would bring the renderer, the redactor and the
configuration with it.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 3.5


def approx_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0
