"""tendon_robot_sim: simulation and control of tendon-driven continuum robots.

Layout: ``core/`` (robot description, physics, control math), ``protocol/``
(serial device protocols and drivers), ``commands/`` (the ``tendon-robot-sim``
command-line tool) import without rclpy; only ``nodes/`` and ``ros/`` import rclpy.
"""

from pathlib import Path

__version__ = '0.1.0'

PACKAGE_NAME = 'tendon_robot_sim'


def share_dir() -> Path:
    """Folder holding config/, launch/, urdf/, rviz/.

    In a source checkout or an editable install this is the repository root; in a
    colcon/ament install it is ``share/tendon_robot_sim`` found through ament_index.
    """
    source_root = Path(__file__).resolve().parent.parent
    if (source_root / 'config' / 'robot.yaml').is_file():
        return source_root
    try:
        from ament_index_python.packages import get_package_share_directory
        return Path(get_package_share_directory(PACKAGE_NAME))
    except (ImportError, LookupError) as error:
        raise FileNotFoundError(
            'cannot find the tendon_robot_sim share folder (config/, launch/ ...): '
            f'not a source checkout and not installed with colcon ({error})') from None


def default_robot_file() -> Path:
    """The default robot description, ``config/robot.yaml``."""
    return share_dir() / 'config' / 'robot.yaml'
