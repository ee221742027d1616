"""Where the command line starts the other interfaces: the MCP server, the dashboard and the hooks.

``causantic serve``, ``causantic dashboard`` and ``causantic hook …`` come through here, so the
CLI imports no other interface (and none imports the CLI): this module sits above all of them, as
a program's ``__main__`` does. Each interface loads only when its command runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

from causantic.hooks.runner import HOOKS, WORKER

__all__ = ["HOOKS", "WORKER", "run_hook", "run_hook_worker", "serve_dashboard", "serve_mcp"]


def serve_mcp(transport: Literal["stdio", "http"], *, port: int, warm: bool, auth: bool) -> None:
    from causantic.mcp.server import run

    run(transport, port=port, warm=warm, auth=auth)


def serve_dashboard(port: int, ready: Callable[[str], None]) -> None:
    from causantic.dashboard.server import serve

    serve(port, ready)


def run_hook(name: str) -> int:
    """Run a hook on its stdin JSON, as ``python -m causantic.hooks <name>`` does (the prompt hook
    asks the warm process first)."""
    if name == "user-prompt-submit":
        from causantic.hooks.warm import client

        return client()
    from causantic.hooks.runner import run_hook

    return run_hook(name)


def run_hook_worker(hook: str, event_json: str) -> int:
    from causantic.hooks.runner import run_worker

    return run_worker(hook, event_json)
