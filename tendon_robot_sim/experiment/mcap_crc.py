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
CRC-32 checksums of MCAP files: fill them in after writing, verify them before reading.

MCAP (https://mcap.dev/spec) keeps three kinds of optional CRC-32 (the IEEE polynomial
of :func:`zlib.crc32`; 0 means "not computed"):

* each Chunk record's ``uncompressed_crc``: of the chunk's records, uncompressed;
* the Data End record's ``data_section_crc``: of every byte from the start of the file
  up to the Data End record;
* the Footer's ``summary_crc``: of every byte from the start of the Summary section
  through the Footer's ``summary_offset_start`` field.

``rosbags`` writes all three as 0 and does not check them, so a bit flipped in a bag
came back as changed data without an error. :func:`seal` computes them in place (the
file keeps its size and layout) and :func:`verify` checks every one that is not 0,
so a flip anywhere in the file is detected. What is not covered: a chunk compressed
with a codec this Python cannot decompress (its own CRC is skipped; the data
section CRC still covers its bytes), files written with the CRCs left at 0 by other
tools, ``metadata.yaml`` of a bag folder, and sqlite3 bags (no checksums).

:func:`verify_once` is what reading a bag calls: one command opens a bag several times
(``replay`` reads its topics, its QoS, its setpoints, then plays it), and a file this
process verified is not verified again while it is unchanged.
"""

from __future__ import annotations

from functools import partial
import os
from pathlib import Path
import struct
import time
from typing import BinaryIO, Callable, Iterator
import zlib

from tendon_robot_sim.files.outputs import edit_output

MAGIC = b'\x89MCAP0\r\n'
OP_FOOTER = 0x02
OP_CHUNK = 0x06
OP_DATA_END = 0x0F
_RECORD_HEAD = struct.Struct('<BQ')       # opcode, content length
_CHUNK_HEAD = struct.Struct('<QQQI')      # start time, end time, uncompressed size, crc
_FOOTER = struct.Struct('<QQI')           # summary start, summary offset start, crc
_U32 = struct.Struct('<I')
_U64 = struct.Struct('<Q')
# Bytes a checksum reads at a time: the memory it takes, whatever the size of the file (a
# recording of hours is gigabytes).
BLOCK = 1 << 20
# A file changed again within its file system's timestamp granularity (a few ms on ext4, 2 s
# on FAT) keeps its mtime: one modified less than this long ago [s] is verified every time.
SETTLED = 2.0
# What verify_once verified, by resolved path: the file's identity then (_identity).
_verified: dict[Path, tuple[int, ...]] = {}


class McapCrcError(ValueError):
    """The file is not a well-formed MCAP file, or a checksum does not match."""


class FileBytes:
    """
    A binary file read and changed by slices, as a bytearray: never held in memory whole.

    A slice is contiguous (no step) and a changed slice keeps its length.
    """

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.size = handle.seek(0, os.SEEK_END)

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, part: slice) -> bytes:
        start, stop, _ = part.indices(self.size)
        self.handle.seek(start)
        return self.handle.read(max(0, stop - start))

    def __setitem__(self, part: slice, value: bytes) -> None:
        self.handle.seek(part.start)
        self.handle.write(value)


def unpack_at(layout: struct.Struct, data, offset: int) -> tuple:
    """Unpack ``layout`` at ``offset`` of ``data`` (bytes-like or :class:`FileBytes`)."""
    return layout.unpack(data[offset:offset + layout.size])


def _crc(data, start: int, end: int) -> int:
    """CRC-32 of bytes ``start`` to ``end`` of ``data``, read :data:`BLOCK` bytes at a time."""
    crc = 0
    for block in range(start, end, BLOCK):
        crc = zlib.crc32(data[block:min(block + BLOCK, end)], crc)
    return crc


def _records(data) -> Iterator[tuple[int, int, int]]:
    """(opcode, offset of the record, offset of its content) of each record, in order."""
    if data[:8] != MAGIC:
        raise McapCrcError('not an MCAP file (magic bytes)')
    if data[-8:] != MAGIC:
        raise McapCrcError('the MCAP file ends early: truncated, or its recorder did not '
                           'close it')
    position, end = len(MAGIC), len(data) - len(MAGIC)
    while position < end:
        if position + _RECORD_HEAD.size > end:
            raise McapCrcError(f'record at byte {position} is cut off')
        opcode, length = unpack_at(_RECORD_HEAD, data, position)
        content = position + _RECORD_HEAD.size
        if content + length > end:
            raise McapCrcError(f'record 0x{opcode:02x} at byte {position} runs past the end')
        yield opcode, position, content
        if opcode == OP_FOOTER:
            if content + length != end:
                raise McapCrcError(f'{end - content - length} bytes after the footer')
            return
        position = content + length
    raise McapCrcError('no footer record')


def chunk_records(data, content: int) -> tuple[bytes | None, int]:
    """
    Return the uncompressed records of the chunk at ``content`` and its crc field's offset.

    The records are None if the codec is unavailable.
    """
    (_, _, size, _) = unpack_at(_CHUNK_HEAD, data, content)
    position = content + _CHUNK_HEAD.size
    (name_length,) = unpack_at(_U32, data, position)
    compression = bytes(data[position + 4:position + 4 + name_length]).decode('ascii', 'replace')
    position += 4 + name_length
    (records_length,) = unpack_at(_U64, data, position)
    records = bytes(data[position + 8:position + 8 + records_length])
    crc_field = content + _CHUNK_HEAD.size - 4
    if compression == '':
        return records, crc_field
    try:
        if compression == 'lz4':
            import lz4.frame
            records = lz4.frame.decompress(records)
        elif compression == 'zstd':
            import zstandard
            records = zstandard.ZstdDecompressor().decompress(records, max_output_size=size)
        else:
            return None, crc_field
    except ImportError:
        return None, crc_field
    except Exception as error:   # the codecs raise their own kinds on damaged input
        raise McapCrcError(f'chunk at byte {content}: does not decompress '
                           f'({compression}: {error})') from None
    return records, crc_field


def _checksums(data) -> Iterator[tuple[str, int, Callable[[], int | None]]]:
    """
    Yield (what, offset of the stored crc, its computation) of each checksum in ``data``.

    In file order, computed only when called (None: a chunk whose codec is not installed),
    so a chunk is decompressed only for a checksum that is wanted, and a data section
    checksum computed after the chunk checksums before it were filled in covers them.
    """
    for opcode, position, content in _records(data):
        if opcode == OP_CHUNK:
            yield (f'chunk at byte {position}', content + _CHUNK_HEAD.size - 4,
                   partial(_chunk_crc, data, content))
        elif opcode == OP_DATA_END:
            yield 'data section', content, partial(_crc, data, 0, position)
        elif opcode == OP_FOOTER:
            summary_start, _, _ = unpack_at(_FOOTER, data, content)
            if summary_start:
                if not len(MAGIC) <= summary_start <= position:
                    raise McapCrcError(f'footer: summary start {summary_start} is outside '
                                       'the file')
                yield 'summary section', content + 16, partial(_crc, data, summary_start,
                                                               content + 16)


def _chunk_crc(data, content: int) -> int | None:
    """CRC-32 of the uncompressed records of the chunk at ``content``; None: no codec."""
    records, _ = chunk_records(data, content)
    return None if records is None else zlib.crc32(records)


def seal(path: str | Path) -> None:
    """Fill in every CRC of the MCAP file at ``path`` that is 0 (written aside, renamed)."""
    with edit_output(path) as handle:
        seal_open(handle)


def seal_open(handle: BinaryIO) -> None:
    """Fill in every CRC that is 0 of the MCAP file open (to read and write) at ``handle``."""
    _fill_in(FileBytes(handle))


def _fill_in(data) -> None:
    """Fill in every CRC of ``data`` (a :class:`FileBytes`) that is 0, in one pass."""
    # One pass in file order: the chunk CRCs are written before the data section CRC,
    # which covers them, is computed; each chunk is decompressed once.
    for _, offset, compute in _checksums(data):
        if unpack_at(_U32, data, offset)[0] == 0:
            crc = compute()
            if crc is not None:
                data[offset:offset + _U32.size] = _U32.pack(crc)


def verify(path: str | Path) -> int:
    """
    Check every CRC of the MCAP file at ``path`` that is not 0; the number checked.

    A file too short to hold a header and a footer is left to the MCAP reader to report.

    Raises
    ------
    McapCrcError
        Naming the first part of the file whose checksum does not match, or what is
        malformed.

    """
    with open(path, 'rb') as handle:
        return _verify(FileBytes(handle))


def _verify(data: 'FileBytes') -> int:
    if len(data) < 2 * len(MAGIC) + 2 * _RECORD_HEAD.size:
        return 0
    checked = 0
    for what, offset, compute in _checksums(data):
        (stored,) = unpack_at(_U32, data, offset)
        crc = None if stored == 0 else compute()
        if crc is None:
            continue
        if stored != crc:
            raise McapCrcError(f'{what}: CRC-32 mismatch (stored {stored:08x}, computed '
                               f'{crc:08x}): the file is damaged')
        checked += 1
    return checked


def _identity(status) -> tuple[int, ...]:
    """Return what changes when a file is replaced or written (ctime: even if mtime is reset)."""
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns,
            status.st_ctime_ns)


def verify_once(path: str | Path) -> None:
    """
    Verify the MCAP file at ``path`` (:func:`verify`) unless this process did so unchanged.

    Unchanged: the same device, inode, size, mtime and ctime as when it was verified, and
    modified at least :data:`SETTLED` seconds before that. Only a file that passed is
    remembered, so a damaged one is refused at every opening.
    """
    path = Path(path).resolve()
    status = path.stat()    # before reading: a change while it is read makes it differ
    identity = _identity(status)
    if _verified.get(path) == identity:
        return
    verify(path)
    if time.time_ns() - status.st_mtime_ns >= SETTLED * 1e9:
        _verified[path] = identity
