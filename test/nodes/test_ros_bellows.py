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
The simulator node with the bellows robot (BHA), over real DDS (loopback, see conftest.py).

One simulator for the file. Bad pressure setpoints are rejected with a warning naming the
field, the node keeps publishing the last good inputs, and a good setpoint afterwards is
followed towards the model's static equilibrium (damped Newton on the static force, no time
integration; the settling itself is test_ros_cc_dynamics.py's). What the node publishes on
``/tf`` and ``backbone/markers`` is checked against the topic contract of
docs/ros_interface.md: one frame per section end, the last one the tip, z along the centre
spline, and one ``sections`` arc per section joining those frames.
"""

import math
from pathlib import Path
import time

from geometry_msgs.msg import Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import position, Probe, spinning, stamp_seconds, wait_for
from sensor_msgs.msg import JointState
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import load_bellows_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics
from visualization_msgs.msg import Marker

ROOT = Path(__file__).resolve().parents[2]
BHA_FILE = share_dir() / 'config' / 'bionic_handling_assistant.yaml'
# Frames and arc points come from the same state: they agree to rounding.
SAME = 1e-12   # m


@pytest.fixture(scope='module')
def bha():
    """Spin a simulator on the BHA (its only mode, cc_dynamic, 10 x real time) and a probe."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(BHA_FILE)),
        Parameter('real_time_factor', value=10.0),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, probe):
        ns = type('Bha', (), {})()
        ns.probe = probe
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('backbone/markers')
                 and probe.latest('/tf') and probe.setpoint_pub.get_subscription_count() >= 1,
                 'the simulator')
        yield ns


def rejections_since(probe, count: int) -> list[str]:
    """Return the simulator's warnings on /rosout after the first ``count`` logs."""
    return [log.msg for log in probe.logs[count:]
            if log.name == 'simulator' and log.msg.startswith('rejected setpoint: ')]


# The BHA's bellows, all with the same max_pressure.
ROBOT = load_bellows_robot(BHA_FILE)
NAMES = list(ROBOT.actuator_names)
(MAX_PRESSURE,) = {b.max_pressure for s in ROBOT.sections for b in s.bellows}
# case: (setpoint, the field the warning starts with, the problem it names)
BAD = {
    'NaN': (JointState(name=['p1'], effort=[math.nan]), 'effort',
            "non-finite pressure for ['p1']"),
    'negative': (JointState(name=['p2'], effort=[-1e3]), 'effort',
                 f'p2 = -1000 Pa is outside [0, {MAX_PRESSURE:g}] Pa'),
    'above max_pressure': (JointState(name=['p3'], effort=[1.5 * MAX_PRESSURE]), 'effort',
                           f'p3 = {1.5 * MAX_PRESSURE:g} Pa is outside [0, {MAX_PRESSURE:g}] Pa'),
    'unknown name': (JointState(name=['p10'], effort=[1e4]), 'name',
                     "p10 not among the robot's bellows"),
    'wrong count': (JointState(effort=[1e4] * (len(NAMES) - 4)), 'effort',
                    f'has {len(NAMES) - 4} values without names; the robot has {len(NAMES)} '
                    'bellows'),
    'position only': (JointState(name=['p1'], position=[0.01]), 'position',
                      'the robot takes effort (pressure [Pa])'),
}


@pytest.mark.parametrize('case', BAD)
def test_a_bad_setpoint_is_rejected_naming_the_field_and_the_node_runs_on(bha, case):
    setpoint, field, problem = BAD[case]
    probe = bha.probe
    before = probe.latest('tendon/state').effort.tolist()
    count = len(probe.logs)
    probe.setpoint_pub.publish(setpoint)
    (warning,) = wait_for(lambda: rejections_since(probe, count), f'the warning on {case}')
    assert warning.startswith(f'rejected setpoint: {field}: ') and problem in warning, warning
    # keeps running: later states, simulated time moving on, the inputs unchanged
    stamp = stamp_seconds(probe.latest('tendon/state').header.stamp)
    after = time.monotonic()
    later = wait_for(lambda: [s for s in probe.since('tendon/state', after)
                              if stamp_seconds(s.header.stamp) > stamp], 'later states')
    assert all(s.effort.tolist() == before for s in later)


def test_a_good_setpoint_after_bad_ones_is_followed(bha):
    probe = bha.probe
    count = len(probe.logs)
    probe.setpoint_pub.publish(JointState(name=['p1'], effort=[math.inf]))
    wait_for(lambda: rejections_since(probe, count), 'the warning on inf')
    model = CCDynamics.from_bellows_robot(ROBOT)
    pressures = np.zeros(len(NAMES))
    pressures[[0, 4]] = 8e4, 6e4       # Pa, p1 and p5
    rest = model.frames(model.equilibrium(np.zeros_like(pressures)))[-1][1]
    goal = model.frames(model.equilibrium(pressures))[-1][1]
    assert np.linalg.norm(goal - rest) > 0.05, 'a setpoint that moves the tip'
    probe.setpoint_pub.publish(JointState(name=['p5', 'p1'], effort=[6e4, 8e4]))
    wait_for(lambda: probe.latest('tendon/state').effort.tolist() == pressures.tolist(),
             'the pressures in tendon/state')
    wait_for(lambda: np.linalg.norm(position(probe.latest('tip/pose')) - goal)
             < 0.25 * np.linalg.norm(goal - rest), 'the tip most of the way to the equilibrium')


def frames_and_arcs(probe):
    """Return the newest /tf message and the markers of the same stamp."""
    def same_stamp():
        markers = {stamp_seconds(m.markers[0].header.stamp): m
                   for m in probe.since('backbone/markers', 0)}
        tfs = [m for m in probe.since('/tf', 0)
               if stamp_seconds(m.transforms[0].header.stamp) in markers]
        return tfs and (tfs[-1], markers[stamp_seconds(tfs[-1].transforms[0].header.stamp)])
    return wait_for(same_stamp, '/tf and markers of one tick')


def test_tf_has_the_section_ends_and_the_tip_and_the_markers_one_arc_per_section(bha):
    tf, markers = frames_and_arcs(bha.probe)
    sections = len(ROBOT.sections)
    base = ROBOT.base.frame_id
    frames = {t.child_frame_id: t for t in tf.transforms}
    assert {t.header.frame_id for t in tf.transforms} == {base}
    assert set(frames) == {'tip_link', *(f'vertebra_{i}' for i in range(sections))}
    tip, last = frames['tip_link'].transform, frames[f'vertebra_{sections - 1}'].transform
    assert tip == last, 'the end of the last section is the tip'
    arcs = sorted(markers.markers, key=lambda m: m.id)
    assert [(m.ns, m.id, m.type) for m in arcs] == [
        ('sections', i, Marker.LINE_STRIP) for i in range(sections)]
    assert {m.header.frame_id for m in arcs} == {base}
    start = np.zeros(3)
    for i, arc in enumerate(arcs):
        points = np.array([[p.x, p.y, p.z] for p in arc.points])
        t = frames[f'vertebra_{i}'].transform
        end = np.array([t.translation.x, t.translation.y, t.translation.z])
        # each arc runs from the end of the one before (the base) to its section's frame
        assert np.allclose(points[0], start, rtol=0, atol=SAME)
        assert np.allclose(points[-1], end, rtol=0, atol=SAME)
        # the frame's z axis is the spline's tangent there (REP 103 frames, docs: z = tangent)
        q = t.rotation
        z = np.array([2 * (q.x * q.z + q.y * q.w), 2 * (q.y * q.z - q.x * q.w),
                      1 - 2 * (q.x * q.x + q.y * q.y)])
        chord = points[-1] - points[-2]
        assert np.dot(z, chord / np.linalg.norm(chord)) > math.cos(0.05)
        start = end


def test_a_tip_wrench_is_rejected_as_the_docs_say_and_the_node_runs_on(bha):
    """cc_dynamic takes no tip wrench: a throttled warning, not silence (docs/ros_interface.md)."""
    probe = bha.probe
    wrench_pub = probe.create_publisher(topics.TIP_WRENCH.msg_type, topics.TIP_WRENCH.name,
                                        topics.TIP_WRENCH.qos)
    wait_for(lambda: wrench_pub.get_subscription_count() >= 1, 'the simulator on tip/wrench')
    count = len(probe.logs)
    wrench_pub.publish(WrenchStamped(wrench=Wrench(force=Vector3(x=0.5))))
    (warning,) = wait_for(lambda: [log.msg for log in probe.logs[count:]
                                   if log.name == 'simulator'
                                   and log.msg.startswith('rejected tip wrench: ')],
                          'the warning on the wrench')
    assert 'this model takes no external tip wrench' in warning, warning
    stamp = stamp_seconds(probe.latest('tendon/state').header.stamp)
    wait_for(lambda: stamp_seconds(probe.latest('tendon/state').header.stamp) > stamp,
             'later states')
    row = next(line for line in (ROOT / 'docs' / 'ros_interface.md').read_text().splitlines()
               if line.startswith('| `tip/wrench` |'))
    assert 'mode: cc_dynamic' in row and 'this model takes no external tip wrench' in row, row
