"""ROS 2 helpers shared by the nodes: topic table and QoS, parameters, messages.

Only ``nodes/`` and this package import rclpy; ``core/`` stays ROS-free.
"""
