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
A bag whose writer is killed keeps what was flushed, and ``reindex`` makes it a bag again.

A writer process (a real one, killed with SIGKILL by itself right after its flush, so the
moment is exact) writes messages, flushes, writes more, and dies: the folder it leaves has
no metadata.yaml, the MCAP file no footer, the sqlite3 file a write-ahead log. After
``tendon-robot-sim reindex``, every message written before the flush reads back, in order,
and nothing after it; a record cut in the middle (a kill during a write) is dropped and
what came before it kept. The recorder process itself is killed in
test/ros/test_record_killed.py.
"""

import os
from pathlib import Path
import shutil
import struct
import subprocess
import sys

from bag_files import long_recording, peak_memory
import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.experiment.bag import BagError, read_messages
from tendon_robot_sim.experiment.bag_recovery import recover_bag
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
TOPIC = '/tip/measured'
# The writer: argv bag, storage, its end ('kill': SIGKILL to itself, 'close'), then the number
# of messages before each flush, then how many come after the last flush (never flushed).
WRITER = """
import os, signal, sys
from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos
path, storage, end, *counts = sys.argv[1:]
bag = BagWriter(path, storage=storage).open()
bag.add_topic('/tip/measured', 'geometry_msgs/msg/PointStamped', OfferedQos())
store = bag.typestore
PointStamped = store.types['geometry_msgs/msg/PointStamped']
Header, Time = store.types['std_msgs/msg/Header'], store.types['builtin_interfaces/msg/Time']
Point = store.types['geometry_msgs/msg/Point']
index = 0
for k, count in enumerate(int(c) for c in counts):
    for _ in range(count):
        msg = PointStamped(Header(Time(sec=index, nanosec=0), 'base_link'),
                           Point(x=float(index), y=0.0, z=0.25))
        bag.write('/tip/measured', 10**9 * (1 + index),
                  bytes(store.serialize_cdr(msg, 'geometry_msgs/msg/PointStamped')))
        index += 1
    if k < len(counts) - 1:
        bag.flush()
if end == 'kill':
    os.kill(os.getpid(), signal.SIGKILL)
bag.close()
"""


def writer(bag: Path, storage: str, end: str, *counts: int) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, '-c', WRITER, str(bag), storage, end,
                             *map(str, counts)], env=env, capture_output=True, text=True,
                            timeout=COMMAND_TIMEOUT)
    assert result.returncode == (-9 if end == 'kill' else 0), result.stderr


def killed_writer(bag: Path, storage: str, *counts: int) -> None:
    writer(bag, storage, 'kill', *counts)


def xs(bag: Path) -> list[float]:
    return [msg.point.x for _, _, msg in read_messages(bag, [TOPIC])]


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_what_was_flushed_survives_a_kill_and_reindex_recovers_it(storage, tmp_path, capsys):
    bag = tmp_path / 'bag'
    killed_writer(bag, storage, 30, 20, 7)     # two flushes, 7 messages never flushed
    assert not (bag / 'metadata.yaml').exists()
    with pytest.raises(BagError, match='metadata.yaml is missing .*tendon-robot-sim reindex'):
        xs(bag)
    assert cli.main(['reindex', str(bag)]) == 0
    out = capsys.readouterr().out
    assert f'{bag}: recovered 50 messages ({TOPIC} 50)' in out, out
    assert xs(bag) == [float(i) for i in range(50)]
    # one file, as a closed bag: no log left beside it
    assert sorted(p.name for p in bag.iterdir()) == sorted(
        ['metadata.yaml', f'bag.{"mcap" if storage == "mcap" else "db3"}'])
    # again: the bag is complete now, and left as it is
    before = {p.name: p.read_bytes() for p in bag.iterdir()}
    assert cli.main(['reindex', str(bag)]) == 0
    assert 'complete, nothing to recover' in capsys.readouterr().out
    assert {p.name: p.read_bytes() for p in bag.iterdir()} == before


def chunks(data: bytes) -> list[tuple[int, int]]:
    """(start, end) of every Chunk record of the MCAP ``data`` (no footer needed)."""
    found, position = [], 8
    while position + 9 <= len(data):
        opcode, length = struct.unpack_from('<BQ', data, position)
        if opcode == 0x06:
            found.append((position, position + 9 + length))
        position += 9 + length
    return found


def test_a_record_cut_by_the_kill_is_dropped_and_the_rest_kept(tmp_path, capsys):
    bag = tmp_path / 'bag'
    killed_writer(bag, 'mcap', 30, 20, 0)
    mcap = bag / 'bag.mcap'
    data = mcap.read_bytes()
    (first, _), (start, end) = chunks(data)
    # the second chunk cut in its middle: a kill during the write
    mcap.write_bytes(data[:(start + end) // 2])
    assert cli.main(['reindex', str(bag)]) == 0
    out = capsys.readouterr().out
    assert 'recovered 30 messages' in out
    assert f'dropped {(start + end) // 2 - start} bytes' in out, out
    assert xs(bag) == [float(i) for i in range(30)]
    assert mcap_crc.verify(mcap) >= 2     # chunk and data section checksums filled in
    # what is kept is the file's own beginning: only the first chunk's CRC (0) is filled in,
    # then a Data End record (13 bytes), a footer (29) and the magic (8)
    recovered = bytearray(mcap.read_bytes())
    assert len(recovered) == start + 13 + 29 + 8
    crc = first + 9 + 24
    assert data[crc:crc + 4] == bytes(4) and recovered[crc:crc + 4] != bytes(4)
    recovered[crc:crc + 4] = bytes(4)
    assert recovered[:start] == data[:start]


def test_a_cut_inside_the_first_chunk_leaves_the_file_as_it_was(tmp_path, capsys):
    """No message survives: refused in one line, and the user's bytes are not rewritten."""
    bag = tmp_path / 'bag'
    killed_writer(bag, 'mcap', 30, 20, 0)
    mcap = bag / 'bag.mcap'
    data = mcap.read_bytes()
    (start, end), _ = chunks(data)
    mcap.write_bytes(data[:(start + end) // 2])
    capsys.readouterr()
    assert cli.main(['reindex', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'nothing could be recovered' in err \
        and 'ends inside its first chunk' in err, err
    assert mcap.read_bytes() == data[:(start + end) // 2]
    assert sorted(p.name for p in bag.iterdir()) == ['bag.mcap']


def test_a_writer_killed_before_its_first_flush_left_nothing(tmp_path, capsys):
    bag = tmp_path / 'bag'
    killed_writer(bag, 'mcap', 5)
    assert cli.main(['reindex', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'nothing to recover' in err, err


@pytest.mark.parametrize('text', ['time,x\n0,1\n' * 100, 'x,y\n', '\x89MCAx'],
                         ids=['long', 'short', 'magic cut, then another byte'])
def test_a_file_that_is_no_mcap_is_named_so_not_a_kill(text, tmp_path, capsys):
    """
    A copied-over file of another kind, not a recorder killed before its first flush.

    One shorter than MCAP's 8 magic bytes was said to be a recorder's "killed before it wrote".
    """
    bag = tmp_path / 'bag'
    bag.mkdir()
    (bag / 'bag_0.mcap').write_text(text, encoding='latin-1')
    assert cli.main(['reindex', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and err.endswith(
        "bag_0.mcap: not an MCAP file: it does not begin with MCAP's magic bytes\n"), err
    assert (bag / 'bag_0.mcap').read_text(encoding='latin-1') == text


@pytest.mark.parametrize('size', [0, 4, 8])
def test_a_file_cut_within_the_magic_is_a_writer_killed_at_once(size, tmp_path, capsys):
    """What a recorder leaves killed before its first flush: none or part of its magic."""
    bag = tmp_path / 'bag'
    bag.mkdir()
    (bag / 'bag_0.mcap').write_bytes(mcap_crc.MAGIC[:size])
    assert cli.main(['reindex', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'nothing to recover: the recorder was killed' in err, err


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_a_complete_bag_with_its_metadata_lost_gets_it_back(storage, tmp_path, capsys):
    """``ros2 bag reindex``'s own case: the storage is whole, metadata.yaml is gone."""
    bag = tmp_path / 'bag'
    writer(bag, storage, 'close', 30, 20)
    before = list(read_messages(bag))
    original = (bag / 'metadata.yaml').read_text()
    (bag / 'metadata.yaml').unlink()
    capsys.readouterr()
    assert cli.main(['reindex', str(bag)]) == 0
    after = list(read_messages(bag))
    assert [(t, s) for t, s, _ in after] == [(t, s) for t, s, _ in before]
    import yaml
    old = yaml.safe_load(original)['rosbag2_bagfile_information']
    new = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    for key in ('version', 'storage_identifier', 'relative_file_paths', 'duration',
                'starting_time', 'message_count', 'topics_with_message_count'):
        assert new[key] == old[key], key


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
@pytest.mark.parametrize('damage, said', [
    ('empty', 'metadata.yaml was empty'),                     # what a power cut leaves
    ('cut', 'metadata.yaml was not valid YAML'),              # cut mid-file
    ('cut late', 'metadata.yaml was not valid rosbag2 metadata'),   # YAML, keys missing
])
def test_an_empty_or_cut_metadata_file_is_written_again(storage, damage, said, tmp_path, capsys):
    """A metadata.yaml readers refuse is as good as none: it is replaced, not kept."""
    bag = tmp_path / 'bag'
    writer(bag, storage, 'close', 30, 20)
    metadata = bag / 'metadata.yaml'
    text = metadata.read_text()
    metadata.write_text({'empty': '', 'cut': text[:300], 'cut late': text[:700]}[damage])
    with pytest.raises(BagError):
        xs(bag)
    capsys.readouterr()
    assert cli.main(['reindex', str(bag)]) == 0
    out = capsys.readouterr().out
    assert said in out and 'written again' in out and f'{TOPIC} 50' in out, out
    assert out.count('\n') == 1, out
    assert xs(bag) == [float(i) for i in range(50)]
    assert cli.main(['reindex', str(bag)]) == 0
    assert 'complete, nothing to recover' in capsys.readouterr().out


def test_a_folder_in_place_of_the_metadata_file_is_refused(tmp_path, capsys):
    bag = tmp_path / 'bag'
    writer(bag, 'mcap', 'close', 5, 5)
    (bag / 'metadata.yaml').unlink()
    (bag / 'metadata.yaml').mkdir()
    capsys.readouterr()
    assert cli.main(['reindex', str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'metadata.yaml: not a file' in err, err
    assert (bag / 'metadata.yaml').is_dir()


@pytest.mark.parametrize('make', ['folder', 'device', 'fifo'])
def test_a_storage_file_that_is_no_regular_file_is_refused(make, tmp_path, capsys):
    """
    A storage file that is no regular file: one line naming it, exit 2, left as it was.

    A folder named ``x.mcap`` ended ``reindex`` as an internal error (exit 70), a link to a
    device was read as a recorder killed before its first flush, and a FIFO was waited on
    for ever.
    """
    bag = tmp_path / 'bag'
    bag.mkdir()
    storage = bag / 'bag_0.mcap'
    if make == 'folder':
        storage.mkdir()
    elif make == 'device':
        storage.symlink_to('/dev/zero')
    else:
        os.mkfifo(storage)
    # the FIFO through a real process: a reader that waited on it would not return here
    proc = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', 'reindex', str(bag)],
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.count('\n') == 1, proc.stderr
    assert f'{storage}: not a regular file' in proc.stderr, proc.stderr
    assert sorted(p.name for p in bag.iterdir()) == ['bag_0.mcap']


@pytest.mark.parametrize('argv, text', [
    (['reindex', '{tmp}/missing'], 'not a bag folder'),
    (['reindex', '{tmp}/empty'], 'expected one .mcap or .db3 file, found none'),
])
def test_what_is_no_bag_is_refused_in_one_line(argv, text, tmp_path, capsys):
    (tmp_path / 'empty').mkdir()
    assert cli.main([w.format(tmp=tmp_path) for w in argv]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and text in err, err


def test_a_damaged_complete_file_is_not_recovered_over(tmp_path, capsys):
    """A checksum that does not match is damage, not a kill: refused, the file untouched."""
    bag = tmp_path / 'bag'
    writer(bag, 'mcap', 'close', 30, 20)
    mcap = next(bag.glob('*.mcap'))
    data = bytearray(mcap.read_bytes())
    data[len(data) // 2] ^= 0x01
    mcap.write_bytes(bytes(data))
    shutil.copy(mcap, tmp_path / 'copy.mcap')
    capsys.readouterr()
    assert cli.main(['reindex', str(bag)]) == 2
    assert 'CRC-32 mismatch' in capsys.readouterr().err
    assert mcap.read_bytes() == (tmp_path / 'copy.mcap').read_bytes()


def test_recovering_a_long_recording_reads_and_writes_its_file_a_piece_at_a_time(tmp_path):
    """
    Memory of reindex does not grow with the recording's length.

    It read the whole file into memory and made the repaired file there (three times its size
    at once), which for a recording of hours (gigabytes) was more than a machine holds.
    """
    recording = long_recording(tmp_path / 'recording')
    shutil.copytree(tmp_path / 'recording', tmp_path / 'killed')    # as the kill left it
    recording.close()
    (storage,) = (tmp_path / 'killed').glob('*.mcap')
    size = storage.stat().st_size
    with storage.open('r+b') as file:   # the kill cut the last record short
        file.truncate(size - 1000)
    recovered = []
    peak = peak_memory(lambda: recovered.append(recover_bag(tmp_path / 'killed')))
    assert size > 20 * 2**20
    assert peak < size / 4, (peak, size)
    assert recovered[0].repaired and recovered[0].dropped_bytes > 0
    # all but the chunk the cut fell in (the writer also ends a chunk at each MB it holds)
    assert 500 < recovered[0].counts['/tendon/state'] < 600
    assert mcap_crc.verify(storage) > 1
