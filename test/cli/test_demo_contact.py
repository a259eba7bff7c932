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
``make demo-contact``: the robot bent around the post onto the plate, through the ROS stack.

The command of the Makefile target, run for real (the sim stack headless, a headless chromium
for the picture): the contacts it reads back from the topics must be those of an independent
statics solve of the same robot, world and inputs (warm steps, as the controller's ramp), the
picture must show the arrows' magenta.
"""

import csv
import io
import os
from pathlib import Path
import subprocess
import sys

import numpy as np
from PIL import Image
import pytest
import tendon_robot_sim
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.contact.world import load_world
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.view import headless
from waiting import COMMAND_TIMEOUT

ROOT = Path(tendon_robot_sim.__file__).resolve().parent.parent
WORLD = share_dir() / 'config' / 'world_post.yaml'
# The stack's final equilibrium and the reference's are warm-started from different paths
# (the controller's 0.02 N steps, the reference's 0.25 N): each within the solver tolerance;
# a lost contact or one of the wrong obstacle is >= 25 mN.
FORCE_TOLERANCE = 1e-3    # N


def test_make_demo_contact_presses_the_post_and_the_plate(tmp_path):
    if headless.browser_paths() is None and not os.environ.get('CI'):
        pytest.skip('chromium and chromedriver are needed for the picture')
    makefile = (ROOT / 'Makefile').read_text()
    target = makefile[makefile.index('\ndemo-contact:'):]
    command = target[target.index('cli demo') + len('cli '):target.index('--out')]
    arguments = command.replace('\\', ' ').split()
    out = tmp_path / 'contact'
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    result = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli', *arguments,
                             '--out', str(out)], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=COMMAND_TIMEOUT)
    assert result.returncode == 0, result.stderr + (out / 'stack.log').read_text()
    assert arguments[:5] == ['demo', '--world', 'config/world_post.yaml', '--pull', 't3']
    tension = float(arguments[arguments.index('--tension') + 1])
    with open(out / 'contacts.csv') as f:
        rows = list(csv.DictReader(f))
    solver = StaticsSolver(load_robot(default_robot_file()), 'cosserat', world=load_world(WORLD))
    for step in np.arange(0.25, tension + 1e-9, 0.25):
        expected = solver.solve_tensions({'t3': float(step)}).contacts
    assert [r['obstacle'] for r in rows] == [c.obstacle for c in expected] == ['post', 'plate']
    for row, contact in zip(rows, expected):
        force = [float(row[k]) for k in ('fx_n', 'fy_n', 'fz_n')]
        assert np.allclose(force, contact.force, rtol=0.0, atol=FORCE_TOLERANCE)
    image = np.asarray(Image.open(io.BytesIO((out / 'contact.png').read_bytes())).convert('RGB'))
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    assert ((np.minimum(r, b) > 90) & (g < 0.6 * np.minimum(r, b))).sum() > 20, 'no arrow'
    assert 'contact with post' in result.stdout and 'contact with plate' in result.stdout
