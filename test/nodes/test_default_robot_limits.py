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
The default robot's simulator and tension controller under commands at its limits (issue 37).

Real nodes over DDS (loopback): the dynamic simulator (explicit model, the default robot at
its 50 elements) and the tension controller, spun with a probe in one executor. The
controller's rate_limit is set to its largest value, 10000 N/s, so that a command is a step
(as an operator may set it): two neighbouring tendons stepped to max_tension made the old
model diverge within 0.1 s. Then every tendon at max_tension, and a tip target at the base,
[0, 0, 0], from there (the issue's stack runs: three divergences in 15 s, and a reset loop).
Each is checked on the simulator's /rosout: no divergence error while the rod is driven there
and held. Last, tip wrenches at and past the nodes' bound (max_tip_force, max_tip_torque).
"""

from geometry_msgs.msg import Point, PointStamped, Vector3, Wrench, WrenchStamped
import numpy as np
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import logs_containing, Probe, spinning, wait_for, warning_containing
from sensor_msgs.msg import JointState
from std_msgs.msg import Header
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import TIP_WRENCH_BOUND

ROBOT = load_robot(default_robot_file())
# Simulated seconds the rod is held at the boundary: the old loop diverged within 2.5 s.
HOLD = 4.0
# Wall seconds these may take: the default robot simulates at 0.06 x real time on a 2-core
# machine with a load average of 25 (4 x real time on a quiet core).
SLOW = 300.0


@pytest.fixture(scope='module')
def stack():
    """Spin the simulator (as fast as it can, publishing /clock), the controller and a probe."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('robot_file', value=str(default_robot_file())),
        Parameter('integrator', value='explicit'),
        Parameter('publish_clock', value=True),
        Parameter('real_time_factor', value=100.0),
        Parameter('warning_throttle_period', value=0.0)])
    controller = TensionControllerNode(parameter_overrides=[
        Parameter('robot_file', value=str(default_robot_file())),
        Parameter('rate_limit', value=10000.0),
        Parameter('warning_throttle_period', value=0.0)])
    probe = Probe()
    target_pub = probe.create_publisher(PointStamped, topics.TIP_TARGET.name,
                                        topics.TIP_TARGET.qos)
    with spinning(simulator, controller, probe):
        ns = type('Stack', (), {})()
        ns.simulator, ns.controller, ns.probe = simulator, controller, probe
        ns.target_pub = target_pub
        ns.wrench_pub = probe.create_publisher(WrenchStamped, topics.TIP_WRENCH.name,
                                               topics.TIP_WRENCH.qos)
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('/clock')
                 and probe.command_pub.get_subscription_count() >= 1
                 and target_pub.get_subscription_count() >= 1
                 and ns.wrench_pub.get_subscription_count() >= 2, 'the stack to come up')
        yield ns


def divergences(probe: Probe) -> list:
    return logs_containing(probe, 'simulator', 'diverged', level=Log.ERROR)


def hold(probe: Probe, seconds: float) -> None:
    end = probe.sim_time() + seconds
    wait_for(lambda: probe.sim_time() >= end or divergences(probe),
             f'{seconds} s of simulated time', timeout=SLOW)


def step_to(stack, tensions) -> None:
    """Command ``tensions`` [N], wait for the setpoint, hold: no divergence, and applied."""
    stack.probe.command_pub.publish(JointState(name=ROBOT.tendon_names, effort=list(tensions)))
    wait_for(lambda: np.array_equal(stack.controller.setpoint, tensions), 'the setpoint',
             timeout=SLOW)
    hold(stack.probe, HOLD)
    assert divergences(stack.probe) == []
    assert np.array_equal(stack.probe.latest('tendon/state').effort, tensions)


def test_two_neighbouring_tendons_stepped_to_max_tension_are_simulated(stack):
    step_to(stack, ROBOT.max_tensions * [1, 1, 0, 0])


def test_every_tendon_at_max_tension_is_simulated_without_divergence(stack):
    step_to(stack, ROBOT.max_tensions)


def test_a_tip_target_at_the_base_from_there_is_simulated_without_divergence(stack):
    """
    [0, 0, 0] from every tendon at max_tension: the tip loop starts from the limits.

    The controller steers the tip in the plane across the base axis, so it pulls the tip
    towards the axis, from wherever the tensions are; it must not take the rod anywhere the
    simulator cannot follow.
    """
    stack.target_pub.publish(PointStamped(header=Header(frame_id=ROBOT.base.frame_id),
                                          point=Point(x=0.0, y=0.0, z=0.0)))
    wait_for(lambda: stack.controller.target is not None, 'the tip-position mode')
    hold(stack.probe, HOLD)
    assert divergences(stack.probe) == []
    setpoint = stack.controller.setpoint
    assert np.all(setpoint >= 0.0) and np.all(setpoint <= ROBOT.max_tensions)


def wrench(force, torque) -> WrenchStamped:
    return WrenchStamped(wrench=Wrench(force=Vector3(x=force[0], y=force[1], z=force[2]),
                                       torque=Vector3(x=torque[0], y=torque[1], z=torque[2])))


def test_a_tip_wrench_at_the_bound_is_simulated_and_one_past_it_rejected(stack):
    """
    The bound's wrench is simulated without divergence; 1e6 N is rejected, the last one kept.

    At the bound along the directions in which the explicit model gives up first (pushing the
    tip towards the base, twisting about the rod: docs/ros_interface.md, Tip wrench bound),
    with the tendons relaxed. 1e6 N was taken: the model diverged, logged an error and reset,
    the wrench lost.
    """
    max_force, max_torque = (param.default for param in TIP_WRENCH_BOUND)
    stack.probe.command_pub.publish(JointState(name=ROBOT.tendon_names, effort=[0.0] * 4))
    wait_for(lambda: stack.controller.target is None and not stack.controller.setpoint.any(),
             'the tendons relaxed', timeout=SLOW)
    force, torque = np.array([-max_force, 0.0, 0.0]), np.array([max_torque, 0.0, 0.0])
    sim = stack.simulator.model.sim
    try:
        stack.wrench_pub.publish(wrench(force, torque))
        wait_for(lambda: all(map(np.array_equal, sim.tip_load, (force, torque))),
                 'the wrench at the bound', timeout=SLOW)
        hold(stack.probe, HOLD)
        assert divergences(stack.probe) == []
        stack.wrench_pub.publish(wrench((0.0, 0.0, 1e6), (0.0, 0.0, 0.0)))
        warning_containing(stack.probe, 'simulator', 'rejected tip wrench: wrench.force: '
                           f'1e+06 N is more than max_tip_force ({max_force:g} N)')
        hold(stack.probe, 0.5)
        assert divergences(stack.probe) == []
        assert all(map(np.array_equal, sim.tip_load, (force, torque)))
    finally:
        stack.wrench_pub.publish(wrench((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)))
