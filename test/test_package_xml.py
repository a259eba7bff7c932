"""package.xml declares what the code imports, so rosdep and colcon install it."""

import ast
from pathlib import Path
import xml.etree.ElementTree as ElementTree

ROOT = Path(__file__).resolve().parent.parent
# Import names that are ROS packages (rosdep key = the name); others map to python3-* keys.
ROS_PREFIXES = ('rclpy', 'rcl_interfaces', 'builtin_interfaces', 'ament_index_python',
                'launch', 'launch_ros')
PYTHON_KEYS = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
               'serial': 'python3-serial', 'matplotlib': 'python3-matplotlib',
               'tqdm': 'python3-tqdm', 'numba': 'python3-numba'}


def imported_top_level_names() -> set[str]:
    names = set()
    for path in [*(ROOT / 'tendon_robot_sim').rglob('*.py'), *(ROOT / 'launch').glob('*.py')]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split('.')[0])
    return names


def test_every_imported_ros_or_system_package_is_an_exec_depend():
    declared = {e.text for e in ElementTree.parse(ROOT / 'package.xml').getroot()
                if e.tag in ('exec_depend', 'depend')}
    needed = set()
    for name in imported_top_level_names():
        if name.endswith('_msgs') or name.endswith('_srvs') or name in ROS_PREFIXES:
            needed.add(name)
        elif name in PYTHON_KEYS:
            needed.add(PYTHON_KEYS[name])
    assert needed - declared == set(), f'missing <exec_depend> in package.xml: {needed - declared}'


def test_declared_ros_packages_are_used():
    """A declared ROS package that no file imports (or launches) is a needless dependency."""
    declared = {e.text for e in ElementTree.parse(ROOT / 'package.xml').getroot()
                if e.tag in ('exec_depend', 'depend') and not e.text.startswith('python3-')}
    imported = imported_top_level_names()
    # started as processes by the stack definition, not imported
    launched = {'robot_state_publisher', 'rviz2'}
    assert declared - imported - launched == set()
