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

r"""
Line framing shared by the tendon motor driver and the laser tip sensor.

A frame is one line of printable ASCII, NMEA style::

    $TENA,17,1500,1500,0,0*34\r\n
    ^ body: comma-separated fields ^ checksum, then CR LF (a bare LF is accepted)

The checksum is the XOR of every byte between ``$`` and ``*``, written as two
hexadecimal digits (upper case when sent, either case accepted). The first field
names the sentence; the device modules (:mod:`.motor`, :mod:`.laser`) give the
rest of the fields their meaning and units.

:class:`FrameDecoder` cuts a byte stream into frames. It never raises: bytes that
cannot belong to a valid frame are dropped and counted, and every bad frame is
returned as a typed :class:`ProtocolError` next to the good ones, so a driver can
count it and carry on. A partial frame is kept until the rest of it arrives.
"""

from __future__ import annotations

from dataclasses import dataclass
import logging
import re
from typing import Sequence

logger = logging.getLogger(__name__)

START = ord('$')
END = ord('\n')
#: Longest frame accepted, start to LF inclusive [bytes]. 16 channels of
#: ``-2147483648`` fit; anything longer is garbage (a lost LF, line noise).
MAX_FRAME_LENGTH = 256
_FIELD = re.compile(r'[\x20-\x7e]*')
_SENTENCE = re.compile(r'[A-Z][A-Z0-9]{1,7}')
_RESERVED = frozenset('$*,')


class ProtocolError(ValueError):
    """Base of every protocol error: the bytes or fields cannot be used."""


class FramingError(ProtocolError):
    """The line is not a frame: truncated, too long, not ASCII, no checksum."""


class ChecksumError(FramingError):
    """The frame is complete but its checksum does not match its body."""


class MessageError(ProtocolError):
    """A well-formed frame whose sentence or fields are not valid for the device."""


class UnknownSentenceError(MessageError):
    """The sentence name is not part of the device protocol."""


class FieldError(MessageError):
    """One field is missing, malformed or out of range; the message names it."""


def checksum(body: bytes) -> int:
    """XOR of the bytes of ``body`` (the text between ``$`` and ``*``)."""
    value = 0
    for byte in body:
        value ^= byte
    return value


def encode_frame(fields: Sequence[str]) -> bytes:
    r"""
    Frame ``fields`` (sentence name first) as ``$f0,f1,...*HH\r\n``.

    Raises
    ------
    FramingError
        If the sentence name is not 2-8 upper-case letters or digits, or a field
        holds a reserved character (``$ * ,``) or anything but printable ASCII.

    """
    if not fields or not _SENTENCE.fullmatch(fields[0]):
        raise FramingError(
            f'sentence name: must be 2-8 upper-case letters or digits, got {fields[:1]!r}')
    for i, field in enumerate(fields):
        if not _FIELD.fullmatch(field) or _RESERVED.intersection(field):
            raise FramingError(
                f'field {i}: must be printable ASCII without $ * or a comma, got {field!r}')
    body = ','.join(fields).encode('ascii')
    frame = b'$' + body + b'*%02X\r\n' % checksum(body)
    if len(frame) > MAX_FRAME_LENGTH:
        raise FramingError(
            f'frame: {len(frame)} bytes is longer than the limit of {MAX_FRAME_LENGTH}')
    return frame


def parse_frame(line: bytes) -> tuple[str, ...]:
    r"""
    Fields of one complete frame ``$...*HH[\r]\n``, sentence name first.

    Raises
    ------
    FramingError, ChecksumError
        Naming what is wrong with the line.

    """
    if len(line) > MAX_FRAME_LENGTH:
        raise FramingError(f'frame: {len(line)} bytes is longer than {MAX_FRAME_LENGTH}')
    if not line.startswith(b'$') or not line.endswith(b'\n'):
        raise FramingError('frame: must start with $ and end with a line feed')
    text = line[1:-1]
    if text.endswith(b'\r'):
        text = text[:-1]
    star = text.rfind(b'*')
    if star < 0 or len(text) - star != 3:
        raise FramingError('frame: must end with * and two hexadecimal checksum digits')
    body, digits = text[:star], text[star + 1:]
    try:
        expected = int(digits.decode('ascii'), 16)
        fields = tuple(body.decode('ascii').split(','))
    except (UnicodeDecodeError, ValueError):
        raise FramingError(f'frame: not ASCII or bad checksum digits {digits!r}') from None
    if not all(_FIELD.fullmatch(field) and '$' not in field and '*' not in field
               for field in fields):
        raise FramingError('frame: fields must be printable ASCII without $ or *')
    actual = checksum(body)
    if actual != expected:
        raise ChecksumError(f'checksum: frame says {expected:02X}, body gives {actual:02X}')
    if not _SENTENCE.fullmatch(fields[0]):
        raise FramingError(f'sentence name: must be 2-8 upper-case letters or digits, '
                           f'got {fields[0]!r}')
    return fields


@dataclass
class DecoderCounters:
    """
    What a :class:`FrameDecoder` has seen since it was made.

    Every byte fed ends up in exactly one of ``bytes_accepted`` (good frames),
    ``bytes_dropped`` (garbage and bad frames) or the pending partial frame.
    """

    frames: int = 0            # good frames returned
    checksum_errors: int = 0   # complete frames with a wrong checksum
    framing_errors: int = 0    # truncated, overlong or malformed frames
    bytes_accepted: int = 0
    bytes_dropped: int = 0


class FrameDecoder:
    r"""
    Cut a byte stream into frames, keeping a partial frame between calls.

    Examples
    --------
    >>> decoder = FrameDecoder()
    >>> decoder.feed(b'noise$ACK,1*')
    []
    >>> decoder.feed(b'54\r\n')
    [('ACK', '1')]
    >>> decoder.counters.bytes_dropped
    5

    """

    def __init__(self, max_frame_length: int = MAX_FRAME_LENGTH):
        self.max_frame_length = max_frame_length
        self.counters = DecoderCounters()
        self._buffer = bytearray()

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame waiting for the rest [bytes]."""
        return len(self._buffer)

    def reset(self) -> None:
        """Drop (and count) a partial frame, e.g. after the link was lost."""
        self._drop(len(self._buffer))

    def feed(self, data: bytes) -> list[tuple[str, ...] | ProtocolError]:
        """
        Add received bytes; return the frames they complete, in order.

        Each item is either the field tuple of a good frame or the
        :class:`ProtocolError` a bad frame raised (already counted).
        """
        self._buffer += data
        out: list[tuple[str, ...] | ProtocolError] = []
        buffer = self._buffer
        while buffer:
            start = buffer.find(START)
            if start < 0:
                self._drop(len(buffer))
                break
            self._drop(start)
            end = buffer.find(END)
            restart = buffer.find(START, 1, end if end >= 0 else len(buffer))
            if restart > 0:
                # A new frame began before this one ended: a byte was lost in between.
                self._drop(restart)
                self.counters.framing_errors += 1
                out.append(FramingError('frame: truncated, a new $ came before the line feed'))
                continue
            if end < 0:
                if len(buffer) > self.max_frame_length:
                    self._drop(len(buffer))
                    self.counters.framing_errors += 1
                    out.append(FramingError(
                        f'frame: no line feed within {self.max_frame_length} bytes'))
                break
            line = bytes(buffer[:end + 1])
            try:
                fields = parse_frame(line)
            except ChecksumError as error:
                self.counters.checksum_errors += 1
                self._drop(len(line))
                out.append(error)
                continue
            except FramingError as error:
                self.counters.framing_errors += 1
                self._drop(len(line))
                out.append(error)
                continue
            del buffer[:end + 1]
            self.counters.frames += 1
            self.counters.bytes_accepted += len(line)
            out.append(fields)
        return out

    def _drop(self, count: int) -> None:
        if count:
            del self._buffer[:count]
            self.counters.bytes_dropped += count
