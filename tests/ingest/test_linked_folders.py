"""batch-ingest follows symbolic links: a project folder linked in from elsewhere is read, a link
back up the tree is read once (no loop, no duplicates), and a broken link is named in the summary."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from causantic.cli.main import cli
from causantic.examples import SESSIONS_DIR

ACME = SESSIONS_DIR / "-home-dev-acme-shop"
LOOSE = "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"  # one of acme-shop's three sessions


def test_linked_project_folders_and_files_are_read_once_and_a_broken_link_is_named(tmp_path: Path) -> None:
    elsewhere = tmp_path / "other-disk"
    shutil.copytree(ACME, elsewhere / "acme")
    (elsewhere / "acme" / LOOSE).rename(elsewhere / LOOSE)
    projects = tmp_path / "projects"
    (projects / "single").mkdir(parents=True)
    (projects / "acme").symlink_to(elsewhere / "acme", target_is_directory=True)
    (projects / "single" / LOOSE).symlink_to(elsewhere / LOOSE)
    (projects / "single" / "again").symlink_to(projects, target_is_directory=True)  # a cycle
    (projects / "gone").symlink_to(tmp_path / "moved-away", target_is_directory=True)

    result = CliRunner().invoke(cli, ["batch-ingest", str(projects), "--no-embed"])
    assert result.exit_code == 1, result.output  # the broken link could not be read
    assert f"{projects / 'gone'}: broken link" in result.output and str(tmp_path / "moved-away") in result.output
    assert "4 of 4" in result.output  # three sessions and a sub-agent file, each once

    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json"]).stdout)
    assert (stats["sessions"], stats["chunks"]) == (3, 6)
