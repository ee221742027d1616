"""Ingests running now, each in ``<home>/run/ingest-<pid>.json`` (owner-only), so that people
reading memory while a long ingest writes it (the dashboard, ``causantic stats``) see one is under way.

Written by the ingest service (so ``causantic batch-ingest`` and the hooks' ingest worker both
show), read by the facade for the dashboard and ``stats``: it sits below them all. A file is
replaced atomically at most every :data:`WRITE_EVERY_S` (a reader never sees half a file, and a
run of small files costs no write each) and removed when the ingest ends however it ends; a file
left by a killed process names a pid no longer alive and is not reported (the next ingest removes
it). A pid the system has since given to another process does not keep such a file alive: the file
records the process's start (:func:`process_start`), and a different start means another process.
Nothing here raises: an ingest that cannot write its status (read-only home, full disk) still
does its work.

Beside them, ``<home>/run/writer-<pid>.json`` records any other named process that writes memory (a
``causantic forget``, a hook; :func:`causantic.write_waits.holding`) from its first write until it
exits, and ``writer-<pid>-<n>.json`` one write of a server (the MCP server's or the dashboard's
forget, upgrade of memory's database or clean-up of its log; :func:`writing`) while it runs, so
that a process waiting for memory's write lock can say what most likely holds it (:func:`lock_holder`).
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import json
import os
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict

from causantic import write_waits
from causantic.files import atomic_write, secure_dir
from causantic.wording import ago, counted

RUN_DIR = "run"  # beside the prompt server's socket and pid file (hooks/warm.py)
WRITE_EVERY_S = 1.0  # progress is written at most this often; the first and last counts always


class IngestRun(TypedDict):
    pid: int
    by: str | None  # what started it ("Claude Code's session-end hook", "`causantic ingest`"); None when not said
    processStart: str | None  # which process holds the pid (process_start); None where the system cannot tell
    started: str  # ISO 8601 UTC
    source: str  # what it reads: a folder or file, or the first of several
    phase: str  # "finding files", "reading" or "embedding"
    filesDone: int
    filesTotal: int | None  # None until the files to read are known
    chunks: int  # chunks written so far
    embedded: int  # embedding phase: chunks embedded so far, of embedTotal
    embedTotal: int


class IngestProgress:
    """This process's ingest status file while the ``with`` block runs; removed at its end."""

    def __init__(self, home: Path, sources: list[Path]) -> None:
        self._path = home / RUN_DIR / f"ingest-{os.getpid()}.json"
        more = f" and {len(sources) - 1} more" if len(sources) > 1 else ""
        self.run = IngestRun(
            pid=os.getpid(),
            by=write_waits.name(),
            processStart=process_start(os.getpid()),
            started=_iso(time.time()),
            source=(str(sources[0]) if sources else "") + more,
            phase="finding files",
            filesDone=0,
            filesTotal=None,
            chunks=0,
            embedded=0,
            embedTotal=0,
        )
        self._written = 0.0

    def __enter__(self) -> IngestProgress:
        _remove_stale(self._path.parent)
        self._write()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _unlink(self._path)

    # Each takes the counts its ingest callback gets (causantic.ingest.pipeline.ingest's, sync_vectors').
    def discovered(self, files: int, _bytes: int) -> None:
        self.run["phase"], self.run["filesTotal"] = "reading", files
        self._write()

    def read(self, files_done: int, _bytes_done: int, chunks: int) -> None:
        self.run["phase"], self.run["filesDone"], self.run["chunks"] = "reading", files_done, chunks
        self._write(throttled=True)

    def embedding(self, done: int, total: int) -> None:
        self.run["phase"], self.run["embedded"], self.run["embedTotal"] = "embedding", done, total
        self._write(throttled=done < total)

    def _write(self, throttled: bool = False) -> None:
        now = time.monotonic()
        if throttled and now - self._written < WRITE_EVERY_S:
            return
        self._written = now
        try:
            secure_dir(self._path.parent)
            atomic_write(self._path, json.dumps(self.run, sort_keys=True) + "\n")
        except OSError as exc:
            from causantic.logs import log

            log("ingest: cannot write its running status", error=exc)


def running_ingests(home: Path) -> list[IngestRun]:
    """The ingests running now on this home, oldest first; empty when none runs. Files of processes
    that died without removing theirs (``kill -9``, a power cut) are left out."""
    runs: list[IngestRun] = []
    for path in (home / RUN_DIR).glob("ingest-*.json"):
        run = _read(path)
        if run is not None and _alive(run):
            runs.append(run)
    return sorted(runs, key=lambda r: r["started"])


def running_text(run: IngestRun, now: datetime | None = None) -> str:
    """'Ingest running: 120 of 431 files, 2,310 chunks so far, started 3 min ago (pid 1234)'."""
    if run["phase"] == "embedding":
        doing = f"embedding {run['embedded']:,} of {counted(run['embedTotal'], 'new chunk')}"
    elif run["filesTotal"] is None:
        doing = f"finding the files in {run['source']}"
    else:
        files = f"{run['filesDone']:,} of {counted(run['filesTotal'], 'file')}"
        doing = f"{files}, {counted(run['chunks'], 'chunk')} so far"
    return f"Ingest running: {doing}, started {ago(run['started'], now)} (pid {run['pid']})"


class WriterRun(TypedDict):
    """A process that wrote memory and still runs (:func:`record_writer`)."""

    pid: int
    by: str  # what it is ("`causantic forget`", "Claude Code's session-start hook")
    processStart: str | None  # as IngestRun's
    started: str  # ISO 8601 UTC: when it started


def record_writer(home: Path, by: str, started: float) -> None:
    """Record this process as a writer of memory on ``home`` (``<home>/run/writer-<pid>.json``) until
    it exits: :func:`lock_holder` names it to a process that waits for its writes. Never raises."""
    path = home / RUN_DIR / f"writer-{os.getpid()}.json"
    if _write_writer(path, by, started):
        atexit.register(_unlink, path)


@contextlib.contextmanager
def writing(home: Path, by: str) -> Iterator[None]:
    """Record one write of a long-lived process (a server's, :func:`causantic.write_waits.write`) as a
    writer of memory on ``home`` while the block runs (``<home>/run/writer-<pid>-<n>.json``), so a
    process waiting for it names it ("the MCP server's forget started at 10:02 UTC (pid 4242)"); a
    server is not recorded for its whole life, as a command is (:func:`record_writer`), since it
    mostly reads. Never raises for its record."""
    path = home / RUN_DIR / f"writer-{os.getpid()}-{next(_writes)}.json"
    written = _write_writer(path, by, time.time())
    try:
        yield
    finally:
        if written:
            _unlink(path)


_writes = itertools.count(1)  # this process's recorded writes (:func:`writing`), each its own file


def _write_writer(path: Path, by: str, started: float) -> bool:
    """Write a writer's record at ``path``; False when it cannot (logged)."""
    run = WriterRun(pid=os.getpid(), by=by, processStart=process_start(os.getpid()), started=_iso(started))
    try:
        secure_dir(path.parent)
        _remove_stale(path.parent)
        atomic_write(path, json.dumps(run, sort_keys=True) + "\n")
    except OSError as exc:
        from causantic.logs import log

        log("cannot record this process as a writer of memory", error=exc)
        return False
    return True


def lock_holder(home: Path) -> str:
    """What most likely holds memory's write lock when this process waits for it, in words: of the
    other processes that write memory on ``home`` now, the oldest ("the ingest started by Claude
    Code's session-end hook at 08:14 UTC (pid 4242)", "the `causantic vacuum` started at 10:02 (pid
    4250)"); else "another Causantic process" (SQLite does not say which process holds it, and only
    named processes record that they write: :func:`causantic.write_waits.named`)."""
    me = os.getpid()
    ingests = [run for run in running_ingests(home) if run["pid"] != me]
    seen = {run["pid"] for run in ingests} | {me}  # an ingest's process is named once, as the ingest
    writers: dict[int, WriterRun] = {}  # a server's writes at once are one process: its oldest names it
    for run in sorted(running_writers(home), key=lambda r: r["started"]):
        if run["pid"] not in seen:
            writers.setdefault(run["pid"], run)
    # (started, pid, what it is in words, whether an ingest) of each, oldest first
    runs = sorted(
        [
            (run["started"], run["pid"], "the ingest started" + (f" by {run['by']}" if run["by"] else ""), True)
            for run in ingests
        ]
        + [(run["started"], run["pid"], f"{_the(run['by'])} started", False) for run in writers.values()]
    )
    if not runs:
        return "another Causantic process"
    started, pid, words, _ = runs[0]
    try:
        at = " at " + datetime.fromisoformat(started.replace("Z", "+00:00")).astimezone(UTC).strftime("%H:%M UTC")
    except ValueError:
        at = ""
    others, kind = len(runs) - 1, "ingest" if all(ingest for *_, ingest in runs[1:]) else "writer"
    more = f" (or one of {counted(others, 'other ' + kind)})" if others > 1 else f" (or one other {kind})" * others
    return f"{words}{at} (pid {pid}){more}"


def _the(by: str) -> str:
    """'the `causantic forget`' for a command; a hook's words as they are ("Claude Code's session-start hook")."""
    return f"the {by}" if by.startswith("`") else by


def running_writers(home: Path) -> list[WriterRun]:
    """The processes that wrote memory on ``home`` and still run (:func:`record_writer`)."""
    runs: list[WriterRun] = []
    for path in (home / RUN_DIR).glob("writer-*.json"):
        run = _read_writer(path)
        if run is not None and _alive(run):
            runs.append(run)
    return runs


def pid_alive(pid: int) -> bool:
    """Whether a process with this id runs on this machine (a reused id counts as running)."""
    if pid <= 0:
        return False
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it there
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:  # another user's process
        return True
    return True


def process_start(pid: int) -> str | None:
    """What tells this process apart from a later one given the same pid: its start, as the boot and
    the clock tick since boot it started at (Linux ``/proc``); None where the system does not say
    (macOS, Windows, a /proc mounted with ``hidepid``), and then the pid alone is checked."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text(encoding="ascii").strip()
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
        # After the command name, which may hold spaces and parentheses: state is field 3, start time field 22.
        return f"{boot}:{stat.rsplit(')', 1)[1].split()[19]}"
    except (OSError, IndexError):
        return None


def _alive(run: IngestRun | WriterRun) -> bool:
    """The process that wrote ``run`` still runs: its pid is alive and, where both starts are known,
    was not given to another process since."""
    if not pid_alive(run["pid"]):
        return False
    recorded = run["processStart"]
    return recorded is None or process_start(run["pid"]) in (None, recorded)


def _json(path: Path) -> dict[str, Any] | None:
    """A run file's fields, when it has a pid and a start."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # removed meanwhile, or not ours
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int) or not isinstance(data.get("started"), str):
        return None
    return data


def _read(path: Path) -> IngestRun | None:
    data = _json(path)
    if data is None:
        return None
    try:
        return _run_of(data)
    except (TypeError, ValueError):
        return None


def _read_writer(path: Path) -> WriterRun | None:
    data = _json(path)
    if data is None or not isinstance(data.get("by"), str):
        return None
    start = data.get("processStart")
    return WriterRun(
        pid=data["pid"], by=data["by"], processStart=start if isinstance(start, str) else None, started=data["started"]
    )


def _run_of(data: dict[str, Any]) -> IngestRun:
    return IngestRun(
        pid=data["pid"],
        by=data["by"] if isinstance(data.get("by"), str) else None,
        processStart=data["processStart"] if isinstance(data.get("processStart"), str) else None,
        started=data["started"],
        source=str(data.get("source", "")),
        phase=str(data.get("phase", "reading")),
        filesDone=int(data.get("filesDone", 0)),
        filesTotal=data["filesTotal"] if isinstance(data.get("filesTotal"), int) else None,
        chunks=int(data.get("chunks", 0)),
        embedded=int(data.get("embedded", 0)),
        embedTotal=int(data.get("embedTotal", 0)),
    )


def _remove_stale(folder: Path) -> None:
    """Remove the files of ingests and writers whose process is gone."""
    for path in folder.glob("ingest-*.json"):
        run = _read(path)
        if run is not None and not _alive(run):
            _unlink(path)
    for path in folder.glob("writer-*.json"):
        writer = _read_writer(path)
        if writer is not None and not _alive(writer):
            _unlink(path)


def _unlink(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


def _iso(seconds: float) -> str:
    """A time as ISO 8601 UTC to the second ('2026-11-25T10:02:13Z')."""
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
