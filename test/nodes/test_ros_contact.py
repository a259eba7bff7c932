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
The simulator node with a world, over real DDS (loopback, see conftest.py).

The default robot against ``config/world_post.yaml`` in mode quasi_static (cosserat statics):
the obstacles on ``world/markers`` reach a subscriber that joins late (latched), the contacts
on ``contact/markers`` and ``contact/wrench`` are those of an independent
:class:`StaticsSolver` of the same robot, world and inputs (the contact physics is tested in
test/models), arrows vanish when the contacts do, and a bad world or a model without contact
stops the node at start with one line.
"""

import os
from pathlib import Path
import subprocess
import sys

import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import construct_alone, interrupt, launch_stack, Probe, spin_until, spinning, \
    wait_for
from sensor_msgs.msg import JointState
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.contact.report import total_force
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.parameters import ConfigurationError
from visualization_msgs.msg import Marker
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
WORLD = share_dir() / 'config' / 'world_post.yaml'
# t3 bends the default robot towards +y, around the post, its tip on the plate: in warm
# steps, as a controller's rate limit would (a cold solve of 1.75 N tunnels under the plate)
PRESS = [0.25 * i for i in range(1, 8)]    # N on t3
# The node and the reference solve the same inputs from the same warm starts, each to the
# solver's tolerance (forces ~1e-6 N apart); a lost or doubled contact is >= 25 mN.
FORCE_TOLERANCE = 1e-4     # N


class ContactProbe(Probe):
    """Keep, as a Probe does, the world and contact topics (the world: a late joiner)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        for topic in topics.CONTACT_TOPICS:
            self.received[topic.name] = []
            self.create_subscription(topic.msg_type, topic.name, self._keeper(topic.name),
                                     topic.subscription_qos)

    def wrenches_of(self, stamp) -> list:
        return [m for _, m in self.received['contact/wrench'] if m.header.stamp == stamp]


@pytest.fixture(scope='module')
def pressed():
    """Spin a quasi-static simulator with the post world and a probe that joins after it."""
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('mode', value='quasi_static'), Parameter('statics_model', value='cosserat'),
        Parameter('world_file', value=str(WORLD)), Parameter('publish_rate', value=20.0)])
    probe = ContactProbe()      # after the node published its world: a late joiner
    with spinning(simulator, probe) as executor:
        ns = type('Pressed', (), {})()
        ns.simulator, ns.probe, ns.executor = simulator, probe, executor
        wait_for(lambda: probe.latest('tip/pose')
                 and probe.setpoint_pub.get_subscription_count() >= 1, 'the simulator to come up')
        yield ns


def apply(ns, tension: float) -> None:
    """Send t3 = ``tension`` N and wait until the node publishes its equilibrium."""
    ns.probe.setpoint_pub.publish(JointState(name=['t3'], effort=[tension]))
    wait_for(lambda: (lambda s: s is not None and s.effort.tolist()[3] == tension)(
        ns.probe.latest('tendon/state')), f'the equilibrium of t3 = {tension} N')


def ramp(ns, to: float) -> None:
    """Move t3 from where it is to ``to`` N in the warm steps of PRESS."""
    now = ns.probe.latest('tendon/state').effort.tolist()[3]
    steps = [t for t in [0.0] + PRESS if min(now, to) < t < max(now, to)]
    for tension in (steps if to > now else steps[::-1]) + [to]:
        apply(ns, tension)


def reference_contacts(tensions):
    """Return the contacts of an independent solver (same robot and world) after ``tensions``."""
    solver = StaticsSolver(load_robot(default_robot_file()), 'cosserat',
                           world=load_world(WORLD))
    for tension in tensions:
        result = solver.solve_tensions({'t3': tension})
    return result.contacts


def test_world_markers_are_latched_for_late_subscribers(pressed):
    (msg,) = wait_for(lambda: pressed.probe.received['world/markers'], 'the world markers')
    markers = msg[1].markers
    assert {m.header.frame_id for m in markers} == {'base_link'}
    by_ns = {}
    for m in markers:
        by_ns.setdefault(m.ns, []).append(m)
    assert sorted(by_ns) == ['plate', 'post']
    # the capsule post: a cylinder of its radius and length, a sphere at each end
    post = sorted(by_ns['post'], key=lambda m: m.id)
    assert [m.type for m in post] == [Marker.CYLINDER, Marker.SPHERE, Marker.SPHERE]
    assert [post[0].scale.x, post[0].scale.y, post[0].scale.z] == pytest.approx([0.02, 0.02, 0.2])
    assert sorted(m.pose.position.z for m in post[1:]) == pytest.approx([-0.1, 0.1])
    (plate,) = by_ns['plate']
    assert plate.type == Marker.CUBE
    assert [plate.scale.x, plate.scale.y, plate.scale.z] == pytest.approx([0.1, 0.1, 0.004])
    q = plate.pose.orientation
    assert [q.x, q.y, q.z, q.w] == pytest.approx([0.1736482, 0.0, 0.0, 0.9848078], abs=1e-6)


def test_contacts_appear_when_pressed_and_their_force_is_the_models(pressed):
    ramp(pressed, 0.0)
    ramp(pressed, PRESS[-1])
    expected = reference_contacts(PRESS)
    assert {c.obstacle for c in expected} == {'post', 'plate'}, 'the demo inputs touch both'

    def complete():
        """Return the newest arrows whose wrenches have all arrived, with the same stamp."""
        for _, msg in reversed(pressed.probe.received['contact/markers']):
            arrows = [m for m in msg.markers if m.action == Marker.ADD]
            stamp = msg.markers[0].header.stamp if msg.markers else None
            if len(arrows) == len(expected) and \
                    len(pressed.probe.wrenches_of(stamp)) == len(expected):
                return arrows, pressed.probe.wrenches_of(stamp)
        return None
    arrows, wrenches = wait_for(complete, 'arrows and wrenches of every contact')
    forces = np.array([[w.wrench.force.x, w.wrench.force.y, w.wrench.force.z] for w in wrenches])
    assert np.allclose(forces.sum(axis=0), total_force(expected), rtol=0.0, atol=FORCE_TOLERANCE)
    for arrow, wrench, contact in zip(arrows, wrenches, expected):
        assert (arrow.ns, wrench.header.frame_id) == (contact.obstacle, 'base_link')
        start, end = ([p.x, p.y, p.z] for p in arrow.points)
        assert np.allclose(start, contact.point, rtol=0.0, atol=1e-5)
        direction = np.subtract(end, start) / np.linalg.norm(np.subtract(end, start))
        assert direction @ contact.force / np.linalg.norm(contact.force) > 0.999
        force = np.array([wrench.wrench.force.x, wrench.wrench.force.y, wrench.wrench.force.z])
        torque = [wrench.wrench.torque.x, wrench.wrench.torque.y, wrench.wrench.torque.z]
        assert np.allclose(torque, np.cross(start, force), rtol=0.0, atol=1e-9)


def test_arrows_are_deleted_when_the_contacts_end(pressed):
    ramp(pressed, PRESS[-1])
    wait_for(lambda: any(m.ns == 'post' and m.action == Marker.ADD
                         for m in pressed.probe.latest('contact/markers').markers),
             'an arrow on the post')
    # back down: the post is left, the tip stays on the plate
    ramp(pressed, 0.0)

    def post_deleted():
        return any(m.ns == 'post' and m.action == Marker.DELETE
                   for _, msg in pressed.probe.received['contact/markers'] for m in msg.markers)
    wait_for(post_deleted, 'the DELETE of the arrow on the post')
    latest = pressed.probe.latest('contact/markers').markers
    assert [m.ns for m in latest if m.action == Marker.ADD] == ['plate']


def write_world(tmp_path, text: str) -> Path:
    path = tmp_path / 'world.yaml'
    path.write_text(text)
    return path


def run_node(*parameters: str) -> subprocess.CompletedProcess:
    """Run the simulator node's executable with ``parameters`` until it exits."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    arguments = [a for p in parameters for a in ('-p', p)]
    return subprocess.run(
        [sys.executable, '-m', 'tendon_robot_sim.nodes.simulator_node', '--ros-args',
         *arguments], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=COMMAND_TIMEOUT)


def test_a_bad_world_stops_the_node_at_start_with_one_line(tmp_path):
    world = write_world(tmp_path, 'obstacles:\n  - {name: ball, shape: sphere, radius: -0.01}\n')
    result = run_node(f'world_file:={world}', 'mode:=quasi_static')
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert 'Traceback' not in output
    (line,) = [line for line in output.splitlines() if 'world_file' in line]
    assert 'obstacles[0].radius' in line and 'must be > 0' in line, output


def start_refusal(world: Path, mode: str) -> str:
    """Return the one-line ConfigurationError with which the node refuses to start."""
    def make(context):
        return SimulatorNode(context=context, parameter_overrides=[
            Parameter('world_file', value=str(world)), Parameter('mode', value=mode)])
    with pytest.raises(ConfigurationError) as error:
        construct_alone(make)
    message = str(error.value)
    assert '\n' not in message
    return message


def test_a_model_without_contact_refuses_a_world():
    message = start_refusal(WORLD, 'cc_dynamic')
    assert message.startswith('world_file: ') and 'mode cc_dynamic' in message


def test_a_world_through_the_robots_base_stops_the_node_with_a_configuration_error(tmp_path):
    # the model refuses it when built: a WorldError escaped the node's start as a traceback
    world = write_world(tmp_path, 'obstacles:\n  - {name: table, shape: plane}\n')
    assert start_refusal(world, 'quasi_static').startswith(
        "world_file: obstacles[0] (table): intersects the robot's base")


@pytest.mark.parametrize('statics_model', ['auto', 'cosserat', 'kirchhoff', 'discrete'])
def test_every_statics_model_and_integrator_takes_a_world(statics_model):
    # what the node and the launcher ask before they build anything (the statics command
    # takes a world with every --model too)
    from tendon_robot_sim.models.contact.world import load_world
    from tendon_robot_sim.models.registry import ModelOptions, TENDON_ROBOT, world_refusal
    from tendon_robot_sim.models.tendon_robot import load_robot

    robot, world = load_robot(ROOT / 'config' / 'robot.yaml'), load_world(WORLD)
    options = ModelOptions(world=world, statics_model=statics_model)
    assert world_refusal(TENDON_ROBOT, 'quasi_static', robot, options) == ''
    for integrator in ('auto', 'explicit', 'implicit'):
        options = ModelOptions(world=world, integrator=integrator)
        assert world_refusal(TENDON_ROBOT, 'dynamic', robot, options) == ''


def test_a_model_without_contact_and_a_world_exit_with_one_line():
    result = run_node(f'world_file:={WORLD}', 'mode:=cc_dynamic')
    output = result.stdout + result.stderr
    assert result.returncode != 0 and 'Traceback' not in output
    assert len([line for line in output.splitlines() if 'cc_dynamic' in line]) == 1, output


def test_launch_with_a_world_argument_publishes_the_world_and_its_contacts(tmp_path):
    log = tmp_path / 'launch.log'
    # relative, as a user types it in the source tree; at rest the tip lies on the plate
    launcher = launch_stack(log, 'sim', '--namespace', 'walled', '--arg', 'rviz:=false',
                            '--arg', 'world:=config/world_post.yaml',
                            '--arg', 'mode:=quasi_static')
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node('world_probe', namespace='walled', context=context)
    try:
        received = {topic.name: [] for topic in topics.CONTACT_TOPICS}
        for topic in topics.CONTACT_TOPICS:
            node.create_subscription(topic.msg_type, topic.name, received[topic.name].append,
                                     topic.subscription_qos)
        spin_until(node, lambda: launcher.poll() is None and received['world/markers']
                   and received['contact/wrench'], 'the world and a contact from the stack')
        assert {m.ns for m in received['world/markers'][0].markers} == {'post', 'plate'}
        assert received['contact/wrench'][-1].header.frame_id == 'walled/base_link'
        assert received['contact/wrench'][-1].wrench.force.z > 0.0, 'the plate holds the tip up'
    finally:
        node.destroy_node()
        context.try_shutdown()
        code = interrupt(launcher)
    assert code == 0, log.read_text()


@pytest.mark.parametrize('integrator', ['auto', 'implicit'])
def test_the_dynamic_model_takes_the_world_with_either_integrator(integrator):
    """Both integrators take a world (auto: explicit for this robot): the rod lies on the plate."""
    context = rclpy.Context()
    rclpy.init(context=context)
    simulator = SimulatorNode(context=context, parameter_overrides=[
        Parameter('world_file', value=str(WORLD)), Parameter('publish_rate', value=20.0),
        Parameter('integrator', value=integrator)])
    probe = ContactProbe(context=context)
    assert simulator.model.summary.startswith('explicit' if integrator == 'auto' else 'implicit')
    with spinning(simulator, probe, context=context):
        wrench = wait_for(lambda: next((m for _, m in probe.received['contact/wrench']
                                        if m.wrench.force.z > 0.0), None),
                          'the plate holding the fallen tip up')
        arrows = wait_for(lambda: [m for _, m in probe.received['contact/markers']
                                   for m in m.markers if m.ns == 'plate'], 'its arrow')
        assert wrench.header.frame_id == arrows[0].header.frame_id == 'base_link'
