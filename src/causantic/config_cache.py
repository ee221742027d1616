"""The configuration sections a hook on Claude Code's prompt path reads, without loading pydantic.

Validating the configuration (:mod:`causantic.config`, pydantic) cost the user-prompt-submit hook
more than its search. So that hook reads the few sections it needs from ``<home>/cache/hook-config.json``,
written from a full :func:`~causantic.config.load_config` on the first run and again whenever an
input of that load changes: the file is keyed by a record of everything ``load_config`` reads
(the user and project files: path, size, modification time; every ``CAUSANTIC_*`` variable) and of
``config.py`` itself (a new version may bring new defaults). Defaults and validation therefore stay in
``config.py`` alone; this module only remembers their result. An invalid configuration raises
:class:`~causantic.errors.ConfigError` from the full load, as anywhere else, and is never cached.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from causantic.files import atomic_write, secure_dir
from causantic.home import causantic_home, project_config_file

CACHE_FILE = "hook-config.json"
KEEP_ENTRIES = 8


@dataclass(frozen=True, slots=True)
class CachedConfig:
    sections: dict[str, dict[str, Any]]  # section (python field name) -> its values, validated
    db_path: Path

    def section(self, name: str) -> SimpleNamespace:
        """A section's values as attributes (``.bar``), as the pydantic section offers them."""
        return SimpleNamespace(**self.sections[name])


def cached_config(cwd: Path | None, names: Sequence[str], environ: Mapping[str, str] | None = None) -> CachedConfig:
    """The sections ``names`` of the configuration ``load_config(cwd)`` gives, from the cache when its
    inputs are unchanged; else loaded in full (slow: pydantic) and cached for the next call."""
    env = os.environ if environ is None else environ
    home = causantic_home()
    key = _fingerprint(home, cwd, env)
    path = home / "cache" / CACHE_FILE
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
        for entry in entries:
            if entry["key"] == key and all(n in entry["sections"] for n in names):
                return CachedConfig({n: entry["sections"][n] for n in names}, Path(entry["dbPath"]))
    except (OSError, ValueError, KeyError, TypeError):
        entries = []
    from causantic.config import db_path, load_config

    config = load_config(cwd=cwd, environ=dict(env))
    dumped = config.model_dump()
    found = CachedConfig({n: dumped[n] for n in names}, db_path(config))
    entry = {"key": key, "sections": dumped, "dbPath": str(found.db_path)}
    try:
        secure_dir(path.parent)
        # A few configurations side by side: projects with a file of their own, hooks with other variables.
        atomic_write(path, json.dumps({"entries": [entry, *entries[: KEEP_ENTRIES - 1]]}))
    except OSError:
        pass  # a read-only home: the next call loads in full again
    return found


def _fingerprint(home: Path, cwd: Path | None, env: Mapping[str, str]) -> list[object]:
    files = (Path(__file__).with_name("config.py"), home / "config.json", project_config_file(cwd))
    parts: list[object] = [str(Path.home())]
    for file in files:
        if file is None:
            parts.append(None)
            continue
        try:
            st = file.stat()
            parts.append([str(file), st.st_size, st.st_mtime_ns])
        except OSError:
            parts.append(None)  # absent here: the same as absent in any other folder
    parts.append(sorted((k, v) for k, v in env.items() if k.startswith("CAUSANTIC_")))
    read_back: list[object] = json.loads(json.dumps(parts))  # as read back from the file (tuples become lists)
    return read_back
