"""Four members ingest overlapping sessions into one team database while two others search: every
chunk is stored exactly once, and the memory equals what one SQLite ingest of the same files holds."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from postgres_server import new_database
from process_support import subprocess_env

from causantic.config import Config
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

WRITERS = 4
SEARCHERS = 2


def _folders(corpus_dir: Path) -> list[Path]:
    """The 16 smallest projects of the corpus (seconds to ingest), in a fixed order."""
    folders = sorted(p for p in corpus_dir.iterdir() if p.is_dir())
    return sorted(folders, key=lambda p: (sum(f.stat().st_size for f in p.rglob("*.jsonl")), p.name))[:16]


def _cli(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "causantic", *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_four_writers_and_two_searchers_store_every_chunk_exactly_once(
    postgres_server: Any, corpus_dir: Path, tmp_path: Path
) -> None:
    folders = _folders(corpus_dir)
    with open_services(Config()) as reference:  # one SQLite ingest of every folder
        ingest_paths(reference, folders, embed=False, workers=1)
        expected = reference.store.counts()
    url = new_database(postgres_server)
    base = {
        "CAUSANTIC_STORAGE_BACKEND": "postgres",
        "CAUSANTIC_STORAGE_POSTGRES_URL": url,
        "CAUSANTIC_TEAM_SHARE_PROJECTS": "all",
    }
    # Each writer reads 8 of the 16 folders, each folder is read by two writers, who start together.
    writers = []
    for i in range(WRITERS):
        mine = [str(folders[(4 * i + k) % len(folders)]) for k in range(8)]
        env = subprocess_env(**base, CAUSANTIC_HOME=str(tmp_path / f"member{i}"), CAUSANTIC_TEAM_USER=f"member{i}")
        writers.append(_cli("ingest", "--no-embed", "--json", *mine, env=env))
    searches: list[subprocess.CompletedProcess[str]] = []
    search_env = subprocess_env(**base, CAUSANTIC_HOME=str(tmp_path / "reader"))
    while any(w.poll() is None for w in writers):
        readers = [
            _cli("search", "pytest fixture", "--mode", "keyword", "--json", env=search_env) for _ in range(SEARCHERS)
        ]
        for reader in readers:
            out, err = reader.communicate(timeout=120)
            searches.append(subprocess.CompletedProcess(reader.args, reader.returncode, out, err))
        time.sleep(0.2)
    added = 0
    for writer in writers:
        out, err = writer.communicate(timeout=600)
        assert writer.returncode == 0, err
        added += json.loads(out)["chunks_added"]
    # Every folder was read twice, yet across the four members each chunk was added once.
    assert added == expected["chunks"]
    assert searches and all(s.returncode == 0 for s in searches), [s.stderr for s in searches if s.returncode]
    assert all(isinstance(json.loads(s.stdout)["hits"], list) for s in searches)

    with open_services(Config().with_overrides({"storage.backend": "postgres", "storage.postgresUrl": url})) as team:
        counts = team.store.counts()
    for key in ("chunks", "edges", "sessions", "projects", "agents", "sources"):
        assert counts[key] == expected[key], key
