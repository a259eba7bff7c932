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
``tendon-robot-sim record``: record the topic contract to a rosbag2 bag, without ROS tools.

Runs a :class:`~tendon_robot_sim.ros.recorder.BagRecorder` node (raw subscriptions
with the QoS of :mod:`tendon_robot_sim.ros.topics`, bytes stored as received, with
``rosbags``) until Ctrl-C, SIGTERM or ``--duration``, then closes the bag so it
is complete. Where ROS 2 is installed, ``ros2 bag record`` does the same; its
bags and these are read alike by the tools of this project.

ROS imports happen inside :func:`run`, so the command-line tool loads without rclpy.
"""

from __future__ import annotations

import math
import os
import time

from tendon_robot_sim.commands import (check_ros_environment, command_error, CommandError,
                                       DefaultsHelpFormatter, non_negative, NoResultError,
                                       OutputPath, StopSignals, terminal_logger)
from tendon_robot_sim.experiment.bag import BagError, STORAGE_PLUGINS
from tendon_robot_sim.ros.names import check_namespace


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        'record', help='record the topic contract to a rosbag2 bag (MCAP or sqlite3)',
        description='Record topics of the stack to a rosbag2 bag until Ctrl-C or --duration. '
                    'Default topics: the simulation stack contract plus the tip measurement, '
                    'the tip target, the displacement command, the tip wrench, the tensions at '
                    'the anchors (tendon/tip_state, a model with tendon friction), the fixed '
                    'frames (/tf_static, latched: the tip marker) and the contact topics (a '
                    'simulator with a world).',
        formatter_class=DefaultsHelpFormatter)
    parser.add_argument('out', type=OutputPath('new folder'), metavar='OUT_BAG',
                        help='bag folder to create (must not exist)')
    parser.add_argument('--topics', nargs='+', metavar='T', default=None,
                        help='topic names to record (default: all of the contract, see above)')
    parser.add_argument('--namespace', default='', metavar='NS',
                        help="the stack's namespace (launch argument namespace): its topics "
                             'are recorded under it, /tf, /tf_static and /clock as they are')
    parser.add_argument('--storage', choices=tuple(STORAGE_PLUGINS), default='mcap',
                        help='storage format of the bag')
    parser.add_argument('--duration', type=non_negative, default=0.0, metavar='S',
                        help='stop after S seconds (0: until Ctrl-C)')
    parser.set_defaults(func=run)


def _select(names):
    from tendon_robot_sim.ros import topics
    if names is None:
        return topics.RECORDED_BY_DEFAULT
    chosen = []
    for name in names:
        topic = topics.find_topic(name)
        if topic is None:
            raise CommandError(f'--topics: {name!r} is not a topic of the stack; known: '
                               f'{", ".join(t.name for t in topics.ALL_TOPICS)}')
        if topic not in chosen:
            chosen.append(topic)
    return tuple(chosen)


def run(args) -> int:
    check_ros_environment()
    if not (math.isfinite(args.duration) and args.duration >= 0.0):
        raise CommandError(f'--duration: must be >= 0 s (0: until Ctrl-C), got {args.duration:g}')
    try:
        check_namespace(args.namespace)
    except ValueError as error:
        raise CommandError(f'--namespace: {error}') from None
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    chosen = _select(args.topics)
    # Ctrl-C, SIGTERM and SIGHUP end the loop, then the bag is closed.
    with StopSignals() as stop:
        counts, unpublished, silence = _record(args, chosen, stop)
    print(f'bag: {args.out} ({sum(counts.values())} messages: '
          + ', '.join(f'{topic} {n}' for topic, n in counts.items()) + ')', flush=True)
    if not any(counts.values()):
        # an empty bag is no recording; kept, since it is complete and the user named it
        raise NoResultError(f'no message recorded: {silence} (the bag {args.out} is kept, '
                            'empty)')
    if unpublished and args.topics is not None:
        # topics named on the command line are wanted; the default set is the whole contract,
        # of which a stack publishes only part
        terminal_logger('record').warning(f'no publisher ever on {", ".join(unpublished)}')
    return 0


def _record(args, chosen, stop) -> tuple[dict, list, str]:
    """
    Record until ``stop`` or the end of --duration.

    Return the messages per topic, the topics that never had a publisher and the recorder's
    :meth:`~tendon_robot_sim.ros.recorder.BagRecorder.silence`.
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.signals import SignalHandlerOptions

    from tendon_robot_sim.ros.recorder import BagRecorder

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor()
    recorder = None
    counts, unpublished, silence = {}, [], ''
    try:
        try:
            recorder = BagRecorder(args.out, chosen, storage=args.storage,
                                   namespace='/' + args.namespace.strip('/'))
        except BagError as error:
            raise command_error(error) from None
        executor.add_node(recorder)
        print(f'recording {len(chosen)} topics to {args.out} ({args.storage}): '
              + ', '.join(recorder.subscriptions_by_topic)
              + '; Ctrl-C stops' + (f' (else {args.duration:g} s)' if args.duration else ''),
              flush=True)
        end = time.monotonic() + args.duration if args.duration else math.inf
        while not stop and time.monotonic() < end:
            executor.spin_once(timeout_sec=min(0.1, max(0.0, end - time.monotonic())))
        _drain(executor, recorder)
    finally:
        executor.shutdown()
        if recorder is not None:
            recorder.close()
            counts, unpublished = recorder.counts, recorder.unpublished
            silence = recorder.silence()
            recorder.destroy_node()
        rclpy.try_shutdown()
    return counts, unpublished, silence


def _drain(executor, recorder) -> None:
    """
    Record what DDS delivered before the stop: the callbacks already ready are run.

    A reliable publisher counts a message delivered once this process has it; a Ctrl-C
    right after must not lose it (:func:`~tendon_robot_sim.ros.spinner.drain`).
    """
    from tendon_robot_sim.ros.spinner import drain
    drain(executor, recorder, lambda: sum(recorder.counts.values()))
