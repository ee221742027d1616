"""The validated configuration for the paths a person waits on, without loading pydantic.

Validating the configuration (:mod:`causantic.config`, pydantic) cost the user-prompt-submit hook
more than its search, and a cold ``causantic search`` about a quarter of its time (0.15 s of 0.56 s).
So those paths read it from ``<home>/cache/hook-config.json``, written from a full
:func:`~causantic.config.load_config` on the first run and again whenever an input of that load
changes: the file is keyed by a record of everything ``load_config`` reads (the user and project
files: path, size, modification time; every ``CAUSANTIC_*`` variable) and of ``config.py`` itself (a
new version may bring new defaults). Defaults and validation therefore stay in ``config.py`` alone;
this module only remembers their result. An invalid configuration raises
:class:`~causantic.errors.ConfigError` from the full load, as anywhere else, and is never cached;
nor is one holding a secret (``storage.postgresUrl``: the team database's password stays out of a
cache file), which is therefore loaded in full each time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from causantic.files import atomic_write, secure_dir
from causantic.home import causantic_home, project_config_file

if TYPE_CHECKING:
    from causantic.config import Config

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
    entry = _entry(cwd, environ)
    return CachedConfig({n: entry["sections"][n] for n in names}, Path(entry["dbPath"]))


def read_config(cwd: Path | None = None, environ: Mapping[str, str] | None = None) -> Config:
    """The configuration ``load_config(cwd)`` gives, for a command that only reads its values (the
    CLI's search and listing commands): from the cache when its inputs are unchanged, else loaded in
    full and cached. From the cache it is a read-only copy, not a pydantic model: every section and
    value as an attribute (``config.retrieval.mmr_lambda``), but no ``model_dump`` or
    ``with_overrides``; a caller that needs those calls :func:`~causantic.config.load_config`."""
    entry = _entry(cwd, environ)
    loaded = entry.get("config")
    if loaded is not None:
        return cast("Config", loaded)
    sections = {name: SimpleNamespace(**_tuples(values)) for name, values in entry["sections"].items()}
    return cast("Config", SimpleNamespace(**sections))


def _entry(cwd: Path | None, environ: Mapping[str, str] | None) -> dict[str, Any]:
    """The cache entry for these inputs: ``sections`` and ``dbPath``, read back from the file; or,
    loaded in full now, the same plus the validated ``config`` itself."""
    env = os.environ if environ is None else environ
    home = causantic_home()
    key = _fingerprint(home, cwd, env)
    path = home / "cache" / CACHE_FILE
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))["entries"]
        for entry in entries:
            if entry["key"] == key and isinstance(entry["sections"], dict) and isinstance(entry["dbPath"], str):
                return cast("dict[str, Any]", entry)
    except (OSError, ValueError, KeyError, TypeError):
        entries = []
    from causantic.config import db_path, load_config

    config = load_config(cwd=cwd, environ=dict(env))
    entry = {"key": key, "sections": config.model_dump(), "dbPath": str(db_path(config))}
    if config.storage.postgres_url is None:
        try:
            secure_dir(path.parent)
            # A few configurations side by side: projects with a file of their own, hooks with other variables.
            atomic_write(path, json.dumps({"entries": [entry, *entries[: KEEP_ENTRIES - 1]]}))
        except OSError:
            pass  # a read-only home: the next call loads in full again
    return {**entry, "config": config}


def _tuples(values: dict[str, Any]) -> dict[str, Any]:
    """JSON gave lists back; the configuration's sequences are tuples (hashable, as validated)."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


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
