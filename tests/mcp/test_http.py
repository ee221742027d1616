"""`causantic serve --http`: streamable HTTP, on 127.0.0.1 only."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from process_support import subprocess_env, wait_for


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (Linux /proc/net/tcp, state 0A)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        if not Path(table).exists():
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.rsplit(":", 1)
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


def port_open(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc")
def test_the_http_server_answers_on_localhost_and_listens_nowhere_else(
    causantic_home: Path, free_tcp_port: int
) -> None:
    server = subprocess.Popen(
        [sys.executable, "-m", "causantic", "serve", "--http", "--port", str(free_tcp_port)],
        env=subprocess_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_for(lambda: port_open(free_tcp_port), timeout=60)
        assert listening_addresses(free_tcp_port) == {"0100007F"}  # 127.0.0.1, no 0.0.0.0, no IPv6

        async def talk() -> tuple[set[str], str]:
            async with Client(f"http://127.0.0.1:{free_tcp_port}/mcp") as client:
                tools = await client.list_tools()
                stats = await client.call_tool("stats", {})
                return {t.name for t in tools.tools}, str(stats.content[0].text)

        names, stats = anyio.run(talk)
        assert "reconstruct" in names and len(names) == 9
        assert stats.startswith("Causantic v")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_port_without_http_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "serve", "--port", "9999"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode == 2 and "--port applies to --http only" in done.stderr
