"""The bundled example sessions never mix with real memory, and a whole project can be forgotten
after a preview and an explicit confirmation — never more than the preview showed."""

from __future__ import annotations

import os
import pty
import select
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import cli_output
from click.testing import CliRunner
from process_support import subprocess_env
from transcript_files import write_session

from causantic.cli.main import cli
from causantic.config import Config
from causantic.examples import SESSIONS_DIR
from causantic.ingest.service import ingest_paths
from causantic.retrieval.forget import ForgetRequest, delete_previewed, forget
from causantic.services import open_services
from causantic.store.records import ChunkScope

SOUND = "daaain__claude-code-log/test/test_data/real_projects/-Users-dain-workspace-JSSoundRecorder"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_sessions_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A machine without ~/.claude/projects (nor Codex CLI or Gemini CLI sessions)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    return tmp_path / "home" / ".claude" / "projects"


def _projects() -> set[str]:
    with open_services(Config()) as services:
        return {r.name for r in services.store.project_summaries()}


@pytest.mark.slow
def test_the_quick_start_says_the_examples_are_not_memory_and_real_sessions_replace_them(
    no_sessions_here: Path, corpus_dir: Path
) -> None:
    out = cli_output("batch-ingest", "--no-embed")
    assert "bundled example sessions (project acme-shop)" in out and "removes them" in out
    assert _projects() == {"acme-shop"}
    out = cli_output("batch-ingest", str(corpus_dir / SOUND), "--no-embed")
    assert "Removed the bundled example sessions (acme-shop)" in out
    assert _projects() == {"JSSoundRecorder"}
    search = cli_output("search", "Safari login redirect loop", "--mode", "keyword", "--json")
    assert "acme-shop" not in search
    cli_output("forget", "JSSoundRecorder", "--yes")  # an emptied store gets the quick start again
    cli_output("batch-ingest", "--no-embed")
    assert _projects() == {"acme-shop"}


@pytest.mark.slow
def test_an_ingest_killed_before_it_removed_the_examples_leaves_that_to_the_next_ingest(
    no_sessions_here: Path, tmp_path: Path
) -> None:
    """Killed after its real sessions were stored, before it removed the examples: the next ingest
    (reading nothing new) kept them, mixed with real memory, until a new session came."""
    cli_output("batch-ingest", "--no-embed")  # the quick start: the examples
    real = tmp_path / "real"
    write_session(real, "/work/shop", "cccccccc-0000-4000-8000-000000000003", [("fix the build", "Fixed.")])
    dies_before_removing = (
        "import os, signal, sys\n"
        "import causantic.ingest.service as service\n"
        "service.remove_examples = lambda *_: os.kill(os.getpid(), signal.SIGKILL)\n"
        "from causantic.cli.main import main\n"
        f"sys.argv = ['causantic', 'ingest', '--no-embed', {str(real)!r}]\n"
        "main()\n"
    )
    killed = subprocess.run([sys.executable, "-c", dies_before_removing], env=subprocess_env(), timeout=120)
    assert killed.returncode == -signal.SIGKILL
    assert _projects() == {"acme-shop", "shop"}

    out = cli_output("ingest", "--no-embed", str(real))
    assert "Removed the bundled example sessions (acme-shop)" in out
    assert _projects() == {"shop"}


def test_the_examples_are_never_added_to_a_store_that_holds_real_sessions(
    no_sessions_here: Path, corpus_dir: Path
) -> None:
    cli_output("batch-ingest", str(corpus_dir / SOUND), "--no-embed")
    out = cli_output("batch-ingest", "--no-embed")
    assert "Memory already holds real sessions, so the bundled example sessions are not added" in out
    assert _projects() == {"JSSoundRecorder"}


def test_forget_with_no_filter_previews_the_whole_project_and_deletes_it_only_with_yes(no_sessions_here: Path) -> None:
    cli_output("batch-ingest", "--no-embed")
    preview = cli_output("forget", "acme-shop")
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' would be deleted." in preview
    assert "Nothing was deleted. Add --yes to delete." in preview
    assert _projects() == {"acme-shop"}
    done = cli_output("forget", "acme-shop", "--all", "--yes")
    assert "6 chunks in 3 sessions of the whole project 'acme-shop' deleted." in done
    assert _projects() == set()
    result = CliRunner().invoke(cli, ["forget", "acme-shop", "--all", "--session", "4005b823"])
    assert result.exit_code == 2 and "(--all) takes no filter: drop --before/--after/--session/--query" in result.output


def test_a_real_run_never_deletes_more_than_the_preview_showed(tmp_path: Path) -> None:
    with open_services(Config()) as services:
        ingest_paths(
            services,
            [SESSIONS_DIR / "-home-dev-acme-shop" / "2a2ee33e-fb12-5d34-8e2d-b31f59bac0ec.jsonl"],
            embed=False,
            workers=1,
        )
        preview = forget(services.store, services.vectors, None, ForgetRequest("acme-shop"))
        # The project grows between the preview and the confirmation (the current session is ingested).
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        with pytest.raises(Exception, match=f"not the {preview.count} previewed"):
            forget(
                services.store,
                services.vectors,
                None,
                ForgetRequest("acme-shop", dry_run=False, expected=preview.count),
            )
        done = delete_previewed(services.store, services.vectors, preview)
        assert done.deleted == preview.count == 2
        [acme] = services.store.find_projects("acme-shop")
        left = services.store.count_chunks(ChunkScope(project_ids=(acme.id,)))
        assert left == 4


def test_a_confirmed_forget_whose_chunks_are_already_gone_says_so_instead_of_deleting_0(tmp_path: Path) -> None:
    """Confirmed a second time (the MCP tool called twice with expected_count=3), it answered
    "Deleted 0 chunks" as a success; the preview's count no longer holds, so it is refused."""
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
        request = ForgetRequest("acme-shop", session_id="2a2ee33e", dry_run=False, expected=2)
        assert forget(services.store, services.vectors, None, request).deleted == 2
        with pytest.raises(Exception, match="0 chunks of 'acme-shop' match now, not the 2 previewed"):
            forget(services.store, services.vectors, None, request)


def _in_a_terminal(args: list[str], answer: str, env: dict[str, str]) -> str:
    """Run the CLI on a pseudo-terminal, type ``answer`` at its prompt, return what it printed."""
    main, child = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "causantic", *args], stdin=child, stdout=child, stderr=child, env=env, close_fds=True
    )
    os.close(child)
    output, answered = b"", False
    while True:
        ready, _, _ = select.select([main], [], [], 60)
        if not ready:
            process.kill()
            raise AssertionError(f"no output for 60 s; so far: {output!r}")
        try:
            data = os.read(main, 4096)
        except OSError:
            break
        if not data:
            break
        output += data
        if not answered and b"[y/N]" in output:
            os.write(main, answer.encode() + b"\n")
            answered = True
    process.wait(timeout=60)
    os.close(main)
    return output.decode("utf-8", "replace")


@pytest.mark.parametrize(("answer", "left"), [("n", {"acme-shop"}), ("y", set())])
def test_in_a_terminal_forget_asks_before_deleting_a_whole_project(
    answer: str, left: set[str], causantic_home: Path
) -> None:
    with open_services(Config()) as services:
        ingest_paths(services, [SESSIONS_DIR], embed=False, workers=1)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), "COLUMNS": "100"}
    out = _in_a_terminal(["forget", "acme-shop"], answer, env)
    assert "would be deleted" in out and "Delete these 6 chunks of 'acme-shop'?" in out
    assert _projects() == left
    assert ("6 chunks of 'acme-shop' deleted." in out) == (answer == "y")


def test_examples_copied_elsewhere_are_ordinary_sessions(tmp_path: Path, corpus_dir: Path) -> None:
    """Only the quick start marks examples: a user ingesting a folder gets what they asked for."""
    shutil.copytree(SESSIONS_DIR, tmp_path / "mine")
    cli_output("batch-ingest", str(tmp_path / "mine"), "--no-embed")
    cli_output("batch-ingest", str(corpus_dir / SOUND), "--no-embed")
    assert _projects() == {"acme-shop", "JSSoundRecorder"}
