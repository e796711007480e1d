"""The command line's tables: plain and stable off a terminal, fitted to a terminal's width on one."""

import subprocess
import sys

import pytest

from taskfactory.tables import render_table

HEADERS = ("", "tasks", "reward")
ROWS = [("overall", "12", "0.500"), ("by effect:", "", ""), ("  borderline", "3", "1.000")]


def test_off_a_terminal_the_table_is_plain_text_in_aligned_columns():
    text = render_table(HEADERS, ROWS, align=("left", "right", "right"), terminal=False)
    assert text.splitlines() == [
        "              tasks  reward",
        "overall          12   0.500",
        "by effect:",
        "  borderline      3   1.000",
    ]


def test_a_cell_of_several_lines_keeps_its_lines_under_its_column_unwrapped():
    long = "naive: " + "word " * 40
    text = render_table(("family", "details"), [("welch_t", f"t.test(outcome ~ group)\n{long.strip()}"),
                                                ("[bold]x", "y")], terminal=False)
    assert text.splitlines() == ["family   details",
                                 "welch_t  t.test(outcome ~ group)",
                                 f"         {long.strip()}",
                                 "[bold]x  y"]   # no markup is read, no colour or box is drawn
    assert text.isascii()


def test_without_headers_only_the_rows_are_drawn():
    assert render_table(None, [("n", "2", "30: 132"), ("seeds", "11", "")], align=("left", "right", "left"),
                        terminal=False) == "n       2  30: 132\nseeds  11"


def test_on_a_terminal_the_table_fits_the_width_and_wraps_the_wide_cells():
    words = " ".join(f"w{i:02d}" for i in range(30))
    text = render_table(("family", "details"), [("welch_t", words)], terminal=True, width=40)
    lines = text.splitlines()
    assert len(lines) > 3
    plain = [line.replace("\x1b[1m", "").replace("\x1b[0m", "") for line in lines]
    assert max(len(line) for line in plain) <= 40
    assert "─" in plain[1]   # the rule under the header
    assert " ".join(" ".join(line.split()[1:] if i == 0 else line.split()) for i, line in enumerate(plain[2:])) == words


def test_on_a_narrow_terminal_the_numbers_stay_whole_and_the_labels_wrap():
    rows = [("  wilcoxon_signed_rank", "288", "1.000"), ("overall", "552", "0.875")]
    text = render_table(("", "tasks", "reward"), rows, align=("left", "right", "right"), terminal=True, width=24)
    assert [line.replace("\x1b[1m", "").replace("\x1b[0m", "") for line in text.splitlines()] == [
        "          tasks   reward",
        "────────────────────────",
        "  wilco     288    1.000",
        "xon_sig",
        "ned_ran",
        "k",
        "overall     552    0.875"]


def test_a_row_or_an_alignment_that_does_not_fit_the_columns_is_refused():
    with pytest.raises(ValueError, match="^a row has 2 cells, the table 3 columns$"):
        render_table(HEADERS, [("overall", "12")], terminal=False)
    with pytest.raises(ValueError, match="^align must give one of left, right for each of the 3 columns$"):
        render_table(HEADERS, ROWS, align=("left", "centre", "right"), terminal=False)


def test_the_help_does_not_import_rich():
    probe = ("import sys; from taskfactory.cli import main; sys.argv = ['taskfactory', '--help']\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('rich loaded' if 'rich' in sys.modules else 'rich not loaded', file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("Usage: ")
    assert done.stderr.strip() == "rich not loaded"
