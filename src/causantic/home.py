"""The data directory, in a module of its own so that hooks can find it without loading the
configuration's validation (pydantic), which costs a hook more than the rest of its work."""

from __future__ import annotations

import os
from pathlib import Path


def causantic_home() -> Path:
    """The data directory: ``$CAUSANTIC_HOME``, else ``~/.causantic``."""
    env = os.environ.get("CAUSANTIC_HOME")
    return Path(env).expanduser() if env else Path.home() / ".causantic"


def project_config_file(cwd: Path | None) -> Path | None:
    """``causantic.config.json`` in ``cwd`` (default: the working directory); None when the working
    directory no longer exists (a removed worktree), which then has no project file to read."""
    try:
        folder = cwd or Path.cwd()
    except OSError:
        return None
    return folder / "causantic.config.json"
