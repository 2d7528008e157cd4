"""A table row in chunk text read back into cells: one rule for the quote spans and the quotes on the page."""

from __future__ import annotations

import pytest

from ingest.blocks import table_cells


@pytest.mark.parametrize(("line", "cells"), [
    ("Free | 10 | 20", ["Free", "10", "20"]),
    ("| Free | 10 |", ["Free", "10"]),  # pipes and blanks at the edges belong to no cell
    ("`a | b` | 2", ["`a | b`", "2"]),  # a separator inside a code span does not split
    ("Plan|Price", []),  # no spaced separator: prose with a pipe, not a row
    ("just text", []),
])
def test_a_row_splits_into_its_cells(line: str, cells: list[str]):
    assert [line[a:b] for a, b in table_cells(line)] == cells
