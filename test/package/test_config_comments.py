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

"""The comments of the shipped robot files point to sections that exist."""

from pathlib import Path
import re

import pytest

ROOT = Path(__file__).resolve().parents[2]
# (docs/page.md, "Section") or (README, "Section") in a comment
REFERENCE = re.compile(r'\((README|docs/[a-z_]+\.md)(?:, "([^"]+)")?\)')


def headings(page: str) -> set[str]:
    path = ROOT / ('README.md' if page == 'README' else page)
    return {line.lstrip('#').strip() for line in path.read_text().splitlines()
            if line.startswith('#')}


@pytest.mark.parametrize('path', sorted((ROOT / 'config').glob('*.yaml')), ids=lambda p: p.name)
def test_section_references_resolve(path):
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        comment = line.partition('#')[2]
        for page, section in REFERENCE.findall(comment):
            assert page == 'README' or (ROOT / page).is_file(), f'{path.name}:{number}: {page}'
            if section:
                assert section in headings(page), (
                    f'{path.name}:{number}: {page} has no section "{section}"')


def test_the_default_robot_says_where_its_numbers_come_from():
    """Issue 30: Tuzlaci's public example script, not the write-up (which gives none)."""
    text = (ROOT / 'config' / 'robot.yaml').read_text()
    assert 'example_no_visualization.py' in text and 'gabotuzl/TendonForces' in text
