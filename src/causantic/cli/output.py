"""Rendering helpers shared by every command: JSON for scripts, rich tables for people.

rich loads on first use (``console``, ``err_console``, :func:`table`): it costs a cold command about
25 ms, which :func:`line` saves a command whose output goes to a pipe or a file.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import click

from causantic.errors import CausanticError, NoMemoryYet

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

F = TypeVar("F", bound=Callable[..., Any])

# Piped output is read in a pager or a file, not a window 80 columns wide: rich would wrap tables
# and truncate names at 80, so a pipe gets room for a whole row (a terminal keeps its own width, and
# COLUMNS set by hand wins over both, as it does for rich and click).
PIPE_WIDTH = 200
FLEX_MIN_WIDTH = 16  # the one wrapping column of a table gets at least this; else rows print as blocks
INTERRUPTED = 130  # the exit code of a command stopped by Ctrl-C, as a shell reports it (128 + SIGINT)
STORE_LABELS = {"team": "team memory", "local": "local (unshared)"}  # team memory beside the local store
# A progress line: what the bar leaves room for (name, count, elapsed time, a detail), its widths;
# a detail narrower than DETAIL_MIN says nothing, and the bar of a line without one shrinks to BAR_LEAST.
PROGRESS_FIXED, PROGRESS_DETAIL, BAR_MIN, BAR_MAX, DETAIL_MIN, BAR_LEAST = 36, 30, 10, 40, 10, 3
_consoles: dict[str, Console] = {}


def __getattr__(name: str) -> Console:
    """``console`` (stdout) and ``err_console`` (stderr), made on first use."""
    if name not in ("console", "err_console"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return _console(name)


def _console(name: str = "console") -> Console:
    if not _consoles:
        from rich.console import Console

        columns = os.environ.get("COLUMNS", "")
        by_hand = columns.isdigit() and int(columns) > 0
        # COLUMNS that is no width (0, as a container exports the size of a terminal it does not know,
        # or a word) is ignored: rich took 0 and printed every line empty. shutil asks the terminal.
        terminal = shutil.get_terminal_size().columns if columns and not by_hand else None
        piped = None if sys.stdout.isatty() or by_hand else PIPE_WIDTH
        # No emoji codes: stored text is shown as written, and code holds them by chance
        # (arr[1:100:2] would read arr[1💯2]).
        _consoles["console"] = Console(highlight=False, emoji=False, width=piped or terminal)
        _consoles["err_console"] = Console(stderr=True, highlight=False, emoji=False, width=terminal)
    return _consoles[name]


def line(text: str = "", style: str | None = None) -> None:
    """Print one line of text as it is (no markup, no emoji codes), in ``style`` on a terminal. Piped
    or redirected, it prints the text verbatim without loading rich (whose plain rendering would also
    expand tabs)."""
    if not (sys.stdout.isatty() or os.environ.get("FORCE_COLOR")):
        click.echo(text)
        return
    if style is None:
        _console().print(text, markup=False, soft_wrap=True)
        return
    from rich.text import Text

    _console().print(Text(text, style=style), soft_wrap=True)


def json_option(func: F) -> F:
    """The shared ``--json`` flag."""
    return click.option("--json", "as_json", is_flag=True, help="Print machine-readable JSON.")(func)


def emit_json(value: Any) -> None:
    """Print ``value`` as JSON; a result model (causantic.retrieval.output) prints in its one shape."""
    if hasattr(value, "model_dump"):  # not isinstance: pydantic loads only when a result model was made
        value = value.model_dump(mode="json")
    click.echo(json.dumps(_plain(value), indent=2, ensure_ascii=False, default=str))


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def table(title: str | None, columns: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]]) -> None:
    """Print an aligned table; ``columns`` are (header, justify) pairs, blank headers for a list of
    name/value pairs. Only the widest column wraps: ids, counts and times stay whole on one line.
    Where even that does not fit (a narrow terminal), each row is printed as a block of
    ``header  value`` lines (a long value wrapping under itself) instead of a table whose every
    cell is cut."""
    from rich.cells import cell_len
    from rich.table import Table
    from rich.text import Text

    console = _console()
    cells = [[_cell(cell) for cell in row] for row in rows]
    headers = [header for header, _ in columns]
    widths = [max([cell_len(h), *(cell_len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    flex = max(range(len(columns)), key=lambda i: widths[i])
    fixed = sum(w + 3 for i, w in enumerate(widths) if i != flex)  # content, padding and a rule each
    if any(headers) and fixed + FLEX_MIN_WIDTH > console.width:
        _records(title, headers, cells)
        return
    heading = Text(title) if title else None  # a title names a project: text, not markup
    out = Table(title=heading, title_justify="left", show_edge=False, show_header=any(headers), header_style="bold")
    for i, (header, justify) in enumerate(columns):
        out.add_column(header, justify=justify, no_wrap=i != flex, overflow="fold")  # type: ignore[arg-type]
    for row in cells:
        out.add_row(*(Text(cell) for cell in row))  # stored text, not markup: "[trimmed]" stays
    _print(out)


def _cell(value: Any) -> str:
    """A count with thousands separators ('123,456', as :func:`~causantic.wording.counted` words it
    in sentences); anything else as text. An id people type is passed as text and left alone."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _records(title: str | None, headers: Sequence[str], cells: Sequence[Sequence[str]]) -> None:
    from rich.table import Table
    from rich.text import Text

    console = _console()
    if title:
        console.print(Text(title, style="italic"), soft_wrap=True)
    for n, row in enumerate(cells):
        if n or title:
            console.print()
        # A grid, not "header  value" lines: a value longer than the line wraps under its own start,
        # so the headers stay a column of their own (and each block is as wide as the widest header).
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True, min_width=max(len(h) for h in headers))
        grid.add_column(overflow="fold")
        for header, value in zip(headers, row, strict=True):
            grid.add_row(header, Text(value))
        _print(grid)


def _print(renderable: Any) -> None:
    """Print a table; piped, without the spaces that pad each line to the table's width (they would
    land in files, diffs and grep matches)."""
    console = _console()
    if console.is_terminal:
        console.print(renderable)
        return
    with console.capture() as captured:
        console.print(renderable)
    click.echo("\n".join(text.rstrip() for text in captured.get().splitlines()))


def progress_bars(*, detail: bool = False) -> Progress:
    """Transient progress lines: name, bar, done/total, optionally a ``detail`` field, elapsed time.
    The bar narrows and the detail is cut (…) to fit the terminal, so the counts stay whole; where
    not even a few characters of the detail fit (40 columns), it is left out and the bar narrows
    further ('Embedding chunks ━━━━━━ 316/3… …' hid the total)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Column

    console = _console()
    detail = detail and console.width - PROGRESS_FIXED - BAR_MIN >= DETAIL_MIN
    room = console.width - PROGRESS_FIXED - (PROGRESS_DETAIL if detail else 0)
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(max(BAR_MIN if detail else BAR_LEAST, min(BAR_MAX, room))),
        MofNCompleteColumn(),
    ]
    if detail:
        columns.append(TextColumn("{task.fields[detail]}", table_column=Column(ratio=1, no_wrap=True)))
    columns.append(TimeElapsedColumn())
    # Only a narrow terminal sizes the detail to what is left; a wide one keeps the line short.
    # Piped, there is no line to redraw: a disabled bar also leaves no blank line before the summary.
    return Progress(
        *columns, console=console, transient=True, expand=detail and room < BAR_MAX, disable=not console.is_terminal
    )


def chunk_rate(done: int, total: int, seconds: float) -> str:
    """An embedding bar's detail: the chunks per second of wall time so far, and the minutes left
    once there are more than one."""
    rate = done / seconds if seconds > 0 else 0.0
    left = (total - done) / rate if rate else None
    return f"{rate:.1f} chunks/s" + (f" · ~{left / 60:.0f} min left" if left and left >= 60 else "")


@contextmanager
def interrupted_says(note: str) -> Iterator[None]:
    """Ctrl-C ends the command with ``note`` on stderr and exit code 130 (a shell's code for it), where
    click said only 'Aborted!' (exit 1), which read as a failure and not what the next run would do."""
    try:
        yield
    except KeyboardInterrupt:
        # On a terminal the ^C the terminal echoed ends its line first; piped, no blank line.
        click.echo(("\n" if sys.stderr.isatty() else "") + f"Interrupted. {note}".rstrip(), err=True)
        raise click.exceptions.Exit(INTERRUPTED) from None


def say_write_waits() -> None:
    """A write that waits for another process's lock says so on stderr, with what holds it and what to
    do (:mod:`causantic.write_waits`); a command that waits no longer looks frozen."""
    from causantic import write_waits

    def told(holder: str, timeout_s: float) -> None:
        click.echo(
            f"causantic: waiting for {holder} to finish writing memory (at most {timeout_s:g} s); Ctrl-C to stop.",
            err=True,
        )

    write_waits.listen(told)


@contextmanager
def working(description: str) -> Iterator[None]:
    """A spinner, ``description`` and the time elapsed while a step that reports no progress runs, on
    a terminal; piped or redirected, nothing (rich is not even loaded)."""
    if not sys.stdout.isatty():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=_console(), transient=True
    ) as progress:
        progress.add_task(description, total=None)
        yield


def agreed(question: str, *, default: bool) -> bool:
    """The answer typed or piped in. Run from a script with nothing piped, the question met the end of
    stdin and the command stopped at a bare "Aborted!"; it says what to add instead."""
    try:
        return click.confirm(question, default=default)
    except click.Abort:
        if sys.stdin.isatty():
            raise
        click.echo()  # end the question's line
        raise click.ClickException(
            "no answer on stdin (not a terminal): add --yes to go ahead without asking."
        ) from None


@contextmanager
def domain_errors() -> Iterator[None]:
    """Turn expected failures into a one-line error and exit code 1, never a traceback."""
    try:
        yield
    except NoMemoryYet as exc:  # a new project's folder: the answer, in the words the MCP tools give
        context = click.get_current_context(silent=True)
        if context is not None and context.params.get("as_json"):  # a script expecting a result's shape
            raise click.ClickException(str(exc)) from exc
        click.echo(str(exc))
        raise click.exceptions.Exit(0) from exc
    except CausanticError as exc:
        raise click.ClickException(str(exc)) from exc
