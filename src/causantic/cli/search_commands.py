"""`causantic search`: hybrid search over past sessions."""

from __future__ import annotations

import click
from rich.text import Text

from causantic.cli.output import console, domain_errors, emit_json, json_option
from causantic.errors import checked_query
from causantic.retrieval.format import chunk_header
from causantic.retrieval.search import SearchRequest, SearchResult
from causantic.services import open_services


def hit_dicts(result: SearchResult) -> list[dict[str, object]]:
    return [
        {"id": h.chunk.id, "project": h.chunk.project, "session_id": h.chunk.session_id,
         "date": h.chunk.start_time, "agent": h.chunk.agent, "relevance": round(h.relevance, 4),
         "sources": list(h.sources), "tokens": h.chunk.approx_tokens, "content": h.chunk.content}
        for h in result.hits
    ]


@click.command("search")
@click.argument("query")
@click.option("--project", help="Only this project (name, path, or a folder inside it).")
@click.option("--agent", help="Only chunks written by this agent (e.g. a sub-agent or teammate name).")
@click.option("--limit", type=click.IntRange(1, 200), help="Most results (default: retrieval.defaultLimit).")
@click.option("--max-tokens", type=click.IntRange(100, 200_000), help="Token budget of the answer.")
@click.option("--mode", type=click.Choice(["hybrid", "keyword", "vector"]), help="Override retrieval.primary.")
@json_option
def search_command(query: str, project: str | None, agent: str | None, limit: int | None,
                   max_tokens: int | None, mode: str | None, as_json: bool) -> None:
    """Find past context by meaning and exact words (vector + BM25, fused, diversified).

    A query that starts with "-" goes after "--": causantic search -- "--search-all flag"

    Example: causantic search "how did we fix the login redirect" --project myapp
    """
    with domain_errors():
        query = checked_query(query)
    request = SearchRequest(query, project=project, agent=agent, limit=limit, max_tokens=max_tokens,
                            mode=mode)  # type: ignore[arg-type]
    with domain_errors(), open_services() as services:
        result = services.searcher.search(request)
    if as_json:
        emit_json({"query": query, "mode": result.mode, "notes": result.notes, "tokens": result.tokens,
                   "hits": hit_dicts(result)})
        return
    if not result.hits:
        click.echo("No relevant memory found." + (f" ({'; '.join(result.notes)})" if result.notes else ""))
        return
    console.print(f"[bold]{len(result.hits)} results[/bold] ({result.mode}, {result.tokens} tokens)"
                  + (f" — {'; '.join(result.notes)}" if result.notes else ""))
    for hit in result.hits:
        console.print()
        console.print(Text(chunk_header(hit.chunk, hit.relevance), style="cyan"))
        console.print(hit.chunk.content, markup=False)


COMMANDS = [search_command]
