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

"""The view node over DDS, without a browser: its limits, its namespace, bad parameters."""

import math

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point
from hostile_view import camera, HostileClient
import pytest
import rclpy
from rclpy.parameter import Parameter
from rclpy.serialization import deserialize_message, serialize_message
from ros_helpers import construct_alone, spinning, wait_for
from tendon_robot_sim import share_dir
from tendon_robot_sim.nodes.displacement_controller_node import DisplacementControllerNode
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.view_node import ViewNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.cdr import CdrError
from tendon_robot_sim.ros.parameters import ConfigurationError
from visualization_msgs.msg import Marker, MarkerArray


@pytest.fixture(scope='module')
def displacement_stack(robot_file):
    rclpy.init()
    robot = Parameter('robot_file', value=str(robot_file))
    controller = DisplacementControllerNode(namespace='left_arm', parameter_overrides=[
        robot, Parameter('min_displacement', value=-0.004),
        Parameter('max_displacement', value=0.015)])
    view = ViewNode(namespace='left_arm', parameter_overrides=[
        robot, Parameter('drive', value='displacement'), Parameter('port', value=0)])
    with spinning(controller, view):
        yield view


def test_displacement_sliders_take_the_running_controllers_limits(displacement_stack):
    view = displacement_stack
    command = wait_for(lambda: view.page.commands and view.page.commands.command,
                       "the displacement controller's limits")
    assert command.field == 'position' and command.unit == 'm'
    assert command.low.tolist() == [-0.004] * 4 and command.high.tolist() == [0.015] * 4
    slider = view.page.commands.sliders['t0']
    assert (slider.min, slider.max) == (-0.004, 0.015)
    # the page says which stack it drives, with the topic resolved in its namespace
    assert '**Stack `/left_arm`**' in view.page.heading.content
    assert '`/left_arm/tendon/command/displacement`' in view.page.heading.content
    with pytest.raises(ValueError, match='0.016'):
        command.checked('t0', 0.016)


def test_a_setpoint_the_simulator_rejects_shows_in_the_page():
    """
    Show the simulator's rejection of a setpoint in the page, not only in the log.

    The PCR's motor slider reaches 90 deg (the motors' limit), where one motor alone leaves
    the robot's reach.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    pcr = Parameter('robot_file', value=str(share_dir() / 'config' / 'pcr_6rus.yaml'))
    simulator = SimulatorNode(context=context, namespace='pcr', parameter_overrides=[pcr])
    view = ViewNode(context=context, namespace='pcr', parameter_overrides=[
        pcr, Parameter('drive', value='setpoint'), Parameter('port', value=0)])
    elsewhere = SimulatorNode(context=context, parameter_overrides=[pcr])   # another stack
    with spinning(simulator, view, elsewhere, context=context):
        # the simulator and the view itself (it shows commands others send) listening
        wait_for(lambda: view.command_pub.get_subscription_count() == 2,
                 'the simulator listening to the sliders')
        assert view.command.high[0] == pytest.approx(math.pi / 2)
        view._send_command('motor_1', math.pi / 2)      # as the slider at its end does
        shown = wait_for(lambda: 'did not converge' in view.page.diagnostics.content
                         and view.page.diagnostics.content, "the simulator's rejection")
        assert '**WARN** `simulator`' in shown and 'rejected setpoint' in shown
        elsewhere.get_logger().warning('rejected setpoint: of another stack')
        view.get_logger().warning('the view itself')
        wait_for(lambda: view.page._warnings, 'the warnings taken')
        assert 'another stack' not in view.page.diagnostics.content
        assert 'the view itself' not in view.page.diagnostics.content


@pytest.mark.parametrize('overrides, message', [
    ([Parameter('drive', value='tension'),
      Parameter('robot_file', value=str(share_dir() / 'config' / 'pcr_6rus.yaml'))],
     'parameter drive: tension needs a robot pulled by tendons'),
    ([Parameter('drive', value='fast')], 'parameter drive: must be one of'),
    ([Parameter('host', value='no.such.host.invalid')], 'parameter host: cannot serve on'),
    ([Parameter('robot_file', value='/no/such/robot.yaml')], 'robot.yaml')])
def test_bad_parameters_stop_the_view_with_a_clear_message(overrides, message):
    with pytest.raises(ConfigurationError, match=message):
        construct_alone(lambda context: ViewNode(context=context, parameter_overrides=[
            Parameter('port', value=0), *overrides]))


def _marker_array(frame_id: str):
    marker = Marker(ns='backbone', type=Marker.LINE_STRIP,
                    points=[Point(x=0.01 * i, z=0.002 * i * i) for i in range(5)])
    marker.header.frame_id = frame_id
    marker.pose.orientation.w = marker.scale.x = 1.0
    return MarkerArray(markers=[marker])


def test_markers_in_another_encoding_are_read_by_rclpy():
    """
    Markers that are not plain CDR (XCDR version 2, from another rmw) are still drawn.

    The view's own reader refuses them; rclpy reads them. The message is one whose fields all
    fall aligned in both versions, so the same bytes under a version 2 header are that message.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    try:
        view = ViewNode(context=context, parameter_overrides=[Parameter('port', value=0)])
        try:
            msg, data = next((m, b'\x00\x07' + serialize_message(m)[2:]) for m in map(
                _marker_array, ('b' * n for n in range(1, 9)))
                if deserialize_message(b'\x00\x07' + serialize_message(m)[2:],
                                       MarkerArray) == m)
            with pytest.raises(CdrError, match='not plain CDR'):
                view.read_markers(data)
            view._on_markers(data)
            assert view.frame_id == msg.markers[0].header.frame_id
            assert view.page.render()
            drawn = view.page.markers.items[('backbone', 0)]
            assert drawn.points[-1, 1] == pytest.approx([0.04, 0.0, 0.032], abs=1e-7)  # float32
        finally:
            view.destroy_node()
    finally:
        context.try_shutdown()


def test_the_diagnostics_kept_and_sent_are_bounded_and_expire():
    """
    Bound what the view keeps and sends of ``/diagnostics`` (issue 37).

    It kept every status name ever seen and sent them all in the page heading: 50 new names
    per message took the view from 226 MB to 525 MB, and a page opened afterwards received
    one 66 MB message. Now statuses expire, the view keeps at most a bounded number, and a
    page gets at most a screenful, each line cut to a readable length.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    view = ViewNode(context=context, parameter_overrides=[
        Parameter('port', value=0), Parameter('status_timeout', value=2.0)])
    source = rclpy.create_node('diagnostics_source', context=context)
    publisher = source.create_publisher(DiagnosticArray, topics.DIAGNOSTICS.name,
                                        topics.DIAGNOSTICS.qos)
    with spinning(view, source, context=context):
        wait_for(lambda: publisher.get_subscription_count() >= 1, 'the view listening')
        long_message = 'x' * 100_000
        for batch in range(40):
            publisher.publish(DiagnosticArray(status=[DiagnosticStatus(
                level=DiagnosticStatus.WARN, name=f'/node{batch}x{i}: part',
                message=long_message, hardware_id='h') for i in range(50)]))
        wait_for(lambda: '/node39x49: part' in view.statuses, 'the last statuses taken')
        assert len(view.statuses) <= 100
        wait_for(lambda: 'more statuses' in view.page.diagnostics.content,
                 'the heading refreshed')
        lines = view.page.diagnostics.content.splitlines()
        assert len(lines) <= 12 and len(view.page.diagnostics.content) < 5_000, \
            (len(lines), len(view.page.diagnostics.content))
        with HostileClient(view.page.port) as page:
            page.send_message(camera())
            texts = wait_for(lambda: [t for t in page.texts() if '/node' in t],
                             'the heading sent to a page')
            assert max(len(t) for t in texts) < 5_000
        # nothing renews them: they expire, from the view and from the page
        wait_for(lambda: len(view.statuses) == 0, 'the statuses expired')
        wait_for(lambda: '/node' not in view.page.diagnostics.content, 'the heading emptied')


def test_a_stack_without_a_model_node_is_told_what_it_lacks():
    """
    Say that no node publishes ``backbone/markers`` rather than "not yet", forever.

    Beside a hardware stack started without ``view:=true`` (a bridge publishing
    ``tendon/state``, no model node) the page said "no backbone/markers yet: is the stack
    running?" for as long as it ran. Once a node publishes the topic, "yet" is true again.
    """
    context = rclpy.Context()
    rclpy.init(context=context)
    view = ViewNode(context=context, namespace='bench',
                    parameter_overrides=[Parameter('port', value=0)])
    bridge = rclpy.create_node('hardware_bridge', namespace='bench', context=context)
    bridge.create_publisher(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                            topics.TENDON_STATE.qos)
    with spinning(view, bridge, context=context):
        said = wait_for(lambda: 'no node publishes `/bench/backbone/markers`'
                        in view.page.diagnostics.content and view.page.diagnostics.content,
                        'the missing publisher said')
        assert f'on ROS domain {context.get_domain_id()}' in said and 'model' in said, said
        assert 'backbone/markers` yet' not in said, said
        assert 'publishes `/bench/tendon/state`' not in said, said   # the bridge does
        bridge.create_publisher(topics.BACKBONE_MARKERS.msg_type, topics.BACKBONE_MARKERS.name,
                                topics.BACKBONE_MARKERS.qos)
        wait_for(lambda: 'backbone/markers` yet' in view.page.diagnostics.content,
                 'a publisher that has sent nothing yet')


def _view_and_state_publisher():
    """Return a context, a view in it, a node ``simulator`` and its ``tendon/state`` publisher."""
    context = rclpy.Context()
    rclpy.init(context=context)
    view = ViewNode(context=context, parameter_overrides=[Parameter('port', value=0)])
    stack = rclpy.create_node('simulator', context=context)
    state = stack.create_publisher(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                   topics.TENDON_STATE.qos)
    return context, view, stack, state


@pytest.mark.parametrize('restarted', [True, False], ids=['restarted', 'stalled'])
def test_the_sliders_take_the_state_of_a_stack_that_restarted_not_of_one_that_stalled(
        restarted):
    """
    QA: after a stack restarted, the sliders kept the commands sent to the stack that stopped.

    They took the values of the first ``tendon/state`` only once: t0 at 5 N (the old stack's
    tension) stayed on the slider while the restarted stack pulled nothing, its live value 0.
    A stack that stalled for seconds (the same publisher after the silence: a loaded machine)
    is where it was: the sliders keep where the user left them (CI: a second browser tab
    showed a stalled stack's tensions, not the slider at max_tension).
    """
    context, view, stack, state = _view_and_state_publisher()
    names = ['t0', 't1', 't2', 't3']

    def slider():
        return view.page.commands.sliders['t0'].value

    with spinning(view, stack, context=context):
        wait_for(lambda: state.get_subscription_count() >= 1, 'the view listening')
        wait_for(lambda: state.publish(topics.TENDON_STATE.msg_type(
            name=names, effort=[5.0, 0.0, 0.0, 0.0])) or slider() == 5.0,
            'the sliders at the first stack state')
        # the stack stops: the page says so ...
        wait_for(lambda: 'no `tendon/state` for' in view.page.diagnostics.content,
                 'the stopped stack said stale')
        if restarted:   # a publisher of its own, as a new node's
            stack.destroy_publisher(state)
            state = stack.create_publisher(topics.TENDON_STATE.msg_type,
                                           topics.TENDON_STATE.name, topics.TENDON_STATE.qos)
            wait_for(lambda: state.get_subscription_count() >= 1, 'the view listening again')
        # ... and the restarted one starts at rest; the stalled one goes on
        wait_for(lambda: state.publish(topics.TENDON_STATE.msg_type(
            name=names, effort=[0.0] * 4)) or 'no `tendon/state` for'
            not in view.page.diagnostics.content, 'the stack heard again')
        # the page's refresh that took the silence line away showed what the state set
        if restarted:
            wait_for(lambda: slider() == 0.0, "the sliders at the restarted stack's state")
        else:
            assert slider() == 5.0


def _stamped_state(stamp: float, value: float):
    """Return a ``tendon/state`` of the rod stamped ``stamp`` [s], t0 pulled at ``value`` N."""
    msg = topics.TENDON_STATE.msg_type(name=['t0', 't1', 't2', 't3'],
                                       effort=[value, 0.0, 0.0, 0.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(round(stamp * 1e9), 10**9)
    return msg


def test_the_plot_is_in_the_time_of_the_states_stamps_not_of_their_arrival():
    """
    QA: the plot put each ``tendon/state`` at its arrival (the view's steady clock).

    A simulation at 10 x real time showed 1 s of plot for 10 s of motion; a stall that
    bunched the messages put them at one instant. States stamped 0.0, 0.1, .., 1.0 and sent
    in a burst are plotted at 0.0 .. 1.0 (1 s back to now, the newest stamp); an unstamped
    one at its arrival on the view's clock (a ROS time, simulated with ``use_sim_time``).
    """
    context, view, stack, state = _view_and_state_publisher()
    stamps = [0.1 * k for k in range(11)]    # the value of t0 tells which state it is

    def plotted() -> dict[float, float]:
        """Return the samples of the page's history: time by t0's value."""
        with view.page.lock:
            return {float(v[0]): t for t, v in view.page.state_history.samples}

    def burst() -> None:
        for k, stamp in enumerate(stamps):
            state.publish(_stamped_state(stamp, float(k)))

    seen = [None]

    def last_state_plotted() -> bool:
        """Best effort: a burst again once nothing more came of the last (lost, or none yet)."""
        now = plotted()
        if 10.0 in now:
            return True
        if now == seen[0]:
            burst()     # its stamps start the plot over
        seen[0] = now
        return False

    def burst_plotted():
        """Return (samples, plot data) once the plot has the history's states, the last in."""
        samples, plot = plotted(), view.page.state_plot
        if 10.0 in samples and plot is not None and len(plot.data[0]) == len(samples):
            return samples, plot.data
        return None

    with spinning(view, stack, context=context):
        wait_for(lambda: state.get_subscription_count() >= 1, 'the view listening')
        wait_for(last_state_plotted, 'the last state of a burst')
        # a burst sent again while one was under way may still come: the plot is compared
        # with the history at the same look (compared with an earlier look of the history, a
        # loaded CI waited 120 s for a plot of as many states)
        samples, data = wait_for(burst_plotted, 'the burst plotted')
        assert samples == pytest.approx({k: stamps[int(k)] for k in samples}), samples
        times = dict(zip(data[1], data[0]))    # seconds before the newest stamp, by t0
        assert times == pytest.approx({k: stamps[int(k)] - 1.0 for k in times}), times
        # unstamped: at its arrival on the view's clock
        before = view.get_clock().now().nanoseconds * 1e-9
        wait_for(lambda: 20.0 in plotted() or state.publish(_stamped_state(0.0, 20.0)),
                 'the unstamped state')
        after = view.get_clock().now().nanoseconds * 1e-9
        assert before <= plotted()[20.0] <= after
