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
``tendon-robot-sim view``: the robot in a web page, live from a stack or from a bag.

Live (the default): runs the view node (:mod:`tendon_robot_sim.nodes.view_node`) in the
stack's namespace, whose page draws what the stack publishes and steers it with sliders and
a tip target. What the sliders command follows the stack definition
(:func:`tendon_robot_sim.stack.view_drive`): the controller the stack runs for the robot's
kind (``--controller``, as the launch argument), else the simulator's own setpoint;
``--watch`` publishes nothing. ``--bag``: plays a recorded bag in the page (time slider,
play/pause, speed) without ROS; nothing is published.

Both serve ``http://127.0.0.1:8080`` unless ``--host``/``--port`` say otherwise and print
the page's address with its token (docs/viewer.md, Security); Ctrl-C stops.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
import signal
import time

from tendon_robot_sim import default_robot_file, stop_signals
from tendon_robot_sim.commands import (check_ros_environment, command_error, CommandError,
                                       DefaultsHelpFormatter, input_file, terminal_logger)
from tendon_robot_sim.experiment.bag import BagError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import input_limits

WARNING_PERIOD = 2.0   # s between two warnings of one kind (a page's refused messages)


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f'{text!r} is not a port number') from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f'must be 0 .. 65535, got {port}')
    return port


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'view', help='the robot in a web page: live from a stack, or a bag played back',
        description='Serve a web page (viser) that draws the robot of a running stack from '
                    'its markers and steers it: one slider per input (within the robot '
                    "description's limits), a draggable tip target, a plot of the last "
                    'seconds, Stop/Resume of a hardware bridge. With --bag, play a recorded '
                    'bag in the page instead (nothing is published). Open the printed '
                    'address in a browser; Ctrl-C stops.',
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument('--bag', type=Path, default=None, metavar='BAG',
                        help='play this bag (folder, .mcap or .db3) instead of a live stack')
    parser.add_argument('--host', default='127.0.0.1',
                        help='address to serve on: 127.0.0.1 is this machine only; 0.0.0.0 '
                             'exposes the page (and the robot) to the network, to whoever has '
                             'the printed address with its token: prefer an SSH tunnel (ssh '
                             '-L 8080:localhost:8080 HOST)')
    parser.add_argument('--remote-control', action='store_true',
                        help='with --host beyond this machine: pages of other machines may '
                             'command real hardware too (once a hardware bridge runs in the '
                             'stack); without it they only watch it')
    parser.add_argument('--port', type=_port, default=8080,
                        help='port of the page (taken: the next free one; 0: any free port)')
    parser.add_argument('--namespace', default='', metavar='NS',
                        help="the stack's namespace (launch argument namespace); with --bag "
                             'the namespace of the recorded topics')
    parser.add_argument('--robot', type=input_file, default=None, metavar='FILE',
                        help='robot description of the stack: its inputs and their limits '
                             '(default: the package config/robot.yaml)')
    parser.add_argument('--controller', choices=('tension', 'displacement'), default=None,
                        help="the stack's controller (launch argument controller, default "
                             'tension): what the sliders command; one that serves the robot')
    parser.add_argument('--watch', action='store_true',
                        help='no sliders and no tip target: publish nothing')
    parser.set_defaults(func=run)


def run(args) -> int:
    from tendon_robot_sim.ros.names import check_namespace
    try:
        check_namespace(args.namespace)
    except ValueError as error:
        raise CommandError(f'--namespace: {error}') from None
    robot = args.robot or default_robot_file()
    try:
        kind, limits = input_limits(robot)
    except RobotDescriptionError as error:
        raise command_error(error) from None
    from tendon_robot_sim.view.page import check_host
    try:
        check_host(args.host)
    except ValueError as error:
        raise CommandError(f'--{error}') from None
    _check_controller(args, robot)
    _check_combinations(args)
    if args.bag is not None:
        return _play(args, limits, Path(robot).name)
    return _live(args, robot)


def _check_controller(args, robot: Path) -> None:
    """Refuse a ``--controller`` the stack would not run for the robot (exit 2)."""
    from tendon_robot_sim.stack import CONTROLLER, robot_kind, ROBOT, STACKS

    if args.controller is None:
        return
    if args.bag is not None or args.watch:
        raise CommandError('--controller: applies to a live view with sliders only (not with '
                           '--bag or --watch)')
    values = {ROBOT.name: str(robot), CONTROLLER.name: args.controller}
    # the stack's own rule: controller:=displacement on a snake ran no controller
    refusal = STACKS['sim'].unserved_choice(CONTROLLER.name, values, robot_kind(str(robot)))
    if refusal:
        raise CommandError(f'--controller: {refusal}')


def _check_combinations(args) -> None:
    """
    Refuse options that mean nothing together (exit 2), as ``--controller`` above.

    A bag's page publishes nothing, so ``--watch`` and ``--remote-control`` (who may command)
    have nothing to act on there; a watching page commands nothing; ``--remote-control``
    lets pages of other machines command, which a page on a loopback address never serves.
    A user who gives them expects an effect they would not get.
    """
    from tendon_robot_sim.view.guard import is_loopback

    if args.bag is not None and args.watch:
        raise CommandError("--watch: applies to a live view only (not with --bag: a bag's "
                           'page publishes nothing anyway)')
    if args.remote_control and args.bag is not None:
        raise CommandError('--remote-control: applies to a live view of real hardware only '
                           "(not with --bag: a bag's page commands nothing)")
    if args.remote_control and args.watch:
        raise CommandError('--remote-control: applies to a view that commands only (not '
                           'with --watch: a watching page commands nothing)')
    if args.remote_control and is_loopback(args.host):
        raise CommandError(f'--remote-control: applies with --host beyond this machine only '
                           f'({args.host} serves no other machine)')


def _live(args, robot: Path) -> int:
    check_ros_environment()
    from tendon_robot_sim.stack import CONTROLLER, ROBOT, view_drive

    drive = 'none' if args.watch else view_drive({ROBOT.name: str(robot),
                                                  CONTROLLER.name: args.controller or
                                                  CONTROLLER.default})
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    from tendon_robot_sim.nodes import view_node

    ros_args = ['--ros-args', '-p', f'robot_file:={Path(robot).resolve()}', '-p',
                f'drive:={drive}', '-p', f'host:={args.host}', '-p', f'port:={args.port}',
                '-p', f'remote_control:={str(args.remote_control).lower()}']
    if args.namespace.strip('/'):
        ros_args += ['-r', f'__ns:=/{args.namespace.strip("/")}']
    return view_node.main(ros_args)   # 1 when it cannot start: its log line says why


def _play(args, limits, robot: str) -> int:
    from tendon_robot_sim.ros.throttle import FaultWarnings
    from tendon_robot_sim.view.page import Expected, plotted_of, ViewPage
    from tendon_robot_sim.view.playback import BagPlayback, Timeline

    try:
        timeline = Timeline(args.bag, args.namespace)
    except BagError as error:
        raise command_error(error) from None
    for topic, why in timeline.skipped.items():    # the rest of the bag is still worth seeing
        print(f'not showing {topic}: {why}', flush=True)
    plotted = plotted_of(limits)
    heading = (f'**Bag `{args.bag.name}`**: {timeline.duration:.2f} s, played back here '
               'only: nothing is published')
    # Ctrl-C, SIGTERM and a closing terminal end the playback between two frames, from the
    # moment the page exists
    stop = []
    previous = {sig: signal.signal(sig, lambda number, frame: stop.append(number))
                for sig in stop_signals()}
    page = playback = None
    warn = FaultWarnings(terminal_logger('view'), WARNING_PERIOD)
    try:
        try:
            page = ViewPage(heading, warn=warn, host=args.host, port=args.port,
                            plotted=plotted, expected=Expected(
                                limits.names, robot, 'the bag holds another robot: the '
                                "plot's units are this one's; play it with its robot "
                                'description (--robot FILE)'))
        except ValueError as error:
            raise CommandError(f'--{error}') from None
        playback = BagPlayback(page, timeline)
        try:
            playback.show(0.0)
        except BagError as error:
            raise command_error(error) from None
        if not page.guard.loopback:
            warn('view: beyond loopback', f'the page listens beyond this machine '
                 f'({args.host}): anyone on the network who has its address with the token '
                 'can watch this recording (nothing is published); without the token nothing '
                 'is served')
        if page.port_taken:
            print(page.port_taken, flush=True)
        print(f'playing {args.bag} ({timeline.duration:.2f} s) on {page.address}; Ctrl-C '
              'stops', flush=True)
        while not stop and playback.error is None:
            time.sleep(0.1)
    finally:
        if playback is not None:
            playback.stop()
        if page is not None:
            page.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if playback.error is not None:
        raise command_error(playback.error)
    return 0
