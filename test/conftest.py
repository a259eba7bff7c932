"""Test-wide settings: DDS stays on this machine, on a domain of this run's own."""

import os

# Kilted ignores ROS_LOCALHOST_ONLY; this keeps discovery on loopback.
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
# A domain per run so parallel runs on one machine never see each other's topics.
os.environ.setdefault('ROS_DOMAIN_ID', str(1 + os.getpid() % 100))
