"""``causantic vacuum`` as a person and a script meet it: it checks the free disk first and says what
it needs where, shows that it works on a terminal, prints only its result when piped, and
``--json`` for scripts. Real SQLite files; the command as a real process where a terminal matters.

A disk short of room cannot be made here, so one test has ``shutil.disk_usage`` report little free
space: the only stand-in in this module."""

from __future__ import annotations

import json
import os
import pty
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from process_support import subprocess_env
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.facade import Memory


def _forgotten_space(home: Path, folder: Path) -> int:
    """A memory.db made by an earlier release (no auto-vacuum) holding forgotten memory's free pages;
    their bytes."""
    home.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(home / "memory.db") as conn:
        conn.execute("PRAGMA journal_mode = WAL")
    for n in range(8):
        turns = [(f"step {n}.{t}: " + " ".join(f"word{n}x{t}x{w}" for w in range(300)), f"done {n}") for t in range(12)]
        write_session(folder, "/work/shop" if n < 6 else "/work/blog", f"{n:08x}-0000-4000-8000-{n:012d}", turns)
    with Memory(home) as memory:
        memory.ingest([folder], embed=False)
        return memory.forget("shop", dry_run=False).free_bytes


def _files(home: Path) -> tuple[int, int]:
    with sqlite3.connect(home / "memory.db") as conn:
        free = conn.execute("PRAGMA freelist_count").fetchone()[0]
    return (home / "memory.db").stat().st_size, free


def test_vacuum_without_room_on_the_disk_says_what_it_needs_where_and_changes_nothing(
    tmp_path: Path, causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _forgotten_space(causantic_home, tmp_path / "projects") > 0
    before = _files(causantic_home)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("SQLITE_TMPDIR", str(scratch))  # where SQLite writes its temporary copy
    full = shutil.disk_usage(scratch)._replace(free=100_000)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: full)

    done = CliRunner().invoke(cli, ["vacuum"])

    assert done.exit_code == 1
    said = " ".join(done.output.split())
    assert f"Not enough free disk space to vacuum {causantic_home / 'memory.db'}" in said
    assert "SQLite's temporary copy (" in said and f"in {scratch}" in said
    assert "the rebuilt file's write-ahead log (" in said and f"in {causantic_home}" in said
    assert "where 100.0 KB is free" in said and "SQLITE_TMPDIR" in said and "memory.db is unchanged" in said
    assert _files(causantic_home) == before  # nothing rebuilt, the free pages still inside


def test_vacuum_says_forget_now_gives_space_back_only_when_it_turned_that_on(
    tmp_path: Path, causantic_home: Path
) -> None:
    _forgotten_space(causantic_home, tmp_path / "projects")  # a file an earlier release made
    runner = CliRunner()
    first = runner.invoke(cli, ["vacuum"], catch_exceptions=False)
    again = runner.invoke(cli, ["vacuum"], catch_exceptions=False)  # the file now gives it back already

    assert "From now on forget gives the space it frees back by itself." in first.output
    assert again.exit_code == 0 and "From now on" not in again.output
    assert json.loads(runner.invoke(cli, ["vacuum", "--json"]).output)["reclaimed_before"] is True


@pytest.mark.slow
def test_vacuum_shows_it_works_on_a_terminal_and_prints_only_its_result_when_piped(
    tmp_path: Path, causantic_home: Path
) -> None:
    _forgotten_space(causantic_home, tmp_path / "projects")
    primary, secondary = pty.openpty()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "causantic", "vacuum"],
            stdin=secondary,
            stdout=secondary,
            stderr=secondary,
            env=subprocess_env(COLUMNS="80"),
        )
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=120) == 0
    finally:
        os.close(primary)
    text = shown.decode()
    assert "Rebuilding memory.db" in text and "0:00:0" in text  # the spinner's line, with the time elapsed
    assert "given back to the disk" in text

    piped = subprocess.run(
        [sys.executable, "-m", "causantic", "vacuum"], capture_output=True, text=True, env=subprocess_env(), timeout=120
    )
    assert piped.returncode == 0 and piped.stderr == ""
    assert piped.stdout.startswith("memory.db: ") and "\x1b" not in piped.stdout and "Rebuilding" not in piped.stdout
    scripted = subprocess.run(
        [sys.executable, "-m", "causantic", "vacuum", "--json"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=120,
    )
    out = json.loads(scripted.stdout)
    assert out["reclaims"] is True and out["bytes_after"] <= out["bytes_before"]
