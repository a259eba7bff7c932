"""
Drive a managed (lifecycle) node from outside, through its standard services.

What ``ros2 lifecycle set`` and launch_ros's ``ChangeState`` events do, for the local
launcher: call ``<node>/change_state`` with configure, then activate.
"""

import os
import time
from typing import Callable

from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

POLL_PERIOD = 0.05   # s: how often a wait looks at ``cancelled``


def bring_to_active(target: str, timeout: float = 30.0,
                    cancelled: Callable[[], bool] = lambda: False) -> str:
    """
    Configure, then activate, the managed node ``target`` through ``change_state``.

    Runs in a context of its own (no signal handlers: the caller owns them), so it
    may run in any thread.

    Parameters
    ----------
    target : str
        Fully qualified node name, e.g. ``/arm/hardware_bridge``.
    timeout : float
        Longest wait [s] for the service to appear, and for each answer.
    cancelled : callable() -> bool
        Polled while waiting; true: give up at once.

    Returns
    -------
    str
        '' once the node is active, otherwise what went wrong.

    """
    context = rclpy.Context()
    rclpy.init(context=context, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node(f'lifecycle_starter_{os.getpid()}', context=context,
                             start_parameter_services=False)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    try:
        client = node.create_client(ChangeState, f'{target}/change_state')
        if not _wait(lambda: client.wait_for_service(timeout_sec=POLL_PERIOD), timeout,
                     cancelled):
            return f'{target}/change_state: no service after {timeout:g} s'
        for label, transition in (('configure', Transition.TRANSITION_CONFIGURE),
                                  ('activate', Transition.TRANSITION_ACTIVATE)):
            future = client.call_async(ChangeState.Request(transition=Transition(id=transition)))
            if not _wait(lambda: executor.spin_once(timeout_sec=POLL_PERIOD) or future.done(),
                         timeout, cancelled):
                return f'{label}: no answer from {target} after {timeout:g} s'
            if not future.result().success:
                return f'{label} failed (the node logs why); it stays as it was'
        return ''
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()


def _wait(done: Callable[[], bool], timeout: float, cancelled: Callable[[], bool]) -> bool:
    """Call ``done()`` (which may block up to POLL_PERIOD) until true, cancelled or timed out."""
    deadline = time.monotonic() + timeout
    while not cancelled() and time.monotonic() < deadline:
        if done():
            return True
    return False
