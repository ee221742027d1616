"""batch-ingest and symbolic links: a linked transcript is read, a project folder linked in from
another disk is read, a linked folder inside the folder read is read once (a link back up the tree
ends, no loop), a linked folder inside a project leading outside (a big tree nobody asked for) is not
entered and named in one line of the summary, and a broken link is named as an error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from click.testing import CliRunner

from causantic.cli.main import cli
from causantic.examples import SESSIONS_DIR

ACME = SESSIONS_DIR / "-home-dev-acme-shop"
LOOSE = "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"  # one of acme-shop's three sessions


def test_links_inside_are_read_once_links_outside_are_named_and_a_broken_link_is_an_error(
    tmp_path: Path, corpus_dir: Path
) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(ACME, projects / "acme")
    elsewhere = tmp_path / "other-disk"
    elsewhere.mkdir()
    (projects / "acme" / LOOSE).rename(elsewhere / LOOSE)
    (projects / "single").mkdir()
    (projects / "single" / LOOSE).symlink_to(elsewhere / LOOSE)  # a linked transcript: read
    (projects / "alias").symlink_to(projects / "acme", target_is_directory=True)  # inside: read once
    (projects / "single" / "again").symlink_to(projects, target_is_directory=True)  # a cycle
    moved = tmp_path / "disk2" / "-home-dev-acme-shop"  # a project folder moved to another disk
    shutil.copytree(ACME, moved)
    for name in os.listdir(moved):
        if name != LOOSE:
            shutil.rmtree(moved / name) if (moved / name).is_dir() else (moved / name).unlink()
    (projects / "moved").symlink_to(moved, target_is_directory=True)  # a project linked in: read
    (moved / "inner").symlink_to(moved, target_is_directory=True)  # inside the linked project: once
    (projects / "acme" / "corpus").symlink_to(corpus_dir, target_is_directory=True)  # 386 transcripts outside
    (projects / "acme" / "up").symlink_to(tmp_path, target_is_directory=True)  # up out of the folder
    (projects / "gone").symlink_to(tmp_path / "moved-away", target_is_directory=True)
    (projects / "single" / "notes.md").symlink_to(tmp_path / "moved-notes.md")  # not a transcript

    result = CliRunner().invoke(cli, ["batch-ingest", str(projects), "--no-embed"])
    assert result.exit_code == 1, result.output  # the broken link could not be read
    assert f"{projects / 'gone'}: broken link" in result.output and str(tmp_path / "moved-away") in result.output
    assert "notes.md" not in result.output  # a broken link to no transcript is no error
    assert "5 of 5" in result.output  # three sessions, a sub-agent file and the moved one; no corpus file
    [note] = [ln for ln in result.output.splitlines() if "linked folder" in ln]
    assert note.startswith("note: skipped 2 linked folders leading outside the folder read: ")
    assert f"{projects / 'acme' / 'corpus'} -> {os.path.realpath(corpus_dir)}" in note
    assert f"{projects / 'acme' / 'up'} -> {os.path.realpath(tmp_path)}" in note
    assert "alias" not in note and "again" not in note and "moved" not in note and "inner" not in note
    assert note.endswith("To read one, pass its target: causantic batch-ingest TARGET")

    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).stdout)
    assert (stats["session_count"], stats["chunk_count"]) == (3, 6)
    scripted = json.loads(CliRunner().invoke(cli, ["batch-ingest", str(projects), "--no-embed", "--json"]).stdout)
    assert any("skipped 2 linked folders" in n for n in scripted["notes"])
