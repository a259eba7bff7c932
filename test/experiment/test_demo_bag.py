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

"""tendon_robot_sim.experiment.bag: bags of rclpy-serialized messages read back with rosbags."""

import pytest
from rclpy.serialization import serialize_message
from rosbags.rosbag2 import Reader
from rosbags.typesys import get_typestore
from sensor_msgs.msg import JointState

from tendon_robot_sim.experiment.bag import BagError, BagWriter, DEFAULT_STORE, OfferedQos


def test_serialized_messages_read_back_with_their_qos_and_type(tmp_path):
    # every sequence filled, as in tendon/state: see the note in experiment/bag.py on empty ones
    sent = [JointState(name=['t0', 't1'], position=[0.001 * i, -0.002], velocity=[0.0, 0.1],
                       effort=[float(i), 0.5]) for i in range(3)]
    with BagWriter(tmp_path / 'bag') as bag:
        bag.add_topic('/tendon/state', 'sensor_msgs/msg/JointState',
                      OfferedQos(reliability='best_effort', depth=5))
        for i, msg in enumerate(sent):
            bag.write('/tendon/state', 1_000_000_000 + i, serialize_message(msg))
    typestore = get_typestore(DEFAULT_STORE)
    with Reader(tmp_path / 'bag') as reader:
        (connection,) = reader.connections
        assert connection.msgtype == 'sensor_msgs/msg/JointState'
        (qos,) = connection.ext.offered_qos_profiles
        assert (qos.reliability.name, qos.durability.name, qos.depth) == \
            ('BEST_EFFORT', 'VOLATILE', 5)
        received = [(t, typestore.deserialize_cdr(raw, connection.msgtype))
                    for _, t, raw in reader.messages()]
    assert [t for t, _ in received] == [1_000_000_000, 1_000_000_001, 1_000_000_002]
    for msg, (_, back) in zip(sent, received):
        assert list(back.name) == list(msg.name)
        assert back.position.tolist() == msg.position.tolist()
        assert back.velocity.tolist() == msg.velocity.tolist()
        assert back.effort.tolist() == msg.effort.tolist()


def test_misuse_is_refused_with_the_topic_named(tmp_path):
    (tmp_path / 'taken').mkdir()
    with pytest.raises(BagError, match='exists already'):
        BagWriter(tmp_path / 'taken')
    with BagWriter(tmp_path / 'bag') as bag:
        with pytest.raises(BagError, match="topic /x: message type 'no_msgs/msg/Nothing'"):
            bag.add_topic('/x', 'no_msgs/msg/Nothing', OfferedQos())
        with pytest.raises(BagError, match="unknown policy value 'sometimes'"):
            bag.add_topic('/y', 'sensor_msgs/msg/JointState', OfferedQos(reliability='sometimes'))
        with pytest.raises(BagError, match='topic /z: not added'):
            bag.write('/z', 0, b'')
