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
RViz views and robot descriptions of a stack whose frames carry a prefix.

The files in ``rviz/`` and ``urdf/`` name the frames without a prefix
(``base_link``). A stack started with ``frame_prefix:=left_arm/`` publishes
``left_arm/base_link`` and so on, so its RViz view needs the prefixed fixed frame
and a RobotModel display that looks the URDF links up under the prefix. The
functions here derive such a view from the shipped one; nothing else changes (the
topics are relative and follow the namespace RViz runs in).

This module imports without ROS.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
import tempfile
import xml.etree.ElementTree as ElementTree

from tendon_robot_sim.files.outputs import make_folder, write_output
from tendon_robot_sim.files.yaml_loader import yaml_value
import yaml

#: Where derived views are written (they are small and named by their content); one folder
#: per user, so that nobody writes into a folder another user created.
GENERATED_DIR = Path(tempfile.gettempdir()) / f'tendon_robot_sim_views_{os.getuid()}'


def prefixed_view(text: str, frame_prefix: str) -> str:
    """
    Return the RViz config ``text`` with its frames under ``frame_prefix``.

    The fixed frame becomes ``<frame_prefix><fixed frame>``. RViz's RobotModel
    display joins its ``TF Prefix`` and a link name with a ``/``, so it gets the
    prefix without its trailing slash; a prefix that does not end in ``/`` cannot be
    expressed there and the RobotModel keeps looking up the unprefixed links (the
    markers, TF and pose displays work with any prefix).

    Parameters
    ----------
    text : str
        An RViz 2 config (YAML).
    frame_prefix : str
        Prepended to every frame id of the stack; empty: ``text`` comes back unchanged.

    Returns
    -------
    str
        The config as YAML (comments are not kept).

    """
    if not frame_prefix:
        return text
    config = yaml_value(text, 'RViz config')
    manager = config['Visualization Manager']
    options = manager['Global Options']
    options['Fixed Frame'] = frame_prefix + options['Fixed Frame']
    if frame_prefix.endswith('/'):
        for display in manager['Displays']:
            if display['Class'] == 'rviz_default_plugins/RobotModel':
                display['TF Prefix'] = frame_prefix[:-1]
    return yaml.safe_dump(config, sort_keys=False)


def prefixed_view_file(view: Path, frame_prefix: str) -> Path:
    """
    Return a file holding the view ``view`` for ``frame_prefix``.

    Without a prefix that is ``view`` itself; otherwise a derived copy in
    :data:`GENERATED_DIR`, named by its content, so that stacks started at the same
    time with different prefixes never share one.
    """
    if not frame_prefix:
        return view
    text = prefixed_view(view.read_text(), frame_prefix)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    path = GENERATED_DIR / f'{view.stem}_{digest}{view.suffix}'
    if not path.is_file():
        # written aside and renamed: a reader never sees half a file
        write_output(make_folder(GENERATED_DIR) / path.name, text)
    return path


def urdf_without_links(text: str, links: tuple[str, ...]) -> str:
    """
    Return the URDF ``text`` without ``links`` and the joints that hold them.

    For a stack in which nothing publishes a frame for those links (the hardware
    stack has no ``tip_link``: its sensor measures a position only): RViz's
    RobotModel would otherwise report them without a transform.

    Raises
    ------
    ValueError
        A name of ``links`` is not a link of the URDF, or another link hangs from it.

    """
    robot = ElementTree.fromstring(text)
    names = {link.get('name') for link in robot.findall('link')}
    for name in links:
        if name not in names:
            raise ValueError(f'URDF: no link {name!r} to leave out; links: {sorted(names)}')
        for joint in robot.findall('joint'):
            if joint.find('parent').get('link') == name:
                raise ValueError(f'URDF: link {name!r} cannot be left out, joint '
                                 f'{joint.get("name")!r} hangs from it')
            if joint.find('child').get('link') == name:
                robot.remove(joint)
        robot.remove(next(link for link in robot.findall('link') if link.get('name') == name))
    return ElementTree.tostring(robot, encoding='unicode')
