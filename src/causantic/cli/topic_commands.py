"""`causantic cluster` and `causantic clusters`: topics found by HDBSCAN."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from causantic.cli.options import project_option
from causantic.cli.output import STORE_LABELS, console, domain_errors, emit_json, json_option, table
from causantic.facade import Memory
from causantic.retrieval.format import counted, when
from causantic.retrieval.listing import TopicCoverage, in_no_topic_line, no_topics_line
from causantic.retrieval.output import cluster_out, topics_out

if TYPE_CHECKING:
    from causantic.ingest.topics import ClusterReport


@click.command("cluster", short_help="Group memory into topics (HDBSCAN).")
@json_option
def cluster_command(as_json: bool) -> None:
    """Group all embedded chunks into topics (a full HDBSCAN run; ids of continuing topics are kept).

    Example: causantic cluster
    """
    with domain_errors(), Memory() as memory:
        smallest = memory.config.clustering.min_cluster_size
        if as_json:
            report = memory.recluster()
        else:
            with console.status("Clustering…") as status:
                report = memory.recluster(on_progress=lambda msg: status.update(msg.capitalize() + "…"))
    if as_json:
        emit_json(cluster_out(report))
        return
    _say(_clustered(report, smallest))


def _clustered(report: ClusterReport, smallest: int) -> str:
    total = report.clustered_chunks + report.noise_chunks
    took = f"Took {report.seconds:.1f} s."
    if not total:
        return "No embedded chunks to cluster yet: run `causantic batch-ingest` first."
    if not report.clusters:
        return no_topics_line(TopicCoverage(total, 0, clustered=True), smallest)
    kept = f" {report.kept_identities:,} of them kept their ids from the last run." if report.kept_identities else ""
    return (
        f"{counted(report.clusters, 'topic')} over {report.clustered_chunks:,} of {counted(total, 'embedded chunk')}; "
        f"{report.noise_chunks:,} ({report.noise_chunks / total:.0%}) belong to no topic.{kept} {took}"
    )


@click.command("clusters", short_help="List topics: label, size, dates, projects.")
@project_option
@json_option
def clusters_command(project: str | None, as_json: bool) -> None:
    """List topics with a readable label, size and date range.

    Example: causantic clusters --project myapp
    """
    with domain_errors(), Memory() as memory:
        topics = memory.topics(project)
        coverage = memory.topic_coverage(project)
        smallest = memory.config.clustering.min_cluster_size
        ingesting = not topics and bool(memory.ingests_running())  # why none: an ingest still writing
    if as_json:
        emit_json(topics_out(topics, coverage))
        return
    if not topics:
        _say(no_topics_line(coverage, smallest, ingesting=ingesting))
        return
    # Beside team memory each store numbers its own topics: the memory column says where each lives.
    stores = any(t.store for t in topics)
    projects = 6 if stores else 5
    table(
        None,
        [
            ("id", "right"),
            ("topic", "left"),
            *([("memory", "left")] if stores else []),
            ("chunks", "right"),
            ("first (UTC)", "left"),  # stored times are UTC, as list-projects says
            ("last (UTC)", "left"),
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
        # Where the row does not fit, the projects go on lines below it, and a long label wraps.
        below=projects,
    )
    _say(in_no_topic_line(coverage))


def _say(sentence: str) -> None:
    """A sentence wrapped between words to the terminal (60 columns included); whole when piped (rich
    wrapped it at its 200 columns for a pipe, cutting the command at the end of the no-topics line)."""
    if console.is_terminal or os.environ.get("COLUMNS"):
        console.print(sentence, markup=False, highlight=False)
    else:
        click.echo(sentence)


COMMANDS = [cluster_command, clusters_command]
