"""What a new user meets in the first hour: the quick start, `init`, help, wrong input, narrow and
piped output. Each test is something such a user ran into and that now reads or works right."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import click
import pytest
from cli_runs import cli_stdout
from click.testing import CliRunner
from process_support import EXAMPLES
from transcript_files import write_codex_rollout, write_session

from causantic.cli import output
from causantic.cli.main import cli

TURNS = [("why does the invoice export time out", "The export query scans every invoice; I added an index.")]


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty HOME of the user's own (no agent has written anything yet), without embedding."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "false")
    return home


def test_batch_ingest_reads_claude_codes_sessions_where_claude_config_dir_puts_them(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code keeps its sessions in $CLAUDE_CONFIG_DIR/projects when that is set (init already
    registered the hooks there); batch-ingest looked in ~/.claude/projects only and, finding nothing,
    ingested the bundled examples instead of the user's sessions."""
    config_dir = tmp_path / "claude-config"
    write_session(config_dir / "projects", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000001", TURNS)
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    shown = CliRunner().invoke(cli, ["batch-ingest", "--json"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    report = json.loads(shown.stdout)
    assert report["session_count"] == 1 and report["chunks_added"] == 1 and "bundled example" not in shown.output


def test_init_ingests_the_codex_sessions_it_registers_the_server_for(user_home: Path) -> None:
    """A Codex CLI user with no Claude Code sessions: init registered the MCP server with Codex, then
    ingested nothing (it read ~/.claude/projects only), so the server answered from empty memory."""
    write_codex_rollout(user_home / ".codex" / "sessions", "/work/billing", "019a-thread-1", TURNS)
    shown = CliRunner().invoke(cli, ["init", "--yes", "--no-check"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "Ingest summary" in shown.output and "registered with Codex CLI in" in shown.output
    stats = json.loads(CliRunner().invoke(cli, ["stats", "--json"], catch_exceptions=False).stdout)
    assert stats["sources"]["codex"] == {"session_count": 1, "chunk_count": 1}


def test_uninstall_asks_about_every_agents_file_in_one_list(user_home: Path) -> None:
    """It asked 'Remove the causantic MCP server from … and its hooks from …, the server from
    ~/.codex/config.toml?': the last file tacked on after a comma."""
    (user_home / ".codex").mkdir()
    (user_home / ".gemini").mkdir()
    CliRunner().invoke(cli, ["init", "--yes", "--no-ingest", "--no-check"], catch_exceptions=False)
    asked = CliRunner().invoke(cli, ["uninstall"], input="n\n").output
    claude, codex, gemini = user_home / ".claude", user_home / ".codex", user_home / ".gemini"
    assert (
        f"Remove the causantic MCP server from {user_home / '.claude.json'} and its hooks from "
        f"{claude / 'settings.json'}, and the same server from {codex / 'config.toml'} and "
        f"{gemini / 'settings.json'}? [y/N]"
    ) in asked, asked
    (user_home / ".claude.json").unlink()
    (claude / "settings.json").unlink()
    asked = CliRunner().invoke(cli, ["uninstall"], input="n\n").output
    assert (
        f"Remove the causantic MCP server from {codex / 'config.toml'} and {gemini / 'settings.json'}? [y/N]" in asked
    )


def test_without_the_topics_extra_an_empty_topic_list_says_what_to_install_not_to_cluster(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default install leaves scikit-learn out: `clusters` said topics appear after `causantic
    cluster` or a batch ingest, and neither makes any without it (cluster then names the package)."""
    import causantic.cluster

    write_session(tmp_path / "sessions", "/work/shop", "5b1f0c2e-0000-4000-8000-00000000000e", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions"), "--no-embed"], catch_exceptions=False)
    monkeypatch.setattr(causantic.cluster, "topics_available", lambda: False)  # as without the extra
    said = CliRunner().invoke(cli, ["clusters"], catch_exceptions=False).stdout.strip()
    assert said == f"No topics: {causantic.cluster.TOPICS_HINT} Then run `causantic cluster`."


def test_without_the_topics_extra_ingest_leaves_it_unsaid_and_stats_says_what_to_install(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every ingest's summary ended 'topics │ off (needs scikit-learn: `pip install scikit-learn`)';
    `stats` said nothing of it. The ingest's --json keeps saying it, with the command that works."""
    import causantic.cluster

    monkeypatch.setattr(causantic.cluster, "topics_available", lambda: False)  # as without the extra
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "true")  # topics are maintained after embedding
    write_session(tmp_path / "one", "/work/shop", "5b1f0c2e-0000-4000-8000-00000000000f", TURNS)
    summary = CliRunner().invoke(cli, ["ingest", str(tmp_path / "one")], catch_exceptions=False).output
    assert "chunks added" in summary and "topics" not in summary and "scikit-learn" not in summary
    write_session(tmp_path / "two", "/work/shop", "5b1f0c2e-0000-4000-8000-000000000010", TURNS)
    as_json = json.loads(cli_stdout("ingest", str(tmp_path / "two"), "--json"))
    assert as_json["topics_note"] == "off (needs scikit-learn: `pip install 'causantic[topics]'`)"
    shown = CliRunner().invoke(cli, ["stats"], catch_exceptions=False)
    assert f"Note: {causantic.cluster.TOPICS_HINT}" in " ".join(shown.output.split())
    assert "`pip install 'causantic[topics]'`" in causantic.cluster.TOPICS_HINT  # not '.[topics]': a clone's only
    assert json.loads(cli_stdout("stats", "--json"))["topics_off"] == causantic.cluster.TOPICS_HINT
    monkeypatch.setattr(causantic.cluster, "topics_available", lambda: True)
    assert json.loads(cli_stdout("stats", "--json"))["topics_off"] is None


def _command_paths(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if not isinstance(command, click.Group):
        return [path]
    ctx = click.Context(command)
    found = [path]
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            found += _command_paths(sub, (*path, name))
    return found


@pytest.mark.parametrize("width", [40, 50, 60])
def test_help_never_cuts_a_word_at_its_hyphen(width: int) -> None:
    """click wrapped after hyphens: 'causantic reconstruct myapp (then: --session 3f2a1b, or --days-'
    ended one line and 'back 1 --full)' began the next; '--source' said 'claude-' / 'code'."""
    cut = {}
    for path in _command_paths(cli):
        shown = CliRunner().invoke(cli, [*path, "--help"], terminal_width=width)
        assert shown.exit_code == 0 and "\u2011" not in shown.output, (path, shown.output)
        lines = [line for line in shown.output.splitlines() if re.search(r"\w-$", line)]
        if lines:
            cut[" ".join(path) or "causantic"] = lines
    assert not cut, cut


def test_config_says_where_each_value_was_set_as_the_dashboard_does(
    causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`causantic config` showed a value and its default but not what set it, so a user could not tell
    which file or variable to edit (the dashboard's settings page said it)."""
    causantic_home.mkdir()
    (causantic_home / "config.json").write_text('{"episodes": {"maxTokens": 1500}}')
    monkeypatch.setenv("CAUSANTIC_RETRIEVAL_MMR_LAMBDA", "0.5")
    monkeypatch.setattr(output.console, "width", 400)  # a table, not blocks, beside this test's long path
    shown = CliRunner().invoke(cli, ["config"], catch_exceptions=False)
    rows = {
        line.split("│")[0].strip(): [cell.strip() for cell in line.split("│")[1:4]]
        for line in shown.stdout.splitlines()[2:]
    }
    assert rows["retrieval.mmrLambda"] == ["0.5", "0.7", "$CAUSANTIC_RETRIEVAL_MMR_LAMBDA"]
    assert rows["episodes.maxTokens"] == ["1500", "2500", str(causantic_home / "config.json")]
    assert rows["chunking.maxTokens"] == ["400", "400", ""]
    keys = json.loads(CliRunner().invoke(cli, ["config", "--json"], catch_exceptions=False).stdout)
    assert keys["retrieval.mmrLambda"]["set_in"] == "environment variable CAUSANTIC_RETRIEVAL_MMR_LAMBDA"
    assert keys["chunking.maxTokens"]["set_in"] == "default"


def test_a_refused_setting_names_the_variable_or_file_that_set_it(
    causantic_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'Invalid configuration: retrieval.defaultLimit: Input should be a valid integer' left the user
    to search config.json, the project's file and the environment for the culprit."""
    monkeypatch.setenv("CAUSANTIC_RETRIEVAL_DEFAULT_LIMIT", "ten")
    shown = CliRunner().invoke(cli, ["search", "invoice export"])
    assert shown.exit_code == 1
    assert "retrieval.defaultLimit (set in environment variable CAUSANTIC_RETRIEVAL_DEFAULT_LIMIT):" in shown.output
    monkeypatch.delenv("CAUSANTIC_RETRIEVAL_DEFAULT_LIMIT")
    causantic_home.mkdir()
    (causantic_home / "config.json").write_text('{"retrieval": {"mmrLambda": 7}}')
    shown = CliRunner().invoke(cli, ["stats"])
    assert shown.exit_code == 1 and f"retrieval.mmrLambda (set in {causantic_home / 'config.json'}):" in shown.output


@pytest.mark.parametrize("command", ["search", "recall", "predict"])
def test_a_budget_too_small_for_the_best_match_says_so_instead_of_hiding_it(
    user_home: Path, tmp_path: Path, command: str
) -> None:
    """`search "jupyter notebook" --max-tokens 100` answered 'Found 1 weakly related memory chunk …
    none reaching 10% relevance' while three matches of 43-59% were each larger than 100 tokens;
    recall told a 5% episode in place of the 59% one."""
    answer = "I added a composite index on invoices(customer_id, issued_at) to the export query. " * 12
    write_session(
        tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000002", [TURNS[0][:1] + (answer,)]
    )
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False)
    shown = CliRunner().invoke(cli, [command, "invoice export time out", "--max-tokens", "150"], catch_exceptions=False)
    assert shown.exit_code == 0
    assert "1 better match left out, larger than the 150-token budget (the smallest needs " in shown.output
    assert "a larger budget (max tokens) shows it" in shown.output
    roomy = CliRunner().invoke(cli, [command, "invoice export time out"], catch_exceptions=False).output
    assert "better match" not in roomy and "composite index" in roomy


@pytest.mark.parametrize("command", ["search", "recall", "predict"])
def test_an_unquoted_query_is_read_as_one_query(user_home: Path, tmp_path: Path, command: str) -> None:
    """`causantic search invoice export time out` stopped at 'Got unexpected extra argument (export)'."""
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000003", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False)
    unquoted = CliRunner().invoke(cli, [command, "invoice", "export", "--json", "time", "out"], catch_exceptions=False)
    assert unquoted.exit_code == 0, unquoted.output
    answer = json.loads(unquoted.stdout)
    assert answer["query"] == "invoice export time out" and not answer["nothing_relevant"]
    quoted = CliRunner().invoke(cli, [command, "invoice export time out", "--json"], catch_exceptions=False)
    assert json.loads(quoted.stdout) == answer


def test_dates_take_minutes_and_offsets_as_the_help_says_and_a_wrong_one_is_told_in_examples(
    user_home: Path, tmp_path: Path
) -> None:
    """The help said 'UTC when no offset' but click.DateTime refused '2026-11-02T11:00+02:00' and
    '2026-11-02T09:30' alike, in strftime codes: "does not match the formats '%Y-%m-%d', …"."""
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000004", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False)

    def sessions(*args: str) -> int:
        shown = CliRunner().invoke(cli, ["list-sessions", "billing", "--json", *args], catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        return int(json.loads(shown.stdout)["total"])

    assert sessions("--from", "2026-11-02T10:30+02:00", "--to", "2026-11-02T11:30+02:00") == 1  # 09:00 UTC
    assert sessions("--from", "2026-11-02T09:30") == 0
    wrong = CliRunner().invoke(cli, ["forget", "billing", "--before", "yesterday"])
    assert wrong.exit_code == 2 and "%Y" not in wrong.output
    assert "'yesterday' is not a date or time: write 2026-03-01, 2026-03-01T09:00 or" in wrong.output


def test_a_forget_with_yes_that_matches_nothing_says_so_in_words(user_home: Path, tmp_path: Path) -> None:
    """Running `forget … --yes` a second time said '0 chunks in 0 sessions of the whole project … deleted.'"""
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000005", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False)
    first = CliRunner().invoke(cli, ["forget", "billing", "--yes"], catch_exceptions=False)
    assert first.exit_code == 0 and first.stdout.startswith(
        "1 chunk in 1 session of the whole project 'billing' deleted."
    )
    again = CliRunner().invoke(cli, ["forget", "billing", "--yes"], catch_exceptions=False)
    assert again.exit_code == 0 and again.stdout.strip() == "Nothing in 'billing' matches: nothing was deleted."


def test_init_names_each_backup_after_the_agent_whose_file_it_is(user_home: Path, causantic_home: Path) -> None:
    """Claude Code's and Gemini CLI's settings.json were both backed up as 'settings.json.<time>.bak',
    so a user restoring one could not tell which was which but by the time in their names."""
    (user_home / ".claude").mkdir()
    (user_home / ".claude" / "settings.json").write_text('{"permissions": {"allow": []}}\n')
    (user_home / ".gemini").mkdir()
    (user_home / ".gemini" / "settings.json").write_text('{"theme": "Dracula"}\n')
    shown = CliRunner().invoke(cli, ["init", "--yes", "--no-ingest", "--no-check"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    backups = sorted(p.name.split(".20")[0] for p in (causantic_home / "backups").iterdir())
    assert backups == ["claude-settings.json", "gemini-settings.json"], backups
    assert f"(backup: {causantic_home / 'backups' / 'gemini-settings.json.'}" in shown.output
    restored = {p.name.split(".20")[0]: p.read_text() for p in (causantic_home / "backups").iterdir()}
    assert restored["gemini-settings.json"] == '{"theme": "Dracula"}\n'


def test_every_list_in_json_comes_in_an_object_that_names_it() -> None:
    """`models --json` printed a bare array where list-projects, list-sessions and clusters print an
    object naming their list, so one script could not read them alike (`jq .models`)."""
    for command, key in (("models", "models"), ("list-projects", "projects"), ("clusters", "topics")):
        shown = CliRunner().invoke(cli, [command, "--json"], catch_exceptions=False)
        assert shown.exit_code == 0, shown.output
        answer = json.loads(shown.stdout)
        assert isinstance(answer, dict) and isinstance(answer[key], list), (command, answer)
    models = json.loads(CliRunner().invoke(cli, ["models", "--json"]).stdout)["models"]
    assert {"id": "all-minilm-l6-v2", "dims": 384, "status": "ready"}.items() <= models[0].items()


def test_the_ingest_summary_says_how_many_of_the_new_chunks_joined_topics(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'topics  0 new chunks joined existing topics' was printed both when nothing was new (--force)
    and when 25 new chunks joined none, which read as if the ingest had added nothing."""
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "true")
    monkeypatch.setenv("CAUSANTIC_CLUSTERING_MIN_CLUSTER_SIZE", "2")  # topics among the six example chunks
    examples = CliRunner().invoke(cli, ["ingest", str(EXAMPLES)], catch_exceptions=False)
    assert examples.exit_code == 0 and "topics over" in CliRunner().invoke(cli, ["cluster"]).output
    again = CliRunner().invoke(cli, ["ingest", "--force", str(EXAMPLES)], catch_exceptions=False).stdout
    assert "topics                │ unchanged: no new chunks" in again, again
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000006", TURNS)
    new = CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False).stdout
    assert re.search(r"topics +│ [01] of 1 new chunk joined existing topics", new), new


def test_a_page_past_the_end_is_an_error_not_an_answer(user_home: Path, tmp_path: Path) -> None:
    """`reconstruct billing --page 99` said 'Page 99 is past the end' on stdout and exited 0, so a
    script paging until an error never stopped."""
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000007", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False)
    shown = CliRunner().invoke(cli, ["reconstruct", "billing", "--page", "99"])
    assert shown.exit_code == 1 and shown.stdout == ""
    assert "Error: Page 99 is past the end: 'billing' has 1 page here; use --page 1." in shown.stderr
    assert CliRunner().invoke(cli, ["reconstruct", "billing", "--page", "1"]).exit_code == 0


def test_after_a_clustering_that_found_no_topic_the_summary_does_not_say_to_cluster_for_topics(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Right after `causantic cluster` said no four chunks were alike, the next ingest's summary said
    'none yet: they form after 200 new embedded chunks (0 so far) or with `causantic cluster`'."""
    monkeypatch.setenv("CAUSANTIC_EMBEDDING_EAGER", "true")
    CliRunner().invoke(cli, ["ingest", str(EXAMPLES)], catch_exceptions=False)
    assert "found no such group" in CliRunner().invoke(cli, ["cluster"]).output
    write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000008", TURNS)
    summary = CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False).stdout
    assert "none: the last clustering found no 4 alike chunks (clustering.minClusterSize); it runs again" in summary
    assert "none yet" not in summary


def test_a_file_that_is_no_transcript_is_named_as_one_in_no_format_not_as_damaged_lines(
    user_home: Path, tmp_path: Path
) -> None:
    """`causantic ingest notes.txt` said 'damaged lines skipped: invalid json 3', as if a transcript
    were broken, where a Cursor file gets the note that Causantic does not read its format."""
    notes = tmp_path / "notes.txt"
    notes.write_text("things to do\nrefactor the invoice export\n\n  call Sam\n")
    shown = CliRunner().invoke(cli, ["ingest", str(notes), "--no-embed"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    said = " ".join(shown.output.split())
    assert "note: 1 file in no format Causantic reads (it reads the sessions of Claude Code, Codex CLI, " in said
    assert said.endswith(f"so nothing of it is in memory: {notes}")
    # The note leads: no 12-row summary of zeros above it (files read 1 of 1, sessions 0, chunks 0, ...).
    assert said.startswith("note: 1 file in no format") and "│" not in said and "Ingest summary" not in said
    as_json = json.loads(cli_stdout("ingest", str(notes), "--no-embed", "--force", "--json"))
    assert (as_json["files"], as_json["session_count"], as_json["chunks_added"]) == (1, 0, 0) and as_json["notes"]
    # A transcript with a broken line is still one: its line is counted as damaged, nothing noted.
    session = write_session(tmp_path / "sessions", "/work/billing", "5b1f0c2e-0000-4000-8000-000000000006", TURNS)
    session.write_text(session.read_text() + '{"type": "user", "mess\n')
    shown = CliRunner().invoke(cli, ["ingest", str(session), "--no-embed"], catch_exceptions=False)
    said = " ".join(shown.output.split())
    assert "damaged lines skipped │ invalid json 1" in said and "no format" not in said


def test_a_project_forgotten_whole_is_unknown_to_the_filters_as_to_list_projects(
    user_home: Path, tmp_path: Path
) -> None:
    """After `forget billing`, `search --project billing` said 'no matching chunks', as if billing
    were still there to search, where list-projects no longer shows it and a typo gets the list."""
    sessions = tmp_path / "sessions"
    write_session(sessions, "/work/billing", "5b1f0c2e-0000-4000-8000-000000000009", TURNS)
    write_session(sessions, "/work/shop", "5b1f0c2e-0000-4000-8000-00000000000a", TURNS)
    CliRunner().invoke(cli, ["ingest", str(sessions), "--no-embed"], catch_exceptions=False)
    CliRunner().invoke(cli, ["forget", "billing", "--yes"], catch_exceptions=False)
    unknown = "No project named 'billing' in memory (known: shop; list-projects shows each with its path)."
    for command in (["search", "--project", "billing", "invoice"], ["list-sessions", "billing"]):
        shown = CliRunner().invoke(cli, command, catch_exceptions=False)
        assert shown.exit_code == 1 and unknown in shown.output, shown.output
    again = CliRunner().invoke(cli, ["forget", "billing", "--yes"], catch_exceptions=False)
    assert again.stdout.strip() == "Nothing in 'billing' matches: nothing was deleted."
    found = CliRunner().invoke(cli, ["search", "--project", "shop", "invoice"], catch_exceptions=False)
    assert found.exit_code == 0 and "[Project: shop" in found.output, found.output


def test_a_new_projects_folder_gets_a_plain_answer_where_a_misspelt_name_gets_an_error(
    user_home: Path, tmp_path: Path
) -> None:
    """`search --project /work/newapp` (a folder memory has never seen) failed with 'Error: No project
    named …' and exit 1, as a misspelt name does; it is a plain answer, as the MCP tools give it."""
    write_session(tmp_path / "sessions", "/work/shop", "5b1f0c2e-0000-4000-8000-00000000000c", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions"), "--no-embed"], catch_exceptions=False)
    plain = "yet: its sessions are remembered once ingested (known projects: shop)."
    searched = CliRunner().invoke(cli, ["search", "--project", "/work/newapp", "invoice"], catch_exceptions=False)
    listed = CliRunner().invoke(cli, ["reconstruct", "/work/newapp/src"], catch_exceptions=False)
    assert searched.exit_code == 0 and searched.stdout.strip() == f"Nothing in memory for /work/newapp {plain}"
    assert listed.exit_code == 0 and listed.stdout.strip() == f"Nothing in memory for /work/newapp/src {plain}"
    typo = CliRunner().invoke(cli, ["list-sessions", "shpo"], catch_exceptions=False)
    assert typo.exit_code == 1 and "No project named 'shpo' in memory: did you mean shop?" in typo.output


def test_project_dot_names_the_project_of_the_folder_the_command_runs_in(
    user_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--project .` failed with "No project named '.'", where the help says the current working
    directory works; so did `..` and `src` typed from inside the project."""
    shop = tmp_path / "work" / "shop"
    (shop / "src").mkdir(parents=True)
    write_session(tmp_path / "sessions", str(shop), "5b1f0c2e-0000-4000-8000-00000000000d", TURNS)
    CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions"), "--no-embed"], catch_exceptions=False)
    monkeypatch.chdir(shop / "src")
    for args in (["search", "--project", ".", "invoice"], ["list-sessions", ".."], ["reconstruct", "."]):
        done = CliRunner().invoke(cli, args, catch_exceptions=False)
        assert done.exit_code == 0 and "shop" in done.stdout and "No project" not in done.output, (args, done.output)
    monkeypatch.chdir(shop)
    done = CliRunner().invoke(cli, ["list-sessions", "src"], catch_exceptions=False)
    assert done.exit_code == 0 and "shop: 1 of 1 session" in done.stdout, done.output
    monkeypatch.chdir(tmp_path)
    new = CliRunner().invoke(cli, ["search", "--project", ".", "invoice"], catch_exceptions=False)
    assert new.stdout.startswith(f"Nothing in memory for {tmp_path} yet"), new.output


def test_stats_counts_the_files_an_upgrade_cleared_the_marks_of_as_the_next_ingest_reads_them(
    user_home: Path, causantic_home: Path
) -> None:
    """A store upgraded from an old release (m008 cleared every file's mark) had `stats` say no file
    would be read again, while the next batch-ingest read every one of them."""
    session = "5b1f0c2e-0000-4000-8000-00000000000b"
    write_session(user_home / ".claude" / "projects" / "-work-billing", "/work/billing", session, TURNS)
    write_codex_rollout(user_home / ".codex" / "sessions", "/work/billing", "019a-thread-2", TURNS)
    CliRunner().invoke(cli, ["batch-ingest", "--no-embed"], catch_exceptions=False)
    with sqlite3.connect(causantic_home / "memory.db") as db:
        db.execute("DELETE FROM files")  # what migration m008 did to an older release's store
    db.close()
    stats = json.loads(cli_stdout("stats", "--json"))
    ingest = json.loads(cli_stdout("batch-ingest", "--no-embed", "--json"))
    assert stats["files_under_older_rules"] == ingest["files"] - ingest["files_unchanged"] == 2
    said = CliRunner().invoke(cli, ["stats"], catch_exceptions=False).output
    assert "rules" not in said and ingest["files_unchanged"] == 0
