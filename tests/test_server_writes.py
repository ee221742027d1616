"""A server's writes are recorded while each runs, named by the server (``write_waits.serving``), so
a command waiting for one names it; the processes themselves are in tests/mcp and tests/dashboard.

A server may run several such blocks at once (an MCP SDK that enters the server's lifespan once per
HTTP session), and they end in any order.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path

from causantic import write_waits


def _records(home: Path) -> list[str]:
    return [json.loads(path.read_text())["by"] for path in (home / "run").glob(f"writer-{os.getpid()}-*.json")]


def test_a_write_is_named_while_any_session_of_the_server_runs_whichever_ended_first(causantic_home: Path) -> None:
    first, second = ExitStack(), ExitStack()
    first.enter_context(write_waits.serving("the MCP server"))
    second.enter_context(write_waits.serving("the MCP server"))
    first.close()  # the first session ends while the second runs on
    with write_waits.write("forget"):
        assert _records(causantic_home) == ["the MCP server's forget"]
    assert _records(causantic_home) == []
    second.close()
    with write_waits.write("forget"):  # no longer a server: a command records itself (write_waits.holding)
        assert _records(causantic_home) == []
