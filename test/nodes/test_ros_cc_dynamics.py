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
The simulator node in mode cc_dynamic, over real DDS (loopback, see conftest.py).

The node integrates the constant-curvature Lagrange dynamics (physics tested in
test_cc_dynamics.py) at constant setpoints. Here: the one launch argument ``mode`` switches a
tendon robot from the Cosserat model to this one behind the same topics, and a bellows robot
runs on pressures; the settled tip is checked against the model's independent static
equilibrium (damped Newton on the static force, no time integration). A section coiled
past its self-contact bend is a WARN status on /diagnostics until it uncoils.
"""

from contextlib import contextmanager
import time

from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.parameter import Parameter
from rclpy.time import Time
from ros_helpers import logs_containing, position, Probe, spin_until
from sensor_msgs.msg import JointState
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.models.trunk.dynamics import CCDynamics
from tendon_robot_sim.models.trunk.robot import load_bellows_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode, STATUS_PERIOD
from tendon_robot_sim.ros import topics

BHA_FILE = share_dir() / 'config' / 'bionic_handling_assistant.yaml'
TILL_FILE = share_dir() / 'config' / 'till_tendon_robot.yaml'
# The tip approaches the equilibrium as exp(-t / tau) (damping ratio 0.1 of the first
# bending mode: tau about 0.6 s for the default robot, simulated); after 8 s it is within
# about 1e-5 m, while a wrong tendon or input unit misses by centimetres.
SETTLED = 1e-4   # m


@pytest.fixture(scope='module')
def ros():
    rclpy.init()
    yield
    rclpy.try_shutdown()


@contextmanager
def running(namespace, parameters):
    """
    Yield a simulator with ``parameters``, a probe and the executor of both, once they meet.

    The simulator runs in ``namespace`` with the frame prefix ``namespace/`` and every
    warning logged; it is destroyed after the block, the probe is the caller's.
    """
    simulator = SimulatorNode(namespace=namespace, parameter_overrides=parameters + [
        Parameter('frame_prefix', value=f'{namespace}/'),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe(namespace=namespace)
    executor = rclpy.executors.SingleThreadedExecutor()
    for node in (simulator, probe):
        executor.add_node(node)
    try:
        spin_until(executor, lambda: probe.latest('tip/pose')
                   and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator')
        yield simulator, probe, executor
    finally:
        executor.shutdown()
        simulator.destroy_node()


def run_until_settled(ros, namespace, parameters, setpoint, expected):
    """
    Run a simulator fast (10 x real time) with ``setpoint`` applied until the tip settles.

    Return the tip pose, the state, and this simulator's /tf frames (prefix stripped) once
    the tip is within SETTLED of ``expected``. The simulator runs in ``namespace`` with the
    frame prefix ``namespace/``: /tf is one topic for every robot on the domain, and only
    this one's frames are taken.
    """
    prefix = f'{namespace}/'
    with running(namespace, parameters + [Parameter('real_time_factor', value=10.0)]) as (
            _, probe, executor):
        probe.setpoint_pub.publish(setpoint)
        spin_until(executor, lambda: np.linalg.norm(
            position(probe.latest('tip/pose')) - expected) < SETTLED,
            f'the tip settling at {expected}')
        ours = [msg for _, msg in probe.received['/tf']
                if msg.transforms and msg.transforms[0].child_frame_id.startswith(prefix)]
        frames = {t.child_frame_id.removeprefix(prefix) for t in ours[-1].transforms}
        return probe.latest('tip/pose'), probe.latest('tendon/state'), frames, probe


def test_mode_cc_dynamic_runs_a_tendon_robot_on_the_constant_curvature_model(ros):
    robot = load_robot(default_robot_file())
    model = CCDynamics.from_tendon_robot(robot)
    tensions = np.array([2.0, 0.0, 0.0, 0.0])
    expected = model.frames(model.equilibrium(tensions))[-1][1]
    tip, state, frames, probe = run_until_settled(
        ros, 'cc', [Parameter('mode', value='cc_dynamic')],
        JointState(name=['t0'], effort=[2.0]), expected)
    assert list(state.name) == robot.tendon_names and state.effort.tolist() == tensions.tolist()
    assert state.position[0] > 1e-3, 'tendon t0 pulled in'
    assert frames == {'tip_link', 'vertebra_0'}, 'one section: its end is the tip'
    assert tip.header.frame_id == 'cc/' + robot.base.frame_id
    probe.destroy_node()


def test_a_bellows_robot_runs_on_pressures(ros):
    robot = load_bellows_robot(BHA_FILE)
    model = CCDynamics.from_bellows_robot(robot)
    pressures = np.zeros(len(robot.actuator_names))
    pressures[0] = 50e3       # Pa, first bellows of the base section
    expected = model.frames(model.equilibrium(pressures))[-1][1]
    tip, state, frames, probe = run_until_settled(
        ros, 'bha', [Parameter('robot_file', value=str(BHA_FILE))],
        JointState(name=[robot.actuator_names[0]], effort=[50e3]), expected)
    assert state.effort.tolist() == pressures.tolist()
    assert frames == {
        'tip_link', 'vertebra_0', 'vertebra_1', 'vertebra_2'}
    rest = model.frames(model.equilibrium(np.zeros_like(pressures)))[-1][1]
    assert np.linalg.norm(position(tip) - rest) > 0.01, 'the pressure moved the tip'
    probe.destroy_node()


def test_a_section_coiled_past_its_self_contact_bend_is_a_warning_until_it_uncoils(ros):
    """
    Till's robot under 20 N on t0 coils past its self-contact bend: WARN, then OK at 0 N.

    Past 2 pi l / (l + 2 r) (6.271 rad for its rod) the arc runs through itself, a shape the
    robot cannot take, which the cc-dynamics command refuses (exit 1). The node goes on and
    says so: a WARN status '<node>: self contact' naming the section and the bend against
    the limit, a warning in its log; once the tension is off and the section has swung back
    (about 1.5 rad at most), an OK status.
    """
    with running('coil', [Parameter('robot_file', value=str(TILL_FILE)),
                          Parameter('mode', value='cc_dynamic')]) as (simulator, probe, executor):
        name = f'{simulator.get_fully_qualified_name()}: self contact'
        statuses = []
        probe.create_subscription(
            topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name,
            lambda array: statuses.extend((time.monotonic(), s, Time.from_msg(array.header.stamp))
                                          for s in array.status if s.name == name),
            topics.DIAGNOSTICS.qos)
        spin_until(executor, lambda: simulator.diagnostics_pub.get_subscription_count() >= 1,
                   'the probe to subscribe to /diagnostics')
        probe.setpoint_pub.publish(JointState(name=['t0'], effort=[20.0]))
        warning = spin_until(executor, lambda: next(
            (s for _, s, _ in statuses if s.level == DiagnosticStatus.WARN), None),
            'the self-contact warning')
        assert warning.message.startswith('section 0: a bend of '), warning.message
        assert 'passes through itself' in warning.message and '(6.271 rad)' in warning.message
        assert spin_until(executor, lambda: logs_containing(
            probe, 'coil.simulator', 'self contact: section 0: a bend of ', Log.WARN),
            'the warning in the log')
        probe.setpoint_pub.publish(JointState(name=['t0'], effort=[0.0]))
        released = spin_until(executor, lambda: probe.latest('tendon/state').effort[0] == 0.0
                              and time.monotonic(), 'the tension released')
        ok = spin_until(executor, lambda: next(
            (s for t, s, _ in statuses if t > released and s.level == DiagnosticStatus.OK),
            None), 'the OK status once the section has uncoiled')
        assert ok.message == 'every section within its self-contact bend'
    # a WARN whose bend grows is sent again at most every STATUS_PERIOD, not with every
    # publish tick (50 Hz): the stamps of WARNs one after the other, in the node's clock
    for (_, a, t_a), (_, b, t_b) in zip(statuses, statuses[1:]):
        if a.level == b.level == DiagnosticStatus.WARN:
            assert (t_b - t_a).nanoseconds * 1e-9 >= STATUS_PERIOD - 1e-3, (a.message, b.message)
    probe.destroy_node()
