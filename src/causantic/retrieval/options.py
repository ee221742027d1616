"""The options every interface offers, declared once: their limits, defaults and help.

The CLI's click options and the MCP tools' pydantic fields both read these, so ``--max-tokens``
and ``max_tokens`` accept the same values and say the same thing. Defaults that a user can
configure (the token budgets, the result limit) come from config; these are only the bounds.
"""

from __future__ import annotations

from dataclasses import dataclass

from causantic.errors import CausanticError


@dataclass(frozen=True, slots=True)
class Option:
    help: str
    low: float | None = None  # inclusive
    high: float | None = None  # inclusive
    default: float | None = None
    low_open: bool = False  # ``low`` itself is refused (a positive number of days)


# Defaults that are not configuration, named once for every interface and the library call.
SESSIONS_LISTED = 30  # list-sessions
TIMELINE_SESSIONS = 20  # sessions per page of reconstruct's timeline
FORGET_THRESHOLD = 0.6  # the cosine similarity forget's query match must reach

# The built-in defaults of tokens.mcpMaxResponse, episodes.maxTokens and retrieval.defaultLimit, as help
# gives them: numbers read better than key names (tests/test_config.py checks they agree with config).
# The command line gives the value configured now instead (causantic.cli.options.ConfiguredOption).
ANSWER_TOKENS, EPISODE_TOKENS, RESULTS = 10_000, 2_500, 10
BUDGET, MOST_RESULTS = "Token budget of the answer", "Most results"
MAX_TOKENS = Option(f"{BUDGET} (default {ANSWER_TOKENS}).", 100, 100_000)
# recall and predict: each tool says its own default (recall's said "default 10000; recall and predict 2500").
EPISODE_MAX_TOKENS = Option(f"{BUDGET} (default {EPISODE_TOKENS}).", MAX_TOKENS.low, MAX_TOKENS.high)
# An MCP answer's ceiling: Claude Code puts a tool result over 50,000 characters in a file, handing the model
# a path and a preview; 12,000 tokens (3.5 characters each) rendered some 42,400 characters, headings included.
MCP_MAX_TOKENS = 12_000
LIMIT = Option(f"{MOST_RESULTS} (default {RESULTS}).", 1, 100)
SESSIONS_LIMIT = Option("Most sessions listed.", 1, 500, SESSIONS_LISTED)
TIMELINE_LIMIT = Option("Sessions per page of the timeline.", 1, 500, TIMELINE_SESSIONS)
PAGE = Option("1 is the most recent part; 2 the part before it, and so on.", 1, None, 1)
DAYS_BACK = Option("The last N days (fractions allowed).", 0, 3650, low_open=True)
THRESHOLD = Option("Cosine similarity a query match must reach (raise it to forget less).", 0.01, 1.0, FORGET_THRESHOLD)
PROJECT = Option("Only this project: its name, path, or a folder inside it (the current working directory works).")
AGENT = Option("Only chunks written by this agent: 'main' or a sub-agent / teammate name.")
SOURCE = Option("Only sessions of this coding agent: claude-code, codex, gemini, copilot, cursor, droid or pi.")
USER = Option(
    "Team memory: only what this member ingested (their team.user or login name). "
    "In local, single-user memory every chunk is this machine's user's: their name keeps everything, "
    "any other name finds nothing; omit it there."
)
SINCE = Option("Start of a time range, e.g. 2026-03-01 or 2026-03-01T09:00; UTC when no offset.")
UNTIL = Option("End of a time range (exclusive); UTC when no offset.")
SESSION_ID_MIN = 4  # characters of a session id prefix: a shorter one would pick sessions by chance


def session_prefix(value: str) -> str:
    """``value`` as a session id prefix (spaces around it dropped: ids hold none), or a
    :class:`CausanticError` when it is empty or shorter than :data:`SESSION_ID_MIN` characters.

    The one place the rule and its message live: ``forget`` refuses through it (a library call
    included), and the CLI's ``--session`` options of the read commands say the same words."""
    prefix = value.strip()
    if not prefix:
        raise CausanticError("The session id is empty: give a session id (or its start), or leave it out.")
    if len(prefix) < SESSION_ID_MIN:
        raise CausanticError(
            f"Give at least {SESSION_ID_MIN} characters of the session id: {prefix!r} could be the start of "
            "several sessions' ids (list-sessions shows them)."
        )
    return prefix
