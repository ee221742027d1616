"""Owner-only files and cross-process locks, shared by every layer that writes under ``<home>``, and
the one spelling of a transcript file's path that ingest marks it under."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path


def absolute(path: Path | str) -> Path:
    """``path`` as ingest names the files it marks: ``~`` expanded, absolute, ``.`` and ``..`` taken
    out (symbolic links kept), so ``sessions/a.jsonl`` and ``/home/me/sessions/a.jsonl`` are one file."""
    return Path(os.path.normpath(Path(path).expanduser().absolute()))


def secure_dir(path: Path) -> Path:
    """Create ``path`` and any missing parent owner-only (``mkdir -p`` would leave parents 0755).

    Only folders created here are made 0700 (``mkdir`` applies the umask, hence the chmod): a
    folder that already exists is the user's, and may be shared on purpose (a 1777 folder would
    lose its sticky bit).
    """
    for folder in reversed([path, *path.parents]):
        if not folder.exists():
            try:
                folder.mkdir(mode=0o700)
            except FileExistsError:  # another process made it first: it is theirs to set
                continue
            with contextlib.suppress(OSError):
                folder.chmod(0o700)
    return path


def atomic_write(path: Path, text: str, mode: int = 0o600) -> None:
    """Write beside the target, then rename over it: readers see the old file or the new one. An
    OSError names ``path``, the file the caller meant, not the temporary file beside it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from exc
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def prune_older_than(folder: Path, days: float, pattern: str = "*.json") -> None:
    """Delete the files of ``folder`` matching ``pattern`` last written more than ``days`` ago; a file
    that vanishes or cannot be read meanwhile is skipped."""
    cutoff = time.time() - days * 86_400
    for path in folder.glob(pattern):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            continue


@contextlib.contextmanager
def file_lock(path: Path, timeout: float | None = None) -> Iterator[bool]:
    """Hold an exclusive lock on ``path``; yields False if ``timeout`` seconds passed without it.

    The operating system's lock (``flock`` on POSIX, ``msvcrt`` on Windows through filelock), which
    the kernel releases when the holder exits, so a crashed holder never leaves it stale. On POSIX
    it is taken directly, as filelock takes it (so the two interoperate): importing filelock cost the
    prompt hook, which records every run under this lock, a sixth of a bare Python start.
    """
    secure_dir(path.parent)
    if os.name != "posix":
        yield from _filelock(path, timeout)
        return
    import fcntl

    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(0.05)
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _filelock(path: Path, timeout: float | None) -> Iterator[bool]:
    from filelock import FileLock, Timeout

    lock = FileLock(path, timeout=-1 if timeout is None else timeout, mode=0o600)
    try:
        lock.acquire(poll_interval=0.05)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()
