"""Test-wide settings: DDS stays on this machine, on a domain of this run's own."""

import os

import pytest

# Kilted ignores ROS_LOCALHOST_ONLY; this keeps discovery on loopback.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
# A domain per run so parallel runs on one machine never see each other's topics.
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))


@pytest.fixture(scope='module')
def robot_file(tmp_path_factory):
    """Write a small, fast robot file (test/ros_helpers.py small_robot_dict) for the node tests."""
    from ros_helpers import write_small_robot   # here: ROS-free tests never import rclpy
    return write_small_robot(tmp_path_factory.mktemp('robot'))
