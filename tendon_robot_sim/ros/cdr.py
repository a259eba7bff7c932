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
A ROS message read straight from its serialized bytes, its point lists as numpy arrays.

rclpy turns a received message into Python objects, one per element: each
``visualization_msgs/MarkerArray`` of the default robot (12 markers, 131 points) costs about
1 ms of Python, 50 times a second, in the browser view. :class:`Decoder` reads the same
bytes (a raw subscription's) in a fraction of that: a sequence or array of numbers becomes
a numpy array, a sequence of messages made of one kind of number (``geometry_msgs/Point``,
``std_msgs/ColorRGBA``) a numpy structured array with the fields' names (``points['x']``),
any other message a :class:`types.SimpleNamespace` with its fields. It follows the message
definitions rclpy has (the installed ROS distribution's), through each message class's
``SLOT_TYPES``.

The layout is the one ROS 2's rmw implementations write: a 4-byte encapsulation header
(CDR, version 1, little or big endian), then the fields in order, each number aligned to
its size from the end of the header, a string as its length (with the terminating NUL) and
its UTF-8 bytes, a sequence as its length and its elements (OMG, "Extensible and Dynamic
Topic Types for DDS" 1.3, 2020, section 7.4.3, XCDR version 1).
"""

from __future__ import annotations

import importlib
import struct
from types import SimpleNamespace
from typing import Callable

import numpy as np
from rosidl_parser import definition

# The encapsulation identifiers of plain CDR (XCDR version 1): byte order of the payload.
ENCAPSULATIONS = {b'\x00\x00': '>', b'\x00\x01': '<'}
# rosidl basic type -> struct format character (its size is its alignment in CDR)
NUMBERS = {'float': 'f', 'double': 'd', 'int8': 'b', 'uint8': 'B', 'int16': 'h',
           'uint16': 'H', 'int32': 'i', 'uint32': 'I', 'int64': 'q', 'uint64': 'Q',
           'short': 'h', 'unsigned short': 'H', 'long': 'i', 'unsigned long': 'I',
           'long long': 'q', 'unsigned long long': 'Q', 'boolean': '?'}

Read = Callable[[memoryview, int], tuple[object, int]]   # (buffer, offset) -> value, offset


class CdrError(ValueError):
    """Bytes this reader cannot read (an encapsulation other than plain CDR, too short)."""


class Decoder:
    """Read one message type from its serialized bytes: ``Decoder(Marker)(data)``."""

    def __init__(self, msg_type: type):
        self.msg_type = msg_type
        self._reads: dict[str, Read] = {}

    def __call__(self, data: bytes) -> SimpleNamespace:
        order = ENCAPSULATIONS.get(bytes(data[:2]))
        if order is None:
            raise CdrError(f'{self.msg_type.__name__}: encapsulation {bytes(data[:2]).hex()} '
                           'is not plain CDR')
        if order not in self._reads:
            self._reads[order] = _message(self.msg_type, order)
        try:
            value, _ = self._reads[order](memoryview(data)[4:], 0)
        except (struct.error, ValueError, UnicodeDecodeError) as error:
            raise CdrError(f'{self.msg_type.__name__}: {error}') from None
        return value


def _message_class(namespaced: definition.NamespacedType) -> type:
    return getattr(importlib.import_module('.'.join(namespaced.namespaces)), namespaced.name)


def _fields(msg_type: type) -> list[tuple[str, definition.AbstractType]]:
    return list(zip(msg_type.get_fields_and_field_types(), msg_type.SLOT_TYPES))


def _number_layout(slot: definition.AbstractType) -> list[tuple[str, str]] | str | None:
    """
    Return the struct characters of a number or a message of numbers of one size, or None.

    A number gives its character; a message gives [(field, layout)], nested.
    """
    if isinstance(slot, definition.BasicType):
        return NUMBERS.get(slot.typename)
    if not isinstance(slot, definition.NamespacedType):
        return None
    layout = [(name, _number_layout(field)) for name, field in _fields(_message_class(slot))]
    if not layout or any(field is None for _, field in layout):
        return None
    sizes = {struct.calcsize(c) for c in _flat(layout)}
    return layout if len(sizes) == 1 else None


def _flat(layout) -> str:
    return layout if isinstance(layout, str) else ''.join(_flat(f) for _, f in layout)


def _dtype(layout, order: str) -> np.dtype:
    if isinstance(layout, str):
        return np.dtype(order + layout)
    return np.dtype([(name, _dtype(field, order)) for name, field in layout])


def _build(layout) -> Callable[[tuple, int], tuple[object, int]]:
    """(flat values, index) -> (the nested value, next index), for a layout of numbers."""
    if isinstance(layout, str):
        return lambda values, i: (values[i], i + 1)
    parts = [(name, _build(field)) for name, field in layout]

    def build(values, i):
        fields = {}
        for name, part in parts:
            fields[name], i = part(values, i)
        return SimpleNamespace(**fields), i
    return build


def _numbers(layout, order: str) -> Read:
    """Read a number, or a message of numbers of one size, with one aligned ``unpack``."""
    flat = _flat(layout)
    unpack, size, align = (struct.Struct(order + flat).unpack_from, struct.calcsize(order + flat),
                           struct.calcsize(flat[0]))
    if isinstance(layout, str):
        def read(buf, pos):
            pos += -pos % align
            return unpack(buf, pos)[0], pos + size
        return read
    build = _build(layout)

    def read_message(buf, pos):
        pos += -pos % align
        return build(unpack(buf, pos), 0)[0], pos + size
    return read_message


def _length(order: str) -> Read:
    """Read a string's or a sequence's length (uint32, aligned to 4)."""
    unpack = struct.Struct(order + 'I').unpack_from

    def read(buf, pos):
        pos += -pos % 4
        return unpack(buf, pos)[0], pos + 4
    return read


def _string(order: str) -> Read:
    length = _length(order)

    def read(buf, pos):
        n, pos = length(buf, pos)
        if pos + n > len(buf):
            raise ValueError(f'a string of {n} bytes past the end of the message')
        # n counts the terminating NUL
        return (str(buf[pos:pos + n - 1], 'utf-8') if n else ''), pos + n
    return read


def _array_of(slot: definition.AbstractNestedType, order: str) -> Read:
    """Read a sequence (length first) or a fixed array of ``slot.value_type``."""
    fixed = slot.size if isinstance(slot, definition.Array) else None
    length = _length(order)

    def count(buf, pos):
        return (fixed, pos) if fixed is not None else length(buf, pos)
    layout = _number_layout(slot.value_type)
    if layout is not None:
        dtype = _dtype(layout, order)
        align = struct.calcsize(_flat(layout)[0])

        def read_numbers(buf, pos):
            n, pos = count(buf, pos)
            if n:   # no padding before no elements (the rmw's serializer writes none)
                pos += -pos % align
            end = pos + n * dtype.itemsize
            if end > len(buf):
                raise ValueError(f'{n} elements past the end of the message')
            return np.frombuffer(buf, dtype, n, pos), end
        return read_numbers
    element = _reader(slot.value_type, order)

    def read_elements(buf, pos):
        n, pos = count(buf, pos)
        values = []
        for _ in range(n):
            value, pos = element(buf, pos)
            values.append(value)
        return values, pos
    return read_elements


def _octet(buf, pos):
    return bytes(buf[pos:pos + 1]), pos + 1


def _reader(slot: definition.AbstractType, order: str) -> Read:
    layout = _number_layout(slot)
    if layout is not None:
        return _numbers(layout, order)
    if isinstance(slot, definition.BasicType) and slot.typename == 'octet':
        return _octet
    if isinstance(slot, (definition.UnboundedString, definition.BoundedString)):
        return _string(order)
    if isinstance(slot, definition.AbstractNestedType):
        return _array_of(slot, order)
    if isinstance(slot, definition.NamespacedType):
        return _message(_message_class(slot), order)
    raise CdrError(f'fields of type {type(slot).__name__} '
                   f'{getattr(slot, "typename", "")} are not read'.rstrip())


def _message(msg_type: type, order: str) -> Read:
    reads = [(name, _reader(slot, order)) for name, slot in _fields(msg_type)]
    if not reads:   # a message without fields (std_msgs/Empty) is written as one byte
        return lambda buf, pos: (SimpleNamespace(), pos + 1)

    def read(buf, pos):
        fields = {}
        for name, field in reads:
            fields[name], pos = field(buf, pos)
        return SimpleNamespace(**fields), pos
    return read


# The number sequences of a sensor_msgs/JointState, in the order of its fields.
JOINT_VALUES = ('position', 'velocity', 'effort')


def joint_state_form(data: bytes) -> tuple[tuple[str, ...], tuple[tuple[str, int], ...]]:
    """
    Read the form of a ``sensor_msgs/JointState`` from its bytes, not its values.

    (names, ((field, number of values), ...) of the :data:`JOINT_VALUES` that hold any). The
    header is skipped and the numbers are not read: less than half the time of
    :class:`Decoder` (benchmarks/bench_setpoint_forms.py), for a check of every setpoint of
    a long recording before it is replayed.
    """
    order = ENCAPSULATIONS.get(bytes(data[:2]))
    if order is None:
        raise CdrError(f'JointState: encapsulation {bytes(data[:2]).hex()} is not plain CDR')
    unpack = struct.Struct(order + 'I').unpack_from
    try:
        pos = 12   # the 4-byte encapsulation header, then the header's stamp (2 x 4 bytes)
        pos += 4 + unpack(data, pos)[0]                 # its frame_id
        pos += -pos % 4
        count = unpack(data, pos)[0]
        pos += 4
        names = []
        for _ in range(count):
            pos += -pos % 4
            start, pos = pos + 4, pos + 4 + unpack(data, pos)[0]
            if pos > len(data):
                raise ValueError('a name past the end of the message')
            names.append(str(data[start:pos - 1], 'utf-8'))   # without its NUL
        sizes = []
        for field in JOINT_VALUES:
            pos += -pos % 4
            count = unpack(data, pos)[0]
            pos += 4
            if count:   # doubles, aligned to 8 from the end of the encapsulation header
                pos += -(pos - 4) % 8 + 8 * count
                sizes.append((field, count))
        if pos > len(data):
            raise ValueError('values past the end of the message')
    except (struct.error, ValueError, UnicodeDecodeError) as error:
        raise CdrError(f'JointState: {error}') from None
    return tuple(names), tuple(sizes)
