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

"""
Sentence tables: the fields of each sentence, their wire format and SI units.

A device protocol is a table of :class:`Sentence` rows. Each row ties a sentence
name to a message dataclass and lists its fields in wire order; the dataclass has
one attribute per field, with the same name, holding the SI value. The same row
decodes and encodes, so the two directions cannot drift apart. Units are
converted here, at the boundary: on the wire a length is an integer number of
micrometres, a force an integer number of millinewtons; in code they are metres
and newtons.
"""

from __future__ import annotations

from dataclasses import dataclass, fields as dataclass_fields
import math
from numbers import Real
import re
from typing import Any, Callable, Iterable, Sequence

from tendon_robot_sim import counted
from tendon_robot_sim.protocol.framing import (encode_frame, FieldError, FrameDecoder,
                                               UnknownSentenceError)

_INTEGER = re.compile(r'-?[0-9]{1,10}')
INT32 = (-2 ** 31, 2 ** 31 - 1)


@dataclass(frozen=True)
class Field:
    """
    One field: how its text becomes a value and back.

    ``parse`` and ``format`` raise ``ValueError`` with a message that does not
    name the field; :class:`Sentence` prefixes the sentence and field name.
    """

    name: str
    parse: Callable[[str], Any]
    format: Callable[[Any], str]  # noqa: A003 (a field, as str.format)
    description: str


def integer(name: str, low: int, high: int, description: str) -> Field:
    """Make a field holding a plain decimal integer in ``[low, high]``."""
    def parse(text: str) -> int:
        value = _parse_int(text)
        _check_range(value, low, high, '')
        return value

    def format_(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f'must be an integer, got {value!r}')
        _check_range(value, low, high, '')
        return str(value)
    return Field(name, parse, format_, description)


def scaled(name: str, per_unit: float, unit: str, si_unit: str, description: str,
           low: int = INT32[0], high: int = INT32[1]) -> Field:
    """
    Make a field holding an SI value sent as an integer count of ``unit``.

    ``per_unit`` is the count per SI unit.

    Examples: metres as micrometres (``per_unit=1e6``), newtons as millinewtons
    (``per_unit=1e3``). ``low`` and ``high`` bound the integer on the wire.
    """
    def parse(text: str) -> float:
        count = _parse_int(text)
        _check_range(count, low, high, f' {unit}')
        return count / per_unit

    def format_(value: Any) -> str:
        if isinstance(value, (bool, str, bytes)) or not isinstance(value, Real):
            raise ValueError(f'must be a number in {si_unit}, got {value!r}')
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f'must be finite, got {value} {si_unit}')
        count = round(value * per_unit)
        if not low <= count <= high:
            raise ValueError(f'must be within [{low / per_unit:g}, {high / per_unit:g}] '
                             f'{si_unit}, got {value:g} {si_unit}')
        return str(count)
    return Field(name, parse, format_, f'{description} [{unit} on the wire, {si_unit} in code]')


def choice(name: str, values: dict[str, Any], description: str) -> Field:
    """Make a field holding one of a few codes, mapped to values (``T`` -> ``'tension'``)."""
    codes = {value: code for code, value in values.items()}

    def parse(text: str) -> Any:
        if text not in values:
            raise ValueError(f'must be one of {sorted(values)}, got {text!r}')
        return values[text]

    def format_(value: Any) -> str:
        if value not in codes:
            raise ValueError(f'must be one of {sorted(codes, key=str)}, got {value!r}')
        return codes[value]
    return Field(name, parse, format_, description)


def hex_flags(name: str, digits: int, description: str) -> Field:
    """Make a field holding a bit mask of exactly ``digits`` hexadecimal digits."""
    pattern = re.compile(f'[0-9A-Fa-f]{{{digits}}}')

    def parse(text: str) -> int:
        if not pattern.fullmatch(text):
            raise ValueError(f'must be {digits} hexadecimal digits, got {text!r}')
        return int(text, 16)

    def format_(value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, int) \
                or not 0 <= value < 16 ** digits:
            raise ValueError(f'must be an integer in [0, {16 ** digits - 1}], got {value!r}')
        return f'{value:0{digits}X}'
    return Field(name, parse, format_, description)


def optional(field: Field) -> Field:
    """Make ``field`` optional: ``None`` is sent as an empty field."""
    return Field(field.name,
                 lambda text: None if text == '' else field.parse(text),
                 lambda value: '' if value is None else field.format(value),
                 f'{field.description} (empty when unknown)')


@dataclass(frozen=True)
class Sentence:
    """
    A table row: sentence ``name`` <-> ``message`` dataclass.

    ``fields`` are the message attributes in wire order. When ``repeated`` is
    given, the last attribute is a tuple sent as 1 to ``max_repeat`` trailing
    fields of that format (e.g. one tension per channel).
    """

    name: str
    message: type
    fields: tuple[Field, ...]
    repeated: Field | None = None
    max_repeat: int = 16
    description: str = ''

    def __post_init__(self):
        names = [f.name for f in self.fields] + ([self.repeated.name] if self.repeated else [])
        attributes = [f.name for f in dataclass_fields(self.message)]
        if names != attributes:
            raise TypeError(f'sentence {self.name}: fields {names} do not match the '
                            f'attributes of {self.message.__name__} {attributes}')

    def decode(self, fields: Sequence[str]) -> Any:
        """Build the message from the fields after the sentence name (FieldError if bad)."""
        count = len(fields)
        fixed = len(self.fields)
        if self.repeated is None and count != fixed:
            raise FieldError(f'{self.name}: expected {fixed} fields, got {count}')
        if self.repeated is not None and not fixed < count <= fixed + self.max_repeat:
            raise FieldError(f'{self.name}: expected {fixed} fields and 1 to '
                             f'{self.max_repeat} {self.repeated.name}, got {count} fields')
        values = [self._parse(field, text, field.name)
                  for field, text in zip(self.fields, fields)]
        if self.repeated is not None:
            values.append(tuple(self._parse(self.repeated, text, f'{self.repeated.name}[{i}]')
                                for i, text in enumerate(fields[fixed:])))
        return self.message(*values)

    def encode(self, message: Any) -> list[str]:
        """Format the fields of ``message`` after the sentence name (FieldError if bad)."""
        out = [self._format(field, getattr(message, field.name), field.name)
               for field in self.fields]
        if self.repeated is not None:
            values = tuple(getattr(message, self.repeated.name))
            if not 1 <= len(values) <= self.max_repeat:
                raise FieldError(f'{self.name}.{self.repeated.name}: must hold 1 to '
                                 f'{counted(self.max_repeat, "value")}, got {len(values)}')
            out += [self._format(self.repeated, value, f'{self.repeated.name}[{i}]')
                    for i, value in enumerate(values)]
        return out

    def _parse(self, field: Field, text: str, label: str) -> Any:
        try:
            return field.parse(text)
        except ValueError as error:
            raise FieldError(f'{self.name}.{label}: {error}') from None

    def _format(self, field: Field, value: Any, label: str) -> str:
        try:
            return field.format(value)
        except ValueError as error:
            raise FieldError(f'{self.name}.{label}: {error}') from None


class SentenceTable:
    """Encode and decode the messages of one device protocol (both directions)."""

    def __init__(self, sentences: Iterable[Sentence]):
        self.sentences = tuple(sentences)
        self._by_name = {s.name: s for s in self.sentences}
        self._by_type = {s.message: s for s in self.sentences}
        if len(self._by_name) != len(self.sentences) or len(self._by_type) != len(self.sentences):
            raise TypeError('sentence table: names and message types must be unique')

    def decoder(self) -> FrameDecoder:
        """Make a frame decoder for a stream of this protocol."""
        return FrameDecoder()

    def encode(self, message: Any) -> bytes:
        """Frame ``message``; FieldError if a value cannot be sent."""
        sentence = self._by_type.get(type(message))
        if sentence is None:
            raise TypeError(f'{type(message).__name__} is not a message of this protocol')
        return encode_frame([sentence.name, *sentence.encode(message)])

    def decode(self, fields: Sequence[str]) -> Any:
        """Decode the message of a frame's fields (sentence name first)."""
        sentence = self._by_name.get(fields[0])
        if sentence is None:
            raise UnknownSentenceError(
                f'sentence {fields[0]!r}: not one of {sorted(self._by_name)}')
        return sentence.decode(fields[1:])


def _parse_int(text: str) -> int:
    if not _INTEGER.fullmatch(text):
        raise ValueError(f'must be a decimal integer, got {text!r}')
    return int(text)


def _check_range(value: int, low: int, high: int, unit: str) -> None:
    if not low <= value <= high:
        raise ValueError(f'must be within [{low}, {high}]{unit}, got {value}{unit}')
