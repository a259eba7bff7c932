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

"""`tendon-robot-sim view` as a user runs it: it serves the page, says where; Ctrl-C ends it."""

import os
from pathlib import Path
import re
import subprocess
import sys
import urllib.request

import numpy as np
import pytest
from recorded import write_bag
from ros_helpers import interrupt, ROOT
import waiting

# the command's own line, once it is ready (not viser's banner, printed before)
URL = re.compile(r'(?:playing|view of) .* on http://127\.0\.0\.1:(\d+)')


def serve(tmp_path: Path, *arguments: str):
    """Start the command with ``arguments`` (port 0); return the process and its page's URL."""
    log = tmp_path / 'view.log'
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get('PYTHONPATH')) if p))
    with open(log, 'w') as out:
        process = subprocess.Popen([sys.executable, '-m', 'tendon_robot_sim.cli', 'view',
                                    '--port', '0', *arguments], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    port = waiting.wait_for(lambda: [m.group(1) for m in URL.finditer(log.read_text())],
                            'the address of the page')[-1]
    return process, f'http://127.0.0.1:{port}/', log


@pytest.mark.parametrize('mode', ['live', 'bag'])
def test_the_command_serves_the_page_and_stops_on_ctrl_c(tmp_path, mode):
    arguments = ()
    if mode == 'bag':
        write_bag(tmp_path / 'bag', np.zeros((3, 4)))
        arguments = ('--bag', str(tmp_path / 'bag'))
    process, url, log = serve(tmp_path, *arguments)
    try:
        with urllib.request.urlopen(url, timeout=30) as page:
            assert page.status == 200 and b'<html' in page.read().lower()
    finally:
        code = interrupt(process)
    assert code == 0, log.read_text()
    assert 'Traceback' not in log.read_text()
