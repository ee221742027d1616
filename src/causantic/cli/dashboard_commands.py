"""`causantic dashboard`: the local web UI."""

from __future__ import annotations

import click

from causantic.cli.output import domain_errors


@click.command("dashboard", short_help="A local web dashboard on 127.0.0.1.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port on 127.0.0.1 (0: a free one)."
)
def dashboard_command(port: int) -> None:
    """Serve a local web dashboard on 127.0.0.1 until stopped (Ctrl-C). Open the URL it prints.

    The URL carries a per-run token: only a browser that opened it gets in.

    Example: causantic dashboard --port 8765
    """
    from causantic.entrypoints import serve_dashboard

    def ready(url: str) -> None:
        click.echo(f"Causantic dashboard: {url}", err=False)
        click.echo("Press Ctrl-C to stop.", err=True)

    with domain_errors():
        try:
            serve_dashboard(port, ready)
        except KeyboardInterrupt:
            pass


COMMANDS = [dashboard_command]
