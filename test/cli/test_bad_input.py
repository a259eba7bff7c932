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
Every command, every kind of bad input: one line naming the argument, the documented exit code.

One table for all commands (docs/cli.md, "Exit codes"): 2 for a bad argument, file or field, 1
for a valid input without a result (diverged, not converged, unreachable, infeasible). The last
test makes every command, sub-command included, appear in the table, so a new command cannot
forget its rows. Commands run in-process (fast); a few through the real entry point prove that
no traceback reaches the terminal there either.
"""

import os
from pathlib import Path
import subprocess
import sys

import pytest

from tendon_robot_sim import cli

ROOT = Path(__file__).resolve().parents[2]
BAD, NO_RESULT = 2, 1
PCR = str(ROOT / 'config' / 'pcr_6rus.yaml')
ROBOT = str(ROOT / 'config' / 'robot.yaml')
DATASET = ['dataset', '--robot', ROBOT, '--output', '{out}/d', '--model']
SNAKE = str(ROOT / 'config' / 'rolling_joint_snake.yaml')
BHA = str(ROOT / 'config' / 'bionic_handling_assistant.yaml')

# (argv, exit code, text the one error line must contain). {name} stands for a file of
# FILES, written for the test.
CASES = [
    # simulate: tensions NaN, inf, negative, wrong count, absurd; times zero, NaN; robot files
    (['simulate', '--tensions', 'nan,0,0,0'], BAD, '--tensions: item 0'),
    (['simulate', '--tensions', '0,inf,0,0'], BAD, 'must be finite'),
    (['simulate', '--tensions', '-1,0,0,0'], BAD, 'tensions'),
    (['simulate', '--tensions', '1,2'], BAD, 'tensions'),
    (['simulate', '--tensions', '1e12,0,0,0'], BAD, 'tensions'),
    (['simulate', '--duration', '0'], BAD, 'argument --duration'),
    (['simulate', '--dt', 'nan'], BAD, 'argument --dt'),
    (['simulate', '--robot', '{missing}'], BAD, 'cannot read'),
    (['simulate', '--robot', '{empty}'], BAD, 'empty.yaml'),
    (['simulate', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['simulate', '--robot', '{list}'], BAD, 'list.yaml'),
    (['simulate', '--robot', '{nan_rod}'], BAD, 'rod.youngs_modulus'),
    (['simulate', '--robot', PCR], BAD, 'kind'),
    # statics
    (['statics', '--tensions', 'nan,0,0,0'], BAD, '--tensions'),
    (['statics', '--displacements', '0,0,inf,0'], BAD, '--displacements'),
    (['statics', '--tensions', '0,1', '--model', 'kirchhoff'], BAD, 'tensions'),
    (['statics', '--tensions', '1,0,0,0', '--tip-force', '0,nan,0'], BAD, '--tip-force'),
    (['statics', '--tensions', '1,0,0,0', '--tip-moment', '0,0'], BAD, '--tip-moment'),
    (['statics', '--tensions', '-3,0,0,0'], BAD, 'tensions'),
    (['statics', '--tensions', '1,0,0,0', '--robot', '{binary}'], BAD, 'not UTF-8'),
    # constant curvature
    (['cc', '--displacements', '1e9,0,0,0'], BAD, 'more than the section length'),
    (['cc', '--tip', 'nan,0,0.2'], BAD, '--tip'),
    (['cc', '--tip', '5,0,0'], NO_RESULT, 'reach'),
    (['cc', '--displacements', '0.1,0.1'], BAD, 'displacements'),
    (['cc', '--displacements', 'inf,0,0,0'], BAD, '--displacements'),
    (['cc', '--tip', '0.2,0,0', '--robot', '{list}'], BAD, 'list.yaml'),
    # constant-curvature dynamics
    (['cc-dynamics', '--scheme', 'rk4'], BAD, "argument --scheme: invalid choice: 'rk4'"),
    (['cc-dynamics', '--tensions', 't0=nan'], BAD, '--tensions'),
    (['cc-dynamics', '--tensions', 't0=-2'], BAD, 't0'),
    (['cc-dynamics', '--tensions', 't0=2', '--dt', '0'], BAD, 'argument --dt'),
    (['cc-dynamics', '--tensions', 't0=2', '--duration', '-1'], BAD, 'argument --duration'),
    (['cc-dynamics', '--tensions', 't0=1e12'], BAD, 't0'),
    # absurd run lengths: more steps than a run keeps in memory
    (['cc-dynamics', '--tensions', 't0=1', '--duration', '1e12'], BAD,
     '--duration: 1e+12 s in steps of --dt 0.005 s'),
    (['cc-dynamics', '--tensions', 't0=1', '--dt', '1e-12'], BAD, 'argument --dt: must be a time'),
    (['cc-dynamics', '--pressures', 'p1=1e5'], BAD, 'take tensions; use --tensions'),
    (['cc-dynamics', '--pressures', 'p1=1e5', '--robot', BHA, '--dt', '0.5',
      '--duration', '1'], NO_RESULT, 'dt'),
    (['cc-dynamics', '--tensions', 't0=1', '--robot', '{empty}'], BAD, 'empty.yaml'),
    # snake
    (['snake', 'forward', '--tensions', 'nan,1,1,1'], BAD, '--tensions: item 0'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--angles', 'nan,0,0,0,0,0'], BAD,
     '--angles'),
    (['snake', 'forward', '--tensions', '1,1,1'], BAD, '--tensions'),
    (['snake', 'forward', '--tensions', '-1,1,1,1'], BAD, '--tensions'),
    (['snake', 'forward', '--tensions', '1e9,1,1,1'], BAD, '--tensions'),
    (['snake', 'forward', '--tensions', '60,1,1,1', '--dt', '0.01'], NO_RESULT,
     '--dt 0.005 stays stable'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--dt', '0'], BAD, 'argument --dt'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--duration', '1e12'], BAD,
     'shorten --duration'),
    (['snake', 'inverse', '--trajectory', 'pan', '--duration', '1e9', '--out', '{out}'], BAD,
     'shorten --duration'),
    (['snake', 'inverse', '--trajectory', '{nan_csv}', '--out', '{out}'], BAD,
     'row 3, column theta2: must be finite'),
    (['snake', 'inverse', '--trajectory', '{missing}', '--out', '{out}'], BAD, 'cannot read'),
    (['snake', 'inverse', '--trajectory', '{binary}', '--out', '{out}'], BAD, 'binary'),
    (['snake', 'inverse', '--trajectory', '{steep_csv}', '--out', '{out}'], NO_RESULT,
     'no feasible tensions'),
    (['snake', 'inverse', '--trajectory', 'pan', '--dt', '-1', '--out', '{out}'], BAD,
     'argument --dt'),
    (['snake', 'inverse', '--trajectory', 'pan', '--robot', '{nan_rod}'], BAD, 'kind'),
    # parallel continuum robot
    (['pcr', 'ik', '--position', 'nan,0,0.5'], BAD, '--position'),
    (['pcr', 'ik', '--position', '0,0,5'], NO_RESULT, ''),
    (['pcr', 'ik', '--position', '0,0,0.5', '--force', '0,0,-1e9'], BAD, '--force[2]: must be'),
    (['pcr', 'ik', '--position', '0,0,0.5', '--force', '0,0,-1e5'], NO_RESULT, ''),
    (['pcr', 'ik', '--position', '0,0,0.5', '--orientation-deg', '0,0'], BAD,
     '--orientation-deg'),
    (['pcr', 'ik', '--position', '0,0,0.5', '--robot', '{list}'], BAD, 'list.yaml'),
    (['pcr', 'fk', '--motor-angles-deg', '10,10'], BAD, '--motor-angles-deg'),
    (['pcr', 'fk', '--motor-angles-deg', '10,10,12,12,8,100'], BAD, 'motor limits'),
    (['pcr', 'fk', '--from-json', '{empty}'], BAD, '--from-json'),
    (['pcr', 'workspace', '--heights', '0.7:0.4:3', '--out', '{out}'], BAD, '--heights'),
    (['pcr', 'workspace', '--heights', '0.4:inf:3', '--out', '{out}'], BAD, 'need finite'),
    (['pcr', 'workspace', '--heights', '0.4:0.7:100000', '--per-height', '100000', '--out',
      '{out}'], BAD, '1e+10 solves'),
    (['pcr', 'workspace', '--per-height', '0', '--out', '{out}'], BAD, 'argument --per-height'),
    (['pcr', 'workspace', '--radius', 'nan', '--out', '{out}'], BAD, 'argument --radius'),
    (['pcr', 'workspace', '--scheduler', 'http://x:1', '--out', '{out}'], BAD,
     '--scheduler'),
    # the ROS stack: bad inputs fail before anything starts
    (['launch', 'sim', '--robot', '{missing}'], BAD, 'cannot read'),
    (['launch', 'sim', '--robot', '{binary}', '--dry-run'], BAD, 'not UTF-8'),
    (['launch', 'sim', '--arg', 'mode=fast', '--dry-run'], BAD, 'mode=fast'),
    (['launch', 'sim', '--arg', 'nonsense:=1', '--dry-run'], BAD, 'nonsense'),
    # launch arguments and --param: checked against the stack and the nodes' tables first
    (['launch', 'sim', '--arg', 'mode:=warp', '--dry-run'], BAD, 'mode: must be one of'),
    (['launch', 'sim', '--arg', 'robot:=no/such/robot.yaml', '--dry-run'], BAD,
     'launch argument robot: '),
    (['launch', 'sim', '--param', 'simulator:publish_rate:=fast', '--dry-run'], BAD,
     'parameter publish_rate: must be a number'),
    (['launch', 'sim', '--param', 'simulator:publish_rate:=1e9', '--dry-run'], BAD,
     'parameter publish_rate: must be within [1.0, 500.0]'),
    (['launch', 'sim', '--param', 'simulator:no_such:=1', '--dry-run'], BAD,
     'node simulator has no such parameter'),
    (['launch', 'sim', '--param', 'no_such:=1'], BAD, "no node of stack 'sim' has it"),
    (['launch', 'hardware', '--param', 'hardware_bridge:robot_file:={binary}', '--dry-run'],
     BAD, 'not UTF-8'),
    (['demo', '--tension', '-1'], BAD, 'argument --tension'),
    (['demo', '--robot', '{missing}'], BAD, 'cannot read'),
    (['demo', '--elements', '0'], BAD, 'argument --elements'),
    (['emulate', '--dropout', '2'], BAD, 'argument --dropout'),
    (['emulate', '--robot', '{empty}'], BAD, 'empty.yaml'),
    (['emulate', '--status-rate', 'inf'], BAD, 'argument --status-rate'),
    (['record', '{out}/new_bag', '--duration', '-1'], BAD, 'argument --duration'),
    (['replay', '{missing}'], BAD, 'missing'),
    (['replay', '{empty_dir}'], BAD, 'empty_dir'),
    (['replay', '{missing}', '--rate', '0'], BAD, 'argument --rate'),
    # experiments
    (['synth-experiment', '{out}/new_bag', '--youngs-modulus', '-1'], BAD,
     'argument --youngs-modulus'),
    (['synth-experiment', '{out}/new_bag', '--noise', 'nan'], BAD, 'argument --noise'),
    (['synth-experiment', '{out}/new_bag', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['synth-experiment', '{out}/step', '--experiment', 'step', '--tension', '1e9'], BAD,
     "the max_tension of tendon 't0'"),
    (['validate', '{missing}', '--report', '{out}'], BAD, 'missing'),
    (['validate', '{binary}', '--report', '{out}'], BAD, 'binary'),
    (['validate', '{nan_holds}', '--report', '{out}'], BAD, 'holds.csv'),
    (['validate', '{missing}', '--report', '{out}', '--hold-time', '0'], BAD,
     'argument --hold-time'),
    (['calibrate', '{missing}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml'], BAD,
     'missing'),
    (['calibrate', '{nan_holds}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml'], BAD,
     "column 'tip_x'"),
    (['calibrate', '{holds}', '--fit', 'magic', '--out', '{out}/r.yaml'], BAD, 'magic'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--bounds', 'x', '--out',
      '{out}/r.yaml'], BAD, '--bounds'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--bounds',
      'youngs_modulus=nan:1e7', '--out', '{out}/r.yaml'], BAD, '--bounds: youngs_modulus'),
    # dataset: counts, a sampler without its file, a model of another kind, a bad scheduler
    (['dataset', '--robot', '{missing}', '--model', 'cc', '--output', '{out}/d'], BAD,
     '--robot: no such file'),
    ([*DATASET, 'cc', '--samples', '0'], BAD, 'argument --samples: must be a whole number >= 1'),
    ([*DATASET, 'cc', '--samples', '1000000000000'], BAD, 'several runs'),
    ([*DATASET, 'cc', '--chunk-size', 'nan'], BAD, 'argument --chunk-size'),
    ([*DATASET, 'cc', '--sampler', 'csv'], BAD, '--csv: --sampler csv needs'),
    ([*DATASET, 'cc', '--sampler', 'csv', '--csv', '{binary}'], BAD, 'binary'),
    ([*DATASET, 'pcr'], BAD, 'kind: required key is missing'),
    ([*DATASET, 'cc', '--scheduler', 'nowhere'], BAD, "'nowhere' is not tcp://HOST:PORT"),
    # warmup takes no arguments (its cache folder check: test/cli/test_warmup_cli.py)
    (['warmup', '--fast'], BAD, 'unrecognized arguments: --fast'),
    # hardware: a port that is not there, baud rates the SDK does not open, currents
    (['hardware', 'scan', '--port', '{missing}', '--baud', '57600'], BAD, 'cannot open'),
    (['hardware', 'scan', '--port', '{missing}', '--baud', '12345'], BAD, 'not among the rates'),
    (['hardware', 'scan', '--port', '{missing}', '--baud', 'nan'], BAD, '--baud: item 0'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--baud', '-1'], BAD,
     'argument --baud'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--currents', '0.1'], BAD,
     'at least two steps'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--currents', '0.1,-1'], BAD,
     '--currents: numbers > 0'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--currents', '0.1,inf'], BAD,
     '--currents: item 1'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--currents', '0.1,9'], BAD,
     'above the current_limit'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--config', '{binary}'], BAD,
     '--config'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--config', '{list}'], BAD,
     '--config'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--answers', '{empty}'], BAD,
     '--port: cannot open'),
    # a file that is not a serial port
    (['hardware', 'scan', '--port', '/dev/null', '--baud', '57600'], BAD,
     '--port: cannot open /dev/null'),
    (['hardware', 'calibrate-tension', '--port', '/dev/null', '--answers', '{empty}'], BAD,
     '--port: cannot open /dev/null'),
    # demo --hardware: an unknown device, a robot the hardware stack does not drive
    (['demo', '--hardware', 'servo'], BAD, "argument --hardware: invalid choice: 'servo'"),
    (['demo', '--hardware', 'dynamixel', '--robot', SNAKE], BAD,
     '--hardware: the hardware stack drives a tendon robot'),
    (['demo', '--hardware', 'dynamixel', '--elements', '5'], BAD,
     '--elements: the hardware demo has no simulated rod'),
]


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    """Write the bad files of the table; make a folder for outputs."""
    folder = tmp_path_factory.mktemp('bad_input')
    robot = (ROOT / 'config' / 'robot.yaml').read_text()
    contents = {
        'empty': ('empty.yaml', ''),
        'binary': ('binary.bin', bytes(range(256)) * 4),
        'list': ('list.yaml', '- 1\n- 2\n'),
        'nan_rod': ('nan_rod.yaml', robot.replace('youngs_modulus:', 'youngs_modulus: .nan #')),
        'nan_csv': ('nan.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                    + '0,0,0,0,0,0,0\n0.1,0,nan,0,0,0,0\n' + '0.2,0,0,0,0,0,0\n' * 3),
        'steep_csv': ('steep.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                      + ''.join(f'{0.01 * k:.2f},0,{k % 2:.1f},0,0,0,0\n'
                                for k in range(8))),
        'nan_holds': ('holds.csv', 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,nan,0,0.2\n'),
        'holds': ('good_holds.csv', 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.25,0,-0.01\n'
                  '0,2,0,0,0.24,0.02,-0.01\n'),
    }
    paths = {'missing': str(folder / 'missing.yaml'), 'out': str(folder / 'out')}
    for key, (name, content) in contents.items():
        path = folder / name
        (path.write_bytes if isinstance(content, bytes) else path.write_text)(content)
        paths[key] = str(path)
    (folder / 'empty_dir').mkdir()
    paths['empty_dir'] = str(folder / 'empty_dir')
    return paths


def run(argv, files, capsys):
    code = cli.main([word.format(**files) for word in argv])
    out = capsys.readouterr()
    return code, out.err


@pytest.mark.parametrize('argv, code, text', CASES, ids=[' '.join(c[0]) for c in CASES])
def test_bad_input_is_one_line_and_a_documented_exit(argv, code, text, files, capsys):
    exit_code, err = run(argv, files, capsys)
    assert 'Traceback' not in err and 'internal error' not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert exit_code == code, (exit_code, err)
    assert text.format(**files) in lines[0], lines[0]


@pytest.mark.parametrize('argv', [CASES[0][0], CASES[-3][0], ['snake', 'inverse',
                                                              '--trajectory', '{binary}']])
def test_the_real_entry_point_prints_no_traceback(argv, files):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get('PYTHONPATH', ''))
    proc = subprocess.run([sys.executable, '-m', 'tendon_robot_sim.cli',
                           *[word.format(**files) for word in argv]],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == BAD
    assert 'Traceback' not in proc.stderr and proc.stderr.count('\n') == 1, proc.stderr


def commands(parser, prefix=()):
    """Yield the words of every command and sub-command of the parser."""
    subparsers = [a for a in parser._actions if a.__class__.__name__ == '_SubParsersAction']
    if not subparsers:
        yield ' '.join(prefix)
    for action in subparsers:
        for name, sub in action.choices.items():
            yield from commands(sub, prefix + (name,))


def test_every_command_has_rows():
    covered = {' '.join(argv[:2]) for argv, _, _ in CASES} | {argv[0] for argv, _, _ in CASES}
    missing = [name for name in commands(cli.build_parser()) if name not in covered]
    assert missing == [], f'commands without bad-input rows: {missing}'


def test_running_out_of_memory_is_bad_input_in_one_line(monkeypatch, capsys):
    """A size no check foresaw ends as exit 2 with one line, not as an internal error."""
    from tendon_robot_sim.commands import warmup

    def ask_too_much(args):
        raise MemoryError('Unable to allocate 29.1 TiB for an array')
    monkeypatch.setattr(warmup, 'run', ask_too_much)
    assert cli.main(['warmup']) == BAD
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'warmup: error: out of memory (Unable to allocate' in err
