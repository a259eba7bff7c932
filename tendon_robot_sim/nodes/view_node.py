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
The browser view of a running stack: a web page (viser) that draws and steers the robot.

Subscribes (sensor-data QoS for measurements, REP 2003) ``backbone/markers``,
``world/markers`` (transient local: the obstacles a simulator published at its start),
``contact/markers`` (the contact forces, arrows), ``tip/pose``, ``tip/measured``,
``tendon/state``, ``tip/target``, ``/diagnostics``, ``/rosout`` (the warnings of the
stack's nodes: a setpoint the simulator rejects) and the topic its sliders command, and
serves a page on ``http://host:port`` with the robot's markers, the obstacles and the contact
forces, the tip frames, a plot of the last seconds, one slider per input and, with the
tension controller, a draggable tip target. What the sliders command is the ``drive``
(:mod:`tendon_robot_sim.view.inputs`): ``tendon/command/tension`` (effort, N, within the
description's ``max_tension``), ``tendon/command/displacement`` (position, m, within the
running displacement controller's ``min_displacement`` .. ``max_displacement``, asked for
through its parameter service), ``tendon/setpoint`` in the robot's own input (motor angles,
pressures) or nothing. Publishers are reliable; only a user's move in a page publishes, so
a page that closes (or the view that stops) leaves the robot as it is: a hardware bridge's
watchdog still governs. When the hardware bridge's ``~/stop`` service exists, the page
offers Stop and Resume, unless it only watches (``drive`` none). The page logic is ROS-free
(:mod:`tendon_robot_sim.view`).

Who may command (docs/viewer.md, Security; :mod:`tendon_robot_sim.view.guard`): pages of this
machine's names and of the view's own origin only; with the token of the printed address
when the view commands real hardware (``hardware``, set by the hardware stack, or once the
bridge's services appear) or listens beyond loopback; from other machines only with
``remote_control`` once it commands hardware (a hardware stack refuses to start beyond
loopback without it: :func:`check_parameters`). The address with the token is printed on the
terminal, never logged (``/rosout`` is recorded). The ``/diagnostics`` statuses expire after
``status_timeout`` and are kept and shown bounded (:class:`~tendon_robot_sim.view.page.
StatusBoard`).
"""

from pathlib import Path
import time

from geometry_msgs.msg import Point
import numpy as np
from rcl_interfaces.msg import Log
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter_client import AsyncParameterClient
from rclpy.qos import QoSProfile
from rclpy.serialization import deserialize_message
from std_msgs.msg import Header
from std_srvs.srv import Trigger

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import (ACTUATIONS, INPUT_LIMITS, load_any_description)
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.cdr import CdrError, Decoder
from tendon_robot_sim.ros.parameters import ConfigurationError, declare, Param
from tendon_robot_sim.ros.runner import events_executor, run_node, timer_callback
from tendon_robot_sim.ros.throttle import FaultWarnings
from tendon_robot_sim.view.guard import is_loopback
from tendon_robot_sim.view.inputs import command_of, DRIVES
from tendon_robot_sim.view.page import (Expected, in_namespace, node_of_logger, plotted_of,
                                        StatusBoard, ViewPage)

NODE_NAME = 'view'
# What each drive's sliders publish on.
DRIVE_TOPICS = {'tension': topics.TENDON_COMMAND,
                'displacement': topics.TENDON_DISPLACEMENT_COMMAND,
                'setpoint': topics.TENDON_SETPOINT}
DRIVE_NOTES = {'tension': 'the tension controller', 'displacement':
               'the displacement controller', 'setpoint': 'the simulator, no controller',
               'none': 'nothing: watching only'}
LOOKUP_PERIOD = 1.0   # s between two looks for the bridge's services and the limits
# ROS's own log topic (every node publishes on it, rcl's rosout QoS: reliable, kept 10 s): the
# page shows the warnings of its stack's nodes, e.g. the simulator rejecting a setpoint
ROSOUT, ROSOUT_QOS = '/rosout', QoSProfile(depth=100)
# What a stack lacks when no node publishes a topic the page heeds (docs/ros_interface.md,
# Topics: who publishes): a hardware stack started without view:=true has no model node, and
# nothing else draws its robot
PUBLISHED_BY = {
    topics.BACKBONE_MARKERS.name: 'the stack has no simulator and no model node (a hardware '
    'stack starts `model` with view:=true): nothing draws the robot',
    topics.TENDON_STATE.name: 'no simulator or hardware bridge runs in this namespace (is '
    'the stack in another namespace, or on another ROS_DOMAIN_ID?)'}
LOG_LEVELS = {Log.WARN: 'WARN', Log.ERROR: 'ERROR', Log.FATAL: 'FATAL'}

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file (inputs and their limits: '
          'max_tension, pressures, motor angles); empty: the package default '
          'config/robot.yaml'),
    Param('drive', 'tension', '', 'what the sliders command: tension = tendon/command/'
          'tension (the tension controller; also the tip target), displacement = tendon/'
          'command/displacement (the displacement controller), setpoint = tendon/setpoint '
          "in the robot's own input (no controller: a parallel or bellows robot), none = "
          'watch only', choices=DRIVES),
    Param('host', '127.0.0.1', '', 'address the web page is served on; 127.0.0.1: this '
          'machine only; beyond loopback (0.0.0.0) a page needs the token of the printed '
          'address, a warning at start says what it can command, and a view of real '
          'hardware needs remote_control'),
    Param('port', 8080, '', 'port of the web page; taken: the next free one (logged); 0: '
          'any free port', range=(0, 65535)),
    Param('scene_rate', 40.0, 'Hz', 'most scene updates sent to the page per second (the '
          'newest markers, of the 50 Hz the simulator publishes)', range=(1.0, 200.0)),
    Param('refresh_rate', 5.0, 'Hz', 'updates per second of the plot, the live values and '
          'the diagnostics', range=(0.5, 50.0)),
    Param('plot_window', 10.0, 's', 'the plot shows the last seconds of tendon/state and '
          'the tip error', range=(1.0, 600.0)),
    Param('displacement_controller', 'displacement_controller', '', 'node (in this '
          'namespace) whose min_displacement and max_displacement bound the displacement '
          'sliders'),
    Param('hardware_bridge', 'hardware_bridge', '', 'node (in this namespace) whose ~/stop '
          'and ~/resume the page offers once they exist'),
    Param('hardware', False, '', 'the stack drives real hardware (the hardware stack sets '
          'it; it turns true by itself once the hardware bridge serves ~/stop): a page needs '
          'the token of the printed address, and a host beyond loopback needs remote_control'),
    Param('remote_control', False, '', 'pages opened from other machines may command real '
          'hardware (with the token); false: they can only watch it'),
    Param('status_timeout', 15.0, 's', 'a /diagnostics status not renewed for this long '
          "leaves the page (and the view's memory)", range=(1.0, 3600.0)),
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings of one '
          'kind (a refused request or page message)', range=(0.0, 3600.0)),
)


def check_parameters(values) -> None:
    """
    Raise ConfigurationError for parameters the view refuses together (``values``: by name).

    A view of real hardware (``hardware``) served beyond loopback needs the explicit
    ``remote_control``: the local launcher checks it before a hardware stack starts.
    """
    if values['hardware'] and not values['remote_control'] and \
            not is_loopback(values['host']):
        raise ConfigurationError(
            f'parameter host: {values["host"]} serves the page of real hardware beyond this '
            'machine; add --param view:remote_control:=true to let pages of other machines '
            'command it (with the token), or serve on 127.0.0.1 and use an SSH tunnel '
            '(docs/viewer.md, Security)')


class ViewNode(Node):
    """The page of one stack (this node's namespace); ``kwargs`` go to rclpy's Node."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self._configure()
        except ConfigurationError:
            self.destroy_node()
            raise

    def _configure(self) -> None:
        self.config = config = declare(self, PARAMS)
        check_parameters(vars(config))
        robot_file = config.robot_file or str(default_robot_file())
        try:
            kind, description = load_any_description(robot_file)
        except RobotDescriptionError as error:
            raise ConfigurationError(str(error)) from None
        self.limits = INPUT_LIMITS[kind](description)
        try:
            self.command = command_of(config.drive, self.limits)
        except ValueError as error:
            raise ConfigurationError(f'parameter {error}') from None
        actuation = ACTUATIONS[kind](description) if kind in ACTUATIONS else None
        steer_tip = (config.drive == 'tension' and actuation is not None
                     and actuation.statics_robot is not None)
        self.command_pub = (self.create_publisher(
            DRIVE_TOPICS[config.drive].msg_type, DRIVE_TOPICS[config.drive].name,
            DRIVE_TOPICS[config.drive].qos) if config.drive in DRIVE_TOPICS else None)
        self.target_pub = (self.create_publisher(
            topics.TIP_TARGET.msg_type, topics.TIP_TARGET.name, topics.TIP_TARGET.qos)
            if steer_tip else None)
        if steer_tip:
            from tendon_robot_sim.nodes.tension_controller_node import WORKSPACE_RADIUS
            self.base_position = actuation.base_position
            self.workspace_radius = WORKSPACE_RADIUS * actuation.reach
        self.frame_id = ''     # the markers' frame (the stack's base frame) once seen
        self.markers_received = 0
        plotted = plotted_of(self.limits)
        self._warnings = FaultWarnings(self.get_logger(),
                                       lambda: self.config.warning_throttle_period)
        try:
            self.page = ViewPage(
                self._heading(kind, description), warn=self._warnings, host=config.host,
                port=config.port, command=self.command, send_command=self._send_command,
                send_target=self._send_target if steer_tip else None,
                check_target=self._check_target, plotted=plotted,
                plot_window=config.plot_window, hardware=config.hardware,
                remote_control=config.remote_control, expected=Expected(
                    self.limits.names, Path(robot_file).name, 'the stack runs another robot '
                    'than this view: its sliders, bounds and units are wrong and send nothing; '
                    "start the view with the stack's robot description (view --robot FILE)"),
                heeded=(topics.BACKBONE_MARKERS.name, topics.TENDON_STATE.name))
        except ValueError as error:
            raise ConfigurationError(f'parameter {error}') from None
        self.statuses = StatusBoard(config.status_timeout)
        self._subscribe()
        steady = Clock(clock_type=ClockType.STEADY_TIME)
        # the timers wait in the main thread for viser's loop (ViewPage.in_loop), where a
        # stop signal interrupts them: timer_callback ends them quietly, as the simulator's
        self.create_timer(1.0 / config.scene_rate, timer_callback(self.page.render),
                          clock=steady)
        self.create_timer(1.0 / config.refresh_rate, timer_callback(self._refresh),
                          clock=steady)
        self.limits_client = self.bridge_clients = None
        if config.drive == 'displacement':
            self.limits_client = AsyncParameterClient(self, config.displacement_controller)
        self.bridge_clients = {service: self.create_client(
            Trigger, f'{config.hardware_bridge}/{service}') for service in ('stop', 'resume')}
        self._asked_limits = False
        self.create_timer(LOOKUP_PERIOD, timer_callback(self._look_around), clock=steady)
        if self.page.port_taken:
            self.get_logger().warning(self.page.port_taken)
        self.get_logger().info(
            f'serving the view of {self.get_namespace()} on {config.host} port '
            f'{self.page.port} (drive {config.drive}: {DRIVE_NOTES[config.drive]}); its '
            'address is printed on the terminal')
        if not self.page.guard.loopback:
            self.get_logger().warning(
                f'the view listens beyond this machine ({config.host}): anyone on the network '
                f'who has its address with the token can {self._powers()}; without the token '
                'nothing is served. Prefer 127.0.0.1 and an SSH tunnel (docs/viewer.md)')
        # printed, not logged: /rosout (and every bag of it) would keep the token
        print(f'view of {self.get_namespace()} on {self.page.address}', flush=True)

    def _powers(self) -> str:
        """Say what a page of this view can command."""
        powers = []
        if self.command_pub is not None:
            powers.append(f'publish on {self.command_pub.topic_name} (within the '
                          "robot's limits)")
        if self.target_pub is not None:
            powers.append(f'set tip targets on {self.target_pub.topic_name}')
        if self.config.drive != 'none':
            powers.append(f'press Stop and Resume of {self.config.hardware_bridge} once it '
                          'runs')
        return ', '.join(powers) or 'watch the robot (nothing is commanded)'

    def _heading(self, kind: str, description) -> str:
        namespace = self.get_namespace()
        name = getattr(description, 'name', kind)
        lines = [f'**Stack `{namespace}`**: robot {name} ({kind})']
        if self.command_pub is not None:
            lines.append(f'sliders -> `{self.command_pub.topic_name}` '
                         f'({DRIVE_NOTES[self.config.drive]})')
        else:
            lines.append('watching only: nothing is published')
        if self.target_pub is not None:
            lines.append(f'tip target -> `{self.target_pub.topic_name}`')
        return '  \n'.join(lines)

    def _subscribe(self) -> None:
        # the markers as bytes, read by a Decoder: rclpy's objects cost most of the view's time
        self.read_markers = Decoder(topics.BACKBONE_MARKERS.msg_type)
        # the topics the page heeds, by name: their publishers are counted (_look_around)
        self._heard_from: dict[str, frozenset[bytes]] = {}   # by heeded topic, when heard
        self.heeded = {topics.BACKBONE_MARKERS.name: self.create_subscription(
            topics.BACKBONE_MARKERS.msg_type, topics.BACKBONE_MARKERS.name, self._on_markers,
            topics.BACKBONE_MARKERS.subscription_qos, raw=True)}
        for topic in (topics.WORLD_MARKERS, topics.CONTACT_MARKERS):
            # the obstacles and the contact arrows: a scene each, as RViz's displays
            layer = topic.name.split('/')[0]
            self.create_subscription(topic.msg_type, topic.name,
                                     lambda msg, layer=layer: self.page.show_layer(
                                         layer, msg.markers),
                                     topic.subscription_qos)
        for topic, callback in ((topics.TIP_POSE, self._on_tip),
                                (topics.TIP_MEASURED, self._on_measured),
                                (topics.TENDON_STATE, self._on_state),
                                (topics.TIP_TARGET, self._on_target),
                                (topics.DIAGNOSTICS, self._on_diagnostics)):
            subscription = self.create_subscription(topic.msg_type, topic.name, callback,
                                                    topic.subscription_qos)
            if topic.name in PUBLISHED_BY:
                self.heeded[topic.name] = subscription
        self.create_subscription(Log, ROSOUT, self._on_log, ROSOUT_QOS)
        if self.command_pub is not None:
            topic = DRIVE_TOPICS[self.config.drive]
            self.create_subscription(topic.msg_type, topic.name, self._on_command, topic.qos)

    # ------------------------------------------------------------------ in

    def _on_markers(self, data: bytes) -> None:
        self.markers_received += 1
        # a stack that restarts (with a robot of other markers: the rod's after the snake's)
        # sends no DELETEALL: its first markers after a silence replace what was drawn, and
        # the scene's scale (frames, grid) follows them
        restarted = self._restarted(topics.BACKBONE_MARKERS.name)
        try:
            msg = self.read_markers(data)
        except CdrError:   # not plain CDR (another rmw's encoding): rclpy reads it
            msg = deserialize_message(data, topics.BACKBONE_MARKERS.msg_type)
        if msg.markers:
            self.frame_id = msg.markers[-1].header.frame_id
        self.page.show_markers(msg.markers, new_robot=restarted)

    def _on_tip(self, msg) -> None:
        p, q = msg.pose.position, msg.pose.orientation
        self.page.show_tip((p.x, p.y, p.z), (q.w, q.x, q.y, q.z))

    def _on_measured(self, msg) -> None:
        self.page.show_measured((msg.point.x, msg.point.y, msg.point.z))

    def _on_target(self, msg) -> None:
        self.page.show_target((msg.point.x, msg.point.y, msg.point.z))

    def _on_state(self, msg) -> None:
        restarted = self._restarted(topics.TENDON_STATE.name)
        self.page.show_state(self._time_of(msg.header.stamp), msg.name, msg.position,
                             msg.effort, new_stack=restarted)

    def _time_of(self, stamp) -> float:
        """
        Return the time [s] a state is plotted at: its stamp (the time of its data).

        Not its arrival: a simulation faster than real time would be squeezed, and messages
        a loaded machine held up bunched at one instant. A stamp of zero (an unstamped
        message) is its arrival on this node's clock (simulated time with use_sim_time).
        """
        if stamp.sec == 0 and stamp.nanosec == 0:
            return self.get_clock().now().nanoseconds * 1e-9
        return stamp.sec + stamp.nanosec * 1e-9

    def _restarted(self, name: str) -> bool:
        """
        Take a message of the heeded topic ``name``; return whether a stack (re)started.

        The first after a silence (the page says it), unless its publishers are those heard
        before it: a stack that stalled (a machine that held it up for seconds) is where it
        was, and the sliders keep the commands where the user left them.
        """
        if not self.page.heard(name, time.monotonic()):
            return False
        publishers = frozenset(bytes(info.endpoint_gid) for info in
                               self.get_publishers_info_by_topic(self.heeded[name].topic_name))
        known, self._heard_from[name] = self._heard_from.get(name), publishers
        return known is None or not publishers & known

    def _on_command(self, msg) -> None:
        values = getattr(msg, self.command.field) if self.command is not None else ()
        if msg.name and len(values) == len(msg.name):
            self.page.show_command(dict(zip(msg.name, map(float, values))))

    def _on_diagnostics(self, msg) -> None:
        now = time.monotonic()
        for status in msg.status:
            if in_namespace(status.name, status.hardware_id, self.get_namespace()):
                # the level is a byte in rclpy's DiagnosticStatus
                level = ord(status.level) if isinstance(status.level, bytes) else status.level
                self.statuses.take(now, int(level), status.name, status.message)

    def _on_log(self, msg) -> None:
        node = node_of_logger(msg.name, self.get_namespace())
        if msg.level in LOG_LEVELS and node is not None and node != self.get_name():
            self.page.show_warning(node, LOG_LEVELS[msg.level], msg.msg)

    # ------------------------------------------------------------------ out

    def _send_command(self, name: str, value: float) -> None:
        """Publish one input's checked value (a user moved its slider)."""
        msg = DRIVE_TOPICS[self.config.drive].msg_type(
            header=Header(stamp=self.get_clock().now().to_msg()), name=[name])
        setattr(msg, self.command.field, [value])
        self.command_pub.publish(msg)

    def _check_target(self, point: np.ndarray) -> str | None:
        if not np.all(np.isfinite(point)):
            return f'{point.tolist()} is not a position'
        if np.linalg.norm(point - self.base_position) > self.workspace_radius:
            return (f'{np.round(point, 4).tolist()} m is farther than '
                    f'{self.workspace_radius:g} m from the base')
        return None

    def _send_target(self, point: np.ndarray) -> None:
        self.target_pub.publish(topics.TIP_TARGET.msg_type(
            header=Header(stamp=self.get_clock().now().to_msg(), frame_id=self.frame_id),
            point=Point(x=float(point[0]), y=float(point[1]), z=float(point[2]))))

    def _refresh(self) -> None:
        now = time.monotonic()
        self.page.show_diagnostics(*self.statuses.shown(now))
        self.page.refresh(now)

    def _look_around(self) -> None:
        """Say which heeded topics no node publishes; offer Stop/Resume; ask the limits."""
        domain = self.context.get_domain_id()
        self.page.unpublished({
            name: f'no node publishes `{subscription.topic_name}` on ROS domain {domain}: '
                  f'{PUBLISHED_BY[name]}'
            for name, subscription in self.heeded.items()
            if self.count_publishers(subscription.topic_name) == 0})
        if self.page.hardware is None and self.bridge_clients['stop'].service_is_ready():
            bridge = self.bridge_clients['stop'].srv_name.rpartition('/')[0]
            if self.page.guard.commands_hardware():
                self.get_logger().warning(
                    f'the hardware bridge {bridge} runs in this stack: from now on a page '
                    'commands only with the token of the printed address'
                    + ('' if self.config.remote_control or self.page.guard.loopback else
                       ', and from this machine only (remote_control is false)'))
            if self.config.drive != 'none':   # a watching page commands nothing: no Resume
                self.page.add_hardware(bridge, self._call_bridge)
        if (self.limits_client is not None and not self._asked_limits
                and self.limits_client.services_are_ready()):
            self._asked_limits = True
            self.limits_client.get_parameters(['min_displacement', 'max_displacement'],
                                              self._on_limits)

    def _on_limits(self, future) -> None:
        values = [v.double_value for v in future.result().values]
        if len(values) != 2 or not values[0] < values[1]:
            self._asked_limits = False   # ask again
            return
        self.command = command_of('displacement', self.limits, tuple(values))
        self.page.set_command(self.command, self._send_command)
        self.get_logger().info(f'displacement sliders: {values[0]:g} .. {values[1]:g} m '
                               f'({self.config.displacement_controller})')

    def _call_bridge(self, service: str) -> None:
        client = self.bridge_clients[service]
        future = client.call_async(Trigger.Request())
        future.add_done_callback(lambda done: self.page.show_answer(
            client.srv_name, done.result().message if done.result() is not None
            else 'no answer'))

    def destroy_node(self) -> None:
        if hasattr(self, 'page'):
            self.page.close()
        super().destroy_node()


def main(args=None) -> int:
    return run_node(ViewNode, NODE_NAME, args, events_executor, exit_on_stop=True)


if __name__ == '__main__':
    raise SystemExit(main())
