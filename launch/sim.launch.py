"""Simulation stack: simulator, tension controller, robot_state_publisher, RViz.

    ros2 launch tendon_robot_sim sim.launch.py [robot:=FILE] [mode:=dynamic|quasi_static]
        [rviz:=true|false] [use_sim_time:=true|false] [namespace:=NS]
        [frame_prefix:=PREFIX]

Nodes, parameter files and launch arguments are defined once, in
``tendon_robot_sim/stack.py`` (``STACKS['sim']``); ``tendon-robot-sim launch sim``
starts the same nodes where ``ros2 launch`` is not installed.
"""

from tendon_robot_sim.stack import launch_description


def generate_launch_description():
    return launch_description('sim')
