"""Rendering helpers shared by every command: JSON for scripts, rich tables for people.

rich loads on first use (``console``, ``err_console``, :func:`table`): it costs a cold command about
25 ms, which :func:`line` saves a command whose output goes to a pipe or a file.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, is_dataclass
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

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
# The one wrapping column of a table gets at least this; where its values would wrap in less, they go
# on lines below their rows (list-sessions' titles at 80 columns took 3 to 5 lines each).
FLEX_MIN_WIDTH = 30
KEEP_END_MIN = 20  # a path cut at its start keeps at least this much ('…/claude-code-tools/tests')
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
    expand tabs). A styled line is a heading: on a terminal it wraps between words ('[Project: api |
    Date: …' broke as 'Relevan' and 'ce: 8%' at 60 columns); other text is left to the terminal, as
    a chunk's code and tool output must keep their lines."""
    if not (sys.stdout.isatty() or os.environ.get("FORCE_COLOR")):
        click.echo(text)
        return
    if style is None:
        _console().print(text, markup=False, soft_wrap=True)
        return
    from rich.text import Text

    _console().print(Text(text, style=style, overflow="fold"))


def note(text: str) -> None:
    """A warning or a note on stderr: on a terminal, wrapped between words to its width (a long note
    broke mid-word at 60 columns, a command in it across two lines); redirected, one line as written."""
    err = _console("err_console")
    if err.is_terminal:
        text = textwrap.fill(text, err.width, break_long_words=False, break_on_hyphens=False)
    click.echo(text, err=True)


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


def table(
    title: str | None,
    columns: Sequence[tuple[str, str]],
    rows: Sequence[Sequence[Any]],
    *,
    keep_end: Collection[int] = (),
    optional: Sequence[int] = (),
    below: int | None = None,
) -> None:
    """Print an aligned table; ``columns`` are (header, justify) pairs, blank headers for a list of
    name/value pairs. Piped (no terminal, no COLUMNS), each row prints whole on one line, however
    wide: a file or a pager scrolls sideways, and grep finds a row, not half of one.

    On a terminal only the widest column (or ``below``) wraps: ids, counts and times stay whole on one
    line. Where it would wrap in under :data:`FLEX_MIN_WIDTH` columns, it leaves the table and each
    row's value of it goes on indented lines below the row (list-sessions' titles at 80 columns);
    where the rest is still too wide, its widest column wraps, when it keeps that much room (topics'
    labels beside their dates, their projects below).
    ``keep_end`` columns (paths) are never wrapped: a value too long for the room left is cut at its
    start ('…/api/src', the end telling one path from another). ``optional`` columns are left out,
    in that order, where the table does not fit with each ``keep_end`` column at least
    :data:`KEEP_END_MIN` wide. Where even that does not fit (a narrow terminal), each row is printed
    as a block of ``header  value`` lines (a long value wrapping under itself, a ``keep_end`` one cut)
    instead of a table whose every cell is cut."""
    from rich.cells import cell_len

    console = _console()
    cells = [[_cell(cell) for cell in row] for row in rows]
    headers = [header for header, _ in columns]
    widths = [max([cell_len(h), *(cell_len(row[i]) for row in cells)]) for i, h in enumerate(headers)]
    shown = list(range(len(columns)))
    if _whole_rows(console):
        _print(_grid(title, columns, cells, shown, {}, None), sum(widths) + 3 * len(widths) - 1)
        return
    if keep_end or optional:
        for dropped in range(len(optional) + 1):
            shown = [i for i in range(len(columns)) if i not in optional[:dropped]]
            room = console.width - sum(widths[i] for i in shown if i not in keep_end) - (3 * len(shown) - 1)
            ends = [i for i in shown if i in keep_end]
            cut = _shares([widths[i] for i in ends], room)
            if cut is not None:
                _print(_grid(title, columns, cells, shown, dict(zip(ends, cut, strict=True)), None))
                return
        _records(title, headers, cells, keep_end)
        return
    flex = below if below is not None else max(range(len(columns)), key=lambda i: widths[i])
    fixed = sum(w + 3 for i, w in enumerate(widths) if i != flex)  # content, padding and a rule each
    room = console.width - fixed - 2  # what the flex column's text gets, its own padding taken off
    if any(headers) and room < FLEX_MIN_WIDTH and widths[flex] > room:
        one_line = not any("\n" in cell for row in cells for i, cell in enumerate(row) if i != flex)
        rest = [i for i in range(len(columns)) if i != flex]
        wraps = max(rest, key=lambda i: widths[i])
        # What the rest's widest column gets when it wraps (the last column has no rule after it).
        wrap_room = console.width - (fixed - widths[wraps]) + 1
        if len(columns) > 2 and one_line and (fixed - 1 <= console.width or wrap_room >= FLEX_MIN_WIDTH):
            _flex_below(title, columns, cells, flex, {} if fixed - 1 <= console.width else {wraps: wrap_room})
        else:
            _records(title, headers, cells, keep_end)
        return
    _print(_grid(title, columns, cells, shown, {}, flex))


def _whole_rows(console: Console) -> bool:
    """Output to a pipe or a file with no width asked for (COLUMNS): rows print whole."""
    return not console.is_terminal and console.width == PIPE_WIDTH and not os.environ.get("COLUMNS")


def _shares(wanted: list[int], room: int) -> list[int] | None:
    """Widths for the columns that are cut at their start, wanting ``wanted``, in ``room`` columns:
    the widest gives way first, none below :data:`KEEP_END_MIN` (or its own width); None: no room."""
    if sum(min(w, KEEP_END_MIN) for w in wanted) > room:
        return None
    given = list(wanted)
    while sum(given) > room:
        widest = max(range(len(given)), key=lambda i: given[i])
        given[widest] -= 1
    return given


def end_kept(text: str, width: int) -> str:
    """``text`` in ``width`` columns, cut at its start where longer: '…/tests/fixtures'. The cut falls
    at a '/' where that costs at most a third of the room, so the path reads from a folder's name."""
    from rich.cells import cell_len

    if cell_len(text) <= width:
        return text
    tail = text
    while cell_len(tail) > width - 1:
        tail = tail[1:]
    slash = tail.find("/", 1)
    if 0 < slash <= width // 3:
        tail = tail[slash:]
    return "…" + tail


def _grid(
    title: str | None,
    columns: Sequence[tuple[str, str]],
    cells: Sequence[Sequence[str]],
    shown: Sequence[int],
    cut: dict[int, int],
    flex: int | None,
) -> Any:
    """The rich table of ``shown`` columns: ``cut`` ones cut at their start to their width, ``flex``
    the only one that wraps (None: none does)."""
    from rich.table import Table
    from rich.text import Text

    heading = Text(title) if title else None  # a title names a project: text, not markup
    headers = [columns[i][0] for i in shown]
    out = Table(title=heading, title_justify="left", show_edge=False, show_header=any(headers), header_style="bold")
    for i in shown:
        header, justify = columns[i]
        out.add_column(header, justify=justify, no_wrap=i != flex, overflow="fold")  # type: ignore[arg-type]
    for row in cells:  # stored text, not markup: "[trimmed]" stays
        out.add_row(*(Text(end_kept(row[i], cut[i]) if i in cut else row[i]) for i in shown))
    return out


def _flex_below(
    title: str | None,
    columns: Sequence[tuple[str, str]],
    cells: Sequence[Sequence[str]],
    flex: int,
    wrapped: dict[int, int],
) -> None:
    """The table without its ``flex`` column, one line a row (no other cell holds a line break; a
    ``wrapped`` column's value is wrapped between words to its width), each row followed by the flex
    column's value on lines of its own, indented (as reconstruct puts a title below its session)."""
    console = _console()
    shown = [i for i in range(len(columns)) if i != flex]
    parts = [
        [
            textwrap.wrap(cell, wrapped[i], break_on_hyphens=False) or [""] if i in wrapped else [cell]
            for i, cell in enumerate(row)
        ]
        for row in cells
    ]
    with console.capture() as captured:
        console.print(_grid(title, columns, [["\n".join(p) for p in row] for row in parts], shown, {}, None))
    lines = [text.rstrip() for text in captured.get().splitlines()]
    heights = [max(len(p) for p in row) for row in parts]
    head = len(lines) - sum(heights)  # the title, the header and its rule
    out = lines[:head]
    for row, height in zip(cells, heights, strict=True):
        out += lines[head : head + height]
        head += height
        out += [f"    {part}" for part in textwrap.wrap(row[flex], console.width - 4, break_on_hyphens=False)]
    click.echo("\n".join(out), color=console.is_terminal)


def _cell(value: Any) -> str:
    """A count with thousands separators ('123,456', as :func:`~causantic.wording.counted` words it
    in sentences); anything else as text. An id people type is passed as text and left alone."""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _records(
    title: str | None, headers: Sequence[str], cells: Sequence[Sequence[str]], keep_end: Collection[int] = ()
) -> None:
    from rich.table import Table
    from rich.text import Text

    console = _console()
    if title:
        console.print(Text(title, style="italic"), soft_wrap=True)
    label = max(len(h) for h in headers)
    for n, row in enumerate(cells):
        if n or title:
            console.print()
        # A grid, not "header  value" lines: a value longer than the line wraps under its own start,
        # so the headers stay a column of their own (and each block is as wide as the widest header).
        grid = Table.grid(padding=(0, 2))
        grid.add_column(style="bold", no_wrap=True, min_width=label)
        grid.add_column(overflow="fold")
        for i, (header, value) in enumerate(zip(headers, row, strict=True)):
            grid.add_row(header, Text(end_kept(value, console.width - label - 2) if i in keep_end else value))
        _print(grid)


def _print(renderable: Any, whole: int | None = None) -> None:
    """Print a table; piped, without the spaces that pad each line to the table's width (they would
    land in files, diffs and grep matches), and ``whole`` columns wide (its widest row's width) where
    that is wider than a pipe's."""
    console = _console()
    if console.is_terminal:
        console.print(renderable)
        return
    width = console.width
    console.width = max(width, whole or 0)
    try:
        with console.capture() as captured:
            console.print(renderable)
    finally:
        console.width = width
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

    def told(holder: str, timeout_s: float, why: str) -> None:
        # Upkeep: the command's own write is done, and Ctrl-C skips the rest (causantic.store.sqlite.upkeep).
        upkeep = {
            write_waits.SPACE: "writing memory, to give free space back to the disk",
            write_waits.LOG: "reading or writing memory, to give its log's space back to the disk",
        }
        if why == write_waits.EMBED:  # no limit: it waits for all of the other's embedding
            click.echo(f"causantic: waiting for {holder} to finish embedding; Ctrl-C to stop.", err=True)
            return
        if why == write_waits.UNINDEX:
            click.echo(
                f"causantic: waiting for {holder} to finish embedding, to take the forgotten chunks out of the "
                "vector index's file; Ctrl-C skips that (the next ingest does it).",
                err=True,
            )
            return
        if why in upkeep:
            click.echo(
                f"causantic: waiting for {holder} to finish {upkeep[why]} (at most {timeout_s:g} s); Ctrl-C skips "
                "that (a later write does it).",
                err=True,
            )
            return
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


def said_no(unchanged: str) -> NoReturn:
    """A question answered no: say what stayed as it was and exit 0, as forget's declined preview does.
    click's Abort printed 'Aborted!' and exited 1, which read as a failure where it was a choice."""
    click.echo(unchanged)
    raise click.exceptions.Exit(0)


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
