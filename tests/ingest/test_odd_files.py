"""Files named like transcripts that are none: a named pipe, a loop of links. `causantic ingest` of
their folder finishes, reads the real sessions beside them, and names each odd file once, saying
what it is (a pipe was opened and waited on for a writer forever; a loop was called a broken link
to a target that "does not exist")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from process_support import causantic, subprocess_env
from transcript_files import write_session

pytestmark = pytest.mark.slow  # a real `causantic ingest`


def test_a_pipe_and_a_link_loop_named_like_transcripts_are_named_and_the_rest_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "projects"
    session = write_session(folder, "/work/shop", "a1b2c3d4-0000-4000-8000-000000000001", [("fix the build", "done")])
    pipe = session.with_name("b1b2c3d4-0000-4000-8000-000000000002.jsonl")
    os.mkfifo(pipe)  # nobody ever writes to it
    first, second = session.with_name("loop-a.jsonl"), session.with_name("loop-b.jsonl")
    first.symlink_to(second)
    second.symlink_to(first)

    done = causantic(
        "ingest", "--no-embed", str(folder), env=subprocess_env(CAUSANTIC_HOME=str(tmp_path / "home")), timeout=60
    )

    assert done.returncode == 1, done.stdout + done.stderr  # the odd files could not be read
    assert "Traceback" not in done.stderr
    assert f"{pipe}: not a regular file (a pipe, socket or device): not read" in done.stdout
    assert f"{first}: link loop: its target {second} leads back to it" in done.stdout
    assert f"{second}: link loop: its target {first} leads back to it" in done.stdout
    assert "1 of 1" in done.stdout  # the real session was read
