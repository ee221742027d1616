"""A PostgreSQL with pgvector for the `--backend postgres` benchmark runs: a database per store.

With ``CAUSANTIC_BENCH_POSTGRES_URL`` set (a libpq URL of a role that may CREATE DATABASE on the
server to measure, e.g. a managed service) the databases are made there; otherwise a local
PostgreSQL 16 + pgvector is started from the ``pgserver`` wheel (``pip install -e '.[dev]'``),
also as root (pgserver runs it as its own system user), and stopped at the end. Its data directory
is a temporary folder, or with ``keep`` (``search_latency.py --store-dir``) ``keep/data``, where
the databases stay: a store built once is found again by name on the next run. The URL is never
printed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import uuid
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

# Written once into a kept server's postgresql.auto.conf (ALTER SYSTEM): the 128 MB default
# shared_buffers holds a tenth of a 1M-chunk HNSW graph; the OS page cache holds the rest anyway.
SERVER_SETTINGS = {"shared_buffers": "1GB"}


@contextmanager
def databases(keep: Path | None = None) -> Iterator[Callable[[str], tuple[str, bool]]]:
    """Yields ``database(name)``: (URL, True when it was just made, empty) of the database ``name``;
    without ``keep`` each call makes a new one (``name`` a prefix) and all are dropped at the end."""
    import psycopg

    admin = os.environ.get("CAUSANTIC_BENCH_POSTGRES_URL")
    server: Any = None
    folder: Path | None = None
    if not admin:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import pgserver
        folder = keep if keep is not None else Path(tempfile.mkdtemp(prefix="causantic-bench-pg-"))
        folder.mkdir(parents=True, exist_ok=True)
        server = pgserver.get_server(folder / "data", cleanup_mode="stop")
        if keep is not None and _configure(str(server.get_uri())):
            server.cleanup()  # shared_buffers takes effect at the next start
            server = pgserver.get_server(folder / "data", cleanup_mode="stop")
        admin = str(server.get_uri())
    made: list[str] = []

    def database(name: str) -> tuple[str, bool]:
        if keep is None:
            name = f"{name}_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{name}"')
                made.append(name)
        return str(psycopg.conninfo.make_conninfo(admin, dbname=name)), not exists

    try:
        yield database
    finally:
        if server is not None:
            server.cleanup()
            if keep is None:
                shutil.rmtree(folder or "", ignore_errors=True)
        elif keep is None:
            with psycopg.connect(admin, autocommit=True) as conn:
                for name in made:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def drop(url: str) -> None:
    """Drop the database at ``url`` (a half-built store, before it is built again)."""
    import psycopg

    name = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    with psycopg.connect(psycopg.conninfo.make_conninfo(url, dbname="postgres"), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _configure(admin: str) -> bool:
    """Apply :data:`SERVER_SETTINGS` to a kept server; True when a restart must follow."""
    import psycopg

    with psycopg.connect(admin, autocommit=True) as conn:
        changed = False
        for key, value in SERVER_SETTINGS.items():
            if conn.execute(f"SELECT current_setting('{key}')").fetchone()[0] != value:
                conn.execute(f"ALTER SYSTEM SET {key} = '{value}'")
                changed = True
    return changed


def settings(url: str, user: str = "bench") -> dict[str, Any]:
    """Configuration overrides that put a store in the database at ``url``."""
    return {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": user, "team.shareProjects": "all"}
