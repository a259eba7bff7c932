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
Draw every image of docs/ (and the README's) again from the current code: ``make docs-images``.

``docs/images.yaml`` lists each image with the documented command that draws it, the file the
command writes, and the source files of its plotting code. Drawing an image records two
hashes there: ``inputs`` (the command, the output's name and the sources) and ``image`` (the
PNG's bytes). ``--check`` (and ``test/package/test_docs_images.py``) compares them with the
files as they are: a plotting source or a command changed without the image drawn again, or
an image replaced by hand, is stale.

    python scripts/docs_images.py                  # every image
    python scripts/docs_images.py docs/pcr_workspace.png
    python scripts/docs_images.py --check          # exit 1 naming the stale images
    python scripts/docs_images.py --keep runs/     # keep each command's folder and its log

A command runs from the repository's root with ``{out}`` a scratch folder; ``tendon-robot-sim``
and ``python`` are this interpreter's. What a command prints goes to ``command.log`` in that
folder, which ``--keep DIR`` keeps (under DIR) with the command's other outputs: the figures a
long command prints (``make opencr-v4``'s held-out errors) are not lost; without it the folder
is removed at the end. An entry with ``needs: VARIABLE`` runs only when that
environment variable is set (``{VARIABLE}`` in its command: data not in the repository) and is
kept, and said to be kept, otherwise.
"""

from __future__ import annotations

import argparse
import hashlib
import os
from pathlib import Path
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = Path(__file__).resolve().parents[1]
MANIFEST = 'docs/images.yaml'
HEADER = """\
# Every image of docs/ and the README, and how it is drawn: `make docs-images` runs each
# command (from the repository's root; {out} a scratch folder) and copies its output over the
# image, then records the hashes below; test/package/test_docs_images.py fails when a command
# or a plotting source changed since, or an image was replaced by hand (scripts/docs_images.py).
# sources: the plotting code of the image (and the command that calls it).
"""


def inputs_hash(root: Path, entry: dict) -> str:
    """Return the sha256 of an entry's command, output name and sources (path and bytes)."""
    digest = hashlib.sha256()
    for text in (entry['command'], entry['output']):
        digest.update(text.encode() + b'\0')
    for source in sorted(entry['sources']):
        digest.update(source.encode() + b'\0' + (root / source).read_bytes() + b'\0')
    return digest.hexdigest()


def image_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(root: Path = ROOT) -> dict:
    return yaml.safe_load((root / MANIFEST).read_text())['images']


def write_manifest(images: dict, root: Path = ROOT) -> None:
    text = yaml.safe_dump({'images': images}, sort_keys=False, width=100)
    (root / MANIFEST).write_text(HEADER + text)


def stale(root: Path = ROOT) -> list[str]:
    """Return one line per image whose command, sources or bytes changed since it was drawn."""
    problems = []
    for image, entry in read_manifest(root).items():
        missing = [s for s in entry['sources'] if not (root / s).is_file()]
        if missing:
            problems.append(f'{image}: source {missing[0]} does not exist')
        elif not (root / image).is_file():
            problems.append(f'{image}: missing; make docs-images draws it')
        elif entry.get('inputs') != inputs_hash(root, entry):
            problems.append(f'{image}: its command or plotting sources changed since it was '
                            'drawn; make docs-images draws it again')
        elif entry.get('image') != image_hash(root / image):
            problems.append(f'{image}: not the image its command drew (replaced by hand?); '
                            'make docs-images draws it again')
    return problems


def command_line(entry: dict, out: Path) -> list[str]:
    """Return the argv of an entry's command: this interpreter's, {out} and {NEEDS} filled."""
    values = {'out': str(out)}
    if entry.get('needs'):
        values[entry['needs']] = os.environ[entry['needs']]
    argv = [arg.format(**values) for arg in shlex.split(entry['command'])]
    if argv[0] == 'tendon-robot-sim':
        argv[:1] = [sys.executable, '-m', 'tendon_robot_sim.cli']
    elif argv[0] == 'python':
        argv[0] = sys.executable
    return argv


def draw(image: str, entry: dict, runs: dict, root: Path = ROOT,
         keep: Path | None = None) -> bool:
    """
    Run the entry's command, copy its output over ``image``, record the hashes: True if drawn.

    ``runs`` maps each command already run to its scratch folder: images of one command
    (the report of ``make opencr-v4``) share one run. The folder is made in ``keep`` when
    given (else in the system's temporary folder) and holds what the command printed,
    ``command.log``.
    """
    needs = entry.get('needs')
    if needs and not os.environ.get(needs):
        print(f'{image}: kept (its command needs {needs}=DIR: {entry.get("why", "")})',
              flush=True)
        return False
    scratch = runs.get(entry['command'])
    if scratch is None:
        scratch = Path(tempfile.mkdtemp(prefix='docs_images_', dir=keep))
        runs[entry['command']] = scratch
        argv = command_line(entry, scratch)
        print(f'{image}: {shlex.join(argv)}', flush=True)
        with open(scratch / 'command.log', 'w') as log:
            done = subprocess.run(argv, cwd=root, stdout=log)
        if done.returncode != 0:
            raise SystemExit(f'{image}: the command exited with code {done.returncode} '
                             f'(its output: {scratch / "command.log"})')
    shutil.copyfile(scratch / entry['output'], root / image)
    entry['inputs'] = inputs_hash(root, entry)
    entry['image'] = image_hash(root / image)
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('images', nargs='*', help='images to draw (default: every one)')
    parser.add_argument('--check', action='store_true',
                        help='draw nothing: exit 1 naming every stale image')
    parser.add_argument('--keep', type=Path, metavar='DIR',
                        help="keep each command's folder (its outputs and command.log) in DIR")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for line in problems:
            print(line, file=sys.stderr)
        return 1 if problems else 0
    images = read_manifest()
    unknown = [i for i in args.images if i not in images]
    if unknown:
        print(f'{unknown[0]}: not in {MANIFEST}', file=sys.stderr)
        return 2
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
    runs: dict[str, Path] = {}
    try:
        for image in args.images or list(images):
            if draw(image, images[image], runs, keep=args.keep):
                write_manifest(images)      # after each: an interrupted run keeps what it drew
    finally:
        for command, scratch in runs.items():
            if args.keep:
                print(f'kept: {scratch} ({command})', flush=True)
            else:
                shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
