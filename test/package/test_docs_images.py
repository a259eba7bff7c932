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
The docs' images are drawn by the current code (``make docs-images``, docs/images.yaml).

They went stale: a legend the code had moved off the curves, a label the code had renamed, two
panels where the command beside the picture draws three. Each image is listed with its
documented command and its plotting sources; a source or command changed since the image was
drawn, or an image replaced by hand, fails here.
"""

import importlib.util
from pathlib import Path
import re
import shutil

import pytest

ROOT = Path(__file__).resolve().parents[2]
SPEC = importlib.util.spec_from_file_location('docs_images', ROOT / 'scripts' / 'docs_images.py')
docs_images = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(docs_images)
IMAGES = docs_images.read_manifest()


def test_every_image_is_drawn_by_its_command_from_the_current_sources():
    assert docs_images.stale() == []


def test_every_image_of_the_docs_and_the_readme_is_in_the_manifest():
    shown = {f'docs/{name}' for page in (ROOT / 'docs').glob('*.md')
             for name in re.findall(r'!\[[^\]]*\]\(([^)/]+\.png)\)', page.read_text())}
    shown |= set(re.findall(r'!\[[^\]]*\]\((docs/[^)]+\.png)\)', (ROOT / 'README.md').read_text()))
    files = {f'docs/{p.name}' for p in (ROOT / 'docs').glob('*.png')}
    assert shown <= files
    assert files == set(IMAGES), 'docs/images.yaml lists every PNG of docs/, and only those'


def documented(command: str) -> list[str]:
    """
    Return the parts of the command the docs give: split where a scratch output ({out}) is.

    An output option's file (``--plot {out}/x.png``) is the docs' own name there, so the option
    and its value split the command; what lies between must be in the docs as it is.
    """
    parts, kept = [], []
    for token in command.split():
        if '{' in token:
            if kept and kept[-1].startswith('--'):
                kept.pop()
            parts.append(' '.join(kept))
            kept = []
            continue
        kept.append(token)
    parts.append(' '.join(kept))
    return [part for part in parts if part]


DOCS = ' '.join(' '.join(page.read_text().replace('\\\n', ' ').split())
                for page in [ROOT / 'README.md', *(ROOT / 'docs').glob('*.md')])


@pytest.mark.parametrize('image', sorted(IMAGES))
def test_each_image_comes_from_a_documented_command(image):
    missing = [part for part in documented(IMAGES[image]['command']) if part not in DOCS]
    assert not missing, (image, missing)


@pytest.fixture
def copy(tmp_path):
    """Copy the manifest, its images and sources (what the check reads) into a folder."""
    for path in {'docs/images.yaml', *IMAGES, *(s for e in IMAGES.values() for s in e['sources'])}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / path, tmp_path / path)
    return tmp_path


def test_a_changed_plotting_source_makes_its_images_stale(copy):
    with open(copy / 'tendon_robot_sim/models/pcr/workspace.py', 'a') as source:
        source.write('\n# a change to the plotting code\n')
    assert [line.split(':')[0] for line in docs_images.stale(copy)] == ['docs/pcr_workspace.png']


def test_a_changed_command_makes_its_image_stale(copy):
    images = docs_images.read_manifest(copy)
    images['docs/snake_tensions.png']['command'] += ' --duration 6'
    docs_images.write_manifest(images, copy)
    assert docs_images.stale(copy) == [
        'docs/snake_tensions.png: its command or plotting sources changed since it was drawn; '
        'make docs-images draws it again']


def test_an_image_replaced_by_hand_is_stale(copy):
    shutil.copyfile(copy / 'docs/pcr_helix.png', copy / 'docs/pcr_rotation.png')
    assert [line.split(':')[0] for line in docs_images.stale(copy)] == ['docs/pcr_rotation.png']


def test_what_a_command_prints_is_kept_with_its_outputs(copy, tmp_path_factory):
    # make opencr-v4 prints its held-out figures; with the scratch folder removed and its output
    # thrown away they were lost (the friction stage's figures of one stop): --keep keeps both
    images = docs_images.read_manifest(copy)
    script = "import shutil, sys; print('held out 5.91 mm'); shutil.copyfile(*sys.argv[1:])"
    entry = dict(images['docs/pcr_helix.png'], output='drawn.png',
                 command=f'python -c "{script}" docs/pcr_rotation.png {{out}}/drawn.png')
    keep = tmp_path_factory.mktemp('kept')
    runs = {}
    assert docs_images.draw('docs/pcr_helix.png', entry, runs, root=copy, keep=keep)
    [scratch] = runs.values()
    assert scratch.parent == keep
    assert (scratch / 'command.log').read_text() == 'held out 5.91 mm\n'
    drawn = (copy / 'docs/pcr_helix.png').read_bytes()
    assert drawn == (copy / 'docs/pcr_rotation.png').read_bytes()
