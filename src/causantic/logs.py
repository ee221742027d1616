"""Causantic's log files: stdlib ``logging`` into ``<home>/logs/<file>``, owner-only, rotated.

Hooks write ``hooks.log``, the MCP server ``mcp.log``. A file past ``LOG_MAX_BYTES`` is rotated by
:class:`logging.handlers.RotatingFileHandler` (one older file, ``<file>.1``, is kept). Nothing
here raises: a hook or server that cannot write its log (read-only home, full disk) still does its
job. ``logging`` loads on the first line written, not on import: a hook that has nothing to log
(the usual case) never pays for it.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from causantic.files import secure_dir
from causantic.home import causantic_home

if TYPE_CHECKING:
    import logging

LOG_MAX_BYTES = 1_000_000
HOOKS_LOG = "hooks.log"


def log_path(file: str = HOOKS_LOG) -> Path:
    return causantic_home() / "logs" / file


def logger(file: str = HOOKS_LOG) -> logging.Logger:
    """The logger writing to ``<home>/logs/<file>`` (one per path: tests and tools change the home)."""
    import logging

    path = log_path(file)
    out = logging.getLogger(f"causantic.file.{path}")
    if not out.handlers:
        handler = _owner_only_handler(path)
        out.addHandler(handler)
        out.setLevel(logging.INFO)
        out.propagate = False
    return out


def log(message: str, *, error: BaseException | None = None, file: str = HOOKS_LOG) -> None:
    """One line (plus the traceback of ``error``) in ``<home>/logs/<file>``; never raises."""
    try:
        secure_dir(log_path(file).parent)
        if error is None:
            logger(file).info(message)
        else:
            logger(file).error(message, exc_info=(type(error), error, error.__traceback__))
    except Exception:  # logging must never break a hook or a tool call
        pass


def _owner_only_handler(path: Path) -> logging.Handler:
    """A RotatingFileHandler whose file is created 0600 (logs quote queries and paths) and that stays
    silent when writing fails."""
    import io
    import logging
    import time
    from logging.handlers import RotatingFileHandler

    class OwnerOnly(RotatingFileHandler):
        def _open(self) -> io.TextIOWrapper:
            fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            return open(fd, "a", encoding="utf-8")  # noqa: SIM115 (the handler owns and closes the stream)

        def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 (logging's name)
            pass

    handler = OwnerOnly(path, maxBytes=LOG_MAX_BYTES, backupCount=1, delay=True)
    formatter = logging.Formatter("%(asctime)s.%(msecs)03dZ [%(process)d] %(message)s", "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime  # UTC, as every time Causantic writes
    handler.setFormatter(formatter)
    return handler
