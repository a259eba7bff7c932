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
Recover the bag of a recorder that was killed, as ``ros2 bag reindex`` does for rosbag2.

A recorder killed by SIGKILL, the OOM killer or a power cut never closes its bag: the folder
has no ``metadata.yaml``, an MCAP file ends without its summary and footer ("the MCAP file
ends early"), an sqlite3 file has a write-ahead log (or a hot journal) next to it. What the
recorder flushed is all there (:meth:`~tendon_robot_sim.experiment.bag.BagWriter.flush`):
:func:`recover_bag` makes it a bag again.

* MCAP: the records up to the last complete one are kept; a record cut off by the kill (and
  anything after it) is dropped; a Data End record and a Footer without a summary section
  end the file (the MCAP specification allows it: readers scan the data section), its
  CRC-32s are filled in, and the file is written aside and renamed over the old one. If no
  message would be left (the kill fell inside the first chunk), nothing is written.
* sqlite3: sqlite itself rolls the write-ahead log (or the hot journal) into the database
  when it is opened for writing; the log is then checkpointed away (journal mode DELETE,
  as a closed bag has it) and the database checked.

Then ``metadata.yaml`` is written from what the storage holds (topics, types, offered QoS,
type hashes, message counts and times), also over one readers refuse (empty, as a power cut
leaves it, or cut off). A complete bag is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re
import sqlite3
import struct

from rosbags.highlevel import AnyReader
from rosbags.rosbag2.metadata import dump_qos_v9
from rosbags.typesys import get_typestore
from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.experiment.bag import (BAG_FORMAT_VERSION, BagError,
                                             check_storage_file, DEFAULT_STORE)
from tendon_robot_sim.files.outputs import check_links, edit_output, write_output
from tendon_robot_sim.files.yaml_loader import read_yaml, YamlFileError
import yaml

# Records an MCAP data section may hold before its Data End (opcodes of the MCAP spec):
# schema, channel, message, chunk, message index, attachment, metadata.
_DATA_RECORDS = {0x03, 0x04, 0x05, 0x06, 0x07, 0x09, 0x0C}
_INSIDE_CHUNK = {0x03, 0x04, 0x05}
_HEAD = struct.Struct('<BQ')
# Magic, header record (two empty strings), data end, footer, magic: the smallest whole file.
_SMALLEST = 8 + 17 + 13 + 29 + 8
# What ends a recovered file: a Data End record (its CRC filled in by sealing), a Footer
# without a summary section, the magic.
_END_OF_FILE = (_HEAD.pack(0x0F, 4) + struct.pack('<I', 0)
                + _HEAD.pack(0x02, 20) + struct.pack('<QQI', 0, 0, 0) + mcap_crc.MAGIC)
STORAGE_IDS = {'.mcap': 'mcap', '.db3': 'sqlite3'}


@dataclass(frozen=True)
class Recovered:
    """What :func:`recover_bag` found: the storage file, its messages, what the kill cut off."""

    storage: Path
    counts: dict[str, int]      # messages per topic
    dropped_bytes: int          # bytes of records the kill cut off (MCAP), 0 for sqlite3
    repaired: bool              # False: the bag was complete, nothing was changed
    # what was wrong with a metadata.yaml that was there and has been written again
    metadata_problem: str = ''

    def summary(self) -> str:
        total = sum(self.counts.values())
        what = 'complete, nothing to recover' if not self.repaired else (
            f'recovered {total} messages' + (f', dropped {self.dropped_bytes} bytes of a '
                                             'record the kill cut off'
                                             if self.dropped_bytes else '')
            + (f'; metadata.yaml {self.metadata_problem}: written again from '
               f'{self.storage.name}' if self.metadata_problem else ''))
        return (f'{self.storage.parent}: {what} ('
                + (', '.join(f'{t} {n}' for t, n in self.counts.items()) or 'no topics') + ')')


def recover_bag(path: str | Path) -> Recovered:
    """
    Make the bag folder ``path`` of a killed recorder readable again; what was found.

    Raises
    ------
    BagError
        ``path`` is no bag folder, holds no single storage file, or holds nothing a reader
        could use (the recorder was killed before its first flush).

    """
    folder = Path(path)
    if not folder.is_dir():
        raise BagError(f'{folder}: not a bag folder')
    check_links(folder)
    storages = sorted(folder.glob('*.mcap')) + sorted(folder.glob('*.db3'))
    if len(storages) != 1:
        raise BagError(f'{folder}: expected one .mcap or .db3 file, found '
                       f'{len(storages) or "none"}' + (f' ({", ".join(p.name for p in storages)})'
                                                       if storages else ''))
    storage = storages[0]
    check_storage_file(storage)
    if storage.suffix == '.mcap':
        dropped, repaired = _recover_mcap(storage)
    else:
        dropped, repaired = 0, _recover_sqlite(storage)
    # an empty or broken metadata.yaml (a power cut leaves one empty) is as good as none
    problem = _metadata_problem(folder, storage_repaired=repaired)
    repaired = repaired or problem is not None or not (folder / 'metadata.yaml').exists()
    counts = _write_metadata(folder, storage) if repaired else _counts(storage)
    return Recovered(storage, counts, dropped, repaired, problem or '')


# --------------------------------------------------------------------------- MCAP


def _recover_mcap(path: Path) -> tuple[int, bool]:
    """
    End the MCAP file at ``path`` after its last complete record; (bytes dropped, changed).

    The file is rewritten only when what is kept holds messages; what is kept is the file's
    own beginning (only its chunk checksums, 0 as the recorder left them, are filled in).
    It is read a record (a chunk) at a time and changed in a copy beside it: a recording of
    hours is gigabytes, more than memory holds.
    """
    with path.open('rb') as handle:
        data = mcap_crc.FileBytes(handle)
        if data[-len(mcap_crc.MAGIC):] == mcap_crc.MAGIC and len(data) >= _SMALLEST:
            try:    # complete: its records and checksums must be sound
                mcap_crc.verify(path)
            except mcap_crc.McapCrcError as error:
                raise BagError(f'{path}: {error}') from None
            return 0, False
        size, end = len(data), _data_end(data, path)
    # edit_output copies the file a buffer at a time; what the kill cut off is cut away
    with edit_output(path) as copy:
        copy.truncate(end)
        copy.seek(end)
        copy.write(_END_OF_FILE)
        mcap_crc.seal_open(copy)
    return size - end, True


def _data_end(data: mcap_crc.FileBytes, path: Path) -> int:
    """
    Offset just after the last complete data record of the (unfinished) MCAP ``data``.

    Raises
    ------
    BagError
        No message comes before that offset: nothing could be recovered; or the file is no
        MCAP file (it does not begin with its magic, or with as much of it as it holds: a
        recorder killed at once leaves an empty file, or part of the magic).

    """
    head = data[:8]
    if head != mcap_crc.MAGIC[:len(head)]:     # a recorder writes the magic first
        raise BagError(f"{path}: not an MCAP file: it does not begin with MCAP's magic bytes")
    if len(data) < 8 + _HEAD.size:
        raise BagError(f'{path}: nothing to recover: the recorder was killed before it wrote '
                       'its first messages to disk')
    opcode, length = mcap_crc.unpack_at(_HEAD, data, 8)
    position = 8 + _HEAD.size + length
    if opcode != 0x01 or position > len(data):
        raise BagError(f'{path}: not an MCAP file this can recover (no header record)')
    messages = 0
    while position + _HEAD.size <= len(data):
        opcode, length = mcap_crc.unpack_at(_HEAD, data, position)
        end = position + _HEAD.size + length
        in_chunk = _chunk_messages(data[position + _HEAD.size:end]) \
            if opcode == 0x06 and end <= len(data) else None
        if opcode not in _DATA_RECORDS or end > len(data) \
                or (opcode == 0x06 and in_chunk is None):
            break
        messages += in_chunk if opcode == 0x06 else opcode == 0x05
        position = end
    if messages:
        return position
    if position + _HEAD.size > len(data):
        why = 'the recorder was killed before it wrote its first messages to disk'
    elif opcode == 0x06 and end > len(data):
        why = (f'the file ends inside its first chunk of messages (at byte {position}, '
               f'{end - position} bytes long, cut after {len(data) - position})')
    elif opcode == 0x06:
        why = f'its first chunk of messages (at byte {position}) is damaged'
    elif end > len(data):
        why = f'the file ends inside record 0x{opcode:02x} at byte {position}, before any message'
    else:
        why = (f'record 0x{opcode:02x} at byte {position} is not one an MCAP data section '
               'holds, and no message comes before it')
    raise BagError(f'{path}: nothing could be recovered: {why}; the file is left as it is')


def _chunk_messages(content: bytes) -> int | None:
    """Count the messages in the content of a Chunk record; None if it is not whole."""
    try:
        (size,) = struct.unpack_from('<Q', content, 16)
        (name_length,) = struct.unpack_from('<I', content, 28)
        at = 32 + name_length
        compressed = content[32:at] != b''
        (records_length,) = struct.unpack_from('<Q', content, at)
    except struct.error:
        return None
    if at + 8 + records_length != len(content):
        return None
    records = content[at + 8:]
    if compressed:
        try:
            records, _ = mcap_crc.chunk_records(content, 0)
        except mcap_crc.McapCrcError:
            return None
        if records is None:     # a codec not installed: whole as far as can be told
            return 1
    count, position = 0, 0
    while position < len(records):
        if position + _HEAD.size > len(records):
            return None
        opcode, length = _HEAD.unpack_from(records, position)
        position += _HEAD.size + length
        if opcode not in _INSIDE_CHUNK or position > len(records):
            return None
        count += opcode == 0x05
    return count if len(records) == size else None


# --------------------------------------------------------------------------- sqlite3


def _recover_sqlite(path: Path) -> bool:
    """Roll a killed recorder's log into the sqlite3 file at ``path``; whether it had one."""
    logs = [path.with_name(path.name + suffix) for suffix in ('-wal', '-journal')]
    had_log = any(log.exists() and log.stat().st_size for log in logs)
    try:
        # opened for writing, sqlite replays the write-ahead log or rolls back a hot journal
        connection = sqlite3.connect(f'file:{path}?mode=rw', uri=True)
        try:
            connection.execute('PRAGMA journal_mode=DELETE').fetchone()  # checkpoints the log
            (check,) = connection.execute('PRAGMA quick_check').fetchone()
        finally:
            connection.close()
    except sqlite3.DatabaseError as error:
        raise BagError(f'{path}: cannot recover the sqlite3 file ({error})') from None
    if check != 'ok':
        raise BagError(f'{path}: the sqlite3 file is damaged beyond its journal ({check})')
    return had_log


# --------------------------------------------------------------------------- metadata


def _open(storage: Path) -> AnyReader:
    try:
        reader = AnyReader([storage], default_typestore=get_typestore(DEFAULT_STORE))
        reader.open()
    except Exception as error:   # rosbags raises many kinds on a damaged file
        raise BagError(f'{storage}: cannot read what was recovered ({type(error).__name__}: '
                       f'{error})') from None
    return reader


def _counts(storage: Path) -> dict[str, int]:
    reader = _open(storage)
    try:
        return {c.topic: c.msgcount for c in reader.connections}
    finally:
        reader.close()


def _metadata_problem(folder: Path, storage_repaired: bool) -> str | None:
    """
    Tell what is wrong with ``metadata.yaml`` in ``folder``, as a reader of the bag sees it.

    None: it is sound, or missing (the usual case of a killed recorder, said no more of),
    or its storage file has just been recovered (it is written again anyway: only an empty
    one is named then). Otherwise the problem: ``was empty``, ``was not valid ...``.
    """
    path = folder / 'metadata.yaml'
    if not path.exists():
        return None
    if not path.is_file():
        raise BagError(f'{path}: not a file (a folder?): move it away and run this again')
    if path.stat().st_size == 0:
        return 'was empty'
    if storage_repaired:
        return None
    try:    # as the bag's readers take it (experiment/bag.py): the package's YAML rules first
        read_yaml(path)
        reader = AnyReader([folder], default_typestore=get_typestore(DEFAULT_STORE))
        reader.open()
        reader.close()
    except YamlFileError as error:   # cut off mid-file: where the parser gave up
        where = re.findall(r'line \d+, column \d+', str(error))
        return 'was not valid YAML' + (f' (at {where[-1]})' if where else '')
    except Exception as error:   # rosbags raises many kinds on bad metadata
        return f'was not valid rosbag2 metadata ({type(error).__name__}: {error})'
    return None


def _write_metadata(folder: Path, storage: Path) -> dict[str, int]:
    """Write ``metadata.yaml`` (rosbag2 format 9) of the storage file; messages per topic."""
    reader = _open(storage)
    try:
        count = reader.message_count
        start = reader.start_time if count else 0
        duration = reader.end_time - 1 - start if count else 0
        topics = [{
            'topic_metadata': {
                'name': c.topic, 'type': c.msgtype,
                'serialization_format': c.ext.serialization_format,
                'offered_qos_profiles': dump_qos_v9(list(c.ext.offered_qos_profiles)),
                'type_description_hash': c.digest or reader.typestore.hash_rihs01(c.msgtype)},
            'message_count': c.msgcount} for c in reader.connections]
    finally:
        reader.close()
    information = {
        'version': BAG_FORMAT_VERSION, 'storage_identifier': STORAGE_IDS[storage.suffix],
        'relative_file_paths': [storage.name],
        'duration': {'nanoseconds': duration},
        'starting_time': {'nanoseconds_since_epoch': start},
        'message_count': count, 'topics_with_message_count': topics,
        'compression_format': '', 'compression_mode': '',
        'files': [{'path': storage.name, 'starting_time': {'nanoseconds_since_epoch': start},
                   'duration': {'nanoseconds': duration}, 'message_count': count}],
        'custom_data': None, 'ros_distro': 'rosbags'}
    write_output(folder / 'metadata.yaml',
                 yaml.safe_dump({'rosbag2_bagfile_information': information}, sort_keys=False))
    return {t['topic_metadata']['name']: t['message_count'] for t in topics}
