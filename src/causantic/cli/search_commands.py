"""`causantic search`: hybrid search over past sessions."""

from __future__ import annotations

import os
from datetime import datetime

import click

from causantic.cli.options import (
    agent_option,
    configured_option,
    days_back_option,
    int_range,
    max_tokens_option,
    project_option,
    source_option,
    text_argument,
    time_range_options,
)
from causantic.cli.output import domain_errors, emit_json, json_option, line
from causantic.config_cache import read_config
from causantic.facade import Memory
from causantic.retrieval import options
from causantic.retrieval.format import (
    hit_header,
    in_one_line,
    is_weak,
    mixes_stores,
    nothing_relevant,
    one_line,
    search_heading,
    shown_content,
)
from causantic.retrieval.search import Mode
from causantic.sources import Source


@click.command("search", short_help="Find past context by meaning and words.")
@text_argument("query")
@project_option
@agent_option
@source_option
@click.option("--user", help=options.USER.help)
@configured_option("--limit", "retrieval.defaultLimit", type=int_range(options.LIMIT), help=f"{options.MOST_RESULTS}.")
@max_tokens_option("tokens.mcpMaxResponse")
@time_range_options
@days_back_option
@configured_option(
    "--mode",
    "retrieval.primary",
    type=click.Choice(["hybrid", "keyword", "vector"]),
    metavar="MODE",
    help="How candidates are found: hybrid (meaning and words), keyword (BM25) or vector (meaning).",
)
@json_option
def search_command(
    query: str,
    project: str | None,
    agent: str | None,
    source: Source | None,
    user: str | None,
    limit: int | None,
    max_tokens: int | None,
    since: datetime | None,
    until: datetime | None,
    days_back: float | None,
    mode: Mode | None,
    as_json: bool,
) -> None:
    """Find past context by meaning and exact words (vector + BM25, fused, diversified).

    Quotes are optional; a query that starts with "-" goes after "--": causantic search -- "--search-all flag"

    Example: causantic search "how did we fix the login redirect" --project myapp --source codex --days-back 7
    """
    with domain_errors(), Memory(config=read_config()) as memory:
        result = memory.search(
            query,
            project=project,
            agent=agent,
            source=source,
            user=user,
            since=since,
            until=until,
            days_back=days_back,
            limit=limit,
            max_tokens=max_tokens,
            mode=mode,
            here=os.getcwd(),
        )
    if as_json:
        from causantic.retrieval.output import search_out  # pydantic: only for JSON

        emit_json(search_out(query.strip(), result))
        return
    if result.nothing_relevant:
        click.echo(nothing_relevant(result.notes))
        return
    line(search_heading(result) + ":", "bold")
    mixed = mixes_stores([h.chunk for h in result.hits])
    was_brief = False
    for hit, shown, brief in zip(result.hits, result.shown_relevance, in_one_line(result.shown_relevance), strict=True):
        if brief:  # weakly related beside a relevant hit: one line each, one after the other
            if not was_brief:
                line()
            line(one_line(hit, shown, mixed=mixed), "dim cyan")
        else:
            line()
            line(hit_header(hit, shown, mixed=mixed), "dim cyan" if is_weak(shown) else "cyan")
            line(shown_content(hit.chunk.content))
        was_brief = brief


COMMANDS = [search_command]
