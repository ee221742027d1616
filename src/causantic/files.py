"""Owner-only files and cross-process locks, shared by every layer that writes under ``<home>``."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; the stores' own transactions still hold
    fcntl = None  # type: ignore[assignment]


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
    """Write beside the target, then rename over it: readers see the old file or the new one."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


@contextlib.contextmanager
def file_lock(path: Path, timeout: float | None = None) -> Iterator[bool]:
    """Hold an exclusive lock on ``path``; yields False if ``timeout`` seconds passed without it.

    The kernel releases the lock when the holder exits, so a crashed holder never leaves it stale.
    """
    secure_dir(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is None:
            yield True
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | (fcntl.LOCK_NB if deadline is not None else 0))
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
