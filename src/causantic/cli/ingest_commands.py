"""`causantic ingest` and `causantic batch-ingest`."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from causantic.cli.output import (
    chunk_rate,
    console,
    domain_errors,
    emit_json,
    interrupted_says,
    json_option,
    line,
    progress_bars,
    table,
)
from causantic.config import agent_folders, load_config
from causantic.facade import Memory
from causantic.integration.claude_files import claude_paths
from causantic.retrieval.format import byte_size, counted
from causantic.retrieval.listing import topics_off
from causantic.retrieval.output import IngestOut
from causantic.transcripts.reader import MAX_DEPTH, SkipReason

if TYPE_CHECKING:
    from rich.progress import Progress

# Files are written one session at a time and vectors one batch at a time, so all of this holds.
RESUME_NOTE = (
    "What was read and embedded so far is kept: run the same command again to finish (the files "
    "already read are skipped)."
)
WORKERS = 2  # parsing processes of a batch ingest (and of init's first ingest) unless --workers says otherwise


@click.command("ingest", short_help="Ingest transcript files or folders.")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--force", is_flag=True, help="Re-read files even when they look unchanged.")
@click.option("--no-embed", is_flag=True, help="Skip embedding now; run `causantic embed` later.")
@json_option
def ingest_command(paths: tuple[Path, ...], force: bool, no_embed: bool, as_json: bool) -> None:
    """Ingest one transcript file or folder (or several).

    Example: causantic ingest ~/.claude/projects/-Users-me-myapp/3f2a….jsonl
    """
    ingest_paths(list(paths), force=force, no_embed=no_embed, as_json=as_json, workers=1)


@click.command("batch-ingest", short_help="Ingest every agent's sessions (or a folder).")
@click.argument("folder", required=False, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Re-read files even when they look unchanged.")
@click.option("--no-embed", is_flag=True, help="Skip embedding now; run `causantic embed` later.")
@click.option("--workers", default=WORKERS, show_default=True, type=click.IntRange(1), help="Parsing processes.")
@json_option
def batch_ingest_command(folder: Path | None, force: bool, no_embed: bool, workers: int, as_json: bool) -> None:
    """Ingest every session under a folder; by default every agent's own folder that exists:
    ~/.claude/projects (Claude Code; $CLAUDE_CONFIG_DIR/projects when set), sources.codexSessions
    (Codex CLI: $CODEX_HOME/sessions or ~/.codex/sessions), sources.geminiSessions (Gemini CLI:
    ~/.gemini/tmp), sources.copilotSessions (~/.copilot/session-state), sources.cursorProjects
    (~/.cursor/projects), sources.droidSessions (~/.factory/sessions) and sources.piSessions
    (~/.pi/agent/sessions).

    Example: causantic batch-ingest ~/.claude/projects
    """
    if folder is not None:
        if not folder.exists():
            raise click.ClickException(f"{folder} does not exist. Pass the folder that holds your transcripts.")
        ingest_paths([folder], force=force, no_embed=no_embed, as_json=as_json, workers=workers)
        return
    with domain_errors():
        folders = agent_folders(load_config())
    if not folders:
        _quick_start(no_embed=no_embed, as_json=as_json, workers=workers)
        return
    ingest_paths(folders, force=force, no_embed=no_embed, as_json=as_json, workers=workers)


def _quick_start(*, no_embed: bool, as_json: bool, workers: int) -> None:
    """No sessions on this machine: show memory at work on the bundled examples, kept apart from
    real memory (they are only added to an empty store, and leave it when real sessions arrive)."""
    from causantic.examples import SESSIONS_DIR

    where = f"{claude_paths().projects} (nor any other agent's sessions)"
    with domain_errors(), Memory() as memory:
        real = memory.holds_real_sessions()
    if real:
        click.echo(
            f"No agent sessions at {where}. Memory already holds real sessions, so the bundled "
            "example sessions are not added. Pass a folder of transcripts to ingest it.",
            err=True,
        )
        return
    click.echo(
        f"No agent sessions at {where}; ingesting the bundled example sessions (project "
        "acme-shop) so you can try Causantic. They are not your memory: the first ingest of real "
        "sessions removes them (or now: causantic forget acme-shop).",
        err=True,
    )
    # Always read (they are tiny): files marked from an earlier quick start may since have been removed.
    ingest_paths([SESSIONS_DIR], force=True, no_embed=no_embed, as_json=as_json, workers=workers, as_examples=True)


def ingest_paths(
    paths: list[Path], *, force: bool, no_embed: bool, as_json: bool, workers: int, as_examples: bool = False
) -> None:
    """Ingest files and folders: the JSON report, or progress bars then the summary; exit 1 after
    it when a path could not be read. Stopped by Ctrl-C, it says that what was read is kept and
    the next run finishes (exit 130)."""
    with interrupted_says(RESUME_NOTE), domain_errors(), Memory() as memory:
        if as_json:
            report = memory.ingest(paths, force=force, embed=not no_embed, workers=workers, as_examples=as_examples)
            emit_json(report)
            _exit_on_errors(report)
            return
        progress = progress_bars(detail=True)
        with progress:
            task = progress.add_task("Ingesting files", total=None, detail="")
            started = time.perf_counter()
            state = {"total": 0}

            def discovered(files: int, total_bytes: int) -> None:
                progress.update(task, total=files, detail=f"{byte_size(0)}/{byte_size(total_bytes)}")
                state["total"] = total_bytes

            def advanced(files: int, done_bytes: int, chunks: int) -> None:
                elapsed = max(time.perf_counter() - started, 1e-6)
                progress.update(
                    task, completed=files, detail=ingest_detail(chunks, done_bytes, state["total"], elapsed)
                )

            report = memory.ingest(
                paths,
                force=force,
                embed=not no_embed,
                workers=workers,
                on_discovered=discovered,
                on_progress=advanced,
                on_embed_progress=_embed_progress(progress),
                as_examples=as_examples,
            )
        render_report(report, paths)
        if not memory.keyword_search:
            console.print(
                "[yellow]note[/yellow] this SQLite has no FTS5: keyword search is off, search runs on vectors alone."
            )
    _exit_on_errors(report)


def ingest_detail(chunks: int, done_bytes: int, total_bytes: int, seconds: float) -> str:
    """The ingest bar's detail, what matters first: a narrow line cuts its end ('316 chu…' hid the
    chunk count behind the bytes and the rate; then, at 80 and 100 columns, '· 4.5 MB/4.5 MB ·…' the
    rate, which the bar's file count cannot tell)."""
    return (
        f"{counted(chunks, 'chunk')} · {byte_size(done_bytes / seconds)}/s · "
        f"{byte_size(done_bytes)}/{byte_size(total_bytes)}"
    )


def _exit_on_errors(report: IngestOut) -> None:
    """Files or folders that could not be read at all make the command fail (exit 1), after the summary."""
    if report.errors:
        raise click.exceptions.Exit(1)


def _embed_progress(progress: Progress) -> Callable[[int, int], None]:
    """The embedding bar: chunks done and the rate of this run (chunks per second of wall time)."""
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "task" not in state:
            line(  # as written: piped, rich would wrap it at the console's width, a space ending each line
                f"Keyword search already finds what was read; embedding {counted(total, 'chunk')} for vector "
                "search (interrupting is safe: `causantic embed` resumes)."  # one chunk read 'embedding 1 of them'
            )
            state["task"] = progress.add_task("Embedding chunks", total=total, detail="")
            state["started"], state["before"] = time.perf_counter(), 0
        elif done == 0:  # a second store's embedding starts (team memory beside the local store): one bar
            state["before"] += state["total"]
            line(f"Embedding {counted(total, 'more chunk')} for vector search.")
        state["total"] = total
        done, total = state["before"] + done, state["before"] + total
        detail = chunk_rate(done, total, time.perf_counter() - state["started"])
        progress.update(state["task"], completed=done, total=total, detail=detail)

    return update


def _by_kind(counts: dict[str, int]) -> str:
    """'brief 52, within-chain 2,759': each kind's count, with separators as every other count has."""
    return ", ".join(f"{kind} {n:,}" for kind, n in sorted(counts.items()) if n) or "0"


def _changed_nothing(report: IngestOut) -> bool:
    """No session read and nothing stored or waiting: the summary would be a table of zeros."""
    changed = (
        report.chunks_added
        or report.chunks_updated
        or report.chunks_renumbered
        or report.chunks_removed
        or report.vectors_added
    )
    return not (changed or report.session_count or report.files_waiting)


def _nothing_new(report: IngestOut) -> bool:
    """Every file was read before and is unchanged."""
    return bool(report.files) and report.files_unchanged == report.files and _changed_nothing(report)


def render_report(report: IngestOut, paths: list[Path]) -> None:
    from rich.text import Text

    unchanged = ""
    if not (report.files or report.files_waiting or report.errors):  # a table of zeros would not say why
        where = ", ".join(map(str, paths))
        line(f"No transcripts in {where}: no Claude Code, Codex CLI or Gemini CLI session files.")
    elif _nothing_new(report):
        files = counted(report.files, "file")
        line(f"Nothing new: {files}, all unchanged since the last ingest ({report.seconds:.1f} s).")
    elif not (_changed_nothing(report) and report.notes):
        _summary_table(report)
    elif report.files_unchanged:  # the notes say why nothing was read (a file in no format read): no zeros
        unchanged = (
            f"Nothing new in the other {counted(report.files_unchanged, 'file')}: unchanged since the last ingest."
        )
    for note in report.notes:
        line(f"note: {note}", style="yellow")
    if unchanged:
        line(unchanged)
    for failed in report.errors:
        # A path cut in two cannot be copied; the path and the error are shown as written, not as markup.
        console.print(Text.assemble(("error", "red"), f" {failed.path}: {failed.error}"), soft_wrap=True)
    if report.examples_removed:
        line(
            f"Removed the bundled example sessions ({', '.join(report.examples_removed)}) now that "
            "memory holds your own sessions."
        )


def _vectors_added(report: IngestOut) -> str:
    """The vectors this run wrote: every chunk missing one gets it, so also chunks this run did not
    store (after --no-embed, one's own; in team memory, another member's, stored earlier or by an ingest
    running at the same time). Such an ingest may equally have embedded this run's chunks first."""
    added = report.vectors_added
    if added is None:
        return "deferred (--no-embed)"
    elsewhere = report.vectors_elsewhere
    others = added - (report.chunks_added - elsewhere) - report.chunks_updated
    said = []
    if others > 0:
        said.append(
            "1 for a chunk this run did not store" if others == 1 else f"{others:,} for chunks this run did not store"
        )
    if elsewhere:
        whose = "this run's chunk" if elsewhere == 1 else f"this run's {elsewhere:,} chunks"
        if elsewhere < report.chunks_added:
            whose = f"{elsewhere:,} of this run's {report.chunks_added:,} chunks"
        said.append(
            f"{whose} {'was' if elsewhere == 1 else 'were'} embedded by another ingest running at the same time"
        )
    return f"{added:,}" + (f" ({'; '.join(said)})" if said else "")


def _summary_table(report: IngestOut) -> None:
    edges = report.edges_added.by_type
    rows = [
        (
            "files read",
            f"{report.files - report.files_unchanged:,} of {report.files:,}"
            + (f" ({report.files_unchanged:,} unchanged)" if report.files_unchanged else ""),
        ),
        *(
            [("files re-read", f"{report.files_rules_changed:,}: ingest rules changed since they were read")]
            if report.files_rules_changed
            else []
        ),
        *([("waiting for team memory", counted(report.files_waiting, "file"))] if report.files_waiting else []),
        ("transcript data", byte_size(report.bytes_read)),
        ("sessions", report.session_count),
        ("chunks added", report.chunks_added),
        ("chunks updated", report.chunks_updated),
        *(
            [("chunks renumbered", f"{report.chunks_renumbered:,} (text unchanged, a new turn number)")]
            if report.chunks_renumbered
            else []
        ),
        *(
            [
                (
                    "chunks removed",
                    f"{report.chunks_removed:,} (no longer made from their transcript: skipped agents, shorter turns)",
                )
            ]
            if report.chunks_removed
            else []
        ),
        ("edges added", _by_kind(edges)),
        ("sub-agents linked", f"{report.linked_subagents:,} of {report.subagent_streams:,}"),
        ("sub-agents skipped", _by_kind(report.skipped_subagents)),
        ("damaged lines skipped", _by_kind(report.skipped_lines.by_reason)),
        *(
            [("values cut", f"{counted(cut, 'record')} kept with a value nested deeper than {MAX_DEPTH} levels cut")]
            if (cut := report.ignored_records.get(SkipReason.DEEP_VALUE, 0))
            else []
        ),
        ("vectors added", _vectors_added(report)),
        # Without scikit-learn every ingest would repeat what to install: `stats`, `clusters` and
        # `cluster` say it (--json keeps topics_note).
        *([] if topics_off() else [("topics", report.topics_note or "-")]),
        (
            "time",
            f"{report.seconds:.1f} s"
            + (
                f" (embedding {report.embed_seconds:.1f} s, {report.vectors_added / report.embed_seconds:.1f} chunks/s)"
                if report.vectors_added and report.embed_seconds
                else ""
            ),
        ),
    ]
    table("Ingest summary", [("", "left"), ("", "left")], rows)


COMMANDS = [ingest_command, batch_ingest_command]
