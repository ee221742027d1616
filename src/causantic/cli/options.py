"""The click options several commands share, with the limits and help of :mod:`causantic.retrieval.options`."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

import click

from causantic.errors import CausanticError
from causantic.retrieval import options
from causantic.sources import SOURCES

F = TypeVar("F", bound=Callable[..., Any])


def int_range(option: options.Option) -> click.IntRange:
    return click.IntRange(
        None if option.low is None else int(option.low), None if option.high is None else int(option.high)
    )


def float_range(option: options.Option) -> click.FloatRange:
    return click.FloatRange(option.low, option.high, min_open=option.low_open)


def defaulted_int_option(flag: str, option: options.Option) -> Callable[[F], F]:
    """An integer option with its declared default, bounds and help (``--limit``, ``--page``)."""
    return click.option(flag, default=option.default, show_default=True, type=int_range(option), help=option.help)


def text_argument(name: str) -> Callable[[F], F]:
    """What to search for, recall or predict from: quoted or not (`causantic search login redirect
    loop` stopped at 'Got unexpected extra argument (redirect)'), its words joined by one space."""

    def joined(ctx: click.Context, param: click.Parameter, words: tuple[str, ...]) -> str:
        return " ".join(words)

    return click.argument(name, nargs=-1, required=True, callback=joined)


def project_option(func: F) -> F:
    return click.option("--project", help=options.PROJECT.help)(func)


def agent_option(func: F) -> F:
    return click.option("--agent", help=options.AGENT.help)(func)


def source_option(func: F) -> F:
    # AGENT, not the agents' names (the help names them): so wide a name narrowed every help text.
    return click.option("--source", type=click.Choice(SOURCES), metavar="AGENT", help=options.SOURCE.help)(func)


class ConfiguredOption(click.Option):
    """An option whose default is a setting's: its help gives the value configured now, with the key
    that sets it ('[default: 4000 (episodes.maxTokens); 100<=x<=100000]'), read only when help is
    shown. A fixed 'default 2500' in the help stayed the same after config.json changed it, and
    recall's help gave search's default first ('default 10000; recall and predict 2500')."""

    def __init__(self, *args: Any, setting: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting = setting  # as config.json spells it: "episodes.maxTokens"

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        record = super().get_help_record(ctx)
        value = _configured(self.setting)
        if record is None or value is None:
            return record
        spec, text = record
        default = f"default: {value} ({self.setting})"
        if text.endswith("]") and "  [" in text:  # click's own bracket: the range
            head, _, extra = text.rpartition("  [")
            return spec, f"{head}  [{default}; {extra}"
        return spec, f"{text}  [{default}]"


def _configured(setting: str) -> object | None:
    """The value of ``setting`` ('section.camelKey') in the configuration of this folder; None when the
    configuration cannot be read (the command itself then says why)."""
    from pydantic.alias_generators import to_snake

    from causantic.config_cache import read_config
    from causantic.errors import ConfigError

    section, key = setting.split(".")
    try:
        return getattr(getattr(read_config(), section), to_snake(key), None)
    except ConfigError:
        return None


def configured_option(flag: str, setting: str, **kwargs: Any) -> Callable[[F], F]:
    """An option defaulting to ``setting`` (:class:`ConfiguredOption`)."""
    return click.option(flag, cls=ConfiguredOption, setting=setting, **kwargs)


def max_tokens_option(setting: str) -> Callable[[F], F]:
    """--max-tokens, defaulting to ``setting``: tokens.mcpMaxResponse, or for recall and predict
    episodes.maxTokens."""
    return configured_option("--max-tokens", setting, type=int_range(options.MAX_TOKENS), help=f"{options.BUDGET}.")


if TYPE_CHECKING:  # generic in newer click only; pyproject allows click 8.1
    _DateType = click.ParamType[datetime, Any]
else:
    _DateType = click.ParamType


class IsoTime(_DateType):
    """A date, or a date and time, as ISO 8601 writes it (2026-03-01, 2026-03-01T09:00,
    2026-03-01 09:00:00+02:00, …Z), as the MCP tools take it; without an offset it is UTC (the
    facade's rule). click.DateTime refused minutes without seconds and every offset, and said so in
    strftime codes ('does not match the formats '%Y-%m-%d', …')."""

    name = "date"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> datetime:
        if isinstance(value, datetime):
            return value
        try:
            return datetime.fromisoformat(str(value).strip())
        except ValueError:
            self.fail(
                f"{value!r} is not a date or time: write 2026-03-01, 2026-03-01T09:00 or "
                "2026-03-01T09:00+02:00 (UTC when no offset).",
                param,
                ctx,
            )


def date_option(flag: str, dest: str, help: str) -> Callable[[F], F]:
    """A date or date and time (:class:`IsoTime`). Its help line reads ``--from DATE``."""
    return click.option(flag, dest, type=IsoTime(), metavar="DATE", help=help)


def time_range_options(func: F) -> F:
    """--from and --to."""
    func = date_option("--to", "until", options.UNTIL.help)(func)
    return date_option("--from", "since", options.SINCE.help)(func)


def days_back_option(func: F) -> F:
    return click.option("--days-back", type=float_range(options.DAYS_BACK), help=options.DAYS_BACK.help)(func)


def session_id_option(flag: str, dest: str, help: str) -> Callable[[F], F]:
    """A session id or id prefix, at least ``options.SESSION_ID_MIN`` characters as the MCP tools ask:
    a shorter prefix would pick some session by chance. The rule and its words are
    :func:`options.session_prefix` (which ``forget`` itself applies too); here a usage error."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None:
            return None
        try:
            return options.session_prefix(value)
        except CausanticError as exc:
            raise click.BadParameter(str(exc)) from exc

    return click.option(flag, dest, callback=check, help=help)
