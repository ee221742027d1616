"""A PostgreSQL with pgvector for the `--backend postgres` benchmark runs: a fresh database per store.

With ``CAUSANTIC_BENCH_POSTGRES_URL`` set (a libpq URL of a role that may CREATE DATABASE on the
server to measure, e.g. a managed service) the databases are made there; otherwise a local
PostgreSQL 16 + pgvector is started from the ``pgserver`` wheel (``pip install -e '.[dev]'``) in a
temporary folder, also as root (pgserver runs it as its own system user), and stopped at the end.
The URL is never printed.
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


@contextmanager
def databases() -> Iterator[Callable[[], str]]:
    """Yields ``new()``: the URL of a new, empty database on the benchmark server."""
    import psycopg

    admin = os.environ.get("CAUSANTIC_BENCH_POSTGRES_URL")
    server: Any = None
    folder: Path | None = None
    if not admin:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # platformdirs warns when XDG_RUNTIME_DIR is unset
            import pgserver
        folder = Path(tempfile.mkdtemp(prefix="causantic-bench-pg-"))
        server = pgserver.get_server(folder / "data", cleanup_mode="stop")
        admin = str(server.get_uri())
    made: list[str] = []

    def new() -> str:
        name = f"causantic_bench_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        made.append(name)
        return str(psycopg.conninfo.make_conninfo(admin, dbname=name))

    try:
        yield new
    finally:
        if server is not None:
            server.cleanup()
            shutil.rmtree(folder or "", ignore_errors=True)
        else:
            with psycopg.connect(admin, autocommit=True) as conn:
                for name in made:
                    conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def settings(url: str, user: str = "bench") -> dict[str, Any]:
    """Configuration overrides that put a store in the database at ``url``."""
    return {"storage.backend": "postgres", "storage.postgresUrl": url, "team.user": user, "team.shareProjects": "all"}
