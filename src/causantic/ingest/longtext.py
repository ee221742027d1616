"""A pasted text of many megabytes cleaned and redacted window by window, with bounded copies.

Rendering a message's text removes what the harness injected (user text only) and redacts
secrets: ``redact(without_injected(text))``. On the whole of a 50 MB pasted line, each step that
changes something makes a full copy, and the redactor's splicing holds the pieces beside the
result: four or five copies at once, each at four bytes a character once the text holds one emoji.
Here the text is cut into windows of about :data:`WINDOW_CHARS` characters, each cleaned and
redacted alone, and the results are joined once (or, when no window changed, the text is kept as it
is, without any copy).

A cut is made only where it changes nothing. It is placed after a space, and accepted only when
cleaning the :data:`REACH` characters either side of it together gives the same text as cleaning
each side alone. A secret crossing the cut, with the words that give it away ("the secret key is
…", ``password =``), is then either redacted in both or in neither: redacted whole it becomes one
placeholder, and no two halves can put the same placeholder back together. So every secret and
injected element up to :data:`REACH` characters long is treated as in the whole text; when no cut
passes the check within a few tries (text full of secrets), the text is cleaned whole, as before.
Longer matches (a "token" of 16,000 characters, a user pattern without bounds) may be cut in two.
"""

from __future__ import annotations

from collections.abc import Callable

from causantic.transcripts import (
    OPENING_CHARS,
    injected_elements_removed,
    opens_plainly,
    opens_unclosed_element,
    without_injected,
)

WINDOW_CHARS = 1 << 20  # about how much of the text is cleaned at a time
REACH = 16_384  # characters either side of a cut checked together: longer than any secret's match
_TRIES = 32  # cut positions tried for one window before the text is cleaned whole


def cleaned_long_text(
    text: str, redact: Callable[[str], str], *, injected: bool, window: int = WINDOW_CHARS, reach: int = REACH
) -> str:
    """``redact(without_injected(text))`` (``injected``: a user's text, where the harness injects), or
    ``redact(text.strip())``, computed ``window`` characters at a time (see the module docstring)."""
    if len(text) < 2 * window or (injected and not opens_plainly(text[:OPENING_CHARS])):
        return _whole(text, redact, injected)

    def clean(part: str) -> str:
        return redact(injected_elements_removed(part) if injected else part)

    cleaned: list[tuple[int, int, str | None]] = []  # (start, end, cleaned text; None: unchanged)
    start = 0
    while start < len(text):
        end = _clean_cut(text, start + window, reach, clean)
        if end is None:
            return _whole(text, redact, injected)
        part = text[start:end]
        out = clean(part)
        cleaned.append((start, end, None if out is part else out))  # unchanged: its copy goes now
        start = end
    if all(out is None for _, _, out in cleaned):  # nothing to remove (a bundle, a log): no copy made
        whole = text.strip()
        return _whole(text, redact, injected) if injected and opens_unclosed_element(whole) else whole
    outs = [text[a:b] if out is None else out for a, b, out in cleaned]
    # The ends stripped, as the whole text is: whitespace-only windows at either end go.
    first = next((i for i, out in enumerate(outs) if out.strip()), len(outs))
    last = next((i for i in range(len(outs) - 1, -1, -1) if outs[i].strip()), -1)
    outs = outs[first : last + 1]
    if not outs:
        return ""
    outs[0] = outs[0].lstrip()
    outs[-1] = outs[-1].rstrip()  # after: when both are one window, it is stripped at both ends
    if injected and opens_unclosed_element(outs[0]):  # cut output of the harness: the whole decides
        return _whole(text, redact, injected)
    return "".join(outs)


def _whole(text: str, redact: Callable[[str], str], injected: bool) -> str:
    body = without_injected(text) if injected else text.strip()
    return redact(body) if body else ""


def _clean_cut(text: str, target: int, reach: int, clean: Callable[[str], str]) -> int | None:
    """Where the window ending near ``target`` ends: the end of the text when it is near, else the
    first cut after a space from ``target`` on whose ``reach`` either side passes the check; None
    when none of :data:`_TRIES` does."""
    at = target
    for _ in range(_TRIES):
        if at + reach >= len(text):
            return len(text)
        space = text.find(" ", at, at + reach)
        cut = space + 1 if space >= 0 else at
        left, right = text[max(0, cut - reach) : cut], text[cut : cut + reach]
        if clean(left + right) == clean(left) + clean(right):
            return cut
        at = cut + reach // 4
    return None
