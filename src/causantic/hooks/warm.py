"""A warm process for the prompt hook: Claude Code waits for it on every prompt.

Even on its light path (:mod:`causantic.hooks.prompt_memory`) the hook spent about as long importing
and setting up as a bare Python start. So the first run that finds prompt memory on starts, detached,
``python -m causantic.hooks prompt-server``: one process per data directory that keeps everything
imported and answers the hook over a unix socket, ``<home>/run/prompt-memory.sock`` (folder 0700,
socket 0600, and a peer of another user is refused). Later runs of the hook (:func:`client`) import
only ``socket`` and ``json``, send their stdin, working directory and ``CAUSANTIC_*`` variables, and
print the answer. The server runs the same handler as the cold path under the client's variables and
directory, so configuration still follows the session (the configuration cache is keyed by them).

Fail open: no socket, a refused or slow connection, a malformed answer: the hook runs in-process
instead, as before. The server exits after ``promptMemory.warmMinutes`` without a prompt (0: never
started, and a running one stops after answering a prompt so configured), when the package's code
changes (an upgrade), or when it is killed; nothing depends on it.
No AF_UNIX (Windows): always in-process.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import socket
import sys

from causantic.home import causantic_home
from causantic.hooks.stdin import read_stdin

SOCKET = "prompt-memory.sock"
PID_FILE = "prompt-server.pid"
CONNECT_TIMEOUT_S = 0.5
ANSWER_TIMEOUT_S = 3.0  # far above a warm answer (milliseconds); past it the hook runs in-process
OK = b"ok\n"  # the answer's first line: anything else is no answer

serving = False  # True inside the server: the handler then neither starts another server nor says "cold"


def client() -> int:
    """The hook's entry: the warm process's answer if it gives one, else the in-process hook."""
    text = read_stdin()
    answer = _ask(text) if text.strip() else None  # nothing on stdin: a person trying it (run_hook says so)
    if answer is not None:
        sys.stdout.write(answer)
        sys.stdout.flush()
        return 0
    from causantic.hooks.runner import run_hook

    return run_hook("user-prompt-submit", text)


def _ask(text: str) -> str | None:
    if not hasattr(socket, "AF_UNIX"):
        return None
    try:
        here = os.getcwd()
    except OSError:
        return None  # the session's folder was deleted: no folder to come back to; answer in-process
    request = {
        "stdin": text,
        "cwd": here,
        "env": {k: v for k, v in os.environ.items() if k.startswith("CAUSANTIC_")},
    }
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(CONNECT_TIMEOUT_S)
            os.chdir(causantic_home() / "run")  # a relative name: a long home would pass AF_UNIX's ~100 bytes
            try:
                sock.connect(SOCKET)
            finally:
                os.chdir(here)
            sock.settimeout(ANSWER_TIMEOUT_S)
            sock.sendall(json.dumps(request).encode("utf-8"))
            sock.shutdown(socket.SHUT_WR)
            chunks = []
            while chunk := sock.recv(65_536):
                chunks.append(chunk)
    except (OSError, ValueError):
        return None
    data = b"".join(chunks)
    return data[len(OK) :].decode("utf-8", "replace") if data.startswith(OK) else None


def start_server() -> None:
    """Start the warm process, detached, unless this is it or the platform has no unix sockets."""
    if serving or not hasattr(socket, "AF_UNIX"):
        return
    import subprocess

    subprocess.Popen(
        [sys.executable, "-m", "causantic.hooks", "prompt-server"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not in Claude Code's process group: it outlives the hook
        close_fds=True,
    )


def serve(idle_minutes: float) -> int:
    """Answer prompt hooks until ``idle_minutes`` pass without one; one server per data directory."""
    global serving
    import signal

    from causantic.files import atomic_write, file_lock, secure_dir

    serving = True
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # `kill`: still remove the socket on the way out
    run_dir = secure_dir(causantic_home() / "run")
    with file_lock(run_dir / "prompt-server.lock", timeout=0) as locked:
        if not locked or idle_minutes <= 0:
            return 0  # another server answers already (or warm processes are off)
        stamp = _code_stamp()
        home_dir = os.getcwd()
        os.chdir(run_dir)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(SOCKET)  # a crashed server's; the lock says no server is running
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            old = os.umask(0o177)
            try:
                sock.bind(SOCKET)
            finally:
                os.umask(old)
            sock.listen(16)
            sock.settimeout(idle_minutes * 60)
            atomic_write(run_dir / PID_FILE, str(os.getpid()))
            os.chdir(home_dir)
            try:
                while True:
                    try:
                        conn, _ = sock.accept()
                    except TimeoutError:
                        break
                    with conn:
                        if _code_stamp() != stamp:
                            break  # upgraded: no answer, so this hook runs the new code in-process
                        _answer(conn)
                    if _turned_off():
                        break
                    os.chdir(run_dir)  # not a client's folder, which may be deleted while we wait
            finally:
                for name in (SOCKET, PID_FILE):
                    with contextlib.suppress(OSError):
                        os.unlink(run_dir / name)
    return 0


def _answer(conn: socket.socket) -> None:
    """One hook request: the in-process hook's stdout, under the client's variables and directory."""
    from causantic.hooks.runner import run_hook

    try:
        if not _same_user(conn):
            return
        conn.settimeout(ANSWER_TIMEOUT_S)
        chunks = []
        while chunk := conn.recv(65_536):
            chunks.append(chunk)
        request = json.loads(b"".join(chunks))
        env = {str(k): str(v) for k, v in request["env"].items() if str(k).startswith("CAUSANTIC_")}
        for name in [n for n in os.environ if n.startswith("CAUSANTIC_") and n not in env]:
            del os.environ[name]
        os.environ.update(env)
        cwd = str(request["cwd"])
        if os.path.isdir(cwd):
            os.chdir(cwd)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            run_hook("user-prompt-submit", str(request["stdin"]))
        conn.sendall(OK + out.getvalue().encode("utf-8"))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        pass  # the client gets no "ok" and runs the hook itself


def _turned_off() -> bool:
    """Whether the configuration of the prompt just answered (its variables, its folder) says
    ``promptMemory.warmMinutes`` 0: then this process stops now rather than after its idle time."""
    from causantic.config_cache import cached_config

    try:
        return bool(cached_config(None, ("prompt_memory",)).section("prompt_memory").warm_minutes <= 0)
    except Exception:  # an invalid configuration: the hook reports it; keep serving the others
        return False


def _same_user(conn: socket.socket) -> bool:
    """The folder is owner-only already; where the platform tells the peer's uid, check it too."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    import struct

    _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    return bool(uid == os.getuid())


def _code_stamp() -> float:
    """The newest modification time of the package's code: a change means an upgrade or an edit."""
    from pathlib import Path

    package = Path(__file__).resolve().parents[1]
    return max((p.stat().st_mtime for p in package.rglob("*.py")), default=0.0)
