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

"""package.xml declares what the code imports, so rosdep and colcon install it."""

import ast
import os
from pathlib import Path
import re
import sys
import xml.etree.ElementTree as ElementTree

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Import names that are ROS packages (rosdep key = the name); others map to python3-* keys.
ROS_PREFIXES = ('rclpy', 'rcl_interfaces', 'builtin_interfaces', 'ament_index_python',
                'launch', 'launch_ros', 'dynamixel_sdk', 'rosidl_parser')
PYTHON_KEYS = {'numpy': 'python3-numpy', 'scipy': 'python3-scipy', 'yaml': 'python3-yaml',
               'serial': 'python3-serial', 'matplotlib': 'python3-matplotlib',
               'tqdm': 'python3-tqdm', 'numba': 'python3-numba'}
# Imported, without a rosdep key: package.xml's comment names them (pip only); the others come
# with one of those (viser: msgspec, websockets, rich, trimesh; rosbags: lz4, zstandard) or
# with python3-matplotlib (PIL).
PIP_ONLY = {'elastica', 'rosbags', 'threadpoolctl', 'viser', 'selenium', 'distributed',
            'pyarrow', 'msgspec', 'websockets', 'rich', 'trimesh', 'lz4', 'zstandard', 'PIL'}

# Per <license> (SPDX id): the notice every source file starts with, below its Copyright line(s)
# (ament_copyright's file header template), and marks that LICENSE holds, in this order.
LICENSES = {
    'Apache-2.0': {
        'notice': """
            Licensed under the Apache License, Version 2.0 (the "License");
            you may not use this file except in compliance with the License.
            You may obtain a copy of the License at

                http://www.apache.org/licenses/LICENSE-2.0

            Unless required by applicable law or agreed to in writing, software
            distributed under the License is distributed on an "AS IS" BASIS,
            WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
            See the License for the specific language governing permissions and
            limitations under the License.
            """,
        'license_file': [
            'Apache License', 'Version 2.0, January 2004', 'http://www.apache.org/licenses/',
            'TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION', '1. Definitions.',
            '2. Grant of Copyright License.', '3. Grant of Patent License.',
            '4. Redistribution.', '5. Submission of Contributions.', '6. Trademarks.',
            '7. Disclaimer of Warranty.', '8. Limitation of Liability.',
            '9. Accepting Warranty or Additional Liability.', 'END OF TERMS AND CONDITIONS'],
    },
}
# As ament_copyright reads it: 'Copyright [(c)] years holder', years like 2020-2024, 2026.
YEARS = r'\d{4}(?:-\d{4})?'
COPYRIGHT_LINE = re.compile(rf'Copyright(?: \(c\))? {YEARS}(?:, ?{YEARS})*,? \S.*', re.IGNORECASE)


def imported_top_level_names(paths=None) -> set[str]:
    """
    Return the top-level modules that ``paths`` import (default: the package and launch files).

    ``pytest.importorskip('name')`` counts as an import.
    """
    if paths is None:
        paths = [*(ROOT / 'tendon_robot_sim').rglob('*.py'), *(ROOT / 'launch').glob('*.py')]
    names = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names.update(alias.name.split('.')[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names.add(node.module.split('.')[0])
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                  and node.func.attr == 'importorskip' and isinstance(node.args[0], ast.Constant)):
                names.add(node.args[0].value.split('.')[0])
    return names


def test_every_imported_ros_or_system_package_is_an_exec_depend():
    declared = {e.text for e in ElementTree.parse(ROOT / 'package.xml').getroot()
                if e.tag in ('exec_depend', 'depend')}
    needed, unknown = set(), set()
    for name in imported_top_level_names():
        if name.endswith('_msgs') or name.endswith('_srvs') or name in ROS_PREFIXES:
            needed.add(name)
        elif name in PYTHON_KEYS:
            needed.add(PYTHON_KEYS[name])
        elif name not in sys.stdlib_module_names | PIP_ONLY | {'tendon_robot_sim'}:
            unknown.add(name)
    # a new import is classified here, so that a ROS package is never left out of package.xml
    assert unknown == set(), f'imports neither ROS, a rosdep key nor pip only: {unknown}'
    assert needed - declared == set(), f'missing <exec_depend> in package.xml: {needed - declared}'


def test_declared_ros_packages_are_used():
    """A declared ROS package that no file imports (or launches) is a needless dependency."""
    declared = {e.text for e in ElementTree.parse(ROOT / 'package.xml').getroot()
                if e.tag in ('exec_depend', 'depend') and not e.text.startswith('python3-')}
    imported = imported_top_level_names()
    # started as processes by the stack definition, not imported
    launched = {'robot_state_publisher', 'rviz2'}
    assert declared - imported - launched == set()


def test_every_ament_linter_the_tests_run_is_a_test_depend():
    """Declare the linters as ros2 pkg create does, so colcon test finds them installed."""
    declared = {e.text for e in ElementTree.parse(ROOT / 'package.xml').getroot()
                if e.tag in ('test_depend', 'depend', 'exec_depend')}
    linters = {name for name in imported_top_level_names((ROOT / 'test').rglob('*.py'))
               if name.startswith('ament_')}
    assert linters >= {'ament_copyright', 'ament_flake8', 'ament_pep257'}
    missing = linters - declared
    assert missing == set(), f'missing <test_depend> in package.xml: {missing}'


def words(text: str) -> str:
    """Return ``text`` with its whitespace normalised (line breaks do not matter)."""
    return ' '.join(text.split())


def package_license() -> str:
    return ElementTree.parse(ROOT / 'package.xml').getroot().findtext('license').strip()


def python_sources() -> list[Path]:
    """
    Return the Python files ament_copyright checks, as it finds them.

    Directories starting with '.' or '_' (.venv, __pycache__) are skipped, and so is the
    package-level setup.py.
    """
    sources = []
    for directory, subdirectories, files in os.walk(ROOT):
        subdirectories[:] = [d for d in subdirectories if d[0] not in '._']
        sources += [Path(directory, f) for f in files if f.endswith('.py')]
    return sorted(path for path in sources if path != ROOT / 'setup.py')


def header_problem(text: str, notice: str) -> str | None:
    """
    Return what is wrong with the license header of a source file, None if nothing.

    The file must start (after a shebang or coding line and blank lines) with a comment
    block of one or more Copyright lines followed by ``notice``. An empty file needs none.
    """
    lines = text.splitlines()
    while lines and (lines[0].startswith('#!') or re.match(r'#.*coding[:=]', lines[0])
                     or not lines[0].strip()):
        lines.pop(0)
    if not lines:
        return None
    comment = []
    for line in lines:
        if not line.startswith('#'):
            break
        comment.append(line[1:].strip())
    copyrights = 0
    while copyrights < len(comment) and COPYRIGHT_LINE.fullmatch(comment[copyrights]):
        copyrights += 1
    if copyrights == 0:
        return 'does not start with a Copyright line'
    if not words(' '.join(comment[copyrights:])).startswith(words(notice)):
        return 'the license notice does not follow the Copyright line'
    return None


def test_license_of_package_xml_has_a_known_header():
    assert package_license() in LICENSES, (
        f'package.xml <license>{package_license()}</license>: add its header to LICENSES')


def test_every_python_file_starts_with_the_license_header():
    notice = LICENSES[package_license()]['notice']
    problems = [f'{path.relative_to(ROOT)}: {problem}' for path in python_sources()
                if (problem := header_problem(path.read_text(encoding='utf-8'), notice))]
    assert problems == [], 'license headers (as ament_copyright expects):\n' + '\n'.join(problems)


def test_license_file_holds_the_license_of_package_xml():
    path = ROOT / 'LICENSE'
    assert path.is_file(), 'LICENSE is missing at the package root'
    text, position = words(path.read_text(encoding='utf-8')), -1
    for mark in LICENSES[package_license()]['license_file']:
        found = text.find(mark, position + 1)
        assert found > position, f'LICENSE: {mark!r} is missing or out of place'
        position = found


APACHE_HEADER = (
    '# Copyright 2026 tendon_robot_sim maintainers\n#\n'
    + ''.join(f'# {line.strip()}\n' if line.strip() else '#\n'
              for line in LICENSES['Apache-2.0']['notice'].strip().splitlines()))


@pytest.mark.parametrize('text, problem', [
    (APACHE_HEADER + '\n"""Module."""\n', None),
    ('#!/usr/bin/env python3\n' + APACHE_HEADER + '\nimport os\n', None),
    ('# Copyright 2015 Open Source Robotics Foundation, Inc.\n' + APACHE_HEADER, None),
    ('', None),
    ('"""Module."""\n' + APACHE_HEADER, 'does not start with a Copyright line'),
    ('# Copyright tendon_robot_sim maintainers\n' + APACHE_HEADER.split('\n', 1)[1],
     'does not start with a Copyright line'),
    ('# Copyright 2026 someone\n#\n# Permission is hereby granted, free of charge\n',
     'the license notice does not follow the Copyright line'),
    (APACHE_HEADER.replace('WITHOUT WARRANTIES', 'WITH WARRANTIES'),
     'the license notice does not follow the Copyright line'),
])
def test_header_check_tells_a_wrong_header(text, problem):
    assert header_problem(text, LICENSES['Apache-2.0']['notice']) == problem
