"""`causantic serve --http`: streamable HTTP, on 127.0.0.1 only, behind a bearer token."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import pwd
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from process_support import causantic, subprocess_env, wait_for


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


class HttpServer:
    """A `causantic serve --http` subprocess; its start-up lines are kept in ``banner``."""

    def __init__(self, port: int, *extra: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "causantic", "serve", "--http", "--port", str(port), *extra],
            env=subprocess_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.port = port
        self.banner: list[str] = []
        while line := self.proc.stdout.readline():  # type: ignore[union-attr]
            self.banner.append(line.rstrip())
            if line.startswith(("Token:", "Authentication:")):  # the last start-up line
                break
        wait_for(lambda: port_open(port), timeout=60)

    def stop(self) -> int:
        """SIGTERM, then wait; the start-up pipes are closed and stderr is kept in ``stderr``."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        _, self.stderr = self.proc.communicate(timeout=30)
        return self.proc.returncode


def post(port: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> tuple[int, str]:
    """One raw JSON-RPC POST to /mcp: (status, body)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request(
            "POST",
            "/mcp",
            json.dumps(body),
            {"content-type": "application/json", "accept": "application/json, text/event-stream", **(headers or {})},
        )
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


SEARCH_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "search", "arguments": {"query": "key"}},
}
FORGET_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "forget", "arguments": {"query": "test", "dry_run": False}},
}


@contextlib.asynccontextmanager
async def authed_client(port: int, token: str) -> AsyncIterator[Client]:
    """The SDK's client, sending the bearer token (the HTTP client is ours, so we close it)."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http_client:
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http_client)) as client:
            yield client


@pytest.mark.skipif(not Path("/proc/net/tcp").exists(), reason="reads listening sockets from /proc")
def test_the_http_server_answers_on_localhost_and_listens_nowhere_else(
    causantic_home: Path, free_tcp_port: int
) -> None:
    server = HttpServer(free_tcp_port)
    try:
        assert server.banner[0] == f"Causantic MCP server: http://127.0.0.1:{free_tcp_port}/mcp"
        token_file = causantic_home / "http-token"
        assert str(token_file) in server.banner[-1] and server.banner[-1].startswith("Token: ")
        assert listening_addresses(free_tcp_port) == {"0100007F"}  # 127.0.0.1, no 0.0.0.0, no IPv6

        async def talk() -> tuple[set[str], str]:
            async with authed_client(free_tcp_port, token_file.read_text().strip()) as client:
                tools = await client.list_tools()
                stats = await client.call_tool("stats", {})
                return {t.name for t in tools.tools}, str(stats.content[0].text)

        names, stats = anyio.run(talk)
        assert "reconstruct" in names and len(names) == 9
        assert stats.startswith("Causantic v")
    finally:
        server.stop()


def test_a_request_without_the_token_gets_401_and_the_token_is_owner_only(
    causantic_home: Path, free_tcp_port: int
) -> None:
    server = HttpServer(free_tcp_port)
    try:
        token_file = causantic_home / "http-token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        token = token_file.read_text().strip()
        assert len(token) >= 40 and server.banner[1] == f"New token (shown once): {token}"
        assert post(free_tcp_port, SEARCH_CALL)[0] == 401
        assert post(free_tcp_port, SEARCH_CALL, {"Authorization": "Bearer " + token[:-1] + "x"})[0] == 401
        status, body = post(free_tcp_port, SEARCH_CALL, {"Authorization": token})  # no "Bearer "
        assert status == 401 and str(token_file) in body
        # The SDK's DNS-rebinding checks still stand behind the token.
        foreign = {"Authorization": f"Bearer {token}", "Origin": "http://evil.example"}
        assert post(free_tcp_port, SEARCH_CALL, foreign)[0] == 403
    finally:
        server.stop()
    again = HttpServer(free_tcp_port)  # the same token is reused, and not shown again
    try:
        assert token_file.read_text().strip() == token
        assert len(again.banner) == 2 and "shown once" not in "".join(again.banner)
    finally:
        again.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another OS user needs root")
def test_another_os_user_can_neither_search_nor_forget(memory: Path, free_tcp_port: int) -> None:
    """A forked child running as `nobody` (another account on this machine) calls the server."""
    try:
        other = pwd.getpwnam("nobody")
    except KeyError:
        pytest.skip("no `nobody` account on this machine")
    server = HttpServer(free_tcp_port)
    chunks_before = _chunk_count(memory)
    try:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the other user: no exec, so the interpreter's location does not matter
            os.close(read)
            try:
                os.setgid(other.pw_gid)
                os.setuid(other.pw_uid)
                results = [os.getuid(), post(free_tcp_port, SEARCH_CALL)[0], post(free_tcp_port, FORGET_CALL)[0]]
                try:
                    (memory / "http-token").read_text()
                    results.append("read")
                except PermissionError:
                    results.append("denied")
                os.write(write, json.dumps(results).encode())
            finally:
                os._exit(0)
        os.close(write)
        os.waitpid(pid, 0)
        with os.fdopen(read) as pipe:
            uid, search_status, forget_status, token_read = json.loads(pipe.read())
    finally:
        server.stop()
    assert uid == other.pw_uid != os.getuid()
    assert (search_status, forget_status, token_read) == (401, 401, "denied")
    assert _chunk_count(memory) == chunks_before


def _chunk_count(home: Path) -> int:
    import sqlite3

    with sqlite3.connect(home / "memory.db") as conn:
        return int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])


def test_no_auth_is_explicit_and_says_so(free_tcp_port: int) -> None:
    server = HttpServer(free_tcp_port, "--no-auth")
    try:
        assert "Authentication: off" in server.banner[1]
        status, _ = post(
            free_tcp_port,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-03-26",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            },
        )
        assert status == 200
    finally:
        server.stop()


def test_a_taken_port_is_one_clear_sentence(free_tcp_port: int) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", free_tcp_port))
        holder.listen(1)
        done = causantic("serve", "--http", "--port", str(free_tcp_port), timeout=60)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"Error: Port {free_tcp_port} on 127.0.0.1 is already in use by another program; choose another with --port."
    )


def test_sigterm_stops_the_server_while_a_client_holds_a_stream_open(causantic_home: Path, free_tcp_port: int) -> None:
    server = HttpServer(free_tcp_port)
    token = (causantic_home / "http-token").read_text().strip()

    async def connect_and_signal() -> None:
        async with authed_client(free_tcp_port, token) as client:
            await client.list_tools()
            server.proc.send_signal(signal.SIGTERM)
            await anyio.to_thread.run_sync(lambda: server.proc.wait(timeout=30))

    with contextlib.suppress(Exception):  # the client sees its server go away
        anyio.run(connect_and_signal)
    assert server.stop() in (0, -signal.SIGTERM)
    assert "Traceback" not in server.stderr


def test_ctrl_c_stops_the_server_quietly_as_it_says(free_tcp_port: int) -> None:
    """Run by hand, the server is stopped by Ctrl-C: it said so nowhere and then printed click's
    'Aborted!' and exited 1, as if it had failed."""
    server = HttpServer(free_tcp_port)
    assert server.proc.stderr.readline().rstrip() == "Press Ctrl-C to stop."  # type: ignore[union-attr]
    server.proc.send_signal(signal.SIGINT)
    server.proc.wait(timeout=30)
    assert server.stop() == 0
    assert "Aborted" not in server.stderr and "Traceback" not in server.stderr


def test_port_without_http_is_refused() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "serve", "--port", "9999"],
        capture_output=True,
        text=True,
        env=subprocess_env(),
        timeout=60,
    )
    assert done.returncode == 2 and "--port applies to --http only" in done.stderr
