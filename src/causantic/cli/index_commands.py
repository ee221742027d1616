"""`causantic embed`, `reindex`, `config` and `models`: the vector index and settings."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import click

from causantic.cli.output import (
    agreed,
    chunk_rate,
    console,
    domain_errors,
    emit_json,
    interrupted_says,
    json_option,
    progress_bars,
    said_no,
    table,
)
from causantic.config import described_settings, load_config
from causantic.facade import Memory
from causantic.retrieval.format import counted
from causantic.retrieval.output import EmbedOut

# embed and reindex (which drops every vector first) both leave the rest of the chunks without one.
EMBED_RESUME_NOTE = "The vectors made so far are kept: `causantic embed` makes the rest."


def _run_with_bar(description: str, action: Callable[[Callable[[int, int], None]], EmbedOut]) -> EmbedOut:
    """``action`` under a bar of chunks done, with the rate and, on long work, the minutes left."""
    with progress_bars(detail=True) as progress:
        task = progress.add_task(description, total=None, detail="")
        started = time.perf_counter()

        def update(done: int, total: int) -> None:
            progress.update(
                task, completed=done, total=total, detail=chunk_rate(done, total, time.perf_counter() - started)
            )

        return action(update)


@click.command("embed", short_help="Embed the chunks that have no vector yet.")
@json_option
def embed_command(as_json: bool) -> None:
    """Embed every chunk that has no vector yet (after `--no-embed`, or to resume an interrupted run).

    Example: causantic embed
    """
    with interrupted_says(EMBED_RESUME_NOTE), domain_errors(), Memory() as memory:
        result = memory.embed_pending() if as_json else _run_with_bar("Embedding chunks", memory.embed_pending)
    if as_json:
        emit_json(result)
    else:
        console.print(
            f"Embedded {counted(result.vectors_added, 'chunk')}; {counted(result.vector_count, 'vector')} in the index."
        )


@click.command("reindex", short_help="Re-embed every chunk (after a model change).")
@click.option("--yes", is_flag=True, help="Re-embed without asking (needed with --json, which asks nothing).")
@json_option
def reindex_command(yes: bool, as_json: bool) -> None:
    """Re-embed all chunks with the configured model (after changing `embedding.model`). It asks
    first; --yes skips the question, and --json (which asks nothing) re-embeds only with --yes.

    Example: CAUSANTIC_EMBEDDING_MODEL=bge-small-en-v1.5 causantic reindex --yes
    """
    if not yes:
        with domain_errors():
            model = load_config().embedding.model
        if as_json:  # a script reads the answer and cannot be asked: as forget --json only previews
            raise click.UsageError(f"--json asks nothing: add --yes to re-embed every chunk with {model}.")
        if not agreed(f"Re-embed every chunk with {model}?", default=False):
            said_no("Nothing was re-embedded.")
    with interrupted_says(EMBED_RESUME_NOTE), domain_errors(), Memory() as memory:
        result = memory.reindex() if as_json else _run_with_bar("Re-embedding chunks", memory.reindex)
    if as_json:
        emit_json(result)
    else:
        console.print(f"Re-embedded {counted(result.vectors_added, 'chunk')} with {result.model}.")


@click.command("config", short_help="Every setting, its default and where it is set.")
@json_option
def config_command(as_json: bool) -> None:
    """Show every setting: its value now, its default, where it was set (config.json, the project's
    file or a CAUSANTIC_… environment variable; blank: the default) and what it does.

    Example: causantic config --json
    """
    sources: dict[str, str] = {}
    with domain_errors():
        settings = described_settings(load_config(sources=sources), sources)
    if as_json:
        emit_json(
            {
                s.key: {"value": s.value, "default": s.default, "set_in": s.source, "description": s.description}
                for s in settings
            }
        )
        return
    table(
        None,
        [("key", "left"), ("value", "left"), ("default", "left"), ("set in", "left"), ("description", "left")],
        [(s.key, _short(s.value), _short(s.default), _set_in(s.source), s.description) for s in settings],
    )


def _set_in(source: str) -> str:
    """Where a value was set, blank for a default (most rows): '$CAUSANTIC_RETRIEVAL_MMR_LAMBDA' or the file."""
    if source == "default":
        return ""
    variable = source.removeprefix("environment variable ")
    return f"${variable}" if variable != source else source


def _short(value: object) -> str:
    """A value as config.json spells it (null, true, []), not as Python prints it (None, True, ())."""
    plain = value is None or isinstance(value, bool | int | float | list | tuple | dict)  # a secret stays str()
    text = json.dumps(value, default=str) if plain else str(value)
    return text if len(text) <= 30 else text[:27] + "…"


@click.command("models", short_help="Embedding models, and which can load here.")
@json_option
def models_command(as_json: bool) -> None:
    """Embedding models Causantic knows, and whether each can load on this machine.

    Example: causantic models
    """
    from causantic.embedding.models import MODELS, is_available
    from causantic.retrieval.output import ModelInfo, ModelsOut

    rows = [
        ModelInfo(
            id=spec.id,
            dims=spec.dims,
            repository=spec.hf_repo,
            status="ready" if is_available(spec.id) else "not on this machine",
            note=spec.note,
        )
        for spec in MODELS.values()
    ]
    if as_json:  # an object naming its list, as list-projects ("projects") and clusters ("topics")
        emit_json(ModelsOut(models=rows))
        return
    table(
        None,
        [("model", "left"), ("dims", "right"), ("status", "left"), ("note", "left")],
        [(r.id, r.dims, r.status, r.note) for r in rows],
    )


COMMANDS = [embed_command, reindex_command, config_command, models_command]
