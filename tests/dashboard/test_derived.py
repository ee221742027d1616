"""Pages keep what they derive from memory until memory changes, and show a change at once.

A second view of a page reuses its counts and layout; an ingest by another process (as the hooks
run it) or a forget through the dashboard itself shows on the next view.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from process_support import CORPUS_FOLDERS, EXAMPLES, REAL_PROJECTS, subprocess_env

from causantic.dashboard import pages
from causantic.facade import Memory


def _ingest(home: Path, folder: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "causantic", "batch-ingest", str(folder), "--no-embed", "--json"],
        env=subprocess_env(CAUSANTIC_HOME=str(home)),
        check=True,
        capture_output=True,
        timeout=300,
    )


def test_a_page_shows_an_ingest_by_another_process_on_its_next_view(causantic_home: Path, corpus_dir: Path) -> None:
    second = corpus_dir / REAL_PROJECTS / CORPUS_FOLDERS[0]
    _ingest(causantic_home, EXAMPLES)
    derived = pages.Derived()
    with Memory() as memory:
        before = pages.projects(memory, derived)["projects"]
        assert pages.projects(memory, derived)["projects"] is before  # memory unchanged: reused

        _ingest(causantic_home, second)
        after = pages.projects(memory, derived)["projects"]
        overview = pages.overview(memory, derived)["o"]

    assert len(after) == len(before) + 1
    assert overview.counts["chunks"] > 0 and len(overview.projects) == len(after)


def test_on_disk_counts_the_vectors_once_as_part_of_the_database(causantic_home: Path) -> None:
    # The vectors live in memory.db; "on disk" added them to its size a second time (stats' rows too read as two).
    with Memory() as memory:
        memory.ingest([EXAMPLES])
        stats = memory.stats()
        view = pages.overview(memory, pages.Derived())
    assert stats.vector_count and stats.vector_bytes and stats.vector_file_bytes == 0  # too few vectors for an ANN file
    assert stats.vector_bytes < stats.sqlite_bytes
    assert view["disk"] == view["o"].counts["sqlite_bytes"] == stats.sqlite_bytes
