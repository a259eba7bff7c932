"""ROS 2 node that simulates the tendon robot, dynamically or quasi-statically.

Subscribes ``tendon/setpoint`` and publishes ``tendon/state``, ``tip/pose``,
``backbone/markers``, ``/tf`` and, when ``publish_clock`` is set, ``/clock``.
Services ``~/reset`` (std_srvs/Trigger) and ``~/pause`` (std_srvs/SetBool).
The ``mode`` parameter chooses the model behind the same topics:

``dynamic``
    Cosserat rod dynamics (:class:`~tendon_robot_sim.core.simulator.TendonSimulator`)
    driven by the tensions of the latest setpoint (``effort``, N).
``quasi_static``
    A sequence of static equilibria (:class:`~tendon_robot_sim.core.statics.StaticsSolver`,
    model ``statics_model``), one solved on receipt of each setpoint: tensions
    (``effort``, N) or, when ``effort`` is empty, displacements (``position``, m pulled
    in; the tensions are solved for and must stay within ``max_tension``). A setpoint
    the solver rejects or cannot solve is reported and the last equilibrium stays
    published. There is no simulated time: no physics timer, no ``/clock``
    (``publish_clock`` must be false), wall-clock stamps, tendon velocity 0.
    ``~/reset`` returns to the zero-tension equilibrium (sagging under gravity);
    while paused, setpoints are ignored (not applied later).

The publishing timer runs in both modes; in ``dynamic`` mode two timers on the
steady clock do the work (so the node never waits for a ``/clock`` it publishes
itself):

* physics, at ``physics_rate``: advances the simulation so that simulated time
  follows the wall clock times ``real_time_factor``. A tick stops after
  ``PHYSICS_BUDGET`` of its period (at the measured cost per step) so that
  publishing and services stay responsive;
  when the simulation cannot keep up, the backlog is dropped and it simply runs
  slower than real time (use ``publish_clock`` and ``use_sim_time`` then).
* publishing, at ``publish_rate``: one message per topic from the latest state.
  With ``publish_clock`` the rate is also capped in simulated time while running
  (at most ``publish_rate`` messages per simulated second), so that a simulation
  slower than real time does not spend its time publishing near-copies.

Simulated time on ``/clock`` (and in stamps when ``publish_clock`` is set) is the
total simulated time since the node started; it keeps increasing across
``~/reset`` so that time never jumps back for ``use_sim_time`` users.
"""

import math
import time

import numpy as np
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rosgraph_msgs.msg import Clock as ClockMsg
from std_srvs.srv import SetBool, Trigger

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.core.robot import load_robot, RobotDescriptionError
from tendon_robot_sim.core.simulator import InputError, SimulationDiverged, TendonSimulator
from tendon_robot_sim.core.statics import (ConvergenceError, MODELS as STATICS_MODELS,
                                           StaticsError, StaticsInputError, StaticsSolver)
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import (BackboneMarkers, displacements_from_joint_state,
                                           tendon_state_msg, tensions_from_joint_state,
                                           time_msg, tip_pose_msg, transforms_msg,
                                           wrench_from_msg)
from tendon_robot_sim.ros.parameters import (ConfigurationError, declare, on_parameters_set,
                                             Param)
from tendon_robot_sim.ros.runner import run_node

NODE_NAME = 'simulator'
MODES = ('dynamic', 'quasi_static')
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

PARAMS = (
    Param('robot_file', '', '', 'robot description YAML file; empty: the package default '
          'config/robot.yaml'),
    Param('mode', 'dynamic', '', 'simulation model: dynamic = Cosserat rod dynamics '
          '(PyElastica) driven by tendon tensions; quasi_static = the static equilibrium '
          '(statics_model) of each setpoint, tensions or displacements, solved on receipt',
          choices=MODES),
    Param('statics_model', 'discrete', '', 'model of mode quasi_static: discrete = static '
          'twin of the dynamic model (tendons straight between vertebrae), cosserat = '
          'Rucker & Webster rod with continuously routed tendons, kirchhoff = the same '
          'without shear and extension', choices=STATICS_MODELS),
    Param('dt', 0.0, 's', 'physics time step; 0: the simulator chooses a stable step '
          '(dynamic mode)', range=(0.0, 1e-3)),
    Param('physics_rate', 50.0, 'Hz', 'rate of the physics timer that advances the '
          'simulation to match the wall clock (dynamic mode)', range=(1.0, 1000.0)),
    Param('real_time_factor', 1.0, '', 'target simulated seconds per wall-clock second '
          '(the simulation runs slower when it cannot keep up; dynamic mode)',
          range=(0.01, 100.0), read_only=False),
    Param('publish_rate', 50.0, 'Hz', 'rate of tendon/state, tip/pose, backbone/markers and '
          '/tf in wall-clock time; with publish_clock also at most this many per simulated '
          'second', range=(1.0, 500.0)),
    Param('publish_clock', False, '', 'publish simulated time on /clock and stamp messages '
          'with it, for nodes with use_sim_time; dynamic mode only (quasi_static has no '
          'simulated time, stamps with the wall clock and refuses true)'),
    Param('tip_frame', 'tip_link', '', 'frame id of the tip; the parent is the base frame '
          'of the robot description (base.frame_id)'),
    Param('vertebra_frame_prefix', 'vertebra_', '', 'vertebra i is published as frame '
          '<prefix><i>, i = 0 nearest the base'),
    Param('setpoint_topic', topics.TENDON_SETPOINT.name, '', 'tendon setpoints to apply '
          '(effort = tension; in mode quasi_static, position = displacement when effort is '
          'empty)'),
    Param('state_topic', topics.TENDON_STATE.name, '', 'tendon displacement, velocity (0 in '
          'mode quasi_static) and tension'),
    Param('tip_pose_topic', topics.TIP_POSE.name, '', 'tip pose in the base frame'),
    Param('markers_topic', topics.BACKBONE_MARKERS.name, '', 'backbone, disc and tendon '
          'markers'),
    Param('wrench_topic', topics.TIP_WRENCH.name, '', 'external tip force and torque (base '
          "frame), replacing the robot description's tip_load"),
    Param('warning_throttle_period', 2.0, 's', 'minimum time between two warnings about '
          'rejected setpoints (and between two divergence errors)', range=(0.0, 60.0)),
)


class SimulatorNode(Node):
    """The simulation as a node; ``kwargs`` go to :class:`rclpy.node.Node`.

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
        self.quasi_static = config.mode == 'quasi_static'
        if self.quasi_static and config.publish_clock:
            raise ConfigurationError(
                'parameter publish_clock: mode quasi_static has no simulated time to publish '
                'on /clock; set it false (launch argument use_sim_time:=false)')
        robot_file = config.robot_file or str(default_robot_file())
        # Exactly one of the two models: sim (dynamic) or statics (quasi_static).
        self.sim = self.statics = None
        try:
            self.robot = load_robot(robot_file)
            if self.quasi_static:
                self.statics = StaticsSolver(self.robot, model=config.statics_model)
                # where ~/reset returns: zero tension (sagging under gravity)
                self._rest = self.statics.solve_tensions(np.zeros(len(self.robot.tendons)))
            else:
                self.sim = TendonSimulator(self.robot, dt=config.dt or None)
        except (RobotDescriptionError, InputError, StaticsError) as error:
            raise ConfigurationError(str(error)) from None
        self.base_frame = self.robot.base.frame_id
        self.markers = BackboneMarkers(self.robot)
        self.real_time_factor = config.real_time_factor
        on_parameters_set(self, self._on_parameters_set)

        self.state_pub = self.create_publisher(
            topics.TENDON_STATE.msg_type, config.state_topic, topics.TENDON_STATE.qos)
        self.tip_pub = self.create_publisher(
            topics.TIP_POSE.msg_type, config.tip_pose_topic, topics.TIP_POSE.qos)
        self.marker_pub = self.create_publisher(
            topics.BACKBONE_MARKERS.msg_type, config.markers_topic, topics.BACKBONE_MARKERS.qos)
        self.tf_pub = self.create_publisher(topics.TF.msg_type, topics.TF.name, topics.TF.qos)
        self.clock_pub = (self.create_publisher(topics.CLOCK.msg_type, topics.CLOCK.name,
                                                topics.CLOCK.qos)
                          if config.publish_clock else None)
        self.setpoint_sub = self.create_subscription(
            topics.TENDON_SETPOINT.msg_type, config.setpoint_topic, self._on_setpoint,
            topics.TENDON_SETPOINT.qos)
        self.wrench_sub = self.create_subscription(
            topics.TIP_WRENCH.msg_type, config.wrench_topic, self._on_wrench,
            topics.TIP_WRENCH.subscription_qos)
        self._last_setpoint = None     # quasi_static: (msg, displacements) last accepted
        self._zero_tension = topics.TENDON_SETPOINT.msg_type(
            name=self.robot.tendon_names, effort=[0.0] * len(self.robot.tendons))
        self.reset_srv = self.create_service(Trigger, '~/reset', self._on_reset)
        self.pause_srv = self.create_service(SetBool, '~/pause', self._on_pause)

        # Simulated seconds since the node started, never reset (clock and stamps).
        self.sim_clock = 0.0
        self.paused = False
        self._state = self._rest if self.quasi_static else self.sim.state()
        self._previous = None          # (time, displacements) at the last publish
        self._step_cost = INITIAL_STEP_COST   # s of wall time per physics step
        self._anchor()
        self._speed_window = (time.monotonic(), self.sim_clock)

        steady = Clock(clock_type=ClockType.STEADY_TIME)
        self.physics_period = 1.0 / config.physics_rate
        self.physics_timer = (None if self.quasi_static else self.create_timer(
            self.physics_period, self._on_physics_tick, clock=steady))
        self.publish_period = 1.0 / config.publish_rate
        self._last_publish = None       # sim_clock at the last publish
        self.publish_timer = self.create_timer(self.publish_period, self._on_publish_tick,
                                               clock=steady)
        model = (f'{config.statics_model} statics' if self.quasi_static
                 else f'dt {self.sim.dt:.3g} s')
        self.get_logger().info(
            f'simulating {self.robot.name!r} from {robot_file} (mode {config.mode}, '
            f'{model}, {len(self.robot.tendons)} tendons {self.robot.tendon_names}); '
            f'setpoints on {self.setpoint_sub.topic_name}')

    # ------------------------------------------------------------------ input

    def _on_setpoint(self, msg) -> None:
        displacements = bool(msg.position) and not msg.effort
        if self.quasi_static:
            if not self.paused:
                self._solve(msg, displacements)
            return
        if displacements:
            self._reject('it has positions but no efforts: displacement setpoints need '
                         'mode:=quasi_static (or a displacement controller); in mode '
                         "'dynamic' this simulator applies tensions (effort, N)")
            return
        try:
            self.sim.set_tensions(tensions_from_joint_state(msg, len(self.robot.tendons)))
        except InputError as error:
            self._reject(str(error))

    def _solve(self, msg, displacements: bool) -> None:
        """Quasi-static mode: publish the equilibrium of ``msg`` from now on, or keep the
        last one if ``msg`` is rejected."""
        try:
            if displacements:
                state = self.statics.solve_displacements(
                    displacements_from_joint_state(msg, len(self.robot.tendons)))
                # Position control must not pull harder than the tendons allow (what
                # TendonSimulator.set_tensions enforces for tension setpoints).
                over = np.flatnonzero(state.tensions > self.robot.max_tensions)
                if over.size:
                    i = over[0]
                    self._reject(
                        f'position[{self.robot.tendon_names[i]}]: the equilibrium needs '
                        f'{state.tensions[i]:.4g} N, above max_tension = '
                        f'{self.robot.max_tensions[i]:g} N')
                    return
            else:
                state = self.statics.solve_tensions(
                    tensions_from_joint_state(msg, len(self.robot.tendons)))
        except (InputError, StaticsInputError) as error:
            self._reject(str(error))
        except ConvergenceError as error:
            self._reject(f'{error}; still publishing the last equilibrium '
                         f'(scaled residual {error.residual:.3g})')
        else:
            self._state = state
            self._last_setpoint = (msg, displacements)

    def _on_wrench(self, msg) -> None:
        try:
            force, moment = wrench_from_msg(msg, self.base_frame)
        except InputError as error:
            self._reject(str(error), what='tip wrench')
            return
        if not self.quasi_static:
            self.sim.set_tip_load(force, moment)
            return
        self.statics.set_tip_load(force, moment)
        if not self.paused:     # the last setpoint (none yet: zero tension) under the new load
            self._solve(*(self._last_setpoint or (self._zero_tension, False)))

    def _reject(self, reason: str, what: str = 'tendon setpoint') -> None:
        self.get_logger().warning(f'rejected {what}: {reason}',
                                  throttle_duration_sec=self.config.warning_throttle_period)

    def _on_parameters_set(self, parameters) -> None:
        # Only real_time_factor is writable; rclpy has already checked its range.
        for parameter in parameters:
            if parameter.name == 'real_time_factor':
                self.real_time_factor = parameter.value
                self._anchor()

    # ------------------------------------------------------------------ physics

    def _anchor(self) -> None:
        """Pace from now: simulated time at this wall instant is the current one."""
        self._anchor_wall = time.monotonic()
        self._anchor_sim = self.sim_clock

    def _on_physics_tick(self) -> None:
        if not self.paused:
            self._step_to_wall_clock()
        if self.clock_pub is not None:
            self.clock_pub.publish(ClockMsg(clock=time_msg(self.sim_clock)))

    def _step_to_wall_clock(self) -> None:
        now = time.monotonic()
        target = self._anchor_sim + (now - self._anchor_wall) * self.real_time_factor
        dt = self.sim.dt
        needed = math.floor((target - self.sim_clock) / dt + 1e-9)
        # One advance() per tick, as many steps as fit in the budget at the measured
        # cost per step: few calls keep the per-call overhead (state()) small.
        affordable = int(PHYSICS_BUDGET * self.physics_period / self._step_cost)
        steps = min(needed, max(1, affordable))
        if steps >= 1:
            try:
                self._state = self.sim.advance(steps * dt)
            except SimulationDiverged as error:
                self.get_logger().error(
                    f'{error}. The node reset the simulation to the initial straight state '
                    'with zero tension; it keeps running and accepts new setpoints.',
                    throttle_duration_sec=self.config.warning_throttle_period)
                self._reset()
                return
            self.sim_clock += steps * dt
            cost = (time.monotonic() - now) / steps
            self._step_cost += STEP_COST_SMOOTHING * (cost - self._step_cost)
        backlog = target - self.sim_clock
        if backlog > MAX_BACKLOG_PERIODS * self.physics_period * self.real_time_factor:
            self._anchor()
        self._report_speed(now)

    def _report_speed(self, now: float) -> None:
        start_wall, start_sim = self._speed_window
        if now - start_wall < SPEED_REPORT_PERIOD:
            return
        achieved = (self.sim_clock - start_sim) / (now - start_wall)
        if not self.paused and achieved < 0.9 * self.real_time_factor:
            hint = ('' if self.clock_pub is not None else
                    '; nodes with use_sim_time need publish_clock:=true')
            self.get_logger().info(
                f'simulation runs at {achieved:.2f} x real time (target '
                f'{self.real_time_factor:g}){hint}')
        self._speed_window = (now, self.sim_clock)

    def _reset(self) -> None:
        """Back to rest; the tip load returns to the description's (both modes)."""
        if self.quasi_static:
            self.statics.set_tip_load(self.robot.tip_load.force, self.robot.tip_load.moment)
            self._last_setpoint = None
            self._state = self._rest
        else:
            self.sim.reset()
            self._state = self.sim.state()
        self._previous = None
        self._last_publish = None
        self._anchor()

    # ------------------------------------------------------------------ services

    def _on_reset(self, request, response):
        self._reset()
        response.success = True
        response.message = ('reset to the zero-tension equilibrium' if self.quasi_static else
                            'reset to the initial straight state with zero tension')
        self.get_logger().info(response.message)
        return response

    def _on_pause(self, request, response):
        if request.data != self.paused:
            self.paused = request.data
            self._anchor()
        response.success = True
        if self.quasi_static:
            response.message = ('paused: setpoints are ignored' if self.paused
                                else 'running: solving each setpoint')
        else:
            response.message = (f'{"paused" if self.paused else "running"} at simulation '
                                f'time {self._state.time:.4f} s')
        return response

    # ------------------------------------------------------------------ output

    def _stamp(self):
        if self.clock_pub is not None:
            return time_msg(self.sim_clock)
        return self.get_clock().now().to_msg()

    def _on_publish_tick(self) -> None:
        if (self.clock_pub is not None and not self.paused and self._last_publish is not None
                and self.sim_clock - self._last_publish < self.publish_period * (1.0 - 1e-6)):
            # On simulated time, publish_rate counts simulated seconds too: a simulation
            # slower than real time is not slowed further by publishing.
            return
        self._last_publish = self.sim_clock
        state = self._state
        stamp = self._stamp()
        displacement = state.tendon_displacements
        velocity = np.zeros_like(displacement)   # also in quasi_static: equilibria are at rest
        if not self.quasi_static:
            if self._previous is not None and state.time > self._previous[0]:
                velocity = ((displacement - self._previous[1])
                            / (state.time - self._previous[0]))
            self._previous = (state.time, displacement)
        self.state_pub.publish(tendon_state_msg(self.robot.tendon_names, displacement,
                                                velocity, state.tensions, stamp))
        self.tip_pub.publish(tip_pose_msg(state, self.base_frame, stamp))
        self.tf_pub.publish(transforms_msg(state, self.base_frame, self.config.tip_frame,
                                           self.config.vertebra_frame_prefix, stamp))
        self.marker_pub.publish(self.markers.build(state, self.base_frame, stamp))


def main(args=None) -> int:
    return run_node(SimulatorNode, NODE_NAME, args)


if __name__ == '__main__':
    raise SystemExit(main())
