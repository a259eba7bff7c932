# Copyright 2026 tendon_robot_sim maintainers
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.

"""A CSV file of numbers under a header line, read with one-line errors. No ROS imports."""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
import itertools
import math
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from tendon_robot_sim import counted

# Data rows a table may have: a 1 kHz recording of 15 minutes.
MAX_ROWS = 1_000_000
# Characters a line may have (a row of some 40 000 numbers): a file of one endless line
# (/dev/zero) was read whole into memory before the reader saw it
MAX_LINE = 1_000_000
# How every CSV file is read: UTF-8, and a byte-order mark (which Excel writes) is skipped
CSV_ENCODING = 'utf-8-sig'


class TableError(ValueError):
    """A file that is not a table of numbers; the message names the file, line and column."""


@dataclass(frozen=True)
class Table:
    """The columns of a CSV file: names from its header, finite numbers below."""

    path: Path
    header: tuple[str, ...]
    lines: np.ndarray      # (k,) the file's line number of each data row (1 = the header)
    values: np.ndarray     # (k, len(header))
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)   # text columns

    def column(self, name: str) -> np.ndarray:
        return self.values[:, self.header.index(name)]

    def where(self, row: int, name: str) -> str:
        """Return the place of a cell in messages: ``path: line N, column 'name'``."""
        return f'{self.path}: line {self.lines[row]}, column {name!r}'


def read_table(path: str | Path, columns: Sequence[str] | None = None,
               texts: Sequence[str] = (),
               check_header: Callable[[tuple[str, ...]], None] | None = None) -> Table:
    """
    Read a table: a header line of names, then rows of finite numbers.

    ``columns``: read only these columns, as numbers (default: every column); ``texts``:
    these columns too, as text (a label per row); the other columns are not read;
    ``check_header``: called with the header before any row is read, so that a header of
    names the reader does not know is refused as such, not as a cell of it. Blank
    lines are skipped. Raises :class:`TableError` for a missing or unreadable file, binary
    or malformed text, no header or no rows, a column read that the header gives twice (others
    may repeat: a spreadsheet's unnamed columns), a column asked for that the header lacks
    (a header of one column with ';' in it named as such), a row of the wrong length, or a
    cell that is not a finite number.
    """
    path = Path(path)
    try:
        with path.open(newline='', encoding=CSV_ENCODING) as handle:
            reader = csv.reader(csv_lines(handle, path))
            rows = []
            for row in reader:
                if any(cell.strip() for cell in row):
                    rows.append((reader.line_num, row))
                if len(rows) > MAX_ROWS + 1:
                    raise TableError(f'{path}: more than {MAX_ROWS} rows')
    except OSError as error:
        raise TableError(f'{path}: cannot read: {error.strerror}') from None
    except UnicodeDecodeError:
        raise TableError(f'{path}: not UTF-8 text: is it a CSV file?') from None
    except csv.Error as error:
        raise TableError(f'{path}: not CSV: {error}') from None
    if not rows:
        raise TableError(f'{path}: empty; expected a header line')
    header = tuple(cell.strip() for cell in rows[0][1])
    if check_header is not None:
        check_header(header)
    wanted = header if columns is None else tuple(columns)
    # a name given twice is refused where it is read (which of the two?); columns not read
    # may repeat: the unnamed ones a spreadsheet's export adds at the end of every line
    for column in (*wanted, *texts):
        if header.count(column) > 1:
            raise TableError(f'{path}: line 1: a column is given twice: {column!r} in '
                             f'{list(header)}'[:300])
    for column in (*wanted, *texts):
        if column not in header:
            raise TableError(f'{path}: line 1: no column {column!r}' + (
                _not_commas(header) or f' (the header has {", ".join(header)})'))
    if len(rows) < 2:
        raise TableError(f'{path}: no rows after the header')
    where = [header.index(column) for column in wanted]
    values = np.empty((len(rows) - 1, len(wanted)))
    for r, (line, row) in enumerate(rows[1:]):
        if len(row) != len(header):
            raise TableError(f'{path}: line {line}: {counted(len(row), "value")}, the header '
                             f'has {counted(len(header), "column")}')
        for c, (column, index) in enumerate(zip(wanted, where)):
            cell = row[index]
            try:
                values[r, c] = _number(cell)
            except ValueError:
                raise TableError(f'{path}: line {line}, column {column!r}: {cell.strip()!r} '
                                 'is not a number') from None
            if not math.isfinite(values[r, c]):
                raise TableError(f'{path}: line {line}, column {column!r}: must be finite, '
                                 f'got {cell.strip()}')
    text = {column: tuple(row[header.index(column)].strip() for _, row in rows[1:])
            for column in texts}
    return Table(path, wanted, np.array([line for line, _ in rows[1:]]), values, text)


def csv_lines(handle, path: str | Path) -> Iterator[str]:
    """
    Yield the lines of the open text file ``handle`` for ``csv.reader``, each read up to a bound.

    Raises :class:`TableError` naming the line for one longer than ``MAX_LINE`` characters (a
    file of one endless line was read whole into memory) or one with a NUL byte (a binary
    file: its NULs became a header, printed in the error).
    """
    for number in itertools.count(1):
        line = handle.readline(MAX_LINE + 2)    # and its line break, \r\n at most
        if not line:
            return
        if len(line.rstrip('\r\n')) > MAX_LINE:
            raise TableError(f'{path}: line {number}: longer than {MAX_LINE} characters: is it '
                             'a CSV file?')
        if '\0' in line:
            raise TableError(f'{path}: line {number}: a NUL byte: is it a CSV file?')
        yield line


def check_increasing(table: Table, column: str, values: np.ndarray | None = None,
                     noun: str = 'time') -> None:
    """
    Raise TableError at the first row of ``column`` that is not after the row before.

    ``values``: the column as the reader uses it (in seconds), if not as written. The message
    names the line, the column and the line before: ``the time repeats the one of line 3``.
    """
    values = table.column(column) if values is None else values
    back = np.diff(values) <= 0.0
    if np.any(back):
        row = int(np.argmax(back)) + 1
        what = 'repeats' if values[row] == values[row - 1] else 'is before'
        raise TableError(f'{table.where(row, column)}: the {noun} {what} the one of line '
                         f'{table.lines[row - 1]}; time must increase from row to row')


def _not_commas(header: tuple[str, ...]) -> str:
    """Return why a header of one column is one: another separator (a locale's ';'), or ''."""
    if len(header) == 1:
        for separator in (';', '\t', '|'):
            if separator in header[0]:
                return (f': the header is one column with {separator!r} in it; columns must '
                        'be separated by commas')
    return ''


def _number(cell: str) -> float:
    """
    ``float(cell)`` of a number as a spreadsheet or numpy writes it (ASCII, no underscores).

    Python's ``float`` also reads ``'1_0'`` (10) and digits of other scripts: a typo read as
    a value, where every other reader of the file sees no number.
    """
    if '_' in cell or not cell.isascii():
        raise ValueError(cell)
    return float(cell)
