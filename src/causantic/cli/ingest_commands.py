"""`causantic ingest` and `causantic batch-ingest`."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from causantic.cli.output import console, domain_errors, emit_json, json_option, table
from causantic.ingest.pipeline import IngestReport
from causantic.ingest.service import ingest_paths
from causantic.services import open_services

DEFAULT_PROJECTS = Path.home() / ".claude" / "projects"


@click.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option("--force", is_flag=True, help="Re-read files even when they look unchanged.")
@click.option("--no-embed", is_flag=True, help="Skip embedding now; run `causantic embed` later.")
@json_option
def ingest_command(paths: tuple[Path, ...], force: bool, no_embed: bool, as_json: bool) -> None:
    """Ingest one transcript file or folder (or several).

    Example: causantic ingest ~/.claude/projects/-Users-me-myapp/3f2a….jsonl
    """
    _run(list(paths), force=force, no_embed=no_embed, as_json=as_json, workers=1)


@click.command("batch-ingest")
@click.argument("folder", required=False, type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, help="Re-read files even when they look unchanged.")
@click.option("--no-embed", is_flag=True, help="Skip embedding now; run `causantic embed` later.")
@click.option("--workers", default=2, show_default=True, help="Parsing processes.")
@json_option
def batch_ingest_command(folder: Path | None, force: bool, no_embed: bool, workers: int, as_json: bool) -> None:
    """Ingest every Claude Code session under a folder (default: ~/.claude/projects).

    Example: causantic batch-ingest ~/.claude/projects
    """
    target = folder or DEFAULT_PROJECTS
    if folder is None and not target.exists():
        from causantic.examples import SESSIONS_DIR

        click.echo(f"No Claude Code sessions at {target}; ingesting the bundled example sessions instead.",
                   err=True)
        target = SESSIONS_DIR
    if not target.exists():
        raise click.ClickException(f"{target} does not exist. Pass the folder that holds your transcripts.")
    _run([target], force=force, no_embed=no_embed, as_json=as_json, workers=workers)


def _run(paths: list[Path], *, force: bool, no_embed: bool, as_json: bool, workers: int) -> None:
    with domain_errors(), open_services() as services:
        if as_json:
            report = ingest_paths(services, paths, force=force, embed=not no_embed, workers=workers)
            emit_json(report.as_dict())
            _exit_on_errors(report)
            return
        progress = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[mb]:.1f}/{task.fields[total_mb]:.1f} MB · {task.fields[chunks]} chunks"),
            TimeElapsedColumn(), console=console, transient=True,
        )
        with progress:
            task = progress.add_task("Ingesting files", total=None, mb=0.0, total_mb=0.0, chunks=0)

            def discovered(files: int, total_bytes: int) -> None:
                progress.update(task, total=files, total_mb=total_bytes / 1e6)

            def advanced(files: int, done_bytes: int, chunks: int) -> None:
                progress.update(task, completed=files, mb=done_bytes / 1e6, chunks=chunks)

            report = ingest_paths(services, paths, force=force, embed=not no_embed, workers=workers,
                                  on_discovered=discovered, on_progress=advanced,
                                  on_embed_progress=_embed_progress(progress))
        render_report(report)
        if not services.store.fts_enabled:
            console.print("[yellow]note[/yellow] this SQLite has no FTS5: keyword search is off, search runs on "
                          "vectors alone.")
    _exit_on_errors(report)


def _exit_on_errors(report: IngestReport) -> None:
    """Files or folders that could not be read at all make the command fail (exit 1), after the summary."""
    if report.errors:
        raise click.exceptions.Exit(1)


def _embed_progress(progress: Progress):  # type: ignore[no-untyped-def]
    state: dict[str, object] = {}

    def update(done: int, total: int) -> None:
        if "task" not in state:
            state["task"] = progress.add_task("Embedding chunks", total=total, mb=0.0, total_mb=0.0, chunks=done)
        progress.update(state["task"], completed=done, total=total, chunks=done)  # type: ignore[arg-type]

    return update


def _damaged(report: IngestReport) -> str:
    reasons = report.as_dict()["skipped_lines"]["by_reason"]  # type: ignore[index]
    return ", ".join(f"{k} {v}" for k, v in sorted(reasons.items())) or "0"


def render_report(report: IngestReport) -> None:
    edges = report.edges_added
    rows = [
        ("files read", f"{report.files - report.files_unchanged} of {report.files}"
         + (f" ({report.files_unchanged} unchanged)" if report.files_unchanged else "")),
        ("transcript data", f"{report.bytes_read / 1e6:.1f} MB"),
        ("sessions", report.sessions),
        ("chunks added", report.chunks_added),
        ("chunks updated", report.chunks_updated),
        ("edges added", ", ".join(f"{k} {v}" for k, v in sorted(edges.items()) if v) or "0"),
        ("sub-agents linked", f"{report.linked_subagents} of {report.subagent_streams}"),
        ("damaged lines skipped", _damaged(report)),
        ("vectors added", report.vectors_added if report.vectors_added is not None else "deferred (--no-embed)"),
        ("topics", report.topics or "-"),
        ("time", f"{report.seconds:.1f} s"),
    ]
    table("Ingest summary", [("", "left"), ("", "right")], rows)
    for path, error in report.errors:
        console.print(f"[red]error[/red] {path}: {error}", soft_wrap=True)  # a path cut in two cannot be copied


COMMANDS = [ingest_command, batch_ingest_command]
