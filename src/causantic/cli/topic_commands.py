"""`causantic cluster` and `causantic clusters`: topics found by HDBSCAN."""

from __future__ import annotations

import click

from causantic.cli.options import project_option
from causantic.cli.output import STORE_LABELS, console, domain_errors, emit_json, json_option, table
from causantic.facade import Memory
from causantic.retrieval.format import counted, when
from causantic.retrieval.output import ClusterOut, topics_out


@click.command("cluster")
@json_option
def cluster_command(as_json: bool) -> None:
    """Group all embedded chunks into topics (a full HDBSCAN run; ids of continuing topics are kept).

    Example: causantic cluster
    """
    with domain_errors(), Memory() as memory:
        if as_json:
            report = memory.recluster()
        else:
            with console.status("Clustering…") as status:
                report = memory.recluster(on_progress=lambda msg: status.update(msg.capitalize() + "…"))
    if as_json:
        emit_json(ClusterOut.model_validate(report, from_attributes=True))
        return
    console.print(
        f"{counted(report.clusters, 'topic')} over {counted(report.clustered_chunks, 'chunk')} "
        f"({report.noise_chunks:,} left as noise, {counted(report.kept_identities, 'topic')} continued) "
        f"in {report.seconds:.1f} s."
    )


@click.command("clusters")
@project_option
@json_option
def clusters_command(project: str | None, as_json: bool) -> None:
    """List topics with a readable label, size and date range.

    Example: causantic clusters --project myapp
    """
    with domain_errors(), Memory() as memory:
        topics = memory.topics(project)
    if as_json:
        emit_json(topics_out(topics))
        return
    if not topics:
        click.echo("No topics yet. They appear after `causantic cluster` (or a batch ingest with enough chunks).")
        return
    # Beside team memory each store numbers its own topics: the memory column says where each lives.
    stores = any(t.store for t in topics)
    table(
        None,
        [
            ("id", "right"),
            ("topic", "left"),
            *([("memory", "left")] if stores else []),
            ("chunks", "right"),
            ("first", "left"),
            ("last", "left"),
            ("projects", "left"),
        ],
        # Days, not minutes: a topic spans days or months, and the room goes to the project names.
        [
            (
                str(t.id),  # an id (the dashboard's /topic/ID), not a count
                t.label,
                *([STORE_LABELS.get(t.store or "", "")] if stores else []),
                t.size,
                when(t.first_seen)[:10],
                when(t.last_seen)[:10],
                ", ".join(t.projects),
            )
            for t in topics
        ],
    )


COMMANDS = [cluster_command, clusters_command]
