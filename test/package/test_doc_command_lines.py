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
Every command line the docs show works: README.md and docs/*.md, found anew on every run.

A line is a ``tendon-robot-sim ...`` line of a code block, or an inline span of the prose
that gives a command with arguments (``ros2 run tendon_robot_sim tendon-robot-sim`` counts
too); a pipe runs its commands in turn, the output of one the input of the next. Every line
must exit 0, run in a folder of its own that holds ``config/`` and the files the docs name as
inputs (my_robot.yaml, calibrated.yaml, experiment_bag, my_motion.csv, inputs.csv).

So that the test stays fast, the lines run in this process, with:

* sizes shrunk, the rest as written: ``--samples`` at most 4, ``pcr workspace`` 4 points per
  height, ``simulate`` at most 0.3 s simulated (``--until-steady``: ``--max-time 0.3``);
* the commands that run until stopped run briefly: ``record`` and ``emulate`` for 0.2 s,
  ``replay`` at rate 1000 without ``--loop``; ``launch`` with ``--dry-run``, which checks
  every launch argument and parameter as the real launch does (the start itself:
  test/ros/test_ros_launcher.py, test/cli/test_interrupts.py);
* ``/tmp/`` paths in the line's own folder, a Dask cluster ``tcp://cluster:8786`` a local one;
* lines whose run takes minutes or a device are parsed only (arguments and output paths
  checked): PARSE_ONLY says which and which test runs them.
"""

import contextlib
import io
from pathlib import Path
import re
import shlex
import shutil
import sys

import pytest
from tendon_robot_sim import cli
from tendon_robot_sim.commands import OutputPath
from tendon_robot_sim.emulator.dynamixel import bus_text

# the package's source tree (a conftest import would find whichever conftest came first)
ROOT = Path(__file__).resolve().parents[2]
PROGRAM = 'tendon-robot-sim'
PAGES = [ROOT / 'README.md', *sorted((ROOT / 'docs').glob('*.md'))]
# (text in the line, why it is parsed only, and what runs it)
PARSE_ONLY = (
    (f'{PROGRAM} demo', 'starts the stack for a minute: test/cli/test_demo*.py'),
    (f'{PROGRAM} hardware', 'needs the servos on a port: test/cli/test_hardware_command.py'),
    (f'{PROGRAM} warmup', 'compiles every kernel: test/cli/test_warmup_cli.py'),
    (f'{PROGRAM} record', 'records what a running stack publishes (nothing recorded is exit '
                          '1): test/ros/test_record.py'),
    ('--model dynamic', 'minutes of dynamic replays: test/experiment/test_calibration.py'),
    ('--experiment step', 'a dynamic run of 3.5 s: test/experiment/test_calibration.py'),
    ('synth-experiment experiment_bag --noise 0.0002 --seed 1',
     "15 dynamic holds (16 s of CPU): test/experiment/test_model_error.py's fixture runs the "
     'same (the hidden robot, noise 2e-4, seed 1), test/cli/test_synth_experiment_cli.py '
     'its arguments'),
    ('bha_bag', 'a recording of the BHA in ROS: test/nodes/test_ros_cc_identification.py'),
    ('points.csv', 'samples of a bellows robot: test/experiment/test_cc_identification.py'),
    ('bha_steps', 'a chain of 34 s runs and a fit: test/experiment/test_trunk_paper_table.py'),
    ('bha_ramps', 'a chain of 38 s runs and a fit: test/experiment/test_trunk_paper_table.py'),
    (f'{PROGRAM} view', 'serves the page until stopped: test/cli/test_view_cli.py, '
                        'test/view/test_browser.py'),
    ('opencr_ftdcr_v4', 'the FTDCR v4 chain on the excerpt of its recordings (test/data): '
                        'test/experiment/test_opencr.py'),
    ('val_bag', 'validates the bag of that chain: test/experiment/test_opencr.py'),
    ('calibrated_friction.yaml', "that chain's second stage, the rod's bending friction on "
                                 'train_bag: test/experiment/test_opencr.py (the full '
                                 'recordings), test/experiment/test_bending_friction_fit.py'),
    ('calibrated_gravity', "that chain's stages with gravity fitted, on train_bag: the full "
                           'recordings; the fit of gravity: test/experiment/test_gravity_fit.py'),
)
# The inputs the docs name, made once for all lines (name -> how).
ROBOT_COPY = 'config/robot.yaml'
INPUTS = ('my_robot.yaml', 'calibrated.yaml', 'experiment_bag', 'my_motion.csv', 'inputs.csv')


def _code_blocks(text: str):
    """Yield (line number, line) of the code blocks, continuation lines joined."""
    inside, joined, start = False, '', 0
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().startswith('```'):
            inside, joined = not inside, ''
            continue
        if not inside:
            continue
        joined, start = (joined + ' ' + line.strip(), start) if joined else (line.strip(), number)
        if joined.endswith('\\'):
            joined = joined[:-1].strip()
            continue
        yield start, joined
        joined = ''


def _prose_spans(text: str):
    """Yield (line number, text) of the inline code spans outside the code blocks."""
    prose = re.sub(r'^\s*```.*?^\s*```', lambda m: '\n' * m.group(0).count('\n'), text,
                   flags=re.M | re.S)
    for match in re.finditer(r'`([^`]+)`', prose):
        yield prose.count('\n', 0, match.start()) + 1, ' '.join(match.group(1).split())


def _commands() -> set[str]:
    """Return the command words of the tool: 'simulate', 'pcr ik', ..."""
    found = set()

    def walk(parser, prefix):
        for action in parser._actions:
            if action.__class__.__name__ == '_SubParsersAction':
                for name, sub in action.choices.items():
                    found.add(' '.join(prefix + (name,)))
                    walk(sub, prefix + (name,))
    walk(cli.build_parser(), ())
    return found


COMMANDS = _commands()


def _is_command_line(line: str, inline: bool) -> bool:
    line = line.replace(f'ros2 run tendon_robot_sim {PROGRAM}', PROGRAM)
    if not line.startswith(PROGRAM) or re.search(r'<\w+>|COMMAND|\.\.\.', line):
        return False
    try:
        words = shlex.split(line, comments=True)[1:]
    except ValueError:
        return False
    if words == ['--help']:
        return True
    command = ' '.join(words[:2]) if ' '.join(words[:2]) in COMMANDS else words[0] if words else ''
    # a span of the prose that only names a command is a mention, not a command line
    return command in COMMANDS and len(words) > len(command.split()) - (0 if inline else 1)


def doc_lines():
    """Return (page:line, command line) of every command line the docs show, each once."""
    lines = {}
    for page in PAGES:
        text = page.read_text()
        for inline, found in ((False, _code_blocks(text)), (True, _prose_spans(text))):
            for number, line in found:
                line = line.replace(f'ros2 run tendon_robot_sim {PROGRAM}', PROGRAM)
                key = ' '.join(shlex.split(line, comments=True)) if _is_command_line(
                    line, inline) else None
                if key and key not in lines:      # shown twice, run once
                    lines[key] = pytest.param(line, id=f'{page.name}:{number}')
    return list(lines.values())


def test_the_docs_show_command_lines():
    assert len(doc_lines()) > 40


def shrunk(words: list[str]) -> list[str]:
    """Return the arguments of one command with the sizes and run lengths of the docstring."""
    words = list(words)

    def set_option(name: str, value: str, keep_smaller: bool = False) -> None:
        if name in words:
            i = words.index(name) + 1
            if not keep_smaller or float(words[i]) > float(value):
                words[i] = value
        else:
            words.extend([name, value])
    command = words[0]
    if '--samples' in words:
        # 4 solves still sample, solve in curve order, write and describe the dataset; 20
        # statics solves took 15 s, the slowest line of all
        set_option('--samples', '4', keep_smaller=True)
    if words[:2] == ['pcr', 'workspace']:
        set_option('--per-height', '4')
    if command == 'simulate':
        if '--until-steady' in words:
            set_option('--max-time', '0.3')
        else:
            set_option('--duration', '0.3', keep_smaller=True)
    if command == 'emulate':
        set_option('--duration', '0.2')
    if command == 'replay':
        words = [w for w in words if w != '--loop']
        set_option('--rate', '1000')
        set_option('--delay', '0')
    if command == 'launch':
        words.append('--dry-run')
    return words


@pytest.fixture(scope='module')
def inputs(tmp_path_factory):
    """Make the inputs the docs name, once; a local Dask cluster for tcp://cluster:8786."""
    folder = tmp_path_factory.mktemp('doc_inputs')
    for name in ('my_robot.yaml', 'calibrated.yaml'):
        shutil.copy(ROOT / ROBOT_COPY, folder / name)
    # the hidden robot as a statics model: the lines need a bag of holds, not how it was made
    # (the docs' own synth-experiment line runs the dynamic one)
    assert cli.main(['synth-experiment', str(folder / 'experiment_bag'), '--robot',
                     str(ROOT / ROBOT_COPY), '--truth-model', 'cosserat']) == 0
    (folder / 'my_motion.csv').write_text(
        'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
        + ''.join(f'{0.05 * k:.2f},{0.02 * k:.2f},0,{0.01 * k:.2f},0,0,0\n' for k in range(10)))
    (folder / 'inputs.csv').write_text('displacement_t0,displacement_t1,displacement_t2,'
                                       'displacement_t3\n0.001,0,0,0\n0,0.002,0,0\n')
    from distributed import LocalCluster
    cluster = LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                           dashboard_address=None)
    yield folder, cluster.scheduler_address
    cluster.close()


def in_own_folder(words: list[str], inputs, tmp_path) -> list[str]:
    """Give the line a folder of its own with the inputs it names; return its arguments."""
    folder, scheduler = inputs
    words = [w.replace('/tmp/', f'{tmp_path}/').replace('tcp://cluster:8786', scheduler)
             for w in words]
    (tmp_path / 'config').symlink_to(ROOT / 'config')
    for word in words:   # the bus file of an emulated chain, which `emulate ... &` writes while
        # it runs (this test's emulate line ran 0.2 s and removed it); the launcher reads it
        _, given, path = word.partition('hardware_bridge:dynamixel_file:=')
        if given and not Path(path).exists():
            Path(path).write_text(bus_text())
    made = outputs_of(words)      # record experiment_bag makes it: not given
    for name in INPUTS:
        if name in words and name not in made:
            target = tmp_path / name
            (shutil.copytree if (folder / name).is_dir() else shutil.copy)(folder / name, target)
    return words


@pytest.mark.parametrize('line', doc_lines())
def test_a_command_line_of_the_docs_works(line, inputs, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parts = [shlex.split(part, comments=True) for part in line.rstrip('&').split('|')]
    parse_only = [why for text, why in PARSE_ONLY if text in line]
    given = ''
    for part in parts:
        assert part[0] == PROGRAM, f'{line}: not a {PROGRAM} command'
        words = in_own_folder(part[1:], inputs, tmp_path) if part is parts[0] else part[1:]
        if parse_only:
            check_arguments(words)
            continue
        out, err = io.StringIO(), io.StringIO()
        monkeypatch.setattr(sys, 'stdin', io.StringIO(given))
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(shrunk(words))
        assert code == 0, f'{line}\nexit {code}: {err.getvalue()[-2000:]}'
        given = out.getvalue()


def outputs_of(words: list[str]) -> set[str]:
    """Return the paths a command line writes (its OutputPath arguments), as written."""
    parser = cli.build_parser()
    with contextlib.redirect_stderr(io.StringIO()):
        try:
            args = parser.parse_args(words)
        except SystemExit:
            return set()
    return {str(getattr(args, a.dest)) for a in cli._chosen(parser, args)._actions
            if isinstance(a.type, OutputPath) and getattr(args, a.dest) is not None}


def check_arguments(words: list[str]) -> None:
    """
    Parse as the tool does, output paths included; a usage error fails.

    A robot file the line reads that an earlier line of its chain writes (a fit's
    ``calibrated_friction.yaml``) is made, empty: the parser checks only that it reads.
    """
    parser = cli.build_parser()
    for option, value in zip(words, words[1:]):
        # the options of type commands.input_file (test_bad_input.py holds them to it); only
        # within the line's own folder (the working directory): nothing made elsewhere
        path = Path(value)
        if option in ('--robot', '--urdf') and not path.is_absolute() and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            args = parser.parse_args(words)
            cli._check_outputs(parser, args)
        except SystemExit:
            raise AssertionError(f'{" ".join(words)}: {err.getvalue()}') from None
    assert not any(isinstance(v, OutputPath) for v in vars(args).values())
