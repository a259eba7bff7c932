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
ROS 2 node that simulates a robot of any kind behind the same topics.

Subscribes ``tendon/setpoint`` and publishes ``tendon/state``, ``tip/pose``,
``backbone/markers``, ``/tf``, when ``publish_clock`` is set, ``/clock``, and, with tendon
friction in the model, ``tendon/tip_state`` (without friction that publisher does not exist);
every frame id in them starts with ``frame_prefix``. With a ``world_file``
(:mod:`tendon_robot_sim.models.contact.world`) the model touches its obstacles, and the node
also publishes ``world/markers`` (once, latched), ``contact/markers`` and ``contact/wrench``
(:mod:`tendon_robot_sim.ros.contact_messages`); a model without contact refuses a world at
start (:func:`tendon_robot_sim.models.registry.world_refusal`).
Services ``~/reset`` (std_srvs/Trigger) and ``~/pause`` (std_srvs/SetBool).
The robot file's ``kind`` and the ``mode`` parameter choose the model
(:mod:`tendon_robot_sim.models.registry`), which the node drives only through
:class:`~tendon_robot_sim.models.sim_model.SimModel`:

tendon robot, ``dynamic`` (its default)
    Cosserat rod dynamics, ``integrator`` explicit
    (:class:`~tendon_robot_sim.models.rod.dynamics.explicit.TendonSimulator`, PyElastica) driven by
    the tensions of the latest setpoint (``effort``, N), or implicit
    (:class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator`, BDF-alpha and
    shooting), driven per tendon by a tension (``effort``) or a displacement (``position``, m
    pulled in); ``auto`` takes the implicit one for stiff robots and robots without discs.
tendon robot, ``quasi_static``
    A sequence of static equilibria
    (:class:`~tendon_robot_sim.models.rod.statics.solver.StaticsSolver`, model ``statics_model``),
    one solved on receipt of each setpoint: tensions (``effort``, N) or, when ``effort`` is
    empty, displacements (``position``, m pulled in; the tensions are solved for and must stay
    within ``max_tension``).
tendon robot or ``kind: bellows``, ``cc_dynamic``
    Constant-curvature Lagrange dynamics (:class:`~tendon_robot_sim.models.trunk.dynamics.
    CCDynamics`) driven by tensions (``effort``, N) or bellows pressures (``effort``, Pa).
``kind: pcr_6rus``, ``quasi_static`` (its only mode)
    The forward kinetostatics of the parallel robot
    (:class:`~tendon_robot_sim.models.pcr.kinetostatics.PcrSolver`) for motor
    angles (``position``, rad, names ``motor_1`` .. ``motor_6``); the tip is the platform.
``kind: rolling_joint_snake``, ``dynamic`` (its only mode)
    The snake's Newton-Euler forward dynamics (:class:`~tendon_robot_sim.models.snake.dynamics.
    SnakeDynamics`) driven by cable tensions (``effort``, N).

A model that is not timed (quasi_static) solves each setpoint on receipt, the newest one
when the solves are slower than the setpoints come (its subscription keeps one); a setpoint
it rejects or cannot solve is reported and the last equilibrium stays published.
It has no simulated time: no physics timer, no ``/clock`` (``publish_clock`` must be
false), wall-clock stamps, velocity 0. ``~/reset`` returns to its rest equilibrium;
while paused, setpoints are ignored (not applied later) and a tip wrench waits until
the node runs again.

The publishing timer runs in every mode; a timed model (``dynamic``, ``cc_dynamic``) has
two timers on the steady clock (so the node never waits for a ``/clock`` it publishes
itself), one timer doing both, physics first, when the two rates are equal (the default):

* physics, at ``physics_rate``: advances the simulation so that simulated time
  follows the wall clock times ``real_time_factor``. A tick stops after
  ``PHYSICS_BUDGET`` of its period (at the measured cost per step) so that
  publishing and services stay responsive;
  when the simulation cannot keep up, the backlog is dropped and it simply runs
  slower than real time (use ``publish_clock`` and ``use_sim_time`` then). With
  ``publish_clock`` a tick never runs more than ``MAX_BACKLOG_PERIODS`` ticks' worth
  ahead: after a stall of the machine the simulation resumes where it stopped rather
  than sprinting over the stall with one state published for all of it.
  With ``tip_tolerance`` (implicit integrator) dt adapts to the tolerance within
  that budget: when the steps the tolerance asks do not fit, the model takes
  coarser ones and a WARN status ``<node>: step control`` on ``/diagnostics``
  says so (OK again once they fit).
* publishing, at ``publish_rate``: one message per topic from the latest state, on each
  topic that has a subscriber (one nobody subscribes to costs nothing; a subscriber that
  comes gets the next tick's message, and the velocity on ``tendon/state`` starts again
  from 0 as at the start).
  With ``publish_clock`` the rate is also capped in simulated time while running
  (at most ``publish_rate`` messages per simulated second), so that a simulation
  slower than real time does not spend its time publishing near-copies.
  Each tick first checks the state the model would publish
  (:meth:`~tendon_robot_sim.models.sim_model.SimModel.state_problem`, ``cc_dynamic``: a
  section coiled past its self-contact bend): while it is wrong, a WARN status
  ``<node>: <check>`` (``self contact``) on ``/diagnostics`` and a throttled warning; OK
  once it is right again; the simulation runs on.

Simulated time on ``/clock`` (and in stamps when ``publish_clock`` is set) is the
total simulated time since the node started; it keeps increasing across
``~/reset`` so that time never jumps back for ``use_sim_time`` users.
"""

import math
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.logging import LoggingSeverity
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from std_msgs.msg import Header
from std_srvs.srv import SetBool, Trigger

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.contact.world import load_world, WorldError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import (check_mode, check_options, create_model,
                                              file_kind, ModelConfigurationError, ModelOptions,
                                              MODELS, UNTIMED_MODES)
from tendon_robot_sim.models.rod.dynamics.simulation import ALPHA_RANGE
from tendon_robot_sim.models.rod.statics.solver import NODE_MODELS as STATICS_MODELS
from tendon_robot_sim.models.sim_model import InputError, SimulationDiverged
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.cdr import JOINT_VALUES
from tendon_robot_sim.ros.contact_messages import (contact_markers_msg, contact_wrench_msgs,
                                                   world_markers_msg)
from tendon_robot_sim.ros.messages import (joint_state_msg, joint_values, markers_msg, time_msg,
                                           tip_pose_msg, transforms_msg, wrench_from_msg)
from tendon_robot_sim.ros.parameters import (check_frame_prefix, ConfigurationError, declare,
                                             FRAME_PREFIX, on_parameters_set, Param,
                                             TIP_WRENCH_BOUND)
from tendon_robot_sim.ros.runner import events_executor, run_node, timer_callback
from tendon_robot_sim.ros.throttle import fault_kind, FaultWarnings

NODE_NAME = 'simulator'
# Fraction of a physics period a tick may spend stepping; the rest is left to
# the publishing timer and the services in the same single-threaded executor.
PHYSICS_BUDGET = 0.8
# Wall-clock cost of one physics step [s]: the first guess, then an exponential
# average of the measured cost with this weight per tick.
INITIAL_STEP_COST = 1e-4
STEP_COST_SMOOTHING = 0.2
# A backlog of more than this many physics periods is dropped: the simulation
# cannot keep up and runs slower than real time instead of sprinting later.
MAX_BACKLOG_PERIODS = 2.0
# How often the achieved real-time factor is checked and, if short, reported [s].
SPEED_REPORT_PERIOD = 10.0
# Least time between two WARN statuses of one check that differ only in their words [s]:
# /diagnostics at about 1 Hz, as diagnostic_updater publishes, not at the publish rate.
STATUS_PERIOD = 1.0

# How often a simulator that publishes /clock looks for another node publishing it [s]: a
# graph query, microseconds.
CLOCK_WATCH_PERIOD = 1.0
# A short speed is reported again only when it changed by more than this fraction.
SPEED_CHANGE = 0.25
# The simulator is the stack's clock: on simulated time without publishing it, its own clock
# would wait for a /clock nobody sends, and every stamp it publishes would stay at 0.
SIM_TIME_WITHOUT_CLOCK = ('true needs publish_clock true: the simulator is the clock source '
                          'and, on simulated time, would stamp everything 0 waiting for a /clock '
                          'nobody publishes (the launch argument use_sim_time:=true sets '
                          'publish_clock and leaves use_sim_time false)')


def speed_report(achieved: float, target: float, reported: float | None,
                 clock_waited: bool) -> str:
    """
    Return the log line of a simulation slower than ``target`` x real time, or ''.

    Said when the simulation first falls short and when its speed has changed by more than
    SPEED_CHANGE since (it once came every 10 s), with what to do about it; the hint on
    ``publish_clock`` only when a node subscribes to ``/clock`` that nobody publishes
    (``clock_waited``): that node's time stands still.
    """
    if achieved >= 0.9 * target:
        return ''
    if reported is not None and abs(achieved - reported) <= SPEED_CHANGE * reported:
        return ''
    line = (f'simulation runs at {achieved:.2g} x real time (target {target:g}): this machine '
            'cannot keep up; for a steady pace set real_time_factor to '
            f'{max(achieved * 0.8, 1e-3):.2g} or less, or simulate a coarser model (a tendon '
            'rod: fewer rod.elements, or mode quasi_static)')
    if clock_waited:
        line += ('; a node subscribes to /clock, which nobody publishes: set publish_clock:=true '
                 'so that its simulated time runs')
    return line


PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file; empty: the package default '
          'config/robot.yaml'),
    Param('world_file', '', '', 'world description YAML file: obstacles the robot touches '
          '(docs/tendon_robot.md, Contact with the world); empty: none. Models with contact: '
          'tendon robot dynamic (either integrator) and quasi_static (any statics_model; auto '
          'takes cosserat); any other refuses a world'),
    Param('contact_arrow_scale', 0.5, 'm/N', 'length of the contact arrows on contact/markers '
          'per newton of contact force (at least 5 mm)', range=(1e-6, 1e3), read_only=False),
    Param('mode', '', '', 'simulation model of the robot kind; empty: the first listed. '
          + '; '.join(f'{kind}: {", ".join(modes)}' for kind, modes in MODELS.items())
          + '. dynamic = Cosserat rod dynamics (see integrator); '
          'quasi_static = the static equilibrium of each setpoint, solved on receipt '
          '(tendon robot: statics_model, tensions or displacements; pcr_6rus: forward '
          'kinetostatics of motor angles); cc_dynamic = constant-curvature Lagrange dynamics '
          'driven by tensions or bellows pressures'),
    Param('statics_model', 'auto', '', 'model of mode quasi_static: discrete = static '
          'twin of the dynamic model (tendons straight between vertebrae), cosserat = '
          'Rucker & Webster rod with continuously routed tendons, kirchhoff = the same '
          'without shear and extension, auto = discrete with vertebra discs, cosserat '
          'without', choices=STATICS_MODELS),
    Param('integrator', 'auto', '', 'time integration of mode dynamic (tendon robot): '
          'explicit = PyElastica position Verlet at its stability step (tensions only), '
          'implicit = BDF-alpha (see alpha) with shooting in arc length at dt (tensions or '
          'displacements), '
          'auto = implicit when the robot has what the explicit one cannot take (no discs, '
          'discs closer together than the nodes of rod.elements, Kelvin-Voigt damping, drag, '
          'tendon friction) or an explicit stable step below 10 us (stiff backbones), explicit '
          'otherwise',
          choices=('auto', 'implicit', 'explicit')),
    Param('dt', 0.0, 's', 'physics time step; 0: the model chooses (explicit: 0.9 of the '
          'stability bound; implicit: 2 ms)', range=(0.0, 0.1)),
    Param('alpha', 0.0, '', 'BDF-alpha parameter of the implicit integrator (Till, Aloi & '
          'Rucker, Real-time dynamics of soft and continuum robots, 2019): 0 = BDF2 (damps what '
          'dt does not resolve), -0.5 = trapezoidal rule (no numerical damping); with the '
          'explicit integrator only 0', range=ALPHA_RANGE),
    Param('tip_tolerance', 0.0, 'm', 'implicit integrator: adaptive dt, the local error '
          'estimate of the tip position per step within this (0: fixed dt); within the '
          'real-time budget, with a diagnostic when the budget forces coarser steps',
          range=(0.0, 1.0)),
    Param('physics_rate', 50.0, 'Hz', 'rate of the physics timer that advances the '
          'simulation to match the wall clock (dynamic mode); a new displacement setpoint is '
          'ramped over one period of it in simulated time (implicit dynamics)',
          range=(1.0, 1000.0)),
    Param('real_time_factor', 1.0, '', 'target simulated seconds per wall-clock second '
          '(the simulation runs slower when it cannot keep up; dynamic mode)',
          range=(0.01, 100.0), read_only=False),
    Param('publish_rate', 50.0, 'Hz', 'rate of tendon/state, tip/pose, backbone/markers and '
          '/tf in wall-clock time; with publish_clock also at most this many per simulated '
          'second', range=(1.0, 500.0)),
    Param('publish_clock', False, '', 'publish simulated time on /clock and stamp messages '
          'with it, for nodes with use_sim_time; dynamic mode only (quasi_static has no '
          'simulated time, stamps with the wall clock and refuses true)'),
    Param('tip_frame', 'tip_link', '', 'frame id of the tip (pcr_6rus: the platform); the '
          'parent is the base frame of the robot description (base.frame_id; base_link for '
          'pcr_6rus and rolling_joint_snake)'),
    Param('vertebra_frame_prefix', 'vertebra_', '', 'vertebra (or link; cc_dynamic: end of '
          'section) i is published as frame <prefix><i>, i = 0 nearest the base'),
    FRAME_PREFIX,
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'setpoints to apply (effort = '
          'tension; in mode quasi_static, position = displacement when effort is empty, so '
          'that a model can follow a tendon/state; pcr_6rus: position = motor angle)'),
    Param('state_topic', topics.TENDON_STATE.name, '', 'tendon displacement, velocity (0 in '
          'mode quasi_static) and tension (pcr_6rus: motor angles, no effort)'),
    Param('tip_state_topic', topics.TENDON_TIP_STATE.name, '', 'tension at the anchor of '
          'each tendon (effort, N), published only by a model with tendon friction (mode '
          'quasi_static, or dynamic on the implicit integrator)'),
    Param('tip_pose_topic', topics.TIP_POSE.name, '', 'tip pose in the base frame'),
    Param('markers_topic', topics.BACKBONE_MARKERS.name, '', 'backbone, disc and tendon '
          'markers (pcr_6rus: rods, cranks, platform; cc_dynamic: one arc per section)'),
    Param('wrench_topic', topics.TIP_WRENCH.name, '', 'external tip force and torque (base '
          "frame), replacing the robot description's tip_load"),
    *TIP_WRENCH_BOUND,
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings about '
          'rejected setpoints (and between two divergence errors, two self-contact warnings), '
          'per kind of fault (one kind never hides another)', range=(0.0, 60.0)),
)


def check_parameters(values) -> None:
    """
    Raise ConfigurationError for ``values`` (by name) that the simulator refuses together.

    At its start, before it builds its model, and in the local launcher before a stack
    starts: ``alpha`` or ``tip_tolerance`` where the explicit integrator runs (the model
    refused them only as the node started, after the launcher had started the controller),
    ``publish_clock`` in a mode without simulated time. The launcher passed
    ``use_sim_time:=true mode:=quasi_static`` (which sets ``publish_clock``), started the
    controller and then the simulator died and stopped the stack.
    """
    robot_file = values['robot_file'] or default_robot_file()
    try:
        kind = file_kind(robot_file)
        mode = check_mode(kind, values['mode'])
        check_options(robot_file, kind, mode, ModelOptions(
            integrator=values['integrator'], alpha=values['alpha'],
            tip_tolerance=values['tip_tolerance'] or None))
    except (RobotDescriptionError, ModelConfigurationError) as error:
        raise ConfigurationError(str(error)) from None
    except InputError as error:
        raise ConfigurationError(f'parameter {error}') from None
    if values['publish_clock'] and mode in UNTIMED_MODES:
        raise ConfigurationError(
            f'parameter publish_clock: mode {mode} has no simulated time to publish on /clock; '
            'set it false (launch argument use_sim_time:=false)')


class SimulatorNode(Node):
    """
    The simulation as a node; ``kwargs`` go to :class:`rclpy.node.Node`.

    Raises
    ------
    ConfigurationError
        A parameter is invalid or the robot file cannot be used; the node is
        destroyed before the error propagates.

    """

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        try:
            self._configure()
        except ConfigurationError:
            self.destroy_node()
            raise

    def _configure(self) -> None:
        self.config = config = declare(self, PARAMS)
        self._warnings = FaultWarnings(self.get_logger(),
                                       lambda: config.warning_throttle_period)
        check_frame_prefix(config.frame_prefix)
        robot_file = config.robot_file or str(default_robot_file())
        check_parameters(vars(config))
        try:
            self.world = load_world(config.world_file) if config.world_file else None
        except WorldError as error:
            # every world the node refuses is named so, as the model's refusals
            raise ConfigurationError(f'world_file: {error}') from None
        # a new displacement is ramped over one physics period of simulated time: a tick's
        # length is the machine's (a loaded one catches up in shorter or longer ticks)
        options = ModelOptions(dt=config.dt or None, statics_model=config.statics_model,
                               integrator=config.integrator, alpha=config.alpha,
                               tip_tolerance=config.tip_tolerance or None, world=self.world,
                               displacement_ramp=1.0 / config.physics_rate)
        try:
            kind, self.mode, self.model = create_model(robot_file, config.mode, options)
        except ModelConfigurationError as error:
            raise ConfigurationError(str(error)) from None
        if self.get_parameter('use_sim_time').value and not config.publish_clock:
            raise ConfigurationError(f'parameter use_sim_time: {SIM_TIME_WITHOUT_CLOCK}')
        # every frame id the node publishes or accepts carries the prefix
        self.base_frame = config.frame_prefix + self.model.base_frame
        self.tip_frame = config.frame_prefix + config.tip_frame
        self.vertebra_frame_prefix = config.frame_prefix + config.vertebra_frame_prefix
        self.real_time_factor = config.real_time_factor
        self.arrow_scale = config.contact_arrow_scale
        on_parameters_set(self, self._on_parameters_set)
        self.add_on_set_parameters_callback(self._refuse_sim_time_without_clock)

        self.state_pub = self.create_publisher(
            topics.TENDON_STATE.msg_type, config.state_topic, topics.TENDON_STATE.qos)
        self.tip_pub = self.create_publisher(
            topics.TIP_POSE.msg_type, config.tip_pose_topic, topics.TIP_POSE.qos)
        # only a model with tendon friction has anchor tensions to send: without one the topic
        # would show in the graph with a publisher and never a message
        self.tip_state_pub = (self.create_publisher(
            topics.TENDON_TIP_STATE.msg_type, config.tip_state_topic,
            topics.TENDON_TIP_STATE.qos) if self.model.reports_tip_effort else None)
        self.marker_pub = self.create_publisher(
            topics.BACKBONE_MARKERS.msg_type, config.markers_topic, topics.BACKBONE_MARKERS.qos)
        self.tf_pub = self.create_publisher(topics.TF.msg_type, topics.TF.name, topics.TF.qos)
        self.clock_pub = (self.create_publisher(topics.CLOCK.msg_type, topics.CLOCK.name,
                                                topics.CLOCK.qos)
                          if config.publish_clock else None)
        self.contact_marker_pub = self.contact_wrench_pub = None
        self._contact_keys: set = set()    # the arrows on contact/markers now
        if self.world is not None:
            self.world_pub = self.create_publisher(
                topics.WORLD_MARKERS.msg_type, topics.WORLD_MARKERS.name, topics.WORLD_MARKERS.qos)
            self.contact_marker_pub = self.create_publisher(
                topics.CONTACT_MARKERS.msg_type, topics.CONTACT_MARKERS.name,
                topics.CONTACT_MARKERS.qos)
            self.contact_wrench_pub = self.create_publisher(
                topics.CONTACT_WRENCH.msg_type, topics.CONTACT_WRENCH.name,
                topics.CONTACT_WRENCH.qos)
        self.setpoint_sub = self.create_subscription(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic, self._on_setpoint,
            topics.TENDON_SETPOINT.qos if self.model.timed else topics.NEWEST_SETPOINT_QOS)
        self.wrench_sub = self.create_subscription(
            topics.TIP_WRENCH.msg_type, config.wrench_topic, self._on_wrench,
            topics.TIP_WRENCH.subscription_qos)
        self.diagnostics_pub = self.create_publisher(
            topics.DIAGNOSTICS.msg_type, topics.DIAGNOSTICS.name, topics.DIAGNOSTICS.qos)
        # each status's last message on /diagnostics ('' when OK) and when it went (monotonic s)
        self._status_warnings: dict[str, tuple[str, float]] = {}
        self.reset_srv = self.create_service(Trigger, '~/reset', self._on_reset)
        self.pause_srv = self.create_service(SetBool, '~/pause', self._on_pause)

        # Simulated seconds since the node started, never reset (clock and stamps).
        self.sim_clock = 0.0
        self.paused = False
        self._pending_wrench = None     # received while paused: applied on resume
        # What became of the setpoints taken, for whoever runs the node in its process (a
        # replay into simulation fails when it rejected them all): its warnings are throttled.
        self.setpoints_applied = self.setpoints_rejected = 0
        self.first_setpoint_rejection = ''
        self._previous = None          # (time, positions) at the last publish
        self._step_cost = INITIAL_STEP_COST   # s of wall time per physics step
        self._anchor()
        self._speed_window = (time.monotonic(), self.sim_clock)
        self._reported_speed = None     # the last real-time factor reported, if any

        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.physics_period = 1.0 / config.physics_rate
        self.publish_period = 1.0 / config.publish_rate
        self._last_publish = None       # sim_clock the last publish was due at
        # the last messages published, updated in place for the next (ros/messages.py)
        self._tip_msg = self._tf_msg = self._markers_msg = None
        self._clock_msg = ClockMsg()
        # the topics of the state, each built and sent only while somebody subscribes to it
        self._state_topics = (self.state_pub, self.tip_state_pub, self.tip_pub, self.tf_pub,
                              self.marker_pub)
        if self.model.timed and config.physics_rate == config.publish_rate:
            # one timer does both (the default): one wake-up a period instead of two, and
            # what is published is the state just stepped to
            self.physics_timer = self.publish_timer = self.create_timer(
                self.physics_period, timer_callback(self._on_tick), clock=steady)
        else:
            self.physics_timer = (self.create_timer(
                self.physics_period, timer_callback(self._on_physics_tick), clock=steady)
                if self.model.timed else None)
            self.publish_timer = self.create_timer(
                self.publish_period, timer_callback(self._on_publish_tick), clock=steady)
        # /clock is absolute: a second stack on simulated time in the same domain (another
        # namespace) publishes there too, and every use_sim_time node follows both clocks
        self.clock_watch_timer = (self.create_timer(
            CLOCK_WATCH_PERIOD, timer_callback(self._watch_clock), clock=steady)
            if self.clock_pub is not None else None)
        if self.world is not None:
            # once: the publisher keeps it for every subscriber to come (transient local)
            self.world_pub.publish(world_markers_msg(self.world, self.base_frame, self._stamp()))
        inputs = self.model.inputs
        world = ('' if self.world is None else
                 f'; world {config.world_file}: {len(self.world.obstacles)} obstacles '
                 f'{self.world.names}')
        self.get_logger().info(
            f'simulating a {kind} robot from {robot_file} (mode {self.mode}, '
            f'{self.model.summary}, {len(inputs.names)} {inputs.noun} {list(inputs.names)}); '
            f'setpoints on {self.setpoint_sub.topic_name}{world}')

    # ------------------------------------------------------------------ input

    def _on_setpoint(self, msg) -> None:
        if self.paused and not self.model.timed:
            return
        inputs = self.model.inputs
        try:
            # the form by the rule replay --simulate checks a bag by; then the values
            field = inputs.check(msg.name, {f: len(getattr(msg, f)) for f in JOINT_VALUES})
            self.model.apply(field, joint_values(msg, field, len(inputs.names), inputs.noun))
        except InputError as error:
            self._reject(str(error))
            return
        self.setpoints_applied += 1

    def _on_wrench(self, msg) -> None:
        try:
            wrench = wrench_from_msg(msg, self.base_frame, self.config.max_tip_force,
                                     self.config.max_tip_torque)
        except InputError as error:
            self._reject(str(error), what='tip wrench')
            return
        if self.paused:
            self._pending_wrench = wrench
        else:
            self._set_wrench(wrench)

    def _set_wrench(self, wrench) -> None:
        try:
            self.model.set_tip_wrench(*wrench)
        except InputError as error:
            self._reject(str(error), what='tip wrench')

    def _reject(self, reason: str, what: str = 'setpoint') -> None:
        if what == 'setpoint':
            self.setpoints_rejected += 1
            self.first_setpoint_rejection = self.first_setpoint_rejection or reason
        # a throttle per kind of fault: a flood of one hides no other
        self._warnings(fault_kind(what, reason), f'rejected {what}: {reason}')

    def _refuse_sim_time_without_clock(self, parameters) -> SetParametersResult:
        # runs before rclpy's TimeSource callback, which would switch the clock on the spot
        if self.clock_pub is None and any(p.name == 'use_sim_time' and p.value is True
                                          for p in parameters):
            return SetParametersResult(successful=False,
                                       reason=f'use_sim_time: {SIM_TIME_WITHOUT_CLOCK}')
        return SetParametersResult(successful=True)

    def _on_parameters_set(self, parameters) -> None:
        # Only these are writable; rclpy has already checked their range.
        for parameter in parameters:
            if parameter.name == 'real_time_factor':
                self.real_time_factor = parameter.value
                self._anchor()
            elif parameter.name == 'contact_arrow_scale':
                self.arrow_scale = parameter.value

    # ------------------------------------------------------------------ physics

    def _anchor(self) -> None:
        """Pace from now: simulated time at this wall instant is the current one."""
        self._anchor_wall = time.monotonic()
        self._anchor_sim = self.sim_clock

    def _on_tick(self) -> None:
        """Physics, then publishing: the one timer of a timed model at equal rates."""
        self._on_physics_tick()
        self._on_publish_tick()

    def _on_physics_tick(self) -> None:
        if not self.paused:
            self._step_to_wall_clock()
        if self.clock_pub is not None:
            self._clock_msg.clock = time_msg(self.sim_clock)   # (rclpy copies at publish)
            self.clock_pub.publish(self._clock_msg)

    def _step_to_wall_clock(self) -> None:
        now = time.monotonic()
        target = self._anchor_sim + (now - self._anchor_wall) * self.real_time_factor
        dt = self.model.dt
        needed = math.floor((target - self.sim_clock) / dt + 1e-9)
        if self.clock_pub is not None:
            # On simulated time a stall is not caught up (the backlog is dropped below): a
            # tick that sprinted over it published one state for all of it, a gap in a
            # recording (seen: 1.4 s at 10 x real time beside other work).
            needed = min(needed, max(1, math.floor(
                MAX_BACKLOG_PERIODS * self.physics_period * self.real_time_factor / dt + 1e-9)))
        # One advance() per tick, as many steps as fit in the budget at the measured
        # cost per step: few calls keep the per-call overhead small.
        affordable = int(PHYSICS_BUDGET * self.physics_period / self._step_cost)
        steps = min(needed, max(1, affordable))
        self._fit_budget(needed / max(1, affordable))
        if steps >= 1:
            try:
                self.model.advance(steps * dt)
            except SimulationDiverged as error:
                self._warnings('diverged', f'{error}. The node reset the simulation to '
                               f'{self.model.rest}; it keeps running and accepts new setpoints.',
                               severity=LoggingSeverity.ERROR)
                self._reset()
                return
            self.sim_clock += steps * dt
            cost = (time.monotonic() - now) / steps
            self._step_cost += STEP_COST_SMOOTHING * (cost - self._step_cost)
        backlog = target - self.sim_clock
        if backlog > MAX_BACKLOG_PERIODS * self.physics_period * self.real_time_factor:
            self._anchor()
        self._report_speed(now)

    def _fit_budget(self, load: float) -> None:
        """Let the model fit its steps to the budget; publish a status when that changes."""
        self._publish_status('step control', self.model.fit_budget(load),
                             'steps within tip_tolerance')

    def _check_state(self) -> None:
        """Publish the model's state check when its finding changes; warn while it is bad."""
        check = self.model.state_check
        if not check:
            return
        problem = self.model.state_problem() or ''
        if problem:
            self._warnings(check, f'{check}: {problem}; the shape published is not the '
                           "robot's (the simulation runs on)")
        self._publish_status(check, problem, self.model.state_valid)

    def _publish_status(self, name: str, warning: str, ok: str) -> None:
        """
        Publish the status ``<node>: <name>``, WARN ``warning`` or ``ok``, when it changes.

        A change of level goes at once; a WARN whose words change (a bend that grows) at most
        every :data:`STATUS_PERIOD`, not with every tick that checks it.
        """
        last, sent = self._status_warnings.get(name, ('', -math.inf))
        now = time.monotonic()
        if warning == last or (warning and last and now - sent < STATUS_PERIOD):
            return
        self._status_warnings[name] = (warning, now)
        level = DiagnosticStatus.WARN if warning else DiagnosticStatus.OK
        self.diagnostics_pub.publish(DiagnosticArray(
            header=Header(stamp=self._stamp()),
            status=[DiagnosticStatus(level=level,
                                     name=f'{self.get_fully_qualified_name()}: {name}',
                                     message=warning or ok,
                                     hardware_id=self.model.summary)]))

    def _report_speed(self, now: float) -> None:
        start_wall, start_sim = self._speed_window
        if now - start_wall < SPEED_REPORT_PERIOD:
            return
        achieved = (self.sim_clock - start_sim) / (now - start_wall)
        if not self.paused:
            # a /clock subscriber other than this node's own clock waits for simulated time
            own = 1 if self.get_parameter('use_sim_time').value else 0
            waiting = self.clock_pub is None and self.count_subscribers('/clock') > own
            message = speed_report(achieved, self.real_time_factor, self._reported_speed,
                                   waiting)
            if message:
                self._reported_speed = achieved
                self.get_logger().info(message)
        self._speed_window = (now, self.sim_clock)

    def other_clock_sources(self) -> list[str]:
        """Return the full names of the other nodes that publish this node's /clock."""
        topic = self.clock_pub.topic_name
        own = (self.get_namespace(), self.get_name())
        return sorted(f'{i.node_namespace.rstrip("/")}/{i.node_name}'
                      for i in self.get_publishers_info_by_topic(topic)
                      if (i.node_namespace, i.node_name) != own)

    def _watch_clock(self) -> None:
        others = self.other_clock_sources()
        if others:
            self._warnings('clock', f'{", ".join(others)} publishes {self.clock_pub.topic_name} '
                           f'too: every use_sim_time node follows both simulated times, which '
                           f'jump back and forth between them. One simulation per ROS domain '
                           f'may publish the clock: give each stack its own ROS_DOMAIN_ID, or '
                           f'run the others with use_sim_time:=false',
                           severity=LoggingSeverity.ERROR)

    def _reset(self) -> None:
        """Back to rest; the tip load returns to the description's."""
        self.model.reset()
        self._pending_wrench = None
        self._previous = None
        self._last_publish = None
        self._anchor()

    # ------------------------------------------------------------------ services

    def _on_reset(self, request, response):
        self._reset()
        response.success = True
        response.message = f'reset to {self.model.rest}'
        self.get_logger().info(response.message)
        return response

    def _on_pause(self, request, response):
        if request.data != self.paused:
            self.paused = request.data
            self._anchor()
            if not self.paused and self._pending_wrench is not None:
                self._set_wrench(self._pending_wrench)
                self._pending_wrench = None
        response.success = True
        if not self.model.timed:
            response.message = ('paused: setpoints are ignored' if self.paused
                                else 'running: solving each setpoint')
        else:
            response.message = (f'{"paused" if self.paused else "running"} at simulation '
                                f'time {self.model.state().time:.4f} s')
        return response

    # ------------------------------------------------------------------ output

    def _stamp(self):
        if self.clock_pub is not None:
            return time_msg(self.sim_clock)
        return self.get_clock().now().to_msg()

    def _on_publish_tick(self) -> None:
        # what is published is checked, whether or not anybody subscribes to it
        self._check_state()
        if self.clock_pub is not None and not self.paused and self._last_publish is not None:
            # On simulated time, publish_rate counts simulated seconds too: a simulation
            # slower than real time is not slowed further by publishing.
            due = self._last_publish + self.publish_period
            if self.sim_clock < due - 1e-6 * self.publish_period:
                return
            # the next is due a period after this one was due, not after now: the steps of a
            # tick vary by one or two around the period, and 18 ms after 22 would skip a tick;
            # after a tick longer than the period, a period after now: due at once, the
            # state of a physics tick slower than publishing went out twice
            self._last_publish = (due if self.sim_clock < due + self.publish_period
                                  else self.sim_clock)
        else:
            self._last_publish = self.sim_clock
        # A topic nobody subscribes to is neither built nor sent (its publisher stays, and a
        # subscriber gets the next tick's message); the state itself only when one is wanted.
        # With a world, contacts go out always: their arrows are deleted by message.
        wanted = [pub is not None and pub.get_subscription_count() > 0
                  for pub in self._state_topics]
        if not any(wanted) and self.contact_marker_pub is None:
            self._previous = None   # the velocity starts again from the next state published
            return
        want_state, want_tip_state, want_tip, want_tf, want_markers = wanted
        state = self.model.state()
        stamp = self._stamp()
        if want_state:
            velocity = np.zeros_like(state.position)   # also static: equilibria are at rest
            if self.model.timed:
                if self._previous is not None and state.time > self._previous[0]:
                    velocity = ((state.position - self._previous[1])
                                / (state.time - self._previous[0]))
                self._previous = (state.time, state.position)
            self.state_pub.publish(joint_state_msg(self.model.inputs.names, state.position,
                                                   velocity, state.effort, stamp))
        else:
            self._previous = None
        if want_tip_state:   # friction: tension at the anchors
            none = np.zeros(0)
            self.tip_state_pub.publish(joint_state_msg(self.model.inputs.names, none, none,
                                                       state.tip_effort, stamp))
        if want_tip:
            self._tip_msg = tip_pose_msg(state.tip, self.base_frame, stamp, self._tip_msg)
            self.tip_pub.publish(self._tip_msg)
        if want_tf:
            self._tf_msg = transforms_msg(state, self.base_frame, self.tip_frame,
                                          self.vertebra_frame_prefix, stamp, self._tf_msg)
            self.tf_pub.publish(self._tf_msg)
        if want_markers:
            self._markers_msg = markers_msg(state.markers, self.base_frame, stamp,
                                            self._markers_msg)
            self.marker_pub.publish(self._markers_msg)
        if self.contact_marker_pub is not None:
            self._publish_contacts(state.contacts or (), stamp)

    def _publish_contacts(self, contacts, stamp) -> None:
        """Publish the arrows (and the DELETE of those gone), then one wrench per contact."""
        arrows, self._contact_keys = contact_markers_msg(
            contacts, self._contact_keys, self.base_frame, stamp, self.arrow_scale)
        self.contact_marker_pub.publish(arrows)
        for wrench in contact_wrench_msgs(contacts, self.base_frame, stamp):
            self.contact_wrench_pub.publish(wrench)


def main(args=None) -> int:
    # the events executor: the single-threaded one rebuilt its wait set (two timers, the
    # subscriptions, eight services) in Python at every tick and setpoint, a third of the
    # node's CPU time under 50 Hz setpoints (docs/performance.md, Streamed setpoints)
    return run_node(SimulatorNode, NODE_NAME, args, events_executor, exit_on_stop=True)


if __name__ == '__main__':
    raise SystemExit(main())
