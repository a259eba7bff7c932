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

"""The udev rule for the FTDI latency timer (issue 28 item 8): shipped, well formed, documented."""

from pathlib import Path
import re
import runpy
from unittest import mock

ROOT = Path(__file__).resolve().parents[2]
RULE = 'udev/99-tendon-robot-sim-ftdi.rules'
# One udev rule key: KEY or KEY{attribute}, an operator, a double-quoted value (udev(7)).
KEY = re.compile(r'^([A-Z_]+(?:\{[a-z_]+\})?)(==|!=|=|\+=|:=)"([^"]*)"$')


def installed_files(monkeypatch) -> dict[str, list[str]]:
    """Return setup.py's data_files: {install folder: [source files]}."""
    captured = {}
    monkeypatch.chdir(ROOT)   # setup.py globs relative to the source tree
    with mock.patch('setuptools.setup', lambda **kwargs: captured.update(kwargs)):
        runpy.run_path(str(ROOT / 'setup.py'), run_name='__main__')
    return dict(captured['data_files'])


def test_the_rule_is_installed_as_a_share_file(monkeypatch):
    assert installed_files(monkeypatch)['share/tendon_robot_sim/udev'] == [RULE]


def test_the_rule_sets_the_latency_timer_of_ftdi_adapters_to_1_ms():
    rules = [line for line in (ROOT / RULE).read_text().splitlines()
             if line.strip() and not line.startswith('#')]
    assert len(rules) == 1
    keys = {}
    for part in rules[0].split(', '):
        match = KEY.match(part.strip())
        assert match, f'not a udev key: {part!r}'
        keys[match[1]] = (match[2], match[3])
    assert keys == {'ACTION': ('==', 'add'), 'SUBSYSTEM': ('==', 'usb-serial'),
                    'DRIVER': ('==', 'ftdi_sio'), 'ATTR{latency_timer}': ('=', '1')}
    assert Path(RULE).name in (ROOT / 'docs' / 'hardware.md').read_text()
