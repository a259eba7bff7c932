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
The simulator node in mode dynamic on robots the explicit integrator cannot serve.

A nitinol backbone (explicit stable step 0.26 us) and a steel rod without discs: ``integrator``
``auto`` takes the implicit model for both, over real DDS (loopback, see conftest.py). The
model itself is tested in test/models/rod/dynamics/test_implicit_dynamics.py; here: the parameter,
the topics, tension and displacement setpoints, the rest the robot comes to (that of the statics
for tensions; of the model's own static solve for a displacement next to tensions, which the
statics solver does not take).
"""

from diagnostic_msgs.msg import DiagnosticStatus
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import (construct_alone, position, Probe, spinning, spinning_alone,
                         stamp_seconds, wait_for)
from sensor_msgs.msg import JointState
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError

# The damped robot comes to rest at the static equilibrium (the implicit model's own RK4 grid
# is within micrometres of the statics'; tests/models/rod); plumbing errors are centimetres.
REST_TOLERANCE = 0.5e-3     # m
# At rest: this many tip poses in a row within REST_TOLERANCE (half a second at 50 Hz: longer
# than the slower robot's first period, so a swing through the target does not pass)
REST_POSES = 25


def resting(probe, target) -> bool:
    """Whether the last REST_POSES tip poses are all within REST_TOLERANCE of ``target``."""
    poses = probe.received['tip/pose'][-REST_POSES:]
    return len(poses) == REST_POSES and all(
        np.linalg.norm(position(msg) - target) < REST_TOLERANCE for _, msg in poses)


@pytest.mark.parametrize('robot_file, model', [('nitinol_robot.yaml', 'discrete'),
                                               ('steel_rod_robot.yaml', 'cosserat')])
def test_dynamic_mode_runs_the_implicit_integrator(robot_file, model):
    path = share_dir() / 'config' / robot_file
    robot = load_robot(path)
    name = robot.tendon_names[0]
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(path)), Parameter('publish_clock', value=True),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    with spinning(simulator, probe):
        assert simulator.model.integrator == 'implicit'
        assert simulator.model.summary.startswith('implicit (BDF2')
        wait_for(lambda: probe.latest('tip/pose')
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator to come up')

        # a tension: the robot swings and comes to rest at the statics' equilibrium
        expected = StaticsSolver(robot, model).solve_tensions({name: 1.0}).tip_position
        probe.setpoint_pub.publish(JointState(name=[name], effort=[1.0]))
        wait_for(lambda: resting(probe, expected), 'the tip to come to rest under 1 N')
        assert probe.latest('tendon/state').effort[0] == pytest.approx(1.0)
        assert probe.sim_time() > 0.1

        # a displacement of t0, the others still at 0 N: it is held there, with a tension
        probe.setpoint_pub.publish(JointState(name=[name], position=[0.004]))
        wait_for(lambda: abs(probe.latest('tendon/state').position[0] - 0.004) < 1e-9,
                 'the displacement setpoint to be followed')
        rest = ImplicitSimulator(robot)           # where the model itself says it rests
        rest.set_displacements({name: 0.004})
        rest.place_at_rest()
        held = rest.state()
        # at rest with the model's tension, both at once: 25 poses within 0.5 mm did not mean
        # that the lightly damped steel rod's tension had settled (4.882 N against 4.861
        # once, at load 12)
        wait_for(lambda: resting(probe, held.tip_position) and abs(
            probe.latest('tendon/state').effort[0] - held.tensions[0]) < 0.02,
            'the tip to come to rest at the displacement, with its tension')
        assert held.tensions[0] > 0.5

        if model == 'discrete':
            # an 8 N step (max_tension 10 N): the rod whips round; once the node's step failed
            # and it reset to zero tension, now it keeps the tension through the whip
            probe.setpoint_pub.publish(JointState(name=[name], effort=[8.0]))
            wait_for(lambda: probe.latest('tendon/state').effort[0] == pytest.approx(8.0),
                     'the 8 N step to be applied')
            stepped = probe.sim_time()
            wait_for(lambda: probe.sim_time() > stepped + 0.3, '0.3 s of the whip')
            assert probe.latest('tendon/state').effort[0] == pytest.approx(8.0)


def test_tip_tolerance_within_the_real_time_budget_says_when_it_is_not_met():
    """
    tip_tolerance: dt adapts; when the budget cannot pay for the steps it asks, a diagnostic.

    The nitinol robot under a 4 N step at 100 x real time with a tolerance of 1 um: the steps
    the tolerance asks (down to dt / 16) do not fit the budget, so the model takes coarser ones
    and a WARN status '<node>: step control' on /diagnostics names the tolerance, stamped
    on the simulated clock like every other message of a node that publishes /clock; the
    simulation goes on.
    """
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(share_dir() / 'config' / 'nitinol_robot.yaml')),
        Parameter('publish_clock', value=True), Parameter('real_time_factor', value=100.0),
        Parameter('tip_tolerance', value=1e-6)])
    probe = Probe()
    arrays = []
    probe.create_subscription(topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name,
                              arrays.append, topics.DIAGNOSTICS.qos)
    try:
        with spinning(simulator, probe):
            assert simulator.model.sim.tip_tolerance == 1e-6
            wait_for(lambda: probe.latest('tip/pose')
                     and probe.setpoint_pub.get_subscription_count() >= 1,
                     'the simulator to come up')
            probe.setpoint_pub.publish(JointState(name=['t0'], effort=[4.0]))
            wait_for(lambda: any(s.level == DiagnosticStatus.WARN and s.name.endswith(
                'step control') for a in arrays for s in a.status), 'the step-control warning')
            array = next(a for a in arrays if a.status[0].level == DiagnosticStatus.WARN)
            assert array.status[0].message.startswith(
                'tip_tolerance 1e-06 m not met: the real-time budget')
            # simulated seconds, as /clock: not the wall clock's (1.7e9 s since 1970)
            assert stamp_seconds(array.header.stamp) <= probe.sim_time()
            moving = probe.sim_time()
            wait_for(lambda: probe.sim_time() > moving + 0.05, 'the simulation to go on')
            assert simulator.model.sim.coarse_steps > 0
    finally:
        simulator.destroy_node()
        probe.destroy_node()
        rclpy.try_shutdown()


def test_state_topics_go_to_whoever_subscribes_and_to_latecomers():
    """
    The node builds and sends the state topics that have subscribers, and a late one's too.

    A topic without a subscriber is neither built nor sent (simulator_node.py); its publisher
    stays, so a subscriber that comes later gets it from then on, the velocity of its first
    ``tendon/state`` 0 (no state before it) and the later ones the motion's. With
    ``publish_clock`` at most ``publish_rate`` messages a simulated second.
    """
    path = share_dir() / 'config' / 'steel_rod_robot.yaml'
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(path)), Parameter('publish_clock', value=True)])
    early = rclpy.create_node('early_subscriber')
    poses, clocks = [], []
    early.create_subscription(topics.TIP_POSE.msg_type, topics.TIP_POSE.name, poses.append,
                              topics.TIP_POSE.qos)
    early.create_subscription(topics.CLOCK.msg_type, topics.CLOCK.name, clocks.append,
                              topics.CLOCK.qos)
    setpoints = early.create_publisher(JointState, topics.TENDON_SETPOINT.name,
                                       topics.TENDON_SETPOINT.qos)
    with spinning(simulator, early):
        wait_for(lambda: len(poses) > 10 and setpoints.get_subscription_count() >= 1,
                 'tip poses for the only subscriber')
        assert simulator.state_pub.get_subscription_count() == 0
        setpoints.publish(JointState(name=['t0'], effort=[3.0]))      # the rod swings
        wait_for(lambda: clocks and stamp_seconds(clocks[-1].clock) > 0.3, '0.3 s simulated')
        with spinning_alone(Probe()) as late:
            wait_for(lambda: len(late.received['tendon/state']) > 5
                     and late.received['backbone/markers'], 'the state topics for a latecomer')
            setpoints.publish(JointState(name=['t0'], effort=[0.5]))     # it swings back
            wait_for(lambda: any(abs(v) > 1e-6 for _, msg in late.received['tendon/state'][1:]
                                 for v in msg.velocity), 'a velocity of the tendon moving')
        states = [msg for _, msg in late.received['tendon/state']]
        assert list(states[0].velocity) == [0.0] * len(states[0].velocity)
        assert all(np.all(np.isfinite(msg.velocity)) for msg in states)
        # at most publish_rate (50 Hz) tip poses a simulated second, as before
        stamps = np.array([stamp_seconds(msg.header.stamp) for msg in poses])
        window = stamps[stamps >= stamps[-1] - 0.5]
        assert len(window) <= 0.5 * 50 + 1


@pytest.mark.parametrize('mode', ['dynamic', 'quasi_static'])
def test_the_node_refuses_alpha_for_the_explicit_integrator_in_every_mode(mode):
    """In mode quasi_static the node took integrator explicit with alpha and said nothing."""
    def make(context):
        return SimulatorNode(context=context, parameter_overrides=[
            Parameter('mode', value=mode), Parameter('integrator', value='explicit'),
            Parameter('alpha', value=-0.5)])
    with pytest.raises(ConfigurationError) as error:
        construct_alone(make)
    assert str(error.value).startswith('parameter alpha: applies to the implicit integrator '
                                       'only; the integrator is explicit (asked for)')
