"""The command line's tables, laid out by rich.

Written to a terminal, a table fits the terminal's width (rich wraps the
widest cells) and has a bold header over a rule. Written anywhere else (a
pipe, a file, a log, a test), it is plain text: no colour, no box-drawing,
no wrapping and no trailing spaces, columns separated by two spaces, so that
the same table always gives the same text. rich is imported only here, when
a table is drawn.
"""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Sequence

#: Spaces between two columns.
GAP = 2
ALIGNS = ("left", "right")


def render_table(headers: Sequence[str] | None, rows: Sequence[Sequence[str]], align: Sequence[str] | None = None,
                 terminal: bool | None = None, width: int | None = None) -> str:
    """The table of ``rows`` (each a sequence of cell texts, one per column; a
    cell may hold several lines) under ``headers`` (None: no header line).

    ``align`` gives each column's alignment, ``"left"`` or ``"right"`` (all
    left when None); on a terminal narrower than the table, the left-aligned
    columns wrap and the right-aligned ones (numbers) stay whole.
    ``terminal`` None asks whether standard output is a terminal; ``width``
    (a terminal's only) defaults to the terminal's."""
    columns = len(headers) if headers is not None else max((len(row) for row in rows), default=0)
    align = tuple(align) if align is not None else ("left",) * columns
    if len(align) != columns or any(a not in ALIGNS for a in align):
        raise ValueError(f"align must give one of {', '.join(ALIGNS)} for each of the {columns} columns")
    for row in rows:
        if len(row) != columns:
            raise ValueError(f"a row has {len(row)} cells, the table {columns} columns")
    if terminal is None:
        terminal = sys.stdout.isatty()

    from rich import box
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    heads = list(headers) if headers is not None else [""] * columns
    table = Table(box=box.SIMPLE_HEAD if terminal else None, show_header=headers is not None, show_edge=False,
                  pad_edge=False, padding=(0, GAP // 2), header_style="bold" if terminal else "")
    longest = [max(_longest_line(text) for text in [head, *(row[i] for row in rows)]) for i, head in enumerate(heads)]
    for header, how, most in zip(heads, align, longest):
        # a right-aligned column holds numbers: never broken, the text columns wrap instead
        whole = how == "right" or not terminal
        table.add_column(Text(header), justify=how, overflow="fold", no_wrap=whole, min_width=most if whole else None)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    if terminal:
        wide = width or shutil.get_terminal_size().columns
    else:  # wide enough for every cell on one line
        wide = sum(longest) + GAP * columns
    out = io.StringIO()
    console = Console(file=out, width=wide, force_terminal=terminal, no_color=not terminal,
                      color_system="standard" if terminal else None, highlight=False, markup=False, emoji=False,
                      legacy_windows=False, soft_wrap=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def _longest_line(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)
