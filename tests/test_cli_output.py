"""What every command's output shares: progress lines that fit a narrow terminal, text shown as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from transcript_files import write_session

from causantic.cli import output
from causantic.cli.ingest_commands import ingest_detail
from causantic.cli.main import cli
from causantic.cli.output import line, progress_bars, table
from causantic.retrieval.format import counted


@pytest.mark.parametrize("width", [40, 60])
@pytest.mark.parametrize("detail", [True, False])
def test_progress_lines_keep_their_counts_whole_in_a_narrow_terminal(
    detail: bool, width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 60 columns the count and the elapsed time used to show as "5…" and "0…"; at 40 the
    embedding line read 'Embedding chunks ━━━━━━ 316/3… … 0:00:04'."""
    monkeypatch.setattr(output.console, "width", width)
    progress = progress_bars(detail=detail)
    task = progress.add_task("Ingesting files", total=54, detail="3.6/3.6 MB · 2.4 MB/s · 198 chunks")
    progress.update(task, completed=54)
    embed = progress.add_task("Embedding chunks", total=316, detail="56.0 chunks/s")
    progress.update(embed, completed=256)
    with output.console.capture() as captured:
        output.console.print(progress.make_tasks_table(progress.tasks))
    ingesting, embedding = captured.get().rstrip("\n").splitlines()
    assert "Ingesting files" in ingesting and " 54/54 " in ingesting and ingesting.endswith("0:00:00")
    assert "Embedding chunks" in embedding and " 256/316 " in embedding and embedding.endswith("0:00:00")
    assert max(len(ingesting), len(embedding)) <= width


@pytest.mark.parametrize("width", [80, 100])
def test_the_ingest_line_of_an_80_column_terminal_shows_the_chunk_count_and_the_rate_whole(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'Ingesting files ━━━━━━━━━━━━━━ 42/42 4.5 MB/4.5 MB · 4.4 MB/s · 316 chu… 0:00:01': the cut fell
    on the chunk count, the one figure that says what the ingest found; then, at 80 and 100 columns,
    on the rate ('316 chunks · 4.5 MB/4.5 MB ·…')."""
    monkeypatch.setattr(output.console, "width", width)
    progress = progress_bars(detail=True)
    detail = ingest_detail(316, 4_500_000, 4_500_000, 1.02)
    task = progress.add_task("Ingesting files", total=42, detail=detail)
    progress.update(task, completed=42)
    with output.console.capture() as captured:
        output.console.print(progress.make_tasks_table(progress.tasks))
    shown = captured.get().rstrip("\n")
    assert " 42/42 " in shown and "316 chunks · 4.4 MB/s · " in shown and len(shown) <= width


def test_text_on_a_terminal_keeps_what_looks_like_an_emoji_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk's code read ``arr[1💯2]`` on a terminal: rich turned ``:100:`` into an emoji."""
    monkeypatch.setenv("FORCE_COLOR", "1")  # as on a terminal: printed by rich
    with output.console.capture() as captured:
        line("step = arr[1:100:2]  # :x: marks a failure")
    assert "step = arr[1:100:2]  # :x: marks a failure" in captured.get()


def test_table_cells_are_shown_as_written_not_read_as_markup(capsys: pytest.CaptureFixture[str]) -> None:
    """A project named "[trimmed for fixture]" (one is in the corpus) showed as an empty cell in
    list-projects, and a value holding "[/x]" stopped the command with rich's MarkupError."""
    table("Projects [bold]", [("project", "left"), ("path", "left")], [["[trimmed for fixture]", "/tmp/[/x]/a"]])
    printed = capsys.readouterr().out
    assert "Projects [bold]" in printed and "[trimmed for fixture]" in printed and "/tmp/[/x]/a" in printed


def test_an_ingest_error_on_a_path_with_brackets_is_reported_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder named like a rich closing tag ("[/x]") made the ingest summary raise MarkupError."""
    folder = tmp_path / "[/x]"
    folder.mkdir(parents=True)
    (folder / "gone.jsonl").symlink_to(tmp_path / "nowhere.jsonl")
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    result = CliRunner().invoke(cli, ["ingest", "--no-embed", str(tmp_path / "[")], catch_exceptions=False)
    assert result.exit_code == 1
    assert f"error {folder / 'gone.jsonl'}: broken link" in result.output


def test_ingest_of_a_folder_without_transcripts_says_so_and_workers_must_be_at_least_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty folder gave a summary table of zeros, and --workers 0 or -3 was taken without a word."""
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    empty = tmp_path / "empty"
    empty.mkdir()
    done = CliRunner().invoke(cli, ["batch-ingest", str(empty), "--no-embed"], catch_exceptions=False)
    assert done.exit_code == 0
    assert done.output == f"No transcripts in {empty}: no Claude Code, Codex CLI or Gemini CLI session files.\n"
    refused = CliRunner().invoke(cli, ["batch-ingest", str(empty), "--workers", "0"])
    assert refused.exit_code == 2 and "0 is not in the range x>=1" in refused.output


def test_a_count_of_one_reads_in_the_singular_and_large_counts_have_separators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory holding one chunk read "1 chunks have no vector, so vector search cannot find them" in
    `causantic stats` and "Embedded 1 chunks; 1 vectors" in `causantic embed`."""
    write_session(tmp_path / "projects", "/work/shop", "s1-session", [("Why does invoice 1 fail?", "Tax rounding.")])
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    ingested = runner.invoke(cli, ["ingest", "--no-embed", str(tmp_path / "projects")], catch_exceptions=False)
    assert ingested.exit_code == 0, ingested.output
    stats = runner.invoke(cli, ["stats"], catch_exceptions=False)
    assert "Warning: 1 chunk has no vector, so vector search cannot find it." in stats.stderr
    # sizes in the unit that says something, as the ingest summary's: "0.0 MB" said nothing
    assert re.search(r"vectors in it +│ \d+(\.\d)? (B|KB)\n", stats.stdout), stats.stdout
    embedded = runner.invoke(cli, ["embed"], catch_exceptions=False)
    assert "Embedded 1 chunk; 1 vector in the index." in embedded.output
    # Counts read with separators wherever they are shown (ingest status, stats, hooks, dashboard).
    assert counted(2310, "chunk") == "2,310 chunks" and counted(1, "match", "matches") == "1 match"


def test_counts_in_tables_have_separators_as_in_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    """`causantic stats` read "chunks  123456" a line above "123,456 chunks, 12 sessions" for one store."""
    table("Memory", [("", "left"), ("", "left")], [("chunks", 123456), ("  local", "123,456 chunks"), ("agents", 1)])
    rows = [" ".join(line.replace("│", " ").split()) for line in capsys.readouterr().out.splitlines()]
    assert rows[1:] == ["chunks 123,456", "local 123,456 chunks", "agents 1"]


def test_token_counts_in_headings_have_separators(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`causantic recall` read "(6 chunks, 1608 tokens)" and `search` "(1608 tokens, hybrid)", where
    every other count reads "2,310 chunks"."""
    from causantic.examples import SESSIONS_DIR

    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    runner = CliRunner()
    assert runner.invoke(cli, ["ingest", str(SESSIONS_DIR)], catch_exceptions=False).exit_code == 0
    query = "invoice test rate limiting redirect login"  # matches all three example sessions
    # search is not among them: its weak hits take a line each, and on the examples its answer tells
    # fewer than 1,000 tokens (its heading counts through the same wording.counted).
    commands = (["recall", query], ["predict", query], ["reconstruct", "acme-shop", "--full"])
    heads = [runner.invoke(cli, command, catch_exceptions=False).output.splitlines()[0] for command in commands]
    counts = [re.search(r"([\d,]+) tokens", head) for head in heads]
    assert all(counts), heads
    numbers = [m.group(1) for m in counts if m]
    assert all(int(n.replace(",", "")) >= 1000 for n in numbers), heads  # else the test shows nothing
    assert all(n == f"{int(n.replace(',', '')):,}" for n in numbers), heads


def test_a_tiny_ingest_at_100_columns_says_its_size_and_ends_no_line_with_a_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It read "transcript data 0.0 MB", and piped at 100 columns the embedding line wrapped with a
    trailing space ("… (interrupting is "); one chunk read 'the new chunks; embedding 1 of them'."""
    from causantic.cli import output

    write_session(tmp_path / "sessions", "/work/billing", "5c5e0000-0000-4000-8000-000000000000", [("hi", "hello")])
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setattr(output, "_consoles", {})  # made anew, as in a new process
    said = CliRunner().invoke(cli, ["ingest", str(tmp_path / "sessions")], catch_exceptions=False).output
    assert (
        "what was read; embedding 1 chunk for vector search (interrupting is safe: `causantic embed` resumes)." in said
    )
    assert re.search(r"^ transcript data +│ \d{3} B$", said, re.MULTILINE)
    assert [text for text in said.splitlines() if text != text.rstrip()] == []


def test_causantic_embed_shows_its_rate_in_a_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`causantic embed`, the long work after `batch-ingest --no-embed`, showed a count and the time
    only, where the ingest's embedding line showed chunks per second and the minutes left."""
    from io import StringIO

    from rich.console import Console

    from causantic.cli import output

    write_session(tmp_path / "sessions", "/work/billing", "5c5e0000-0000-4000-8000-000000000000", [("hi", "hello")])
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    CliRunner().invoke(cli, ["ingest", "--no-embed", str(tmp_path / "sessions")], catch_exceptions=False)
    terminal = StringIO()
    shown = Console(file=terminal, force_terminal=True, width=80, highlight=False)
    monkeypatch.setattr(output, "_consoles", {"console": shown})
    CliRunner().invoke(cli, ["embed"], catch_exceptions=False)
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())
    assert re.search(r"Embedding chunks .* 1/1 +\d+\.\d chunks/s", plain)


def test_the_ingest_summary_counts_edges_by_kind_with_separators(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'edges added │ brief 52, …, within-chain 2759' beside 'chunks added │ 3,063'."""
    turns = [(f"step {n} of the long migration", f"done with step {n}") for n in range(1_100)]
    write_session(tmp_path / "sessions", "/work/billing", "5c5e0000-0000-4000-8000-000000000000", turns)
    monkeypatch.setenv("CAUSANTIC_HOME", str(tmp_path / "home"))
    said = CliRunner().invoke(cli, ["ingest", "--no-embed", str(tmp_path / "sessions")], catch_exceptions=False).output
    edges = re.search(r"edges added +│ (.*)", said)
    assert edges and re.fullmatch(r"within-chain \d,\d{3}", edges.group(1)), said


def test_list_projects_at_80_columns_keeps_a_row_per_project_with_its_path_below(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In the commonest terminal, 80 columns, list-projects printed every project as a block of six
    'header  value' lines (the path column left under 16 columns): ten projects filled 70 lines. The
    columns that fit stay a table, one line per project, and the widest value goes on the line below."""
    monkeypatch.setattr(output.console, "width", 80)
    columns = [("project", "left"), ("chunks", "right"), ("sessions", "right")]
    columns += [("first (UTC)", "left"), ("last (UTC)", "left"), ("path", "left")]
    rows = [
        [
            "example-project",
            84,
            1,
            "2025-10-08 02:43",
            "2025-10-08 17:01",
            "/Users/me/GitHub/example-org/example-project",
        ],
        ["Demo", 92, 3, "2025-09-03 00:47", "2025-09-07 09:54", "/path/to/Demo"],
    ]
    table(None, columns, rows)
    printed = capsys.readouterr().out.splitlines()
    assert all(len(text) <= 80 for text in printed), printed
    assert printed[0].split() == [
        "project",
        "┃",
        "chunks",
        "┃",
        "sessions",
        "┃",
        "first",
        "(UTC)",
        "┃",
        "last",
        "(UTC)",
    ]
    assert printed[2].split()[:3] == ["example-project", "│", "84"] and printed[2].rstrip().endswith("2025-10-08 17:01")
    assert printed[3] == "    /Users/me/GitHub/example-org/example-project"
    assert printed[4].split()[:3] == ["Demo", "│", "92"] and printed[5] == "    /path/to/Demo"
    assert len(printed) == 6


# Topics as a real memory lists them (the coding benchmark's store): keyword labels up to 67
# characters, and up to six projects each.
TOPICS = [
    (15, "hook_type, msg, invoked", 39, ("3",)),
    (83, "annotation, defmodule, transcripts", 30, tuple(f"spotter-{s}" for s in ("dov", "gqc", "0zw", "4te", "a0y"))),
    (7, "opentelemetry_exporter, opentelemetry_bandit, opentelemetry_phoenix", 12, ("spotter-4te",)),
    (72, "danieldemmel, progress, todos", 28, ("danieldemmel.me-next", "devenv/cli", "workspace/cli", "Demo")),
]


def _clusters_shown(monkeypatch: pytest.MonkeyPatch, width: int | None) -> list[str]:
    from causantic.facade import Memory
    from causantic.retrieval.listing import TopicCoverage, TopicSummary

    topics = [
        TopicSummary(n, label, size, "2026-02-11T09:00:00Z", "2026-02-12T18:30:00Z", projects)
        for n, label, size, projects in TOPICS
    ]
    monkeypatch.setattr(Memory, "topics", lambda self, project=None: topics)
    monkeypatch.setattr(Memory, "topic_coverage", lambda self, project=None: TopicCoverage(200, 109, clustered=True))
    monkeypatch.setattr(Memory, "ingests_running", lambda self: [])
    if width is not None:  # a terminal this wide (else piped: no width asked for)
        monkeypatch.setattr(output.console, "width", width)
        monkeypatch.setattr(type(output.console), "is_terminal", property(lambda self: True))
    shown = CliRunner().invoke(cli, ["clusters"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    return shown.stdout.splitlines()


@pytest.mark.parametrize("width", [80, 120])
def test_clusters_in_a_terminal_read_as_a_table_with_each_topics_projects_below_it(
    monkeypatch: pytest.MonkeyPatch, width: int
) -> None:
    """At 80 columns (and 120, with a long label) `causantic clusters` printed each topic as a block of
    six 'header  value' lines: the projects column left the others no room."""
    printed = _clusters_shown(monkeypatch, width)
    assert all(len(text) <= width for text in printed), printed
    assert printed[0].split() == ["id", "┃", "topic", "┃", "chunks", "┃", "first", "(UTC)", "┃", "last", "(UTC)"]
    assert printed[2].split() == [
        "15",
        "│",
        "hook_type,",
        "msg,",
        "invoked",
        "│",
        "39",
        "│",
        "2026-02-11",
        "│",
        "2026-02-12",
    ]
    assert printed[3] == "    3"  # its projects, below its row
    assert printed[5] == "    spotter-dov, spotter-gqc, spotter-0zw, spotter-4te, spotter-a0y"
    label = [text for text in printed if text.startswith("  7 │")]
    assert len(label) == 1 and "opentelemetry_exporter" in label[0] and "12" in label[0]
    at = printed.index(label[0])
    if width == 80:  # the long label wraps in its column, between words; the dates stay whole
        assert [text.split()[:2] for text in printed[at + 1 : at + 3]] == [
            ["│", "opentelemetry_bandit,"],
            ["│", "opentelemetry_phoenix"],
        ]
        assert "2026" not in printed[at + 1] + printed[at + 2] and printed[at + 3] == "    spotter-4te"
    else:
        assert printed[at + 1] == "    spotter-4te"
    assert printed[-1] == "91 of 200 chunks (46%) belong to no topic."


def test_clusters_piped_print_each_topic_whole_on_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    printed = _clusters_shown(monkeypatch, None)
    assert printed[0].split()[-2:] == ["┃", "projects"]
    assert printed[3].split("│")[-1].strip() == "spotter-dov, spotter-gqc, spotter-0zw, spotter-4te, spotter-a0y"
    assert len([text for text in printed if "│" in text]) == len(TOPICS)
