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
Messages read straight from their bytes are the messages rclpy reads.

The bytes come from rclpy's own serializer (the rmw's, as a raw subscription receives them)
and, big endian, from rosbags' independent one. Values are compared exactly: the reader
copies the bytes, it computes nothing, so any difference is a misread field.
"""

from array import array

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
import numpy as np
import pytest
from rcl_interfaces.msg import ParameterValue
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.typesys import get_typestore, Stores
from sensor_msgs.msg import CompressedImage, Imu, JointState
from std_msgs.msg import ColorRGBA
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.registry import create_model
from tendon_robot_sim.ros.cdr import CdrError, Decoder, joint_state_form
from tendon_robot_sim.ros.messages import markers_msg, time_msg
from visualization_msgs.msg import Marker, MarkerArray, MeshFile, UVCoordinate

CONFIG = share_dir() / 'config'
ROBOTS = ('robot.yaml', 'pcr_6rus.yaml', 'rolling_joint_snake.yaml',
          'bionic_handling_assistant.yaml')


def assert_same(ours, theirs, path='msg'):
    """Compare a decoded value with rclpy's, field by field (``path`` names the field)."""
    if hasattr(theirs, 'get_fields_and_field_types'):
        for name in theirs.get_fields_and_field_types():
            assert_same(getattr(ours, name), getattr(theirs, name), f'{path}.{name}')
    elif isinstance(ours, np.ndarray) and ours.dtype.names:
        # a sequence of messages of numbers: one structured array, a column per field
        assert len(ours) == len(theirs), path
        for name in ours.dtype.names:
            assert_same(ours[name], [getattr(item, name) for item in theirs], f'{path}.{name}')
    elif isinstance(ours, np.ndarray):
        if len(theirs) and isinstance(theirs[0], bytes):   # octets: rclpy's list of bytes
            theirs = np.frombuffer(b''.join(theirs), np.uint8)
        if len(theirs) and hasattr(theirs[0], 'dtype') and theirs[0].dtype.names:
            theirs = np.concatenate(theirs)    # columns of a nested structured array
        np.testing.assert_array_equal(ours, np.asarray(theirs), err_msg=path)
    elif isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs), path
        for i, (mine, other) in enumerate(zip(ours, theirs)):
            assert_same(mine, other, f'{path}[{i}]')
    else:
        assert ours == theirs and type(ours) is type(theirs), f'{path}: {ours!r} != {theirs!r}'


def read_back(msg):
    """Serialize ``msg`` with rclpy, read it with a Decoder; also return rclpy's reading."""
    data = serialize_message(msg)
    return Decoder(type(msg))(data), deserialize_message(data, type(msg))


@pytest.mark.parametrize('robot', ROBOTS)
def test_the_markers_of_every_robot_kind_read_as_rclpy_reads_them(robot):
    _, _, model = create_model(CONFIG / robot)
    ours, theirs = read_back(markers_msg(model.state().markers, 'base_link', time_msg(12.5)))
    assert len(theirs.markers) > 1
    assert_same(ours, theirs)


def _odd_marker() -> Marker:
    """Return a marker with every field set, odd-length strings (later fields unaligned)."""
    marker = Marker(ns='n', id=-7, type=Marker.TEXT_VIEW_FACING, action=Marker.DELETE,
                    text='tête', mesh_resource='package://a/b.dae', frame_locked=True,
                    lifetime=Duration(sec=-1, nanosec=999_999_999), texture_resource='t',
                    mesh_use_embedded_materials=True)
    marker.header.frame_id = 'odd_frame'
    marker.header.stamp.sec, marker.header.stamp.nanosec = 2_000_000_000, 1
    marker.pose.position.x, marker.pose.orientation.w = -1.5e-300, 1.0
    marker.scale.z = 3.0
    marker.color = ColorRGBA(r=0.1, g=0.2, b=0.3, a=0.4)
    marker.points = [marker.pose.position, marker.scale]
    marker.colors = [ColorRGBA(r=1.0), ColorRGBA(a=0.5)]
    marker.texture = CompressedImage(format='png', data=[1, 2, 255])
    marker.uv_coordinates = [UVCoordinate(u=0.25, v=0.75)]
    marker.mesh_file = MeshFile(filename='m.stl', data=[9, 8, 7, 6, 5])
    return marker


@pytest.mark.parametrize('msg', [
    MarkerArray(markers=[_odd_marker(), Marker(), _odd_marker()]),
    MarkerArray(),
    ParameterValue(type=9, bool_value=True, integer_value=-2**63, double_value=float('inf'),
                   string_value='x', byte_array_value=[b'\x01', b'\xff', b'\x00'],
                   bool_array_value=[True, False, True], integer_array_value=[1, -2, 3],
                   double_array_value=[0.5, float('nan')], string_array_value=['a', '', 'ccc']),
    DiagnosticArray(status=[DiagnosticStatus(level=DiagnosticStatus.ERROR, name='b',
                                             message='stalled', hardware_id='id1',
                                             values=[KeyValue(key='k', value='v')])]),
    Imu(orientation_covariance=np.arange(9.0), linear_acceleration_covariance=[-1.0] * 9),
    JointState(name=['t0', 't1'], position=[0.1, 0.2], effort=[1.0, -2.0]),
], ids=['odd markers', 'empty', 'parameter value', 'diagnostics', 'fixed arrays', 'joints'])
def test_every_kind_of_field_reads_as_rclpy_reads_it(msg):
    ours, theirs = read_back(msg)
    if isinstance(msg, ParameterValue):   # nan is not equal to itself: compare it apart
        assert np.isnan(ours.double_array_value[1])
        theirs.double_array_value = array('d', [0.5])
        ours.double_array_value = ours.double_array_value[:1]
    assert_same(ours, theirs)


def test_big_endian_bytes_read_the_same():
    """Big-endian bytes (rosbags' serializer) read the same: the header gives the order."""
    store = get_typestore(Stores.ROS2_KILTED)
    msg = MarkerArray(markers=[_odd_marker(), _odd_marker()])
    little = serialize_message(msg)
    big = store.serialize_cdr(store.deserialize_cdr(little, 'visualization_msgs/msg/MarkerArray'),
                              'visualization_msgs/msg/MarkerArray', little_endian=False)
    assert big[:2] == b'\x00\x00' and big != little
    assert_same(Decoder(MarkerArray)(big), deserialize_message(little, MarkerArray))


def test_bytes_it_cannot_read_raise_a_cdr_error():
    data = serialize_message(MarkerArray(markers=[_odd_marker()]))
    decode = Decoder(MarkerArray)
    with pytest.raises(CdrError, match='encapsulation 0007 is not plain CDR'):
        decode(b'\x00\x07' + data[2:])     # XCDR version 2: another layout
    for cut in (len(data) // 2, len(data) - 3):   # in the points; in the last string
        with pytest.raises(CdrError, match='MarkerArray: .* past the end'):
            decode(data[:cut])


@pytest.mark.parametrize('msg', [
    JointState(),
    JointState(name=['t0', 't1', 't2', 't3'], effort=[0.0, 2.0, 0.0, 0.0]),
    JointState(name=['a', 'abc', 'abcd', 'sehne_é'], position=[1.0] * 4, velocity=[2.0] * 4),
    JointState(position=[0.5, 0.25, 0.0], effort=[1.0]),
    JointState(name=['x'], velocity=[3.0]),
], ids=['empty', 'tensions', 'odd names', 'no names', 'velocity only'])
@pytest.mark.parametrize('frame_id', ['', 'base', 'abcde'])
def test_the_form_of_a_joint_state_is_what_rclpy_reads(msg, frame_id):
    """Names and the sizes of the filled fields, little and big endian (rosbags' bytes)."""
    msg.header.frame_id = frame_id
    msg.header.stamp.sec = 7
    little = serialize_message(msg)
    expected = (tuple(msg.name), tuple((field, len(getattr(msg, field))) for field in
                                       ('position', 'velocity', 'effort')
                                       if len(getattr(msg, field))))
    assert joint_state_form(little) == expected
    store = get_typestore(Stores.ROS2_KILTED)
    big = store.serialize_cdr(Decoder(JointState)(little), 'sensor_msgs/msg/JointState',
                              little_endian=False)
    assert big[:2] == b'\x00\x00' and joint_state_form(big) == expected


def test_a_joint_state_form_it_cannot_read_raises_a_cdr_error():
    data = serialize_message(JointState(name=['t0', 't1'], effort=[1.0, 2.0]))
    with pytest.raises(CdrError, match='JointState: encapsulation 0007 is not plain CDR'):
        joint_state_form(b'\x00\x07' + data[2:])
    for cut in (30, len(data) - 20):     # in the names; in the values
        with pytest.raises(CdrError, match='JointState: '):
            joint_state_form(data[:cut])
