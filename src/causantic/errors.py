"""The one family of errors Causantic raises on purpose.

Every message says what went wrong and what to do next; interfaces (CLI, MCP, hooks) turn these
into their own error shapes and nothing else.
"""


class CausanticError(Exception):
    """Base class: an expected failure with a message a user can act on."""


class ConfigError(CausanticError):
    """A configuration file or environment variable holds an invalid value."""


class StoreError(CausanticError):
    """The memory store cannot be opened, read or written."""


class TranscriptError(CausanticError):
    """A transcript path cannot be read at all (a bad line is never an error: it is skipped)."""


class ProjectNotFound(CausanticError):
    """A project name matched nothing, or matched several projects."""


class ModelUnavailable(CausanticError):
    """The configured embedding model cannot be loaded on this machine."""


class InvalidQuery(CausanticError):
    """A query with nothing to search for (empty, blank or control characters only)."""
