"""The data directory, the store's paths under it and which store holds memory, in a module of their
own so that hooks and read commands can find them without loading the configuration's validation
(pydantic), which costs a hook more than the rest of its work."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from causantic.config import Config, StorageConfig


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


def db_path(config: Config) -> Path:
    """The SQLite file: ``storage.dbPath``, else ``<home>/memory.db``."""
    return Path(config.storage.db_path).expanduser() if config.storage.db_path else causantic_home() / "memory.db"


def vector_path(config: Config) -> Path:
    """The folder of the derived ANN index files: ``storage.vectorPath``, else ``<home>/vectors``."""
    if config.storage.vector_path:
        return Path(config.storage.vector_path).expanduser()
    return causantic_home() / "vectors"


def memory_missing(config: Config) -> bool:
    """Nothing was ever ingested: the local SQLite file does not exist yet. (Team memory in
    PostgreSQL is a server to ask, never missing; hooks then skip the cheap check.)"""
    return not is_team_memory(config.storage) and not db_path(config).exists()


def is_team_memory(storage: StorageConfig) -> bool:
    """Memory is a team's, in PostgreSQL (``storage.backend`` postgres), with the projects not shared
    in the local SQLite file beside it; else it is the local SQLite file alone. Takes the section so
    the prompt hook's cached sections (:mod:`causantic.config_cache`) are asked the same way."""
    return storage.backend == "postgres"
