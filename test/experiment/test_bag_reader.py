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

"""tendon_robot_sim.experiment.bag readers: our bags, `ros2 bag record` layouts, damaged bags."""

from collections import Counter
from pathlib import Path
import shutil

from bag_files import count_verifications, date_back, HOUR, long_recording, peak_memory
from geometry_msgs.msg import PointStamped, TransformStamped
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.interfaces import (Qos, QosDurability, QosHistory, QosLiveliness, QosReliability,
                                QosTime)
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import get_typestore
from sensor_msgs.msg import JointState
from tendon_robot_sim.experiment import mcap_crc
from tendon_robot_sim.experiment.bag import (bag_topics, BagError, BagWriter, DEFAULT_STORE,
                                             offered_qos_of, OfferedQos, read_messages, read_raw)
from tf2_msgs.msg import TFMessage


def _state(i):
    # every sequence filled: see the note in experiment/bag.py on empty ones
    return JointState(name=['t0', 't1'], position=[0.001 * i, 0.0], velocity=[0.0, 0.1],
                      effort=[float(i), 0.5])


def _tip(i, sec=0):
    msg = PointStamped()
    msg.header.frame_id = 'base_link'
    msg.header.stamp.sec = sec
    msg.point.x, msg.point.y, msg.point.z = 0.01 * i, -0.02 * i, 0.3
    return msg


def _tf(i):
    transform = TransformStamped()
    transform.header.frame_id = 'base_link'
    transform.child_frame_id = 'tip_link'
    transform.transform.translation.z = 0.3 + 0.001 * i
    transform.transform.rotation.w = 1.0
    return TFMessage(transforms=[transform])


# (topic, stamp, rclpy message) interleaved, deliberately written out of time order
# across topics: a reader must merge them.
SENT = ([('/tendon/state', 1_000_000_000 + 20_000_000 * i, _state(i)) for i in range(5)]
        + [('/tip/measured', 1_005_000_000 + 20_000_000 * i, _tip(i, sec=7)) for i in range(5)]
        + [('/tf', 1_010_000_000 + 40_000_000 * i, _tf(i)) for i in range(3)])
TYPES = {'/tendon/state': 'sensor_msgs/msg/JointState',
         '/tip/measured': 'geometry_msgs/msg/PointStamped', '/tf': 'tf2_msgs/msg/TFMessage'}


def _ros2_bag_record_qos(reliability):
    zero = QosTime(sec=0, nsec=0)
    return Qos(history=QosHistory.KEEP_LAST, depth=5, reliability=reliability,
               durability=QosDurability.VOLATILE, deadline=zero, lifespan=zero,
               liveliness=QosLiveliness.AUTOMATIC, liveliness_lease_duration=zero,
               avoid_ros_namespace_conventions=False)


def _write_ros2_layout(path, plugin):
    """
    Write a bag as `ros2 bag record` (Kilted) writes it.

    It has metadata.yaml version 9, one storage file, type hashes, message definitions and offered
    QoS, and CDR bytes as rmw sends them.
    """
    typestore = get_typestore(DEFAULT_STORE)
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        connections = {topic: writer.add_connection(
            topic, msgtype, typestore=typestore, serialization_format='cdr',
            offered_qos_profiles=[_ros2_bag_record_qos(QosReliability.BEST_EFFORT)])
            for topic, msgtype in TYPES.items()}
        for topic, stamp, msg in SENT:
            writer.write(connections[topic], stamp, serialize_message(msg))


def _write_ours(path):
    with BagWriter(path) as bag:
        for topic, msgtype in TYPES.items():
            bag.add_topic(topic, msgtype, OfferedQos(reliability='best_effort', depth=5))
        for topic, stamp, msg in SENT:
            bag.write(topic, stamp, serialize_message(msg))


def _check_all_read_back(path):
    received = list(read_messages(path))
    expected = sorted(SENT, key=lambda item: item[1])
    assert [(topic, stamp) for topic, stamp, _ in received] == \
        [(topic, stamp) for topic, stamp, _ in expected]
    for (_, _, back), (topic, _, sent) in zip(received, expected):
        if topic == '/tendon/state':
            assert list(back.name) == list(sent.name)
            assert back.effort.tolist() == list(sent.effort)
            assert back.position.tolist() == list(sent.position)
        elif topic == '/tip/measured':
            assert (back.point.x, back.point.y, back.point.z) == \
                (sent.point.x, sent.point.y, sent.point.z)
            assert back.header.frame_id == 'base_link' and back.header.stamp.sec == 7
        else:
            (transform,) = back.transforms
            assert transform.child_frame_id == 'tip_link'
            assert transform.transform.translation.z == \
                sent.transforms[0].transform.translation.z


@pytest.mark.parametrize('layout', ['ours', 'mcap', 'sqlite3'])
def test_bags_are_read_in_time_order_with_ros_attributes(tmp_path, layout):
    bag = tmp_path / 'bag'
    if layout == 'ours':
        _write_ours(bag)
    else:
        _write_ros2_layout(bag, StoragePlugin.MCAP if layout == 'mcap'
                           else StoragePlugin.SQLITE3)
    suffix = '.db3' if layout == 'sqlite3' else '.mcap'
    (storage,) = bag.glob('*' + suffix)
    assert (bag / 'metadata.yaml').exists()
    _check_all_read_back(bag)
    _check_all_read_back(storage)          # the bare storage file, as copied off a robot
    assert bag_topics(bag) == TYPES
    assert offered_qos_of(bag)['/tip/measured'] == OfferedQos('best_effort', 'volatile', 5)
    # topic filter, names relative or absolute
    kept = list(read_messages(bag, topics=['tip/measured', '/tf']))
    assert [topic for topic, _, _ in kept] == \
        [topic for topic, _, _ in sorted(SENT, key=lambda item: item[1])
         if topic in ('/tip/measured', '/tf')]
    assert list(read_messages(bag, topics=['no/such/topic'])) == []
    raw = list(read_raw(bag, topics=['tendon/state']))
    # the stored bytes as they were (padding bytes may differ between serializations)
    assert [deserialize_message(m.data, JointState) for m in raw] == \
        [msg for topic, _, msg in SENT if topic == '/tendon/state']
    assert {m.msgtype for m in raw} == {'sensor_msgs/msg/JointState'}


@pytest.fixture(scope='module')
def good_bags(tmp_path_factory):
    root = tmp_path_factory.mktemp('good')
    _write_ours(root / 'mcap')
    _write_ros2_layout(root / 'db3', StoragePlugin.SQLITE3)
    return root


def _damaged(good_bags, tmp_path, kind, suffix, damage):
    bag = tmp_path / f'{kind}_{suffix[1:]}'
    shutil.copytree(good_bags / suffix[1:], bag)
    (storage,) = bag.glob('*' + suffix)
    data = storage.read_bytes()
    storage.write_bytes(damage(data))
    return bag


@pytest.mark.parametrize('suffix', ['.mcap', '.db3'])
@pytest.mark.parametrize('kind, damage, problem', [
    ('garbage', lambda data: bytes(range(256)) * 8, r'not an (MCAP|sqlite3) file'),
    ('truncated', lambda data: data[:len(data) // 2], r'ends early|damaged or truncated'),
    ('empty', lambda data: b'', r'cannot open|cannot read'),
])
def test_damaged_bags_raise_bag_error_naming_the_file(good_bags, tmp_path, suffix, kind,
                                                      damage, problem):
    bag = _damaged(good_bags, tmp_path, kind, suffix, damage)
    if suffix == '.db3' and kind == 'empty':
        problem = r'cannot (open|read)'
    with pytest.raises(BagError, match=problem) as info:
        list(read_messages(bag))
    assert str(bag) in str(info.value)


# a reader that opened a FIFO waited on it for ever: read in a process of its own
READ_IN_A_PROCESS = """
import sys
from tendon_robot_sim.experiment.bag import BagError, read_messages
try:
    list(read_messages(sys.argv[1]))
except BagError as error:
    print(error)
"""


@pytest.mark.parametrize('suffix', ['.mcap', '.db3'])
@pytest.mark.parametrize('make, bare', [('folder', False), ('fifo', False), ('fifo', True)],
                         ids=['folder', 'fifo', 'bare fifo'])    # a bare folder: a bag folder
def test_a_storage_file_that_is_no_regular_file_raises_bag_error_naming_it(
        good_bags, tmp_path, suffix, make, bare):
    """As ``reindex`` refuses it (test_bag_recovery.py): one error, not a hang or errno."""
    import os
    import subprocess
    import sys
    from waiting import COMMAND_TIMEOUT
    bag = tmp_path / 'bag'
    shutil.copytree(good_bags / suffix[1:], bag)
    (storage,) = bag.glob('*' + suffix)
    storage.unlink()
    if make == 'folder':
        storage.mkdir()
    else:
        os.mkfifo(storage)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([sys.executable, '-c', READ_IN_A_PROCESS,
                           str(storage if bare else bag)],
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT,
                          env=dict(os.environ, PYTHONPATH=str(root)))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f'{storage}: not a regular file (a folder, device or pipe): move it ' \
        'away and run this again\n', proc.stdout


def test_what_is_not_a_bag_raises_bag_error_naming_it(good_bags, tmp_path):
    no_metadata = tmp_path / 'no_metadata'
    shutil.copytree(good_bags / 'mcap', no_metadata)
    (no_metadata / 'metadata.yaml').unlink()
    text = tmp_path / 'notes.txt'
    text.write_text('not a bag')
    bad_yaml = tmp_path / 'bad_yaml'
    shutil.copytree(good_bags / 'mcap', bad_yaml)
    (bad_yaml / 'metadata.yaml').write_text('rosbag2_bagfile_information: {version: 9}\n')
    for path, problem in ((no_metadata, 'metadata.yaml is missing'),
                          (tmp_path / 'missing', 'no such bag'),
                          (text, 'not a rosbag2 bag'),
                          (bad_yaml, 'cannot open the bag')):
        for reader in (read_messages, read_raw):
            with pytest.raises(BagError, match=problem) as info:
                list(reader(path))
            assert str(path) in str(info.value)
        with pytest.raises(BagError, match=problem):
            bag_topics(path)


def test_bit_flips_in_an_mcap_bag_are_detected(good_bags, tmp_path):
    """
    Every single-bit flip in the storage file of one of our bags is detected.

    The flips are at 300 seeded places (the audit found 199 of 300 flipped bags read back changed
    data without an error).
    """
    (storage,) = (good_bags / 'mcap').glob('*.mcap')
    good = storage.read_bytes()
    expected = list(read_raw(good_bags / 'mcap'))
    rng = np.random.default_rng(12)
    bag = tmp_path / 'flipped'
    shutil.copytree(good_bags / 'mcap', bag)
    (flipped,) = bag.glob('*.mcap')
    detected = 0
    for position, bit in zip(rng.integers(0, len(good), 300), rng.integers(0, 8, 300)):
        data = bytearray(good)
        data[position] ^= 1 << int(bit)
        flipped.write_bytes(data)
        try:
            back = list(read_raw(bag))
        except BagError:
            detected += 1
            continue
        assert back == expected, f'a flip at byte {position} changed the data unnoticed'
    assert detected == 300


def test_our_mcap_bags_carry_checksums(good_bags):
    (storage,) = (good_bags / 'mcap').glob('*.mcap')
    assert mcap_crc.verify(storage) == 3   # one chunk, the data section, the summary


def test_sealing_and_verifying_a_long_recording_read_its_file_a_block_at_a_time(tmp_path):
    """
    Memory of closing a recording and of opening it does not grow with its length.

    Both read the whole file into memory (twice its size at once), which for a recording of
    hours (gigabytes) was more than a machine holds.
    """
    bag = long_recording(tmp_path / 'long')
    (storage,) = (tmp_path / 'long').glob('*.mcap')
    peak = peak_memory(bag.close)
    size = storage.stat().st_size
    assert size > 20 * 2**20
    assert peak < size / 4
    checked = []
    assert peak_memory(lambda: checked.append(mcap_crc.verify(storage))) < size / 4
    assert checked[0] > 3    # the chunks, the data section and the summary


def test_closing_a_recording_decompresses_each_chunk_once(tmp_path, monkeypatch):
    """
    Filling in the checksums takes one pass over the chunks, not one per kind of checksum.

    It decompressed every chunk three times: time at the close of a recording of hours.
    """
    bag = long_recording(tmp_path / 'long')
    decompressed = Counter()
    chunk_records = mcap_crc.chunk_records

    def counted(data, content):
        decompressed[content] += 1
        return chunk_records(data, content)

    monkeypatch.setattr(mcap_crc, 'chunk_records', counted)
    bag.close()
    assert len(decompressed) > 5        # a chunk a second, and one at each MB held
    assert set(decompressed.values()) == {1}
    monkeypatch.undo()
    assert mcap_crc.verify(next((tmp_path / 'long').glob('*.mcap'))) == len(decompressed) + 2


def test_a_seal_that_fails_leaves_the_file_as_it_was(good_bags, tmp_path):
    """It changes a copy beside the file: a file cut short is refused, untouched, nothing left."""
    (storage,) = (good_bags / 'mcap').glob('*.mcap')
    cut = tmp_path / 'cut.mcap'
    cut.write_bytes(storage.read_bytes()[:-20])
    with pytest.raises(mcap_crc.McapCrcError, match='ends early'):
        mcap_crc.seal(cut)
    assert cut.read_bytes() == storage.read_bytes()[:-20]
    assert [path.name for path in tmp_path.iterdir()] == ['cut.mcap']


def _flip_in_place(path: Path, position: int) -> None:
    """Flip one bit of ``path`` where it is (same file, same size), as a disk fault does."""
    with path.open('r+b') as file:
        file.seek(position)
        byte = file.read(1)[0]
        file.seek(position)
        file.write(bytes([byte ^ 1]))


def test_the_openings_of_a_bag_in_one_process_verify_its_checksums_once(
        good_bags, tmp_path, monkeypatch):
    bag = tmp_path / 'bag'
    shutil.copytree(good_bags / 'mcap', bag)
    date_back(bag)
    verified = count_verifications(monkeypatch)
    bag_topics(bag)
    offered_qos_of(bag)
    list(read_raw(bag))
    list(read_messages(bag))
    assert verified == [storage.resolve() for storage in bag.glob('*.mcap')]


def test_a_file_changed_since_its_verification_is_verified_again(
        good_bags, tmp_path, monkeypatch):
    """Same size, the mtime of another old recording: its identity changed, so it is read."""
    bag = tmp_path / 'bag'
    shutil.copytree(good_bags / 'mcap', bag)
    (storage,) = bag.glob('*.mcap')
    date_back(bag)
    verified = count_verifications(monkeypatch)
    expected = list(read_raw(bag))
    _flip_in_place(storage, storage.stat().st_size // 2)
    date_back(bag, 2 * HOUR)
    with pytest.raises(BagError, match=f'{storage}: .*CRC-32 mismatch'):
        list(read_raw(bag))
    assert len(verified) == 2
    _flip_in_place(storage, storage.stat().st_size // 2)     # repaired: read as before
    date_back(bag, 3 * HOUR)
    assert list(read_raw(bag)) == expected
    assert len(verified) == 3


def test_a_file_just_written_is_verified_at_every_opening(good_bags, tmp_path, monkeypatch):
    """It may change again within its mtime's granularity, unseen: it is not remembered."""
    bag = tmp_path / 'bag'
    shutil.copytree(good_bags / 'mcap', bag)
    date_back(bag, 0)
    verified = count_verifications(monkeypatch)
    bag_topics(bag)
    bag_topics(bag)
    assert len(verified) == 2
