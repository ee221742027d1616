"""The data directory, in a module of its own so that hooks can find it without loading the
configuration's validation (pydantic), which costs a hook more than the rest of its work."""

from __future__ import annotations

import os
from pathlib import Path


def causantic_home() -> Path:
    """The data directory: ``$CAUSANTIC_HOME``, else ``~/.causantic``."""
    env = os.environ.get("CAUSANTIC_HOME")
    return Path(env).expanduser() if env else Path.home() / ".causantic"
