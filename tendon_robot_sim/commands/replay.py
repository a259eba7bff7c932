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
``tendon-robot-sim replay``: publish a bag's messages with their recorded timing.

For machines without ``ros2 bag play``: a
:class:`~tendon_robot_sim.ros.replay.BagPlayer` publishes every topic of the bag
(or ``--topics``) on its recorded name, spacing the messages as recorded divided
by ``--rate``, once or with ``--loop`` until Ctrl-C. Bags of ``record``, of the
demo and of ``ros2 bag record`` (MCAP or sqlite3) are accepted.

``--simulate`` replays the experiment into the simulation: a quasi-static
simulator node (``--robot``, ``--model``) runs in this process and follows the
recorded ``tendon/setpoint``; what the simulator publishes (``tip/pose``,
``tendon/state``, ``/tf``, ``backbone/markers``, ``/clock``) comes from it instead
of the bag, while the recorded ``tip/measured`` is replayed, so RViz shows the
simulated robot and both tips. A robot the recorded setpoints do not fit (they name
inputs it lacks, give no field its model takes, or values without names not one per input)
is refused before anything is replayed, from the forms of the setpoints read from the bag
and the inputs of the model the simulator will build; what only the values show (beyond
``max_tension``) is the simulator's, and a replay whose every setpoint it rejected fails.

Hardware safety: recorded setpoints must not drive a real robot by accident. The
recorded ``tendon/setpoint`` is published on ``--setpoint-topic``
(``replay/tendon/setpoint`` unless told otherwise; a relative name in the namespace the
setpoints were recorded in), and while a hardware bridge
(a node called ``hardware_bridge``) subscribes to that topic the replay refuses
to start, or stops, unless ``--allow-hardware`` is given.

ROS imports happen inside :func:`run`, so the command-line tool loads without rclpy.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
import sys
import time

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.commands import (check_ros_environment, command_error, CommandError,
                                       DefaultsHelpFormatter, input_file, StopSignals, within)
from tendon_robot_sim.experiment.bag import (bag_topics, BagError, check_messages, recorded_as,
                                             topic_matches)
from tendon_robot_sim.models.rod.statics.solver import MODELS
from tendon_robot_sim.ros.names import check_topic_name

# Wall seconds the simulator may take to subscribe to the replayed setpoints.
SIMULATOR_TIMEOUT = 10.0
# Wall seconds the subscribers get to acknowledge the last messages before the process ends
# (it would take the ones not yet delivered with it).
DELIVERY_TIMEOUT = 5.0
# Where recorded setpoints go by default: not where a hardware bridge listens.
DEFAULT_SETPOINT_TOPIC = 'replay/tendon/setpoint'
BRIDGE_NODE = 'hardware_bridge'
# Playback speeds: from a thousand times slower (a recorded second takes 17 min) to a thousand
# times faster (a 50 Hz topic at 50 kHz, about what one process publishes); beyond them a
# replay never ends (1e-30) or is no longer a timed replay.
RATES = (1e-3, 1e3)
# Wall seconds for discovery before the first message: a few are plenty on any network.
DELAYS = (0.0, 60.0)
# The simulator's mode: the static equilibrium of each recorded setpoint, solved on receipt.
MODE = 'quasi_static'


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'replay', help='publish a bag with its recorded timing (like ros2 bag play)',
        description='Publish the messages of a rosbag2 bag (folder, .mcap or .db3) on their '
                    'recorded topics, with the recorded spacing divided by --rate; with '
                    '--simulate, drive a quasi-static simulation with the recorded setpoints '
                    'and publish its tip on tip/pose next to the recorded tip/measured.',
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument('bag', type=Path, metavar='BAG', help='bag folder or .mcap/.db3 file')
    parser.add_argument('--rate', type=within(*RATES), default=1.0,
                        help='playback speed: 2 plays twice as fast')
    parser.add_argument('--loop', action='store_true',
                        help='start again at the end, until Ctrl-C')
    parser.add_argument('--topics', nargs='+', metavar='T', default=None,
                        help='topics to publish (default: all of the bag)')
    parser.add_argument('--delay', type=within(*DELAYS, 's'), default=0.5, metavar='S',
                        help='wait S wall seconds after creating the publishers, so that '
                             'subscribers discover them before the first message')
    parser.add_argument('--setpoint-topic', default=DEFAULT_SETPOINT_TOPIC, metavar='T',
                        help='publish the recorded tendon/setpoint on T (relative: in the '
                             'namespace it was recorded in); tendon/setpoint drives whatever '
                             'follows setpoints on the graph')
    parser.add_argument('--allow-hardware', action='store_true',
                        help='publish setpoints even while a hardware bridge subscribes to '
                             'them (the recorded setpoints then move the real robot)')
    simulation = parser.add_argument_group('replay into simulation')
    simulation.add_argument('--simulate', action='store_true',
                            help='simulate the recorded tendon/setpoint (quasi-static) and '
                                 'publish the simulated tip/pose, tendon/state, /tf and '
                                 'backbone/markers instead of the recorded ones')
    simulation.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                            help='robot description YAML of the simulation (default: the '
                                 'package config/robot.yaml); refused before anything is '
                                 'replayed when a recorded setpoint names an input it lacks, '
                                 'gives no field its model takes, or gives values without '
                                 'names that are not one per input (inputs the setpoints do '
                                 'not name hold)')
    simulation.add_argument('--model', choices=MODELS, default='discrete',
                            help='statics model of the simulation')
    parser.set_defaults(func=run)


def run(args) -> int:
    check_ros_environment()
    if not (math.isfinite(args.rate) and args.rate > 0.0):
        raise CommandError(f'--rate: must be a finite number > 0, got {args.rate:g}')
    if not (math.isfinite(args.delay) and args.delay >= 0.0):
        raise CommandError(f'--delay: must be >= 0 s, got {args.delay:g}')
    if not args.simulate and (args.robot is not None or args.model != 'discrete'):
        raise CommandError('--robot and --model apply to --simulate only')
    try:    # rclpy would raise it as it creates the publisher: an internal error
        check_topic_name(args.setpoint_topic)
    except ValueError as error:
        raise CommandError(f'--setpoint-topic: {error}') from None
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    # Ctrl-C, SIGTERM and SIGHUP end the replay between two messages.
    with StopSignals() as stop:
        counts, passes = _replay(args, stop)
    print(f'published {sum(counts.values())} messages in {passes} complete '
          f'pass{"es" if passes != 1 else ""}: '
          + ', '.join(f'{topic} {n}' for topic, n in counts.items()), flush=True)
    return 0


def _replay(args, stop) -> tuple[dict, int]:
    """Publish the bag until it ends or ``stop``; (messages per topic, complete passes)."""
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    from tendon_robot_sim.ros.replay import BagPlayer, SIMULATOR_OUTPUTS
    from tendon_robot_sim.ros.topics import TENDON_SETPOINT

    recorded = None
    if args.simulate:   # before the player: it has nothing to publish if a bag holds outputs only
        try:
            recorded = bag_topics(args.bag)
        except BagError as error:
            raise command_error(error) from None
        _check_setpoints(args.bag, recorded, args.topics)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    player = simulation = None
    try:
        try:
            player = BagPlayer(args.bag, args.topics, args.rate,
                               exclude=SIMULATOR_OUTPUTS if args.simulate else (),
                               remap={TENDON_SETPOINT.name: args.setpoint_topic},
                               recorded=recorded)
        except BagError as error:
            raise command_error(error) from None
        # in the namespace of the stack that recorded them, if it had one
        setpoints = [topic for topic in player.publishers_by_topic
                     if topic_matches(topic, TENDON_SETPOINT.name)]
        if args.simulate:
            if len(setpoints) > 1:
                raise CommandError(f'--simulate: the replay holds {TENDON_SETPOINT.name} in '
                                   f'{len(setpoints)} namespaces ({", ".join(setpoints)}); one '
                                   "robot's is simulated: choose it with --topics")
            setpoint = setpoints[0]
            robot_file = args.robot or default_robot_file()
            _check_fit(robot_file, args.model, _recorded_setpoints(args.bag, setpoint, player))
            simulation = _Simulation(robot_file, args.model,
                                     player.publishers_by_topic[setpoint].topic_name)
        for topic, why in player.skipped.items():
            print(f'not replaying {topic}: {why}', flush=True)
        print(f'replaying {args.bag} at rate {args.rate:g}'
              + (' in a loop' if args.loop else '') + ': '
              + ', '.join(player.publishers_by_topic)
              + ('; simulated: ' + ', '.join(SIMULATOR_OUTPUTS) if args.simulate else '')
              + '; Ctrl-C stops', flush=True)
        # the delay is a wait like the others: a bridge discovered in it refuses the replay then
        guard = _HardwareGuard(player, setpoints, args.allow_hardware)
        end_of_delay = time.monotonic() + args.delay
        while not stop and not guard.check() and time.monotonic() < end_of_delay:
            time.sleep(0.05)
        if simulation is not None:
            end = time.monotonic() + SIMULATOR_TIMEOUT
            while player.publishers_by_topic[setpoint].get_subscription_count() < 1:
                if time.monotonic() > end:
                    raise CommandError(f'the simulator did not subscribe to {setpoint} within '
                                       f'{SIMULATOR_TIMEOUT:g} s')
                time.sleep(0.05)
        guard.check()
        passes = 0
        while not stop:
            try:
                complete = player.play(stop=lambda: bool(stop) or guard.check())
            except BagError as error:
                raise command_error(error) from None
            passes += complete
            if complete:   # a bag of no messages: nothing was replayed, which is not a replay
                try:
                    check_messages(args.bag, player.counts, 'replay')
                except BagError as error:
                    raise command_error(error) from None
            if not args.loop:
                break
        counts = dict(player.counts)
        if not stop:
            waiting = player.wait_for_delivery(DELIVERY_TIMEOUT)
            if waiting:
                print(f'replay: not every subscriber of {", ".join(waiting)} acknowledged the '
                      f'last messages within {DELIVERY_TIMEOUT:g} s', file=sys.stderr)
        if simulation is not None:
            simulation.finish(published=0 if stop else counts[setpoint])
    finally:
        if simulation is not None:
            simulation.close()
        if player is not None:
            player.destroy_node()
        rclpy.try_shutdown()
    return counts, passes


def _check_setpoints(bag: Path, recorded: dict, topics: list[str] | None) -> None:
    """
    Refuse to simulate a bag, or the ``--topics`` of one, without ``tendon/setpoint``.

    One line: what is missing, what the bag holds instead, and what can be done with it. A bag
    of ``import`` holds the inputs as measured on ``tendon/state``, which the simulator
    publishes itself: such a bag is replayed as it is, or compared with a model by ``validate``.
    """
    from tendon_robot_sim.ros.topics import TENDON_SETPOINT, TENDON_STATE

    setpoints = recorded_as(TENDON_SETPOINT.name, recorded)
    if setpoints and topics is not None:
        chosen = {'/' + name.lstrip('/') for name in topics}
        if not chosen & set(setpoints):
            raise CommandError(f'--topics: leaves out {", ".join(setpoints)}, which --simulate '
                               'follows; add it')
    if setpoints:
        return
    missing = (f'--simulate: {bag} has no {TENDON_SETPOINT.name} (in any namespace) for the '
               'simulator to follow')
    states = recorded_as(TENDON_STATE.name, recorded)
    if states:
        raise CommandError(f'{missing}; it holds {states[0]}, the inputs as measured (a bag of '
                           '`import` holds these), which the simulator publishes itself: replay '
                           'the bag without --simulate, or compare a model with it: '
                           f'tendon-robot-sim validate {bag} --points samples --report DIR')
    raise CommandError(f'{missing} (it holds {", ".join(recorded) or "no topic"}): record one '
                       '(record --topics tendon/setpoint tip/measured), or replay the bag '
                       'without --simulate')


class _HardwareGuard:
    """
    CommandError while a hardware bridge subscribes to the replayed setpoints.

    Checked before every message and during every wait, so a bridge that appears
    mid-replay stops it before its next setpoint.
    """

    def __init__(self, player, setpoints: list[str], allowed: bool):
        self.player = player
        self.setpoints = setpoints     # the recorded names, in any namespace
        self.allowed = allowed

    def check(self) -> bool:
        """Raise if a bridge subscribes to the setpoints; else False."""
        if self.allowed:
            return False
        for setpoint in self.setpoints:
            self._check(setpoint)
        return False

    def _check(self, setpoint: str) -> None:
        bridges = [n for n in self.player.subscribed_nodes(setpoint)
                   if n.rpartition('/')[2] == BRIDGE_NODE]
        if bridges:
            topic = self.player.publishers_by_topic[setpoint].topic_name
            raise CommandError(f'{", ".join(bridges)} subscribes to {topic}: the recorded '
                               'setpoints would move the real robot; replay them elsewhere '
                               '(--setpoint-topic) or pass --allow-hardware')


def _recorded_setpoints(bag: Path, topic: str, player) -> dict:
    """Return the forms of the recorded setpoints (ros.replay.setpoint_forms) of ``topic``."""
    from tendon_robot_sim.ros.replay import setpoint_forms
    from tendon_robot_sim.ros.topics import TENDON_SETPOINT, type_name

    recorded, wanted = (type_name(msg_type) for msg_type in (player.classes[topic],
                                                             TENDON_SETPOINT.msg_type))
    if recorded != wanted:
        raise CommandError(f'--simulate: {topic} of {bag} is {recorded}; the simulator takes '
                           f'{wanted}')
    try:
        return setpoint_forms(bag, topic)
    except BagError as error:
        raise command_error(error) from None


def _check_fit(robot_file: Path, model: str, forms: dict) -> None:
    """
    Refuse a robot whose simulator would reject recorded setpoints by their form.

    ``forms``: those of :func:`_recorded_setpoints`. The model is built here as the
    simulator node builds it (the registry's, for MODE), before it starts; building
    it again in the node costs a few hundredths of a second, its kernels being loaded.
    """
    from tendon_robot_sim.models.description import ROBOT_KINDS, RobotDescriptionError
    from tendon_robot_sim.models.registry import (check_mode, create_model, file_kind, MODELS,
                                                  ModelConfigurationError, ModelOptions)
    from tendon_robot_sim.ros.topics import TENDON_SETPOINT

    try:    # the mode is the command's: the robot is what the user can change
        kind = file_kind(robot_file)
        check_mode(kind, MODE)
    except RobotDescriptionError:
        pass        # the file itself: create_model names the key
    except ModelConfigurationError:
        raise CommandError(f'--robot: {robot_file}: replay --simulate runs the quasi-static '
                           f'simulator (mode {MODE}), which this robot does not take: '
                           f'{ROBOT_KINDS[kind]} is simulated in mode '
                           f'{" or ".join(MODELS[kind])}') from None
    try:
        inputs = create_model(robot_file, MODE, ModelOptions(statics_model=model))[2].inputs
    except ModelConfigurationError as error:     # the robot file, which names itself
        raise CommandError(f'--robot: {error}') from None
    why = {form: _misfit(inputs, form) for form in forms}
    refused = [form for form in forms if why[form]]
    if refused:
        raise CommandError(
            f'--robot: {robot_file} does not fit {sum(forms[form] for form in refused)} of '
            f'the {sum(forms.values())} recorded /{TENDON_SETPOINT.name} messages: '
            f'{why[refused[0]]}')


def _misfit(inputs, form) -> str:
    """Say why the simulator would reject setpoints of ``form`` for their form; '' if not."""
    from tendon_robot_sim.models.sim_model import InputError

    try:
        inputs.check(form.names, dict(form.sizes))
    except InputError as error:
        return str(error)
    return ''


class _Simulation:
    """The simulator node in mode MODE, spinning in a thread of this process."""

    def __init__(self, robot_file: Path, model: str, setpoint_topic: str):
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.parameter import Parameter

        from tendon_robot_sim.nodes.simulator_node import SimulatorNode
        from tendon_robot_sim.ros.parameters import ConfigurationError
        from tendon_robot_sim.ros.spinner import BackgroundSpinner

        try:
            self.node = SimulatorNode(parameter_overrides=[
                Parameter('mode', value=MODE),
                Parameter('statics_model', value=model),
                Parameter('robot_file', value=str(robot_file)),
                Parameter('setpoint_topic', value=setpoint_topic)])
        except ConfigurationError as error:
            raise CommandError(f'--simulate: {error}') from None
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.spinner = BackgroundSpinner(self.executor)

    def finish(self, published: int) -> None:
        """
        Stop the simulator and judge what it made of the setpoints it took.

        CommandError when it rejected every one (nothing moved; its warnings were
        throttled); a line on stderr when it rejected some. With ``published`` setpoints
        delivered, it is first given SIMULATOR_TIMEOUT to take one: it keeps only the
        newest, so it may take fewer, but the last one stays until taken, and it is taken
        before the node stops.
        """
        from tendon_robot_sim.ros.spinner import drain

        node = self.node
        end = time.monotonic() + SIMULATOR_TIMEOUT
        while (published and not node.setpoints_rejected + node.setpoints_applied
               and time.monotonic() < end):
            time.sleep(0.05)
        # what was delivered is taken (the newest setpoint, the one the replay ended on, may
        # still wait); then what the node counted is final
        self.spinner.stop(drain=lambda: drain(self.executor, node, lambda: (
            node.setpoints_rejected + node.setpoints_applied)))
        rejected, applied = node.setpoints_rejected, node.setpoints_applied
        if not rejected:
            return
        why = f'the first: {node.first_setpoint_rejection}'
        if not applied:
            raise CommandError(f'--simulate: the simulator rejected every setpoint it took '
                               f'({rejected}), so nothing moved; {why}')
        print(f'replay: the simulator rejected {rejected} of the {rejected + applied} '
              f'setpoints it took; {why}', file=sys.stderr, flush=True)

    def close(self) -> None:
        self.spinner.stop()
        self.node.destroy_node()
