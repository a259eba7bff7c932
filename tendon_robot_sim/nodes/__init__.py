
"""
The ROS nodes: thin adapters, each ``main()`` on :func:`tendon_robot_sim.ros.runner.run_node`.

Ctrl-C, SIGTERM and SIGHUP end a node with exit code 0 at any moment; also while its
modules load, before ``run_node`` takes the signals (this package is imported first).
"""

from tendon_robot_sim import exit_quietly_on_interrupt

exit_quietly_on_interrupt(0)
