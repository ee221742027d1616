"""MCP server start-up: spawn → ``tools/list`` answered, and spawn → first ``search`` answered.

Usage: python benchmarks/mcp_startup.py [--runs N] [--no-embed] [--json OUT]

Each run spawns the command ``causantic init`` registers (``python -m causantic.mcp``) and speaks
JSON-RPC to it over stdio like Claude Code: ``initialize``, ``notifications/initialized``,
``tools/list``, then one ``search``. The store (a temporary CAUSANTIC_HOME) holds the example
sessions and three real corpus projects, embedded unless ``--no-embed``, so the first search loads
the vector index and the embedding model. Baselines measured in the same run, same way:
``python -c pass`` (the interpreter) and a one-tool ``MCPServer`` (the SDK's own import and
handshake). Goal: ``tools/list`` within 1 s of spawn.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
CORPUS = REPO.parent / "shared" / "corpus" / "claude-code" / "daaain__claude-code-log/test/test_data/real_projects"
FOLDERS = ("-experiments-ideas", "-Users-dain-workspace-JSSoundRecorder", "-experiments-worktrees")
MINIMAL_SERVER = """
from mcp.server import MCPServer
server = MCPServer("minimal")
@server.tool()
def hello(name: str) -> str:
    return f"hello {name}"
server.run("stdio")
"""


class Spawned:
    """A server process spoken to in newline-delimited JSON-RPC over its stdin/stdout."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.started = time.perf_counter()
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
            bufsize=1,
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"server exited during {method}")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message["result"]  # type: ignore[no-any-return]

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def elapsed(self) -> float:
        return time.perf_counter() - self.started

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def handshake(server: Spawned) -> float:
    server.request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "benchmark", "version": "0"},
        },
    )
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    tools = server.request("tools/list", {})
    assert tools["tools"], tools
    return server.elapsed()


def spawn_seconds(command: list[str], env: dict[str, str], search: bool) -> tuple[float, float | None]:
    server = Spawned(command, env)
    try:
        listed = handshake(server)
        if not search:
            return listed, None
        result = server.request("tools/call", {"name": "search", "arguments": {"query": "redirect loop on Safari"}})
        assert not result.get("isError"), result
        return listed, server.elapsed()
    finally:
        server.close()


def interpreter_seconds(env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    return time.perf_counter() - started


def prepare_store(env: dict[str, str], embed: bool) -> dict[str, Any]:
    targets = [str(SRC / "causantic" / "examples" / "sessions"), *(str(CORPUS / f) for f in FOLDERS)]
    flags = [] if embed else ["--no-embed"]
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "ingest", "--json", *flags, *targets],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(done.stdout)
    return {"chunks": report["chunks_added"], "vectors": report["vectors_added"]}


def quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 3), "p95": round(p95, 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--no-embed", action="store_true", help="store without vectors (keyword search)")
    parser.add_argument("--json", dest="json_out", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="causantic-bench-") as home:
        env = {
            **os.environ,
            "CAUSANTIC_HOME": home,
            "PYTHONPATH": os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p),
        }
        store = prepare_store(env, embed=not args.no_embed)
        runs: dict[str, list[float]] = {
            "python -c pass": [],
            "minimal MCPServer tools/list": [],
            "causantic tools/list": [],
            "causantic first search": [],
        }
        for _ in range(args.runs):  # interleaved, so load on the machine hits every series alike
            runs["python -c pass"].append(interpreter_seconds(env))
            runs["minimal MCPServer tools/list"].append(
                spawn_seconds([sys.executable, "-c", MINIMAL_SERVER], env, search=False)[0]
            )
            listed, searched = spawn_seconds([sys.executable, "-m", "causantic.mcp"], env, search=True)
            runs["causantic tools/list"].append(listed)
            runs["causantic first search"].append(searched or 0.0)
    figures = {name: quantiles(values) for name, values in runs.items()}
    base, sdk = figures["python -c pass"]["p50"], figures["minimal MCPServer tools/list"]["p50"]
    print(f"store: {store['chunks']} chunks, {store['vectors'] or 0} vectors; {args.runs} spawns per series")
    print(f"{'series':<30} {'p50 s':>8} {'p95 s':>8} {'×python':>8} {'×SDK':>6}")
    for name, q in figures.items():
        print(f"{name:<30} {q['p50']:>8.3f} {q['p95']:>8.3f} {q['p50'] / base:>8.1f} {q['p50'] / sdk:>6.2f}")
    verdict = "met" if figures["causantic tools/list"]["p95"] <= 1.0 else "NOT met on this machine"
    print(f"goal: tools/list p95 ≤ 1 s — {verdict}")
    if args.json_out:
        args.json_out.write_text(
            json.dumps(
                {
                    "store": store,
                    "runs": args.runs,
                    "seconds": figures,
                    "ratio_to_python": {k: round(v["p50"] / base, 2) for k, v in figures.items()},
                    "ratio_to_sdk": {k: round(v["p50"] / sdk, 2) for k, v in figures.items()},
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
