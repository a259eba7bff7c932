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
Stacks in different namespaces do not collide on /tf: every frame carries a prefix.

The first tests read the stack definition and the derived RViz views and robot
description; the last ones run real nodes over DDS: two sim stacks through the local
launcher, and a hardware bridge on the emulated rig.
"""

import importlib
import xml.etree.ElementTree as ElementTree

from geometry_msgs.msg import PointStamped
import pytest
from rcl_interfaces.msg import Log
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.parameter import Parameter
from rclpy.qos import qos_profile_rosout_default
from ros_helpers import construct_alone, interrupt, launch_stack, spin_until
from std_msgs.msg import Header
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.launcher import StackLauncher
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.ros import topics
from tendon_robot_sim.rviz_views import prefixed_view, urdf_without_links
from tendon_robot_sim.stack import frame_prefix, FramePrefix, RvizView, STACKS
import yaml

URDF = share_dir() / 'urdf' / 'tendon_robot.urdf'


@pytest.mark.parametrize('values, prefix', [
    ({}, ''),
    ({'namespace': '', 'frame_prefix': ''}, ''),
    ({'namespace': 'left_arm', 'frame_prefix': ''}, 'left_arm/'),
    ({'namespace': '/robots/left/', 'frame_prefix': ''}, 'robots/left/'),
    ({'namespace': 'left_arm', 'frame_prefix': 'arm1_'}, 'arm1_'),
    ({'namespace': '', 'frame_prefix': 'arm1/'}, 'arm1/'),
])
def test_the_frame_prefix_is_the_given_one_or_the_namespace(values, prefix):
    assert frame_prefix(values) == prefix


@pytest.mark.parametrize('pushed, namespace, prefix', [
    ('left', '', 'left/'), ('robots', 'arm', 'robots/arm/'), ('/robots', '/arm', 'arm/')])
def test_a_namespace_pushed_by_an_including_launch_file_prefixes_the_frames(
        pushed, namespace, prefix):
    """
    ``PushRosNamespace`` around an include of our launch file moves the nodes: and the frames.

    launch_ros puts the nodes in ``<pushed>/<namespace>`` (an absolute ``namespace`` stays
    as it is); the frame prefix is that namespace, so that two stacks included in two pushed
    namespaces do not collide on /tf.
    """
    pytest.importorskip('launch_ros', reason='launch_ros is not installed here (no ROS 2 '
                        'launch)')
    from launch import LaunchContext
    from launch.actions import DeclareLaunchArgument
    from launch_ros.actions import PushRosNamespace
    from tendon_robot_sim.stack import _computed, launch_description

    context = LaunchContext()
    context.launch_configurations['namespace'] = namespace
    for action in launch_description('sim').entities:
        if isinstance(action, DeclareLaunchArgument) and action.name != 'namespace':
            action.execute(context)
    PushRosNamespace(pushed).execute(context)
    assert _computed(FramePrefix(), STACKS['sim']).perform(context) == prefix


@pytest.mark.parametrize('stack', STACKS.values(), ids=lambda stack: stack.name)
def test_every_node_that_names_frames_gets_the_stack_prefix(stack):
    for entry in stack.nodes:
        names_frames = entry.executable == 'robot_state_publisher' or (
            entry.module is not None and 'frame_prefix' in {
                p.name for p in importlib.import_module(entry.module).PARAMS})
        assert (entry.parameters.get('frame_prefix') == FramePrefix()) == names_frames, \
            entry.name
        if entry.executable == 'robot_state_publisher':
            arguments = {a.name: a.default for a in stack.arguments} | {'namespace': 'left_arm'}
            values = entry.resolved_parameters(lambda value: value.of(arguments))[-1]
            assert values['frame_prefix'] == 'left_arm/'
    # what the local launcher hands the processes it starts; no namespace: no prefix
    for namespace, prefix in (('left_arm', 'left_arm/'), ('', '')):
        launcher = StackLauncher(stack.name, {'namespace': namespace, 'rviz': 'false'})
        for process in launcher.processes:
            command = process.command
            generated = command[len(command) - 1 - command[::-1].index('--params-file') + 1]
            with open(generated) as f:
                parameters = yaml.safe_load(f)['/**']['ros__parameters']
            assert parameters.get('frame_prefix') == prefix, process.entry.name


@pytest.mark.parametrize('prefix', ['/left_arm/', 'left arm/'])
def test_a_node_refuses_a_prefix_that_cannot_start_a_frame_id(prefix):
    from tendon_robot_sim.nodes.simulator_node import SimulatorNode
    from tendon_robot_sim.ros.parameters import ConfigurationError
    problem = ("a tf2 frame id does not start with '/'" if prefix.startswith('/') else
               "not a prefix of tf2 frame ids: ' ' is not allowed")
    with pytest.raises(ConfigurationError, match=f'parameter frame_prefix: {problem}'):
        construct_alone(lambda context: SimulatorNode(context=context, parameter_overrides=[
            Parameter('frame_prefix', value=prefix)]))


def rviz_views():
    return sorted({(stack.name, a) for stack in STACKS.values() for entry in stack.nodes
                   for a in entry.arguments if isinstance(a, RvizView)},
                  key=lambda item: item[1].view.path)


@pytest.mark.parametrize('stack, view', rviz_views(), ids=lambda x: getattr(x, 'view', x))
def test_rviz_views_look_at_the_prefixed_frames(stack, view):
    original = yaml.safe_load(view.view.resolve().read_text())
    assert view.of({'namespace': '', 'frame_prefix': ''}) == str(view.view.resolve())
    for prefix, tf_prefix in (('left_arm/', 'left_arm'), ('arm1_', '')):
        path = view.of({'namespace': 'other', 'frame_prefix': prefix})
        with open(path) as f:
            derived = yaml.safe_load(f)
        options = derived['Visualization Manager']['Global Options']
        assert options['Fixed Frame'] == prefix + original['Visualization Manager'][
            'Global Options']['Fixed Frame']
        # RViz joins a RobotModel's TF Prefix and a link with '/': only a prefix ending
        # in / can be given there
        for display in derived['Visualization Manager']['Displays']:
            if display['Class'] == 'rviz_default_plugins/RobotModel':
                assert display['TF Prefix'] == tf_prefix
                display['TF Prefix'] = ''
        options['Fixed Frame'] = original['Visualization Manager']['Global Options'][
            'Fixed Frame']
        assert derived == original, 'only the frames change'


def test_the_hardware_stack_shows_the_measured_tip_and_describes_no_tip_frame():
    hardware = STACKS['hardware']
    (publisher,) = [e for e in hardware.nodes if e.executable == 'robot_state_publisher']
    arguments = {a.name: a.default for a in hardware.arguments}
    description = publisher.resolved_parameters(lambda value: value.of(arguments))[-1][
        'robot_description']
    robot = ElementTree.fromstring(description)
    shipped = ElementTree.fromstring(URDF.read_text())
    assert {link.get('name') for link in robot.findall('link')} == {
        link.get('name') for link in shipped.findall('link')} - {'tip_link'}
    # robot_state_publisher publishes fixed joints only: every link left has a frame
    assert {joint.get('type') for joint in robot.findall('joint')} == {'fixed'}

    (rviz,) = [e for e in hardware.nodes if e.executable == 'rviz2']
    (view,) = [a for a in rviz.arguments if isinstance(a, RvizView)]
    assert view.view.path == 'rviz/hardware.rviz'
    displays = {d['Class'].split('/')[-1]: d for d in yaml.safe_load(
        view.view.resolve().read_text())['Visualization Manager']['Displays']}
    assert 'Pose' not in displays and 'MarkerArray' not in displays, 'nothing publishes them'
    measured = displays['PointStamped']['Topic']
    assert measured['Value'] == topics.TIP_MEASURED.name
    assert measured['Reliability Policy'].replace(' ', '_').upper() == \
        topics.TIP_MEASURED.subscription_qos.reliability.name
    assert displays['RobotModel']['Description Topic']['Value'] == 'robot_description'


def test_prefixed_view_without_a_prefix_is_the_text_itself():
    text = (share_dir() / 'rviz' / 'sim.rviz').read_text()
    assert prefixed_view(text, '') is text


@pytest.mark.parametrize('links, message', [
    (('gripper',), "no link 'gripper' to leave out"),
    (('base_link',), "link 'base_link' cannot be left out, joint 'base_mount_joint'"),
])
def test_leaving_out_a_link_that_is_not_a_leaf_is_refused(links, message):
    with pytest.raises(ValueError, match=message):
        urdf_without_links(URDF.read_text(), links)


# ---------------------------------------------------------------------- real nodes

# (launch arguments, the prefix every frame of that stack must carry)
STACK_A = (('--namespace', 'left'), 'left/')                  # the default in a namespace
STACK_B = (('--namespace', 'right', '--frame-prefix', 'arm2_'), 'arm2_')


def test_two_namespaced_stacks_publish_disjoint_prefixed_frames(tmp_path):
    robot = load_robot(default_robot_file())
    # quasi_static: no physics timer, the lightest simulator
    launchers = [launch_stack(tmp_path / f'{name}.log', 'sim', *arguments,
                              '--arg', 'rviz:=false', '--arg', 'mode:=quasi_static',
                              '--param', 'simulator:publish_rate:=10.0')
                 for name, (arguments, _) in (('a', STACK_A), ('b', STACK_B))]
    rclpy.init()
    node = rclpy.create_node('frame_probe')
    try:
        received = {ns: {'tf': [], 'pose': [], 'markers': []} for ns in ('left', 'right')}
        tf_messages = []
        node.create_subscription(topics.TF.msg_type, topics.TF.name, tf_messages.append,
                                 topics.TF.qos)
        for ns, kept in received.items():
            node.create_subscription(topics.TIP_POSE.msg_type, f'/{ns}/{topics.TIP_POSE.name}',
                                     kept['pose'].append, topics.TIP_POSE.subscription_qos)
            node.create_subscription(
                topics.BACKBONE_MARKERS.msg_type, f'/{ns}/{topics.BACKBONE_MARKERS.name}',
                kept['markers'].append, topics.BACKBONE_MARKERS.subscription_qos)
        logs = []
        node.create_subscription(Log, '/rosout', logs.append, qos_profile_rosout_default)
        target = node.create_publisher(topics.TIP_TARGET.msg_type,
                                       f'/left/{topics.TIP_TARGET.name}', topics.TIP_TARGET.qos)

        def parents():
            return {t.header.frame_id for m in tf_messages for t in m.transforms}
        a_base, b_base = (prefix + robot.base.frame_id for _, prefix in (STACK_A, STACK_B))
        spin_until(node, lambda: {a_base, b_base} <= parents() and all(
            kept['pose'] and kept['markers'] for kept in received.values())
            and target.get_subscription_count() >= 1, 'both stacks on /tf and their topics')

        frames = {}
        for (_, prefix), ns in ((STACK_A, 'left'), (STACK_B, 'right')):
            base = prefix + robot.base.frame_id
            ours = [t for m in tf_messages for t in m.transforms if t.header.frame_id == base]
            frames[ns] = {base} | {t.child_frame_id for t in ours}
            assert frames[ns] == {base, f'{prefix}tip_link'} | {
                f'{prefix}vertebra_{i}' for i in range(len(robot.vertebra_positions))}
            assert {m.header.frame_id for m in received[ns]['pose']} == {base}
            assert {marker.header.frame_id for m in received[ns]['markers']
                    for marker in m.markers} == {base}
        assert not frames['left'] & frames['right']
        # nothing else on /tf: no unprefixed frame is left from either stack
        assert parents() == {a_base, b_base}

        # The controller of stack A takes targets in its own base frame only.
        tip = received['left']['pose'][-1].pose.position
        target.publish(PointStamped(header=Header(frame_id=robot.base.frame_id), point=tip))
        spin_until(node, lambda: any(
            log.name.endswith('tension_controller') and
            f"is not the base frame '{a_base}'" in log.msg for log in logs),
            'the controller rejecting a target in the unprefixed base_link')
        target.publish(PointStamped(header=Header(frame_id=a_base), point=tip))
        spin_until(node, lambda: any(
            log.name.endswith('tension_controller') and 'tip-position mode' in log.msg
            for log in logs), 'the controller accepting a target in its prefixed base frame')
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
        codes = [interrupt(launcher) for launcher in launchers]
    assert codes == [0, 0], [(tmp_path / f'{n}.log').read_text() for n in ('a', 'b')]


def test_the_hardware_bridge_stamps_the_measured_tip_in_its_prefixed_base_frame(tmp_path):
    from tendon_robot_sim.emulator.endpoints import PtyEndpoint
    from tendon_robot_sim.emulator.rig import EmulatedRig
    from tendon_robot_sim.nodes.hardware_bridge_node import HardwareBridgeNode
    from tendon_robot_sim.protocol.mounting import sensor_mount

    robot = load_robot(default_robot_file())
    with EmulatedRig(robot, sensor_mount(URDF), PtyEndpoint(str(tmp_path / 'motors')),
                     PtyEndpoint(str(tmp_path / 'sensor'))) as rig:
        context = rclpy.Context()
        rclpy.init(context=context)
        bridge = HardwareBridgeNode(context=context, namespace='left_arm', parameter_overrides=[
            Parameter('motor_port', value=rig.path('motors')),
            Parameter('sensor_port', value=rig.path('sensor')),
            Parameter('frame_prefix', value='left_arm/')])
        for transition in (bridge.trigger_configure, bridge.trigger_activate):
            assert transition() == TransitionCallbackReturn.SUCCESS   # active: publishing
        probe = rclpy.create_node('tip_probe', context=context)
        tips = []
        probe.create_subscription(PointStamped, '/left_arm/tip/measured', tips.append,
                                  topics.TIP_MEASURED.subscription_qos)
        executor = SingleThreadedExecutor(context=context)
        for node in (bridge, probe):
            executor.add_node(node)
        try:
            spin_until(executor, lambda: tips, 'a measured tip')
            assert {tip.header.frame_id for tip in tips} == {'left_arm/base_link'}
        finally:
            executor.shutdown()
            for node in (bridge, probe):
                node.destroy_node()
            rclpy.try_shutdown(context=context)
