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
Managed (lifecycle) nodes: transition callbacks that report their errors, and driving a node.

:func:`reported` wraps a node's transition callbacks. :func:`bring_to_active` does what
``ros2 lifecycle set`` and launch_ros's ``ChangeState`` events do, for the local launcher:
ask ``<node>/get_state``, then call ``<node>/change_state`` with configure and activate.
"""

import functools
import os
import time
from typing import Callable

from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.lifecycle import TransitionCallbackReturn
from rclpy.signals import SignalHandlerOptions

POLL_PERIOD = 0.05   # s: how often a wait looks at ``cancelled``
STATE_ANSWER_TIMEOUT = 1.0   # s: then get_state is asked again


def reported(callback: Callable) -> Callable:
    """
    Wrap a transition callback (``on_configure`` ...) so that an unexpected error is logged.

    rclpy turns an exception in a transition callback into ERROR without a word, and the
    node goes to ``on_error`` and back to unconfigured: the user would see only "configure
    failed". Here the error is logged in one line under the node's name, then ERROR.
    """
    transition = callback.__name__.removeprefix('on_')

    @functools.wraps(callback)
    def guarded(node, state):
        try:
            return callback(node, state)
        except Exception as error:   # noqa: B902 (any error: rclpy would swallow it)
            node.get_logger().error(f'{transition} failed: internal error, '
                                    f'{type(error).__name__}: {error} (please report it)')
            return TransitionCallbackReturn.ERROR
    return guarded


def bring_to_active(target: str, timeout: float = 30.0,
                    cancelled: Callable[[], bool] = lambda: False) -> str:
    """
    Configure, then activate, the managed node ``target`` through its services.

    Runs in a context of its own (no signal handlers: the caller owns them), so it
    may run in any thread. A node already inactive is only activated; one already
    active is left as it is.

    Parameters
    ----------
    target : str
        Fully qualified node name, e.g. ``/arm/hardware_bridge``.
    timeout : float
        Longest wait [s] for the node to answer, and for each transition.
    cancelled : callable() -> bool
        Polled while waiting; true: give up at once.

    Returns
    -------
    str
        '' once the node is active, otherwise what went wrong.

    """
    context = rclpy.Context()
    rclpy.init(args=[], context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(f'lifecycle_starter_{os.getpid()}', context=context,
                             start_parameter_services=False)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        get_state = node.create_client(GetState, f'{target}/get_state')
        change_state = node.create_client(ChangeState, f'{target}/change_state')
        # The graph may still list the services of an earlier node of that name, and a
        # request sent before the node itself is matched is lost: get_state, which may be
        # asked again, is asked until the node answers; a transition is requested once.
        deadline = time.monotonic() + timeout
        state = None
        while state is None:
            if cancelled() or time.monotonic() > deadline:
                return f'{target}: no answer to get_state after {timeout:g} s'
            if get_state.wait_for_service(timeout_sec=POLL_PERIOD):
                state = _call(executor, get_state, GetState.Request(), STATE_ANSWER_TIMEOUT,
                              cancelled)
        label = state.current_state.label
        if label == 'active':
            return ''
        if label not in ('unconfigured', 'inactive'):
            return f'{target} is {label}'
        steps = [('configure', Transition.TRANSITION_CONFIGURE)] if label == 'unconfigured' \
            else []
        for name, transition in steps + [('activate', Transition.TRANSITION_ACTIVATE)]:
            response = _call(executor, change_state,
                             ChangeState.Request(transition=Transition(id=transition)),
                             timeout, cancelled)
            if response is None:
                return f'{name}: no answer from {target} after {timeout:g} s'
            if not response.success:
                return f'{name} failed (the node logs why)'
        return ''
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()


def _call(executor, client, request, timeout: float, cancelled: Callable[[], bool]):
    """Return the response to ``request``, or None after ``timeout`` [s] or when cancelled."""
    future = client.call_async(request)
    deadline = time.monotonic() + timeout
    while not future.done():
        if cancelled() or time.monotonic() > deadline:
            client.remove_pending_request(future)
            return None
        executor.spin_once(timeout_sec=POLL_PERIOD)
    return future.result()
