"""Reading a hook's stdin without hanging, in a module of its own: the prompt hook's client
(:mod:`causantic.hooks.warm`) reads it before anything else is imported."""

from __future__ import annotations

import os
import sys

STDIN_TIMEOUT_S = 2.0


def read_stdin(timeout: float = STDIN_TIMEOUT_S) -> str:
    """All of stdin, as UTF-8, or "" when it is a terminal or stays silent for ``timeout`` seconds."""
    stream = sys.stdin
    if stream is None or stream.closed:
        return ""
    try:
        if stream.isatty():
            return ""
        if os.name == "posix":
            import select

            ready, _, _ = select.select([stream], [], [], timeout)
            if not ready:
                return ""
        # The event is JSON, so UTF-8 whatever the locale says: read in a non-UTF-8 locale's encoding
        # (LANG=C with Python's UTF-8 mode off, a Windows code page), a folder named café lost its é.
        binary = getattr(stream, "buffer", None)
        return stream.read() if binary is None else binary.read().decode("utf-8", errors="replace")
    except (OSError, ValueError, UnicodeDecodeError):
        return ""
