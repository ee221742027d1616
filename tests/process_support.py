"""Running real Causantic processes from tests: the CLI, the hooks and the MCP server.

Subprocesses inherit the test's ``CAUSANTIC_HOME`` (set by the autouse fixture) and find this
checkout's package through ``PYTHONPATH``, installed or not. ``McpProcess`` drives a spawned server
through the SDK's stdio client from synchronous test code, over an anyio blocking portal.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractContextManager, asynccontextmanager
from pathlib import Path
from types import TracebackType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
REAL_PROJECTS = Path("daaain__claude-code-log/test/test_data/real_projects")
EXAMPLES = SRC / "causantic" / "examples" / "sessions"
# Real Claude Code projects from the shared corpus: a plain session, sessions with flat 2.0.x
# sub-agent files, and an agent team with the 2.1.x subagents/ layout.
CORPUS_FOLDERS = ("-experiments-ideas", "-Users-dain-workspace-JSSoundRecorder", "-experiments-worktrees")


def corpus_paths(corpus_dir: Path) -> list[Path]:
    """The example sessions and the corpus folders above, as ingest targets."""
    return [EXAMPLES, *(corpus_dir / REAL_PROJECTS / name for name in CORPUS_FOLDERS)]


def subprocess_env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env.update(extra)
    return env


# Heavy libraries and heavy Causantic modules a command may load (cli_imports reports which).
WATCHED = (
    "numpy",
    "onnxruntime",
    "tokenizers",
    "faiss",
    "sklearn",
    "scipy",
    "mcp",
    "starlette",
    "uvicorn",
    "lancedb",
    "pyarrow",
    "causantic.ingest.pipeline",
    "causantic.mcp",
    "causantic.transcripts.discovery",
    "causantic.embedding.embedder",
    "pydantic",
    "rich",
)
REPORTER = (
    "import atexit, json, sys\n"
    f"watched = {WATCHED!r}\n"
    "atexit.register(lambda: sys.stderr.write('\\nIMPORTS ' + json.dumps(sorted(m for m in watched"
    " if m in sys.modules)) + '\\n'))\n"
    "from causantic.cli.main import main\n"
    "sys.argv[0] = 'causantic'\n"
    "main()\n"
)


def cli_imports(home: Path, *args: str, stdin: str | None = None, **env: str) -> set[str]:
    """Which of :data:`WATCHED` ``causantic <args>``, run as a real process with ``home`` as its data
    folder (and ``env`` besides), had loaded when it exited: what a cold command pays for."""
    run = subprocess.run(
        [sys.executable, "-c", REPORTER, *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=subprocess_env(CAUSANTIC_HOME=str(home), **env),
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    line = next(line for line in run.stderr.splitlines() if line.startswith("IMPORTS "))
    return set(json.loads(line.removeprefix("IMPORTS ")))


# `causantic ARGS` (argv: a folder, then ARGS), as a user runs it, except that its first write after
# the test creates <folder>/armed (a statement that takes the write lock, or a checkpoint of the log,
# which holds it while it copies) takes memory's write lock, writes its pid to <folder>/holding and
# holds the lock until <folder>/go exists: a server's stdout is its channel (MCP, the dashboard's
# URL), so the test and the process talk through files (:func:`appeared`).
WRITE_HELD_WHEN_ARMED = """
import os, sys, time
from pathlib import Path
import causantic.store.sqlite as sqlite_util

folder = Path(sys.argv[1])
real, real_checkpoint = sqlite_util.run_waiting, sqlite_util.checkpoint

def held_when_armed(conn):
    armed = folder / "armed"
    if armed.exists():
        armed.unlink()
        real(conn, "BEGIN IMMEDIATE")
        (folder / "holding").write_text(str(os.getpid()))
        while not (folder / "go").exists():
            time.sleep(0.05)
        conn.execute("ROLLBACK")

def run_waiting(conn, statement, **options):
    held_when_armed(conn)
    real(conn, statement, **options)

def checkpoint(conn, *args, **options):
    held_when_armed(conn)
    return real_checkpoint(conn, *args, **options)

sqlite_util.run_waiting, sqlite_util.checkpoint = run_waiting, checkpoint
from causantic.cli.main import main
sys.argv = ["causantic", *sys.argv[2:]]
main()
"""


def ingest_waiting(folder: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    """`causantic ingest --no-embed FOLDER` started while another process holds memory's write lock,
    and the first line it prints that says it is waiting ('' when it ends without one), read as it
    prints it: the process runs on, for the test to let the holder go and then read how it ended."""
    waiting = subprocess.Popen(
        [sys.executable, "-m", "causantic", "ingest", "--no-embed", str(folder)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert waiting.stderr is not None
    return waiting, next((line for line in waiting.stderr if "waiting" in line), "").strip()


def appeared(path: Path, timeout_s: float = 60) -> str:
    """The text of the file at ``path`` once a process has written it (written whole: see above)."""
    deadline = time.monotonic() + timeout_s
    while not path.exists() or not path.read_text():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)
    return path.read_text()


def causantic(
    *args: str,
    input: str | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``python -m causantic <args>``, as a user would run it."""
    return subprocess.run(
        [sys.executable, "-m", "causantic", *args],
        input=input,
        capture_output=True,
        text=True,
        env=env or subprocess_env(),
        cwd=cwd,
        timeout=timeout,
    )


def run_hook(
    hook: str, payload: dict[str, Any] | str, *, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[subprocess.CompletedProcess[str], float]:
    """``python -m causantic.hooks <hook>`` with ``payload`` on stdin, as Claude Code runs it; and seconds."""
    text = payload if isinstance(payload, str) else json.dumps(payload)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "causantic.hooks", hook],
        input=text,
        capture_output=True,
        text=True,
        env=env or subprocess_env(),
        cwd=cwd,
        timeout=60,
    )
    return done, time.perf_counter() - started


def claude_projects(root: Path, corpus: Path, folders: Sequence[str], examples: bool = True) -> Path:
    """A ``~/.claude/projects`` under ``root`` holding copies of real corpus project folders."""
    projects = root / ".claude" / "projects"
    projects.mkdir(parents=True, exist_ok=True)
    for name in folders:
        shutil.copytree(corpus / REAL_PROJECTS / name, projects / name)
    if examples:
        for folder in EXAMPLES.iterdir():
            shutil.copytree(folder, projects / folder.name)
    for path in projects.rglob("*"):  # the corpus is read-only; Claude Code's own files are not
        path.chmod(0o700 if path.is_dir() else 0o600)
    return projects


def worker_pids(marker: str) -> list[int]:
    """Running hook ingest workers whose command line mentions ``marker`` (Linux /proc)."""
    pids = []
    for entry in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = entry.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if "ingest-worker" in command and marker in command:
            pids.append(int(entry.parent.name))
    return pids


def wait_for(predicate: Any, timeout: float = 60, interval: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"condition not met within {timeout} s")


class McpProcess(AbstractContextManager["McpProcess"]):
    """A ``causantic serve`` subprocess, spoken to by the SDK's stdio client (initialize handshake, as
    Claude Code does)."""

    def __init__(
        self,
        args: Sequence[str] = ("-m", "causantic", "serve", "--no-warm"),
        env: dict[str, str] | None = None,
    ) -> None:
        self.args = list(args)
        self.env = env or subprocess_env()

    def __enter__(self) -> McpProcess:
        import anyio.from_thread

        self._portal_cm = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_cm.__enter__()
        self._client_cm = self.portal.wrap_async_context_manager(self._client())
        self.client = self._client_cm.__enter__()
        return self

    @asynccontextmanager
    async def _client(self) -> AsyncIterator[Any]:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=sys.executable, args=self.args, env=self.env)
        with open(os.devnull, "w") as quiet:  # the server's stderr logging stays out of test output
            async with (
                stdio_client(params, errlog=quiet) as (read, write),
                ClientSession(read, write) as session,
            ):
                self.initialized = await session.initialize()
                yield session

    def list_tools(self) -> Any:
        return self.portal.call(self.client.list_tools)

    def call(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        return self.portal.call(self.client.call_tool, name, arguments or {})

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._client_cm.__exit__(exc_type, exc, tb)
        finally:
            self._portal_cm.__exit__(exc_type, exc, tb)
