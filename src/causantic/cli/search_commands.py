"""`causantic search`: hybrid search over past sessions."""

from __future__ import annotations

import click
from rich.text import Text

from causantic.cli.output import console, domain_errors, emit_json, json_option
from causantic.config import SOURCES
from causantic.errors import checked_query
from causantic.retrieval.format import chunk_header, nothing_relevant, search_heading
from causantic.retrieval.output import search_out
from causantic.retrieval.search import Mode, SearchRequest
from causantic.services import open_services


@click.command("search")
@click.argument("query")
@click.option("--project", help="Only this project (name, path, or a folder inside it).")
@click.option("--agent", help="Only chunks written by this agent (e.g. a sub-agent or teammate name).")
@click.option("--source", type=click.Choice(SOURCES), help="Only sessions of this coding agent.")
@click.option("--user", help="Team memory: only what this member ingested (their team.user or login name).")
@click.option("--limit", type=click.IntRange(1, 200), help="Most results (default: retrieval.defaultLimit).")
@click.option("--max-tokens", type=click.IntRange(100, 200_000), help="Token budget of the answer.")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), help="Override retrieval.primary.")
@json_option
def search_command(
    query: str,
    project: str | None,
    agent: str | None,
    source: str | None,
    user: str | None,
    limit: int | None,
    max_tokens: int | None,
    mode: Mode | None,
    as_json: bool,
) -> None:
    """Find past context by meaning and exact words (vector + BM25, fused, diversified).

    A query that starts with "-" goes after "--": causantic search -- "--search-all flag"

    Example: causantic search "how did we fix the login redirect" --project myapp --source codex
    """
    with domain_errors():
        query = checked_query(query)
    request = SearchRequest(
        query,
        project=project,
        agent=agent,
        source=source,
        user=user,
        limit=limit,
        max_tokens=max_tokens,
        mode=mode,
    )
    with domain_errors(), open_services() as services:
        result = services.searcher.search(request)
    if as_json:
        emit_json(search_out(query, result, content=True).model_dump(mode="json"))
        return
    if result.nothing_relevant:
        click.echo(nothing_relevant(result.notes))
        return
    console.print(Text(search_heading(result) + ":", style="bold"), soft_wrap=True)
    for hit, shown in zip(result.hits, result.shown_relevance, strict=True):
        console.print()
        console.print(Text(chunk_header(hit.chunk, shown), style="cyan"), soft_wrap=True)
        console.print(hit.chunk.content, markup=False, soft_wrap=True)


COMMANDS = [search_command]
