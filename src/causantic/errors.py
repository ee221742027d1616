"""The one family of errors Causantic raises on purpose.

Every message says what went wrong and what to do next; interfaces (CLI, MCP, hooks) turn these
into their own error shapes and nothing else.
"""

from typing import Literal

# Why team memory is not answering (TeamUnavailable); "error" is any other failure of it.
TeamDownReason = Literal["unreachable", "refused", "schema", "error"]


class CausanticError(Exception):
    """Base class: an expected failure with a message a user can act on."""


class ConfigError(CausanticError):
    """A configuration file or environment variable holds an invalid value."""


class ConfigWarning(UserWarning):
    """A configuration file or variable names a key Causantic does not know (it is ignored). Here,
    not in :mod:`causantic.config`, so the cached configuration repeats it without loading pydantic."""


class StoreError(CausanticError):
    """The memory store cannot be opened, read or written."""


class TeamUnavailable(StoreError):
    """Team memory cannot answer, and why (``reason``): ``unreachable`` (no answer: the server is down,
    out of reach, or stopped answering), ``refused`` (it answered but refused the login, or holds no
    such database), ``schema`` (no team memory there yet, no pgvector, or schema changes this release
    needs that only the tables' owner may make). Any other StoreError from team memory is an ``error``."""

    def __init__(self, message: str, reason: TeamDownReason) -> None:
        super().__init__(message)
        self.reason: TeamDownReason = reason


class TranscriptError(CausanticError):
    """A transcript path cannot be read at all (a bad line is never an error: it is skipped)."""


class ProjectNotFound(CausanticError):
    """A project name matched nothing, or matched several projects. ``meant``: the known names close
    to a misspelt ``asked`` one, which the message offers ("did you mean …?"); ``known``: the names it
    lists ("known: …"); both for the dashboard's links."""

    def __init__(
        self, message: str, *, asked: str = "", meant: tuple[str, ...] = (), known: tuple[str, ...] = ()
    ) -> None:
        super().__init__(message)
        self.asked = asked
        self.meant = meant
        self.known = known


class NoMemoryYet(ProjectNotFound):
    """A folder memory has never seen, such as a new project's: an answer, not a failure. The CLI
    prints its message as the answer and the MCP tools return it as their text, not as an error."""


class ModelUnavailable(CausanticError):
    """The configured embedding model cannot be loaded on this machine."""


def raise_if_interrupted(exc: ImportError) -> None:
    """Raise KeyboardInterrupt when ``exc`` is a Ctrl-C that arrived while an extension module
    (numpy, onnxruntime, faiss) was initialising: Python reports that as ``ImportError('initialization
    failed')`` caused by the KeyboardInterrupt, and without this the user who pressed Ctrl-C while the
    model loaded was told to install packages they have (exit 1, not 130)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt):
            raise KeyboardInterrupt from exc
        seen = seen.__cause__ or seen.__context__


def store_failure(exc: BaseException, where: object) -> StoreError:
    """An SQLite error as one sentence: what went wrong, where, and what to do about it.

    Interfaces call this for any ``sqlite3.Error`` that reaches them, so no user sees a traceback.
    """
    text = str(exc)
    lowered = text.lower()
    if "malformed" in lowered or "not a database" in lowered or "corrupt" in lowered:
        return StoreError(
            f"The memory database {where} is damaged ({text}): restore it from a backup, or move "
            "it aside and run `causantic batch-ingest` to rebuild it from your transcripts."
        )
    if "disk i/o error" in lowered:
        return StoreError(
            f"The memory database {where} could not be written ({text}): check that the disk has "
            "free space and works, then run the command again; what was stored before is intact."
        )
    if "full" in lowered:
        return StoreError(
            f"The disk holding the memory database {where} is full ({text}): free some space and "
            "run the command again; what was stored before is intact."
        )
    if "locked" in lowered or "busy" in lowered:
        holder = getattr(exc, "holder", None)  # causantic.store.sqlite.LockHeld: the store waited and knows more
        if holder:
            return StoreError(
                f"The memory database {where} stayed busy ({text}): {holder} held its write lock for "
                f"all of {getattr(exc, 'waited_s', 0):g} s; try again when it has finished (storage.busyTimeoutMs "
                "sets how long a command waits)."
            )
        return StoreError(
            f"The memory database {where} stayed busy ({text}): another Causantic process is "
            "writing; try again in a moment."
        )
    if "readonly" in lowered or "read-only" in lowered or "unable to open" in lowered:
        return StoreError(
            f"The memory database {where} cannot be opened for writing ({text}): check the "
            "permissions of the file and its folder, or set CAUSANTIC_HOME."
        )
    return StoreError(
        f"The memory database {where} failed ({text}): if it happens again, restore it from a "
        "backup or rebuild it with `causantic batch-ingest`."
    )


class InvalidQuery(CausanticError):
    """A query that cannot mean anything: empty, only spaces, or holding characters no text holds."""


def checked_query(text: str, what: str = "query") -> str:
    """``text`` stripped, or :class:`InvalidQuery` saying what is wrong with it.

    Shared by the CLI and the MCP tools, at the input boundary: an empty query used to match
    everything at "100%", and a lone surrogate made the MCP server fail to write its reply.
    """
    stripped = text.strip()
    if not stripped or not any(ch.isalnum() for ch in stripped):
        raise InvalidQuery(f"The {what} is empty; give a few words to look for.")
    if "\x00" in stripped:
        raise InvalidQuery(f"The {what} holds a NUL character; remove it and try again.")
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidQuery(
            f"The {what} holds an invalid character (a lone surrogate at position {exc.start}); send it as valid UTF-8."
        ) from None
    if "\ufffd" in stripped:  # what the MCP transport puts in place of a lone surrogate or a bad byte
        raise InvalidQuery(
            f"The {what} holds an invalid character (a lone surrogate or invalid UTF-8, shown as "
            "U+FFFD); send it as valid UTF-8."
        )
    return stripped
