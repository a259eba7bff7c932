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
The simulator node with tendon friction in its robot file (issue 41), over real DDS.

Mode quasi_static solves each setpoint from the last (stick and slip); the tension at the
motor stays on ``tendon/state`` and the tension at each anchor comes on ``tendon/tip_state``.
The plumbing is checked against an independent
:class:`~tendon_robot_sim.models.rod.statics.stick_slip.StickSlipStatics` fed the same
sequence (its physics: test/models/rod/statics/test_stick_slip.py). Mode dynamic runs the
same disc robot on the implicit model's discrete dynamics with friction at the discs (its
physics: test/models/rod/dynamics/test_disc_friction.py). The stack's controllers start on
the same robot, their statics model without its friction.
"""

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import position, Probe, spinning, wait_for, wait_in_simulated_time
from sensor_msgs.msg import JointState
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.tendon_robot import load_robot, without_friction
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics

ROBOT = share_dir() / 'config' / 'robot_friction.yaml'
# simulated s: the bound of the dynamics' settling at the statics
SETTLING = 20.0


@pytest.fixture(scope='module')
def node():
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('mode', value='quasi_static'), Parameter('robot_file', value=str(ROBOT))])
    probe = Probe()
    anchors = []
    probe.create_subscription(JointState, topics.TENDON_TIP_STATE.name, anchors.append,
                              topics.TENDON_TIP_STATE.qos)
    with spinning(simulator, probe):
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('tendon/state') and anchors
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator to come up')
        yield probe, anchors


def test_the_tension_at_the_anchors_follows_the_path(node):
    probe, anchors = node
    reference = StickSlipStatics(load_robot(ROBOT), 'discrete')
    for tension in (2.0, 4.0, 2.0):     # pull, then release to where the pull passed
        expected = reference.solve_tensions([tension, 0.0, 0.0, 0.0])
        probe.setpoint_pub.publish(JointState(name=['t0'], effort=[tension]))
        wait_for(lambda: probe.latest('tendon/state').effort[0] == tension
                 and anchors[-1].effort[0] == pytest.approx(expected.tip_tensions[0], rel=1e-6),
                 f'the anchor tension of {tension} N')
        assert list(anchors[-1].name) == ['t0', 't1', 't2', 't3']
        assert not anchors[-1].position and not anchors[-1].velocity
    # one publisher, the simulator's (without friction, none: test_ros_quasi_static.py)
    assert probe.count_publishers(topics.TENDON_TIP_STATE.name) == 1
    # released to 2 N, the anchor keeps more than the motor holds: the tendon slid back
    assert anchors[-1].effort[0] > 2.0


def test_mode_dynamic_takes_the_friction_at_the_discs():
    """
    Mode dynamic on the same robot: the implicit integrator, model discrete, friction and all.

    t0 pulled to 2 N: while it slides the anchor's tension leaves the motor's (Till's sign:
    above it during the pull), ``tendon/state`` keeps the motor's, and the tip comes to the
    frictionless statics' equilibrium, where the law vanishes with the sliding. Within 2 mm:
    with this robot's damping the shipped nu = 0.2 keeps a chatter of about 1 mm peak to peak
    about it (model cosserat alike; docs/tendon_robot.md); plumbing errors are centimetres.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    simulator = SimulatorNode(context=context, parameter_overrides=[
        Parameter('mode', value='dynamic'), Parameter('robot_file', value=str(ROBOT))])
    probe = Probe(context=context)
    anchors = []
    probe.create_subscription(JointState, topics.TENDON_TIP_STATE.name, anchors.append,
                              topics.TENDON_TIP_STATE.qos)
    rest = StaticsSolver(without_friction(load_robot(ROBOT)), 'discrete').solve_tensions(
        [2.0, 0.0, 0.0, 0.0]).tip_position
    with spinning(simulator, probe, context=context):
        assert simulator.model.integrator == 'implicit'
        wait_for(lambda: probe.latest('tip/pose') and probe.latest('tendon/state') and anchors
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator to come up')
        probe.setpoint_pub.publish(JointState(name=['t0'], effort=[2.0]))
        wait_for(lambda: probe.latest('tendon/state').effort[0] == 2.0
                 and anchors[-1].effort[0] > 2.02, "the anchor's tension above the motor's")
        assert list(anchors[-1].name) == ['t0', 't1', 't2', 't3']
        wait_in_simulated_time(
            lambda: np.linalg.norm(position(probe.latest('tip/pose')) - rest) < 2e-3,
            'the tip at the statics of 2 N', lambda: simulator.sim_clock, SETTLING)


@pytest.mark.parametrize('controller', ['tension', 'displacement'])
def test_the_controllers_of_the_sim_stack_take_a_robot_with_friction(controller):
    """
    Both controllers start on the friction robot; they refused it, so its stack did not start.

    Their statics model (the tension controller's tip model, the displacement controller's
    feed-forward) is the robot without friction: friction is model error to them, as an
    unknown load is, which their closed loops correct.
    """
    from tendon_robot_sim.models.rod.statics.stick_slip import has_friction
    from tendon_robot_sim.nodes.displacement_controller_node import DisplacementControllerNode
    from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
    node_class = {'tension': TensionControllerNode,
                  'displacement': DisplacementControllerNode}[controller]
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        node = node_class(context=context,
                          parameter_overrides=[Parameter('robot_file', value=str(ROBOT))])
        solver = node.tip_controller.solver if controller == 'tension' else node.solver
        assert has_friction(load_robot(ROBOT)) and not has_friction(solver.robot)
        node.destroy_node()
    finally:
        context.try_shutdown()
