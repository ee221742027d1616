"""Retention: ``causantic prune --before DATE`` forgets every project's memory older than a date. It
previews first (by project), deletes nothing without --yes, and never more than it previewed:
chunks ingested between a preview and its confirmation stay. Newer memory is untouched, and the
forgotten chunks do not come back on the next ingest."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from click.testing import CliRunner
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.facade import Memory

CUT = "2026-11-10"


def _write(folder: Path, first: int, day: int, cwd: str) -> None:
    for n in range(first, first + 2):
        turns = [(f"{cwd} question {n}.{t} about the parser", f"answer {n}.{t}: fixed the parser") for t in range(3)]
        write_session(folder, cwd, f"{n:08x}-0000-4000-8000-{n:012d}", turns, day=day)


def _transcripts(folder: Path) -> Path:
    _write(folder, 0, 2, "/work/shop")  # old
    _write(folder, 2, 3, "/work/blog")  # old
    _write(folder, 4, 20, "/work/shop")  # new
    return folder


def _chunks(memory: Memory) -> dict[str, int]:
    return {p.name: p.chunks for p in memory.projects()}


def test_prune_previews_every_project_and_deletes_nothing_without_yes(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        held = _chunks(memory)

    shown = CliRunner().invoke(cli, ["prune", "--before", CUT], catch_exceptions=False)

    assert shown.exit_code == 0
    assert "12 chunks older than 2026-11-10 00:00 UTC in 4 sessions of 2 projects would be deleted." in shown.output
    assert "shop" in shown.output and "blog" in shown.output
    assert "Nothing was deleted. Add --yes to delete." in shown.output
    with Memory(causantic_home) as memory:
        assert _chunks(memory) == held


def test_prune_with_yes_deletes_only_older_memory_for_good(tmp_path: Path, causantic_home: Path) -> None:
    folder = _transcripts(tmp_path / "projects")
    with Memory(causantic_home) as memory:
        memory.ingest([folder], embed=False)

    done = CliRunner().invoke(cli, ["prune", "--before", CUT, "--yes", "--json"], catch_exceptions=False)

    out = json.loads(done.output)
    assert out["deleted"] == 12
    assert {p["project"]: p["chunk_count"] for p in out["projects"]} == {"shop": 6, "blog": 6}
    with Memory(causantic_home) as memory:
        assert _chunks(memory) == {"shop": 6}  # the newer sessions
        memory.ingest([folder], embed=False, force=True)
        assert _chunks(memory) == {"shop": 6}  # forgotten stays forgotten


def test_a_confirmed_prune_deletes_no_more_than_its_preview(tmp_path: Path, causantic_home: Path) -> None:
    with Memory(causantic_home) as memory:
        memory.ingest([_transcripts(tmp_path / "projects")], embed=False)
        preview = memory.prune(datetime(2026, 11, 10))
        _write(tmp_path / "later", 10, 1, "/work/shop")  # old chunks, ingested after the preview
        memory.ingest([tmp_path / "later"], embed=False)

        done = memory.prune_previewed(preview)

        assert done.deleted == preview.count == 12
        assert _chunks(memory) == {"shop": 12}  # the newer sessions and the late old ones
