"""Where tests find ../shared, and what they do when it is not there."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def require_shared(path: Path, what: str) -> Path:
    """``path`` inside ../shared, or skip the test saying what is missing and how CI has it.

    On CI (``CI`` set) a missing ../shared fails instead: there it is always beside the clone, so a
    skip would hide a broken checkout."""
    if path.exists():
        return path
    message = (
        f"{what} is missing at {path}: these tests need the shared folder (../shared) beside the "
        "repository, as CI has it; a plain clone skips them."
    )
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)
