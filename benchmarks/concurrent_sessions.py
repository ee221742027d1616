"""Several Claude Code sessions at once on one memory: errors, hook latency and consistency.

Usage: python benchmarks/concurrent_sessions.py [--servers N] [--no-embed] [--json OUT] [--keep DIR]

One CAUSANTIC_HOME (a temporary folder) and a ``~/.claude/projects`` holding copies of real projects
of the shared corpus (daaain__claude-code-log's ``real_projects``; the corpus is read where it lies,
the copies live in the temporary folder). One of their sessions, the *live* one, starts as its first
half; the rest of its lines are appended during the run, as Claude Code writes them.

1. Idle: the memory holds the example sessions and one small project (embedded, clustered). The
   live session's first quarter of new lines is appended; hooks fire as Claude Code fires them
   (``causantic hook user-prompt-submit`` on each user prompt; ``pre-compact`` and a new session's
   ``session-start`` every few lines): their wall times are the idle baseline.
2. Busy: at the same time ``causantic batch-ingest`` of the whole projects folder (embedding, as
   the hook workers do, unless ``--no-embed``), N ``causantic serve`` MCP servers (the ``mcp``
   SDK's stdio client) answering search / recall / stats in a loop, a ``causantic dashboard``
   fetched in a loop, two ``causantic cluster`` runs at once, and the rest of the live session
   appended with its hooks firing. Every few lines a marker prompt is appended, ingested by
   ``causantic ingest`` (committed when it exits), then searched on every server: an answer
   without it missed a committed write.
3. After everything stops (a final ``session-end``, its worker waited for), the chunk ids (with
   content hashes) and edges are compared with one ``causantic ingest`` of the same final files
   into a fresh home.

Printed: every error a user or agent would see (non-zero exits, tracebacks, "database is locked",
failed tool calls, hook stdout that is not Claude Code's JSON, hook runs recorded as failed), hook
p95 busy against idle (the ratio; ``python -c pass`` beside them says how much the machine's load
alone explains), missed fresh answers, the consistency check, and vectors against chunks.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import itertools
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
EXAMPLES = SRC / "causantic" / "examples" / "sessions"
REAL = REPO.parent / "shared" / "corpus" / "claude-code" / "daaain__claude-code-log/test/test_data/real_projects"
FOLDERS = (
    "-experiments-ideas",
    "-experiments-worktrees",
    "-Users-dain-workspace-JSSoundRecorder",
    "-Users-dain-workspace-claude-code-log-sample",
    "-Users-dain-workspace-coderabbit-review-helper",
    "-Users-dain-workspace-danieldemmel-me-next",
    "-src-deep-manifest",
    "-src-experiments-claude_p",
)
LIVE_FOLDER = "-src-deep-manifest"
PRECOMPACT_EVERY = 6  # appended lines between two pre-compact hooks (and a new session starting)
MARKER_EVERY = 25  # appended lines between two freshness checks
QUERIES: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "redirect loop"}),
    ("recall", {"query": "how did we set up the worktree"}),
    ("stats", {}),
    ("list-projects", {}),
]
DASHBOARD_PAGES = ("/", "/projects", "/topics", "/search?q=redirect+loop")
PYTHON = "(python -c pass)"  # the baseline beside the hooks
TROUBLE = re.compile(r"Traceback|database is locked|OperationalError|StoreError", re.IGNORECASE)


@dataclass
class Run:
    """What one scenario saw."""

    errors: list[str] = field(default_factory=list)
    hook_seconds: dict[str, list[float]] = field(default_factory=dict)
    tool_calls: int = 0
    pages: int = 0
    fresh_checks: int = 0
    fresh_misses: list[str] = field(default_factory=list)
    wal_peak: int = 0  # bytes of memory.db-wal, largest seen
    lock: threading.Lock = field(default_factory=threading.Lock)

    def error(self, text: str) -> None:
        with self.lock:
            self.errors.append(text)


def environment(home: Path, user: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAUSANTIC_")}
    env.update(
        CAUSANTIC_HOME=str(home),
        HOME=str(user),
        HF_HUB_OFFLINE="1",
        PYTHONPATH=os.pathsep.join(p for p in (str(SRC), os.environ.get("PYTHONPATH", "")) if p),
    )
    return env


def causantic(*args: str, env: dict[str, str], run: Run | None = None, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "causantic", *args], input=stdin, capture_output=True, text=True, env=env
    )
    if done.returncode != 0 or TROUBLE.search(done.stdout + done.stderr):
        message = f"causantic {' '.join(args[:2])}: exit {done.returncode}: {(done.stderr or done.stdout)[-400:]}"
        if run is None:
            raise SystemExit(message)
        run.error(message)
    return done.stdout


def prepare(root: Path) -> tuple[Path, Path, list[str]]:
    """The projects folder (copies), the live session file (its first half) and the lines still to append."""
    projects = root / "user" / ".claude" / "projects"
    for name in FOLDERS:
        shutil.copytree(REAL / name, projects / name)
    for path in projects.rglob("*"):
        path.chmod(0o700 if path.is_dir() else 0o600)
    live = max((projects / LIVE_FOLDER).glob("*.jsonl"), key=lambda p: p.stat().st_size)
    lines = live.read_text(encoding="utf-8").splitlines(keepends=True)
    half = len(lines) // 2
    live.write_text("".join(lines[:half]), encoding="utf-8")
    return projects, live, lines[half:]


def user_prompt(line: str) -> str | None:
    """The prompt of a transcript line that is a typed user prompt, else None."""
    try:
        record = json.loads(line)
    except ValueError:
        return None
    message = record.get("message") or {}
    if record.get("type") != "user" or record.get("isMeta") or not isinstance(message, dict):
        return None
    content = message.get("content")
    if isinstance(content, list):  # text blocks are typed; tool results are not a prompt
        texts = [b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        content = "\n".join(texts) if texts and len(texts) == len(content) else None
    return content if isinstance(content, str) and content.strip() else None


def marker_line(template: str, token: str) -> str:
    """A user prompt record like the live session's own, holding ``token``."""
    record = json.loads(template)
    record.update(uuid=str(uuid.uuid4()), type="user", timestamp=time.strftime("%Y-%m-%dT%H:%M:%S.000Z"))
    record["message"] = {"role": "user", "content": f"Please note the code word {token} for the deploy checklist."}
    return json.dumps(record) + "\n"


def fire(run: Run, env: dict[str, str], hook: str, payload: dict[str, Any]) -> None:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "causantic", "hook", hook],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
    )
    elapsed = time.perf_counter() - started
    with run.lock:
        run.hook_seconds.setdefault(hook, []).append(elapsed)
    if done.returncode != 0 or done.stderr.strip():
        run.error(f"hook {hook}: exit {done.returncode}, stderr {done.stderr.strip()[-300:]!r}")
    if done.stdout.strip():
        try:
            output = json.loads(done.stdout)
            assert isinstance(output, dict) and set(output) == {"hookSpecificOutput"}
        except (ValueError, AssertionError):
            run.error(f"hook {hook}: stdout is not Claude Code's JSON: {done.stdout[:200]!r}")


def baseline(run: Run, env: dict[str, str]) -> None:
    """A bare Python start at the same moment: how much of a hook's time the machine's load explains."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
    with run.lock:
        run.hook_seconds.setdefault(PYTHON, []).append(time.perf_counter() - started)


def drive_live(
    run: Run,
    env: dict[str, str],
    live: Path,
    lines: list[str],
    on_line: Callable[[int], None] | None = None,
) -> None:
    """Append ``lines`` to the live session, firing the hooks Claude Code would fire."""
    base = {"session_id": live.stem, "transcript_path": str(live), "cwd": "/home/user/project"}
    fire(run, env, "session-start", {**base, "hook_event_name": "SessionStart", "source": "startup"})
    for number, line in enumerate(lines, 1):
        with live.open("a", encoding="utf-8") as out:
            out.write(line)
        prompt = user_prompt(line)
        if prompt is not None:
            fire(run, env, "user-prompt-submit", {**base, "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        if number % PRECOMPACT_EVERY == 0:
            fire(run, env, "pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto"})
            # Another session starts (a new id: its briefing is built, not read from the cache).
            started = {**base, "session_id": str(uuid.uuid4()), "hook_event_name": "SessionStart", "source": "startup"}
            fire(run, env, "session-start", started)
            baseline(run, env)
        if on_line is not None:
            on_line(number)


def ingest_workers() -> list[int]:
    pids = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = entry.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "causantic.hooks ingest-worker" in command:
            pids.append(int(entry.parent.name))
    return pids


def stop_prompt_servers(home: Path) -> None:
    """End the prompt hook's warm processes this run started (they would idle for minutes)."""
    mark = f"CAUSANTIC_HOME={home}".encode()
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if b"prompt-server" in entry.read_bytes() and mark in (entry.parent / "environ").read_bytes().split(b"\0"):
                os.kill(int(entry.parent.name), 15)
        except OSError:
            continue


def wait_workers(timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while ingest_workers() and time.monotonic() < deadline:
        time.sleep(0.2)


async def serve_loop(
    run: Run, env: dict[str, str], stop: threading.Event, asks: list[tuple[str, threading.Event, list[bool]]]
) -> None:
    """One MCP server, asked QUERIES in a loop until ``stop``; answers freshness questions when posted."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "causantic", "serve"], env=env)
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            for tool, arguments in itertools.cycle(QUERIES):
                if stop.is_set():
                    return
                while asks:
                    token, answered, found = asks.pop()
                    result = await session.call_tool("search", {"query": token, "mode": "keyword"})
                    found.append(token in result.content[0].text)  # type: ignore[union-attr]
                    answered.set()
                result = await session.call_tool(tool, arguments)
                with run.lock:
                    run.tool_calls += 1
                if result.is_error:
                    run.error(f"MCP {tool}: {result.content[0].text[:300]}")  # type: ignore[union-attr]


def serve(
    run: Run, env: dict[str, str], stop: threading.Event, asks: list[tuple[str, threading.Event, list[bool]]]
) -> None:
    """:func:`serve_loop` in this thread; a server that dies is an error, and no freshness question waits for it."""
    try:
        asyncio.run(serve_loop(run, env, stop, asks))
    except BaseException as exc:  # noqa: BLE001 - what the client saw is the finding
        run.error(f"MCP server or client stopped: {type(exc).__name__}: {exc!r}"[:500])
    finally:
        stop_asking.append(asks)
        while asks:
            asks.pop()[1].set()


stop_asking: list[object] = []  # servers that no longer answer


def dashboard_loop(run: Run, env: dict[str, str], stop: threading.Event) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "causantic", "dashboard"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    url = None
    for line in process.stdout:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", line)
        if found:
            url = found
            break
    if url is None:
        run.error("dashboard printed no URL")
        return
    output: list[str] = []
    threading.Thread(target=lambda: output.extend(process.stdout or []), daemon=True).start()
    port, token = int(url.group(1)), url.group(2)
    try:
        wal = Path(env["CAUSANTIC_HOME"]) / "memory.db-wal"
        for page in itertools.cycle(DASHBOARD_PAGES):
            if stop.is_set():
                break
            with contextlib.suppress(OSError):
                run.wal_peak = max(run.wal_peak, wal.stat().st_size)
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            conn.request("GET", page, headers={"Cookie": f"causantic_dashboard_{port}={token}"})
            response = conn.getresponse()
            body = response.read().decode("utf-8", "replace")
            conn.close()
            with run.lock:
                run.pages += 1
            if response.status >= 400 or TROUBLE.search(body):
                run.error(f"dashboard {page}: HTTP {response.status}: {body[:200]!r}")
    finally:
        process.terminate()
        process.wait(timeout=30)
    if TROUBLE.search("".join(output)):
        run.error(f"dashboard output: {''.join(output)[-400:]}")


def rows(db: Path) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        chunks = sorted(conn.execute("SELECT id, content_hash FROM chunks").fetchall())
        edges = sorted(conn.execute("SELECT source_chunk_id, target_chunk_id, reference_type FROM edges").fetchall())
    return chunks, edges


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def scenario(root: Path, servers: int, embed: bool) -> dict[str, Any]:
    projects, live, rest = prepare(root)
    home = root / "home"
    env = environment(home, root / "user")
    # batch-ingest and the hook workers embed what they ingest (the default), or store chunks only.
    lazy = env if embed else {**env, "CAUSANTIC_EMBEDDING_EAGER": "false"}
    # Embedded and clustered first (two topics), so topics and vector search have work from the start.
    causantic("ingest", str(EXAMPLES), str(projects / FOLDERS[0]), env=env)
    causantic("cluster", env=env)
    template = next(line for line in rest if user_prompt(line) is not None)

    idle, busy = Run(), Run()
    # The idle part: a quarter of the lines, and at least up to the second user prompt.
    prompts = [i for i, line in enumerate(rest) if user_prompt(line) is not None]
    quarter = max(len(rest) // 4, prompts[1] + 1 if len(prompts) > 2 else 0)
    drive_live(idle, lazy, live, rest[:quarter])
    wait_workers()

    stop = threading.Event()
    asks: list[list[tuple[str, threading.Event, list[bool]]]] = [[] for _ in range(servers)]
    threads = [threading.Thread(target=serve, args=(busy, lazy, stop, asks[i])) for i in range(servers)]
    threads.append(threading.Thread(target=dashboard_loop, args=(busy, lazy, stop)))
    for thread in threads:
        thread.start()
    batch = subprocess.Popen(
        [sys.executable, "-m", "causantic", "batch-ingest", *([] if embed else ["--no-embed"]), str(projects)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=lazy,
    )
    clusters = [
        subprocess.Popen(
            [sys.executable, "-m", "causantic", "cluster"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for _ in range(2)
    ]
    tokens = (f"zqx{n:03d}canary" for n in itertools.count(1))

    def freshness(number: int) -> None:
        if number % MARKER_EVERY:
            return
        token = next(tokens)
        with live.open("a", encoding="utf-8") as out:
            out.write(marker_line(template, token))
        causantic("ingest", "--no-embed", str(live), env=lazy, run=busy)  # committed when it returns
        waits = []
        for queue in (q for q in asks if not any(q is gone for gone in stop_asking)):
            answered, found = threading.Event(), list[bool]()
            queue.append((token, answered, found))
            waits.append((answered, found))
        for answered, found in waits:
            answered.wait(timeout=300)
            busy.fresh_checks += 1
            if found != [True]:
                busy.fresh_misses.append(token)

    drive_live(busy, lazy, live, rest[quarter:], on_line=freshness)
    fire(
        busy,
        lazy,
        "session-end",
        {
            "session_id": live.stem,
            "transcript_path": str(live),
            "cwd": "/home/user/project",
            "hook_event_name": "SessionEnd",
        },
    )
    for name, process in [("batch-ingest", batch), ("cluster", clusters[0]), ("cluster", clusters[1])]:
        out, err = process.communicate()
        if process.returncode != 0 or TROUBLE.search(out + err):
            busy.error(f"{name}: exit {process.returncode}: {(err or out)[-400:]}")
    wait_workers()
    stop.set()
    for thread in threads:
        thread.join(timeout=300)

    status = json.loads(causantic("hook", "status", "--json", env=env) or "{}")
    for hook, entry in (status.get("hooks") or status).items():
        if isinstance(entry, dict) and entry.get("success") is False:
            busy.error(f"hook status: {hook} last run failed: {entry.get('error')}")

    stop_prompt_servers(home)
    reference = root / "reference"
    causantic("ingest", "--no-embed", str(projects), env={**lazy, "CAUSANTIC_HOME": str(reference)})
    causantic("ingest", "--no-embed", str(EXAMPLES), env={**lazy, "CAUSANTIC_HOME": str(reference)})
    got, want = rows(home / "memory.db"), rows(reference / "memory.db")
    stats = json.loads(causantic("stats", "--json", env=env))
    return {
        "vectors": (stats["vector_count"], stats["chunk_count"]),
        "topics": stats["topic_count"],
        "db_mb": (home / "memory.db").stat().st_size / 2**20,
        "idle": idle,
        "busy": busy,
        "chunks": (len(got[0]), len(want[0]), got[0] == want[0]),
        "edges": (len(got[1]), len(want[1]), got[1] == want[1]),
        "missing_chunks": len({c[0] for c in want[0]} - {c[0] for c in got[0]}),
        "extra_chunks": len({c[0] for c in got[0]} - {c[0] for c in want[0]}),
    }


def report(result: dict[str, Any], servers: int) -> dict[str, Any]:
    idle: Run = result["idle"]
    busy: Run = result["busy"]
    print(f"Several sessions at once: {servers} MCP servers, batch-ingest, 2 cluster runs, dashboard, live hooks")
    print(f"  MCP tool calls answered while busy: {busy.tool_calls:,}; dashboard pages: {busy.pages:,}")
    errors = idle.errors + busy.errors
    print(f"\nErrors seen: {len(errors)}")
    for text in errors:
        print(f"  - {text}")
    print("\nWall time (ms)        idle p95   busy p95    ratio   runs idle/busy")
    figures: dict[str, Any] = {}
    for hook in sorted(set(idle.hook_seconds) | set(busy.hook_seconds)):
        a, b = idle.hook_seconds.get(hook, []), busy.hook_seconds.get(hook, [])
        shown = [f"{p95(v) * 1000:>8.0f}" if v else f"{'-':>8}" for v in (a, b)]
        ratio = p95(b) / p95(a) if a and b else None
        figures[hook] = {
            "idle_ms": [round(v * 1000) for v in a],
            "busy_ms": [round(v * 1000) for v in b],
            "ratio": ratio,
        }
        said = f"{ratio:>5.1f}x" if ratio else f"{'-':>6}"
        print(f"  {hook:<19} {shown[0]}   {shown[1]}   {said}   {len(a)}/{len(b)}")
    found = busy.fresh_checks - len(busy.fresh_misses)
    print(f"\nFresh answers: {found} of {busy.fresh_checks} found a just-committed prompt")
    chunks, edges = result["chunks"], result["edges"]
    same = chunks[2] and edges[2]
    print("\nConsistency with one single-process ingest of the same files:")
    print(
        f"  chunks {chunks[0]:,} vs {chunks[1]:,} ({'same ids and hashes' if chunks[2] else 'DIFFERENT'});"
        f" {result['missing_chunks']} missing, {result['extra_chunks']} extra"
    )
    print(f"  edges  {edges[0]:,} vs {edges[1]:,} ({'same' if edges[2] else 'DIFFERENT'})")
    vectors, stored = result["vectors"]
    print(f"  vectors {vectors:,} for {stored:,} chunks; {result['topics']} topics")
    print(f"  write-ahead log: at most {busy.wal_peak / 2**20:.1f} MB while busy; database {result['db_mb']:.1f} MB")
    print(f"\n{'Everything held.' if same and not errors and not busy.fresh_misses else 'Problems found (above).'}")
    return {
        "errors": errors,
        "hooks": figures,
        "fresh_checks": busy.fresh_checks,
        "fresh_misses": busy.fresh_misses,
        "chunks": chunks,
        "edges": edges,
        "vectors": result["vectors"],
        "topics": result["topics"],
        "wal_peak_bytes": busy.wal_peak,
        "tool_calls": busy.tool_calls,
        "pages": busy.pages,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--servers", type=int, default=3, help="MCP servers at once (default 3)")
    parser.add_argument("--no-embed", action="store_true", help="batch-ingest and hooks store chunks only (faster)")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (default: a temporary one)")
    args = parser.parse_args()
    if not REAL.is_dir():
        raise SystemExit(f"the shared corpus is not at {REAL}")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=False)
        result = scenario(args.keep, args.servers, not args.no_embed)
    else:
        with tempfile.TemporaryDirectory(prefix="causantic-concurrent-") as folder:
            result = scenario(Path(folder), args.servers, not args.no_embed)
    figures = report(result, args.servers)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
