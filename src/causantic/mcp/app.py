"""What the server holds while it runs: one :class:`~causantic.facade.Memory`, opened in the lifespan.

Tools are plain functions the SDK runs on worker threads; :meth:`AppContext.call` runs one at a
time over the shared SQLite connection and turns every failure into a ``ToolError`` whose message
the model can act on, so a bad request never takes the server down. The embedding model and the
vector index load on first need, or ahead of it in a background thread once the client has listed
the tools (so loading never delays the handshake).
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mcp.server.mcpserver.exceptions import ToolError

from causantic import write_waits
from causantic.errors import CausanticError, StoreError
from causantic.facade import Memory
from causantic.logs import log, log_path

T = TypeVar("T")
LOG_FILE = "mcp.log"


@dataclass(slots=True)
class AppContext:
    memory: Memory
    here: str | None = None  # the client's project folder (stdio: the server's cwd), preferred by search/recall/predict
    lock: threading.Lock = field(default_factory=threading.Lock)
    started: float = field(default_factory=time.time)  # a session noted after it is newer than the environment
    # The chunk ids each forget preview matched, by its filters: a confirmation deletes only those, so
    # a chunk ingested between preview and confirmation is never deleted unseen (the count alone let
    # one new match stand in for one gone).
    forget_previews: dict[tuple[object, ...], frozenset[str]] = field(default_factory=dict)
    _warm_started: bool = False

    def call(self, tool: str, work: Callable[[Memory], T]) -> T:
        with self.lock:
            try:
                return work(self.memory)
            except ToolError:
                raise
            except StoreError as exc:  # the store words its own failures (damaged, full, busy)
                log(f"{tool}: {exc}", error=exc, file=LOG_FILE)
                raise ToolError(str(exc)) from exc
            except CausanticError as exc:
                raise ToolError(str(exc)) from exc
            except Exception as exc:
                log(f"{tool}: unexpected error", error=exc, file=LOG_FILE)
                raise ToolError(
                    f"{tool} failed unexpectedly ({type(exc).__name__}: {exc}). The traceback is in "
                    f"{log_path(LOG_FILE)}."
                ) from exc

    def start_warmup(self) -> None:
        """Open the vector index and load the embedding model in the background, once."""
        if self._warm_started:
            return
        self._warm_started = True
        threading.Thread(target=self._warm, name="causantic-warmup", daemon=True).start()

    def _warm(self) -> None:
        try:
            with self.lock:
                self.memory.warm_up()
        except Exception as exc:  # a later tool call reports the same problem to the model
            log(f"warm-up skipped: {exc}", file=LOG_FILE)


@asynccontextmanager
async def lifespan(_server: Any, here: str | None = None) -> AsyncIterator[AppContext]:
    # Its writes (an upgrade of memory's database at opening, a forget, the log's idle clean-up) are
    # each named to a process that waits for them: "the MCP server's forget started at 10:02 UTC".
    with write_waits.serving("the MCP server"), Memory() as memory, memory.tidied_while_open():
        yield AppContext(memory, here=here)
