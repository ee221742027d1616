"""`causantic serve`: the MCP server (stdio for Claude Code, or streamable HTTP on localhost)."""

from __future__ import annotations

import os
import signal
import sys

import click

DEFAULT_PORT = 8765


@click.command("serve", short_help="Run the MCP server (stdio, or --http).")
@click.option("--http", "use_http", is_flag=True, help="Serve streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(1, 65535), help=f"HTTP port (default {DEFAULT_PORT}; needs --http).")
@click.option("--no-warm", is_flag=True, help="Do not preload the embedding model after start-up.")
@click.option(
    "--no-auth",
    is_flag=True,
    help="With --http: accept requests without the bearer token (any local user can then call it).",
)
def serve_command(use_http: bool, port: int | None, no_warm: bool, no_auth: bool) -> None:
    """Run the MCP server. Claude Code starts it itself (see `causantic init`).

    Over stdio by default; --http serves http://127.0.0.1:PORT/mcp for other local clients (it never
    listens beyond this machine). Every HTTP request must send 'Authorization: Bearer <token>'; the
    token is generated on first use and kept owner-only in <data dir>/http-token (the start-up
    lines print its location). --no-auth turns the check off.

    Example: causantic serve --http --port 8765
    """
    if port is not None and not use_http:
        raise click.UsageError("--port applies to --http only.")
    if no_auth and not use_http:
        raise click.UsageError("--no-auth applies to --http only.")
    from causantic.entrypoints import serve_mcp
    from causantic.errors import CausanticError

    if not use_http and sys.stdin.isatty():  # a person ran it, not a coding agent
        # Trigger: Ctrl-C. Why: the SDK's stdin reader thread stays blocked in read(), and the event
        # loop waits for it on the way out, so the server went on until killed. Outcome: it stops at
        # once. Set before the line below says so.
        signal.signal(signal.SIGINT, lambda signum, frame: os._exit(0))
        click.echo(
            "Causantic MCP server on stdio: it reads JSON-RPC requests on standard input; coding agents start "
            "it themselves (`causantic init` registers it), and `--http` serves other clients. "
            "Press Ctrl-C to stop.",
            err=True,
        )
    try:
        serve_mcp("http" if use_http else "stdio", port=port or DEFAULT_PORT, warm=not no_warm, auth=not no_auth)
    except CausanticError as exc:
        raise click.ClickException(str(exc)) from exc
    except KeyboardInterrupt:  # how a server run by hand is stopped: not a failure ('Aborted!', exit 1)
        pass


COMMANDS = [serve_command]
