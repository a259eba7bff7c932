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

import argparse
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest

from tendon_robot_sim import cli
import trimesh
from waiting import COMMAND_TIMEOUT

ROOT = Path(__file__).resolve().parents[2]
BAD, NO_RESULT = 2, 1
PCR = str(ROOT / 'config' / 'pcr_6rus.yaml')
ROBOT = str(ROOT / 'config' / 'robot.yaml')
DATASET = ['dataset', '--robot', ROBOT, '--output', '{out}/d', '--model']
SNAKE = str(ROOT / 'config' / 'rolling_joint_snake.yaml')
BHA = str(ROOT / 'config' / 'bionic_handling_assistant.yaml')
STEEL = str(ROOT / 'config' / 'steel_rod_robot.yaml')
NITINOL = str(ROOT / 'config' / 'nitinol_robot.yaml')
FRICTION = str(ROOT / 'config' / 'robot_friction.yaml')
HELICAL = str(ROOT / 'config' / 'steel_rod_helical.yaml')
V4 = str(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
V4_MAP = (ROOT / 'config' / 'opencr_ftdcr_v4_columns.yaml').read_text()
V4_TABLE = (ROOT / 'test' / 'data' / 'opencr_ftdcr_v4'
            / 'tdcr_sysid_20260511-183002_val.csv').read_text().splitlines(keepends=True)[:4]

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
    (['simulate', '--robot', '{missing}'], BAD,
     'argument --robot: {missing}: cannot read: No such file or directory'),
    (['simulate', '--robot', '{empty}'], BAD, 'empty.yaml'),
    (['simulate', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['simulate', '--robot', '{list}'], BAD, 'list.yaml'),
    (['simulate', '--robot', '{nan_rod}'], BAD, 'rod.youngs_modulus'),
    (['simulate', '--robot', PCR], BAD, 'kind'),
    # tendon holes outside the discs, for every routing that has an offset
    (['statics', '--robot', '{far_hole}', '--tensions', '1,0,0,0'], BAD,
     'tendons[0].offset: a hole at 0.05 m is outside the discs (vertebrae.radius 0.018 m)'),
    (['simulate', '--robot', '{far_helix}'], BAD, 'tendons[1].offset: a hole at 0.02 m'),
    (['statics', '--robot', '{far_taper}', '--tensions', '1,0,0,0'], BAD,
     'tendons[2].end_offset: a hole at 0.02 m is outside the discs'),
    # simulate: integrators, inputs over time, trajectory output
    (['simulate', '--integrator', 'rk4'], BAD, "argument --integrator: invalid choice: 'rk4'"),
    (['simulate', '--robot', STEEL, '--integrator', 'explicit'], BAD,
     'explicit dynamic model needs vertebra discs'),
    (['simulate', '--tensions-csv', '{missing}'], BAD, '--tensions-csv: '),
    (['simulate', '--displacements-csv', '{binary}'], BAD, 'not UTF-8 text'),
    (['simulate', '--tensions-csv', '{nan_inputs}'], BAD, "line 3, column 't1': must be finite"),
    (['simulate', '--tensions-csv', '{tx_inputs}'], BAD, "unknown column 'tx'"),
    (['simulate', '--tensions-csv', '{back_inputs}'], BAD,
     'times must be >= 0 s and not decrease'),
    (['simulate', '--tensions', '1,0,0,0', '--tensions-csv', '{tx_inputs}'], BAD,
     '--tensions: constant tensions or input files over time, not both'),
    (['simulate', '--robot', NITINOL, '--tensions-csv', '{far_inputs}', '--displacements-csv',
      '{far_inputs}'], BAD, "--displacements-csv: tendon 't0' is also in {far_inputs}"),
    (['simulate', '--displacements-csv', '{far_inputs}', '--integrator', 'explicit'], BAD,
     'the explicit integrator takes tensions only'),
    (['simulate', '--robot', '{soft_nitinol}', '--displacements-csv', '{far_inputs}'], BAD,
     "displacements['t0']: the equilibrium needs 15"),
    (['simulate', '--tensions', 't0=20,t1=20', '--integrator', 'implicit', '--dt', '0.05',
      '--duration', '0.1'], NO_RESULT, 'the whole run converges with --dt 0.025 (tried)'),
    (['simulate', '--robot', NITINOL, '--displacements-csv', '{held_inputs}'], BAD,
     "displacements['t0']: pulling the tendons there from 0 needs more than max_tension = 10 N "
     "of tendon 't0'"),
    (['simulate', '--alpha', '0.1'], BAD, 'argument --alpha: must be within [-0.5, 0]'),
    (['simulate', '--alpha', 'nan'], BAD, 'argument --alpha: must be finite'),
    (['simulate', '--integrator', 'explicit', '--alpha', '-0.5'], BAD,
     '--alpha: applies to the implicit integrator only'),
    (['simulate', '--trajectory-out', '{out}/missing/dir/t.csv'], BAD,
     '--trajectory-out: '),
    # statics
    (['statics', '--tensions', 'nan,0,0,0'], BAD, '--tensions'),
    (['statics', '--displacements', '0,0,inf,0'], BAD, '--displacements'),
    (['statics', '--tensions', '0,1', '--model', 'kirchhoff'], BAD, 'tensions'),
    (['statics', '--tensions', '1,0,0,0', '--tip-force', '0,nan,0'], BAD, '--tip-force'),
    (['statics', '--tensions', '1,0,0,0', '--tip-moment', '0,0'], BAD, '--tip-moment'),
    (['statics', '--tensions', '-3,0,0,0'], BAD, 'tensions'),
    # world files: unknown shape, negative radius, an obstacle through the base, a fake mesh
    (['statics', '--tensions', '0,0,0,0', '--world', '{cone_world}'], BAD,
     "{cone_world}: obstacles[0].shape: must be one of ['plane', 'sphere', 'cylinder', 'box', "
     "'mesh'], got str 'cone'"),
    (['statics', '--tensions', '0,0,0,0', '--world', '{negative_world}'], BAD,
     '{negative_world}: obstacles[0].radius: must be > 0, got -0.01'),
    (['statics', '--tensions', '0,0,0,0', '--world', '{base_world}'], BAD,
     "obstacles[0] (table): intersects the robot's base"),
    (['statics', '--tensions', '0,0,0,0', '--world', '{mesh_world}'], BAD,
     '{mesh_world}: obstacles[0].file: '),
    (['statics', '--tensions', '0,0,0,0', '--world', '{missing}'], BAD, 'cannot read'),
    # the base deep inside a mesh, beyond the contact search's reach of its faces
    (['statics', '--tensions', '0,0,0,0', '--world', '{mesh_base_world}'], BAD,
     "obstacles[0] (crate): intersects the robot's base ([0.0, 0.0, 0.0] is inside the mesh)"),
    (['simulate', '--world', '{mesh_base_world}', '--integrator', 'explicit'], BAD,
     "obstacles[0] (crate): intersects the robot's base"),
    # a ball the unloaded straight rod runs through: every solve starts there
    (['statics', '--tensions', '0,0,0,0', '--world', '{rod_world}'], BAD,
     'obstacles[0] (ball): intersects the unloaded straight robot every solve starts from '
     '(its rod at s = '),
    (['simulate', '--world', '{rod_world}', '--integrator', 'explicit'], BAD,
     'obstacles[0] (ball): intersects the unloaded straight robot'),
    (['statics', '--tensions', '0,0,0,0', '--world', '{inside_out_world}'], BAD,
     '{inside_out_world}: obstacles[0].file: '),
    (['statics', '--tensions', '0,0,0,0', '--world', '{list_world}'], BAD,
     '{list_world}: world description: must be a mapping, got list [1, 2]'),
    (['simulate', '--world', '{base_world}', '--integrator', 'explicit'], BAD,
     "obstacles[0] (table): intersects the robot's base"),
    (['simulate', '--world', '{negative_world}'], BAD, 'obstacles[0].radius: must be > 0'),
    # a contact the step does not resolve: the robot ends inside the obstacle, named
    (['simulate', '--world', '{soft_floor}', '--integrator', 'explicit', '--duration', '0.1'],
     NO_RESULT, "contact with obstacle 'floor' not resolved at dt = "),
    (['simulate', '--robot', STEEL, '--world', '{soft_lid}', '--tensions', '0,0,2,0',
      '--duration', '0.2'], NO_RESULT,
     "contact with obstacle 'lid' not resolved at dt = 0.002 s"),
    (['statics', '--tensions', '0,0,0,0', '--model', 'discrete', '--world', '{negative_world}'],
     BAD, 'obstacles[0].radius: must be > 0'),
    (['statics', '--tensions', '1,0,0,0', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['statics', '--displacements', '0.001,0,0,0', '--robot', '{mm_reference}'], BAD,
     'tendons[0].reference_length: must be within 0.5 to 2 times'),
    # constant curvature
    (['cc', '--displacements', '1e9,0,0,0'], BAD, '--displacements: t0 = 1e+09 m is more'),
    (['cc', '--tip', 'nan,0,0.2'], BAD, '--tip'),
    (['cc', '--tip', '5,0,0'], NO_RESULT, '--tip: [5.0, 0.0, 0.0] is not reachable'),
    (['cc', '--displacements', '0.1,0.1'], BAD, '--displacements: need one value per tendon'),
    (['cc', '--displacements', 'q9=0.1'], BAD, "--displacements: unknown tendon 'q9'"),
    # an arc of a full turn or more, less the rod's diameter, passes through itself
    (['cc', '--tip', '0,0,0'], NO_RESULT, '--tip: a bend of 6.283 rad passes through itself'),
    (['cc', '--displacements', '0.2,0,-0.2,0'], NO_RESULT,
     '--displacements: a bend of 13.33 rad passes through itself'),
    (['cc', '--displacements', 'inf,0,0,0'], BAD, '--displacements'),
    (['cc', '--tip', '0.2,0,0', '--robot', '{list}'], BAD, 'list.yaml'),
    # robots the model does not take: named with their file, as every robot-file error
    (['cc', '--displacements', '0,0.001,0,0', '--robot', FRICTION], BAD,
     f'{FRICTION}: tendons[0].friction: the constant-curvature model does not model tendon'),
    (['cc', '--tip', '0.2,0,0', '--robot', HELICAL], BAD,
     f"{HELICAL}: tendons ['t0', 't1', 't2', 't3']: constant curvature needs parallel tendon"),
    (['cc', '--tip', '0.2,0,0', '--robot', PCR], BAD,
     'kind: pcr_6rus is a 6-RUS parallel continuum robot; this takes a tendon-driven continuum '
     'robot (kind tendon_robot, or no kind) or a bellows-actuated continuum robot'),
    (['cc', '--muscle-lengths', '0.2,0.2'], BAD, '--muscle-lengths: '),
    (['cc', '--robot', BHA, '--muscle-lengths', 'p1=-0.1'], BAD, '--muscle-lengths: p1 = -0.1'),
    (['cc', '--robot', BHA, '--muscle-lengths', 'p1=nan'], BAD, '--muscle-lengths: item 0'),
    (['cc', '--robot', BHA, '--muscle-lengths', 'q1=0.2'], BAD, "unknown bellows 'q1'"),
    # 10 m beside 0.25 m: kappa = 130 rad / 3.5 m, a radius of 26.9 mm inside the 50 mm ring
    (['cc', '--robot', BHA, '--muscle-lengths', 'p1=10'], BAD,
     '--muscle-lengths: the lengths bend section 0 to a radius of 26.9 mm, inside its bellows'),
    (['cc', '--robot', BHA, '--muscle-lengths', '0.2,0.2'], BAD, 'one value per bellows'),
    # millimetres for metres: a trunk 670 m long came out, exit 0; 1e300 m put Infinity and
    # NaN into the JSON
    (['cc', '--robot', BHA, '--muscle-lengths', '250,250,250,220,220,220,200,200,200'], BAD,
     '--muscle-lengths: p1 = 250 m; a length must be within [0.001, 100] m'),
    (['cc', '--robot', BHA, '--muscle-lengths', '1e300,1e300,1e300,0.22,0.22,0.22,0.2,0.2,0.2',
      '--json'], BAD, '--muscle-lengths: p1 = 1e+300 m; a length must be within'),
    (['cc', '--robot', BHA, '--muscle-lengths', 'p4=0.0001'], BAD,
     '--muscle-lengths: p4 = 0.0001 m; a length must be within [0.001, 100] m'),
    (['cc', '--robot', BHA, '--tip', '0,0,1'], BAD, '--tip: '),
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
    # the constant-curvature commands take two kinds: the refusal of a third names both
    (['cc-dynamics', '--tensions', '1,1,1,1', '--robot', SNAKE], BAD,
     'this takes a tendon-driven continuum robot (kind tendon_robot, or no kind) or a '
     'bellows-actuated continuum robot (kind bellows)'),
    # input profiles: every bad file names --*-csv, the file, the line and the column
    (['cc-dynamics', '--tensions-csv', '{missing}'], BAD, '--tensions-csv: '),
    (['cc-dynamics', '--tensions-csv', '{binary}'], BAD, 'not UTF-8'),
    (['cc-dynamics', '--tensions-csv', '{profile_nan}'], BAD, "line 3, column 't1': must be"),
    (['cc-dynamics', '--tensions-csv', '{profile_back}'], BAD, "column 't': times must"),
    (['cc-dynamics', '--tensions-csv', '{profile_unknown}'], BAD, "unknown column 'x1'"),
    (['cc-dynamics', '--tensions-csv', '{profile_high}'], BAD, 'outside the tension range'),
    (['cc-dynamics', '--tensions-csv', '{profile_zero}'], BAD, 'give --duration'),
    # a run as long as the file: its last time named, not a --duration nobody gave
    (['cc-dynamics', '--tensions-csv', '{profile_far}'], BAD,
     "--tensions-csv's last time: 1e+300 s in steps of --dt 0.005 s"),
    (['cc-dynamics', '--tensions-csv', '{profile_short}'], BAD,
     "--dt: 0.005 s is longer than --tensions-csv's last time 1e-12 s"),
    (['simulate', '--tensions-csv', '{profile_far}'], BAD,
     "--tensions-csv's last time: 1e+300 s in steps of"),
    (['simulate', '--tensions-csv', '{profile_short}', '--dt', '0.001'], BAD,
     "--dt: 0.001 s is longer than --tensions-csv's last time 1e-12 s"),
    (['simulate', '--tensions-csv', '{profile_zero}'], BAD,
     '--tensions-csv: the file ends at t = 0 s; give --duration'),
    (['cc-dynamics', '--pressures-csv', '{profile_nan}'], BAD, 'take tensions'),
    (['cc-dynamics', '--robot', BHA, '--pressures-csv', '{profile_unknown}'], BAD,
     '--pressures-csv: '),
    (['cc-dynamics', '--tensions-csv', '{profile_nan}', '--tensions', 't1=1'], BAD,
     'not allowed with argument'),
    # snake
    (['snake', 'forward', '--tensions', 'nan,1,1,1'], BAD, '--tensions: item 0'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--angles', 'nan,0,0,0,0,0'], BAD,
     '--angles'),
    (['snake', 'forward', '--tensions', '1,1,1'], BAD, '--tensions'),
    (['snake', 'forward', '--tensions', '1'], BAD, '--tensions: 1 value, the snake has 4 cables'),
    # a name given twice: the line calls a cable (or a bellows) no tendon
    (['snake', 'forward', '--tensions', 'cable2=3,cable2=1'], BAD,
     "--tensions: 'cable2' is given twice"),
    (['cc', '--robot', BHA, '--muscle-lengths', 'p1=0.2,p1=0.3'], BAD,
     "--muscle-lengths: 'p1' is given twice"),
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
     "--trajectory: {nan_csv}: line 3, column 'theta2': must be finite"),
    (['snake', 'inverse', '--trajectory', '{missing}', '--out', '{out}'], BAD,
     '--trajectory: {missing}: cannot read'),
    (['snake', 'inverse', '--trajectory', '{binary}', '--out', '{out}'], BAD,
     '--trajectory: {binary}: not UTF-8 text'),
    (['snake', 'inverse', '--trajectory', '{profile_nan}', '--out', '{out}'], BAD,
     '--trajectory: {profile_nan}: the first row must be a header starting with "time"'),
    (['snake', 'inverse', '--trajectory', '{word_csv}', '--out', '{out}'], BAD,
     "--trajectory: {word_csv}: line 2, column 'theta1': 'ten' is not a number"),
    (['snake', 'inverse', '--trajectory', '{steep_csv}', '--out', '{out}'], NO_RESULT,
     'no feasible tensions'),
    # rows 1e300 s apart: scipy's spline overflowed, exit 70 (an internal error)
    (['snake', 'inverse', '--trajectory', '{far_times_csv}', '--out', '{out}'], BAD,
     "--trajectory: {far_times_csv}: line 3, column 'time': 1e+300 s after the line before; "
     'a time step must be within [1e-09, 3600] s'),
    (['snake', 'inverse', '--trajectory', '{repeat_times_csv}', '--out', '{out}'], BAD,
     "--trajectory: {repeat_times_csv}: line 4, column 'time': the time repeats the one of "
     'line 3'),
    (['snake', 'inverse', '--trajectory', 'pan', '--dt', '-1', '--out', '{out}'], BAD,
     'argument --dt'),
    (['snake', 'inverse', '--trajectory', '{steep_csv}', '--duration', '5', '--out', '{out}'],
     BAD, "--duration: applies to the paper's trajectories only; a trajectory file gives"),
    (['snake', 'inverse', '--trajectory', '{steep_csv}', '--dt', '1e-3', '--out', '{out}'],
     BAD, "--dt: applies to the paper's trajectories only"),
    (['snake', 'inverse', '--trajectory', 'pan', '--robot', '{nan_rod}'], BAD, 'kind'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--robot', '{empty}'], BAD,
     'empty.yaml: robot description: must be a mapping, got nothing'),
    # snake: external wrench, start pose, ramp; a motion the real snake would slip in
    (['snake', 'inverse', '--trajectory', 'pan', '--tip-wrench', '0,0,1', '--out', '{out}'], BAD,
     '--tip-wrench: must be 6 numbers FX,FY,FZ,MX,MY,MZ'),
    (['snake', 'inverse', '--trajectory', 'pan', '--tip-wrench', '0,0,nan,0,0,0', '--out',
      '{out}'], BAD, '--tip-wrench: item 2'),
    (['snake', 'inverse', '--trajectory', 'pan', '--tip-wrench', 'fx=1', '--out', '{out}'], BAD,
     '--tip-wrench: must be 6 numbers'),
    (['snake', 'inverse', '--trajectory', 'pan', '--tip-wrench', '0,0,0,0,0,0',
      '--wrench-link', '7', '--out', '{out}'], BAD, '--wrench-link: must be a link number 1 to 6'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--tip-wrench', '0,0,-1e9,0,0,0'], BAD,
     '--tip-wrench: force: 1e+09 N is more than the 4 cables can hold together'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--tip-wrench', '0,0,0,1e6,0,0'], BAD,
     '--tip-wrench: moment: 1e+06 N m is more than'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--wrench-link', '0'], BAD,
     'argument --wrench-link'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--wrench-frame', 'tool'], BAD,
     "argument --wrench-frame: invalid choice: 'tool'"),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--wrench-link', '3'], BAD,
     '--wrench-link and --wrench-frame need a --tip-wrench'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--from', '1,1,1,1', '--angles',
      '0,0,0,0,0,0'], BAD, 'not allowed with argument'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--from', 'nan,1,1,1'], BAD,
     '--from: item 0'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--from', '1,1,1,200'], BAD,
     '--from: must be within [0, 150] N'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--ramp', '-1'], BAD, 'argument --ramp'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--ramp', '0.5', '--duration', '0.01'], BAD,
     '--ramp: 0.5 s is longer than --duration 0.01 s: the run would end before the tensions'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--from', '0,0,0,0'], NO_RESULT,
     '--from: these tensions hold the snake nowhere'),
    (['snake', 'forward', '--tensions', '1,1,1,1', '--from', '1,1,1,1'], NO_RESULT,
     '--from: the real snake cannot rest where these tensions balance it: the contact'),
    (['snake', 'forward', '--tensions', '1.5,3.5,1,1', '--duration', '0.1'], NO_RESULT,
     'joint 2: friction constraint broken: a broken constraint means that the real snake'),
    # parallel continuum robot
    (['pcr', 'ik', '--position', 'nan,0,0.5'], BAD, '--position'),
    (['pcr', 'ik', '--position', '0,0,5'], NO_RESULT, ''),
    (['pcr', 'ik', '--position', '0,0,0.5', '--force', '0,0,-1e9'], BAD, '--force[2]: must be'),
    (['pcr', 'ik', '--position', '0,0,0.5', '--force', '0,0,-1e5'], NO_RESULT, ''),
    (['pcr', 'ik', '--position', '0,0,0.5', '--orientation-deg', '0,0'], BAD,
     '--orientation-deg'),
    (['pcr', 'ik', '--position', '0,0,0.5', '--robot', '{list}'], BAD,
     'list.yaml: robot description: must be a mapping, got list'),
    (['pcr', 'fk', '--motor-angles-deg', '0,0,0,0,0,0', '--robot', '{empty}'], BAD,
     'empty.yaml: robot description: must be a mapping, got nothing'),
    (['pcr', 'fk', '--motor-angles-deg', '10,10'], BAD, '--motor-angles-deg'),
    (['pcr', 'fk', '--motor-angles-deg', '10,10,12,12,8,100'], BAD, 'motor limits'),
    (['pcr', 'fk', '--from-json', '{empty}'], BAD, '--from-json'),
    # an angle beyond a turn either way: 1e9 deg was solved (or refused by another name)
    (['pcr', 'ik', '--position', '0.05,0,0.45', '--orientation-deg', '1e9,0,0'], BAD,
     '--orientation-deg: item 0 (1e+09 deg) must be within [-360, 360] deg'),
    (['pcr', 'fk', '--motor-angles-deg', '10,10,12,12,8,-1e9'], BAD,
     '--motor-angles-deg: item 5 (-1e+09 deg) must be within [-360, 360] deg'),
    (['pcr', 'workspace', '--orientations-deg', '0,0,0;0,0,1e9', '--out', '{out}'], BAD,
     '--orientations-deg (orientation 2): item 2 (1e+09 deg) must be within [-360, 360] deg'),
    (['pcr', 'workspace', '--orientations-deg', '0,0,361', '--out', '{out}'], BAD,
     '--orientations-deg: item 2 (361 deg) must be within [-360, 360] deg'),
    (['pcr', 'stiffness', '--orientation-deg', '0,1e9,0'], BAD,
     '--orientation-deg: item 1 (1e+09 deg) must be within [-360, 360] deg'),
    (['pcr', 'stiffness', '--motor-angles-deg', '1e9,10,12,12,8,8'], BAD,
     '--motor-angles-deg: item 0 (1e+09 deg) must be within [-360, 360] deg'),
    (['pcr', 'workspace', '--heights', '0.7:0.4:3', '--out', '{out}'], BAD, '--heights'),
    (['pcr', 'workspace', '--heights', '0.4:inf:3', '--out', '{out}'], BAD, 'need finite'),
    (['pcr', 'workspace', '--heights', '0.4:0.7:100000', '--per-height', '100000', '--out',
      '{out}'], BAD, '1e+10 solves'),
    # an orientation of several that is bad: it was named as the first ("item 0")
    (['pcr', 'workspace', '--orientations-deg', '0,0,0;', '--out', '{out}'], BAD,
     "--orientations-deg: orientation 2 of 2 is empty (a ';' too many?)"),
    (['pcr', 'workspace', '--orientations-deg', '0,0,0;0,nan,0', '--out', '{out}'], BAD,
     "--orientations-deg (orientation 2): item 1 ('nan') must be finite"),
    # one height of a range: it solved at LOW alone, as if HIGH had not been given
    (['pcr', 'workspace', '--heights', '0.4:0.7:1', '--out', '{out}'], BAD,
     "--heights: N = 1 samples LOW alone; give N >= 2 for LOW < HIGH, got '0.4:0.7:1'"),
    (['pcr', 'workspace', '--per-height', '0', '--out', '{out}'], BAD, 'argument --per-height'),
    (['pcr', 'workspace', '--radius', 'nan', '--out', '{out}'], BAD, 'argument --radius'),
    (['pcr', 'workspace', '--scheduler', 'http://x:1', '--out', '{out}'], BAD,
     '--scheduler'),
    # pcr stiffness: non-finite, wrong count, out of the limits, unreachable, singular choices
    (['pcr', 'stiffness', '--position', 'nan,0,0.4'], BAD, '--position'),
    (['pcr', 'stiffness', '--position', '0,0.4'], BAD, '--position: must be 3 numbers'),
    (['pcr', 'stiffness', '--position', '0,0,5'], NO_RESULT, 'out of reach'),
    (['pcr', 'stiffness', '--orientation-deg', '0,inf,0'], BAD, '--orientation-deg'),
    (['pcr', 'stiffness', '--force', '0,0,-inf'], BAD, '--force'),
    (['pcr', 'stiffness', '--moment', '1,2'], BAD, '--moment'),
    (['pcr', 'stiffness', '--motor-angles-deg', '1,2,3'], BAD, '--motor-angles-deg'),
    (['pcr', 'stiffness', '--motor-angles-deg', '0,0,0,0,0,-45'], BAD, 'motor limits'),
    (['pcr', 'stiffness', '--motor-angles-deg', '0,0,0,0,0,0', '--position', '0,0,0.4'], BAD,
     'not allowed with argument'),
    (['pcr', 'stiffness', '--method', 'secant'], BAD, 'argument --method: invalid choice'),
    (['pcr', 'stiffness', '--robot', '{list}'], BAD, 'list.yaml'),
    # pcr sweep: ranges (non-finite, reversed, wrong count, negative, absurd), output paths
    # checked before the work (a sweep of 100000 samples would run for minutes)
    (['pcr', 'sweep', '--yaw', 'nan:90:3', '--out', '{out}'], BAD, '--yaw: need finite'),
    (['pcr', 'sweep', '--yaw', '90:0:3', '--out', '{out}'], BAD, '--yaw: need finite LOW <='),
    (['pcr', 'sweep', '--yaw', '0:90', '--out', '{out}'], BAD, '--yaw: must be LOW:HIGH:N'),
    (['pcr', 'sweep', '--yaw', '0:90:0', '--out', '{out}'], BAD, '--yaw: N must be'),
    (['pcr', 'sweep', '--yaw', '0:90:1000000', '--out', '{out}'], BAD, '--yaw: N must be'),
    (['pcr', 'sweep', '--yaw', '0:120:1', '--out', '{out}'], BAD,
     "--yaw: N = 1 samples LOW alone; give N >= 2 for LOW < HIGH, got '0:120:1'"),
    (['pcr', 'sweep', '--force', '0:100:1', '--out', '{out}'], BAD, '--force: N = 1 samples'),
    (['pcr', 'sweep', '--yaw', '0:1000:3', '--out', '{out}'], BAD, '--yaw: within'),
    (['pcr', 'sweep', '--force', '-10:100:3', '--out', '{out}'], BAD, '--force: downward'),
    (['pcr', 'sweep', '--force', '0:1e9:3', '--out', '{out}'], BAD, '--force: downward'),
    (['pcr', 'sweep', '--force', '0:inf:3', '--out', '{out}'], BAD, '--force: need finite'),
    (['pcr', 'sweep', '--yaw', '0:90:3', '--force', '0:1:2'], BAD, 'not allowed with'),
    (['pcr', 'sweep', '--out', '{out}'], BAD, 'one of the arguments --yaw --force'),
    (['pcr', 'sweep', '--yaw', '0:90:3', '--position', '0,nan,0.4', '--out', '{out}'], BAD,
     '--position'),
    (['pcr', 'sweep', '--yaw', '0:90:100000', '--out', '/proc/pcr_sweep'], BAD,
     '--out: cannot write in /proc'),
    (['pcr', 'sweep', '--force', '0:300:100000', '--out', '{holds}'], BAD,
     '--out: {holds} is a file, not a folder'),
    (['pcr', 'sweep', '--yaw', '0:10:2', '--position', '0,0,5', '--out', '{out}'], NO_RESULT,
     '--position: out of reach of the robot at every sample'),
    (['pcr', 'sweep', '--force', '0:10:2', '--position', '0.5,0,0.4', '--out', '{out}'],
     NO_RESULT, '--position: out of reach'),
    # pcr trajectory: helix sizes, heights, force, output paths before the work
    (['pcr', 'trajectory', '--helix', '--points', '0', '--out', '{out}'], BAD,
     'argument --points'),
    (['pcr', 'trajectory', '--helix', '--radius', '-0.2', '--out', '{out}'], BAD,
     'argument --radius'),
    (['pcr', 'trajectory', '--helix', '--turns', 'inf', '--out', '{out}'], BAD,
     'argument --turns'),
    (['pcr', 'trajectory', '--helix', '--heights', '0.5:0.4', '--out', '{out}'], BAD,
     '--heights: need finite LOW <= HIGH'),
    (['pcr', 'trajectory', '--helix', '--heights', '0.4:0.5:3', '--out', '{out}'], BAD,
     '--heights: must be LOW:HIGH'),
    (['pcr', 'trajectory', '--helix', '--force', '0,0', '--out', '{out}'], BAD, '--force'),
    (['pcr', 'trajectory', '--helix', '--points', '100000', '--out', '/proc/pcr_helix'], BAD,
     '--out: cannot write in /proc'),
    (['pcr', 'trajectory', '--helix', '--points', '5', '--radius', '3', '--out', '{out}'],
     NO_RESULT, '--helix: out of reach of the robot at every sample'),
    # sizes of the work: bounded, and a helix needs points enough to be one
    (['pcr', 'trajectory', '--helix', '--points', '1000000000', '--out', '{out}'], BAD,
     'argument --points: must be a whole number within [2, 100000]'),
    (['pcr', 'trajectory', '--helix', '--turns', '1e12', '--out', '{out}'], BAD,
     'argument --turns: must be a number within [0.001, 1000]'),
    (['pcr', 'trajectory', '--helix', '--points', '1', '--out', '{out}'], BAD,
     'argument --points'),
    (['pcr', 'trajectory', '--helix', '--points', '30', '--turns', '10', '--out', '{out}'], BAD,
     '--points: 30 points do not trace 10 turns of a helix; give at least 4 a turn (40)'),
    # the parallel robot's sizes have the physical ranges of the one table
    (['pcr', 'ik', '--robot', '{tiny_pcr}', '--position', '0,0,0.45'], BAD,
     'rods.radius: must be within [1e-06, 10] m'),
    # the ROS stack: bad inputs fail before anything starts
    (['launch', 'sim', '--robot', '{missing}'], BAD, 'cannot read'),
    (['launch', 'sim', '--robot', '{binary}', '--dry-run'], BAD, 'not UTF-8'),
    (['launch', 'sim', '--arg', 'mode=fast', '--dry-run'], BAD, 'mode=fast'),
    (['launch', 'sim', '--arg', 'nonsense:=1', '--dry-run'], BAD, 'nonsense'),
    (['launch', 'sim', '--robot', str(ROOT / 'config' / 'rolling_joint_snake.yaml'),
      '--arg', 'controller:=displacement'], BAD, 'launch argument controller:=displacement: '
     'displacement_controller is for tendon_robot robots; this one is a rolling_joint_snake'),
    (['launch', 'sim', '--robot', str(ROOT / 'config' / 'pcr_6rus.yaml'), '--arg',
      'controller:=tension', '--dry-run'], BAD,
     'launch argument controller:=tension: tension_controller is for'),
    # launch arguments and --param: checked against the stack and the nodes' tables first
    (['launch', 'sim', '--arg', 'mode:=warp', '--dry-run'], BAD, 'mode: must be one of'),
    (['launch', 'sim', '--param', 'simulator:alpha:=0.3', '--dry-run'], BAD,
     'node simulator: parameter alpha: must be within [-0.5, 0.0]'),
    (['launch', 'sim', '--param', 'tension_controller:statics_model:=euler', '--dry-run'], BAD,
     "parameter statics_model: must be one of ['auto', 'cosserat', 'kirchhoff', 'discrete']"),
    (['launch', 'sim', '--arg', 'robot:=no/such/robot.yaml', '--dry-run'], BAD,
     'launch argument robot: '),
    (['launch', 'sim', '--param', 'simulator:publish_rate:=fast', '--dry-run'], BAD,
     'parameter publish_rate: must be a number'),
    (['launch', 'sim', '--param', 'simulator:publish_rate:=1e9', '--dry-run'], BAD,
     'parameter publish_rate: must be within [1.0, 500.0]'),
    (['launch', 'sim', '--param', 'max_tip_force:=-5', '--dry-run'], BAD,
     'node simulator: parameter max_tip_force: must be within [0.0, 1000000.0] N, got -5.0'),
    # what a controller refuses together, before anything starts: the simulator (or the
    # hardware bridge, its ports) started, then the controller died and stopped the stack
    (['launch', 'sim', '--param', 'tension_controller:min_tension:=25', '--dry-run'], BAD,
     'node tension_controller: parameter min_tension: 25 N exceeds the smallest max_tension '
     '20 N of the robot'),
    (['launch', 'hardware', '--param', 'min_tension:=25', '--dry-run'], BAD,
     'node tension_controller: parameter min_tension: 25 N exceeds'),
    (['launch', 'sim', '--arg', 'controller:=displacement', '--param',
      'displacement_controller:min_displacement:=0.05', '--dry-run'], BAD,
     'node displacement_controller: parameter min_displacement: 0.05 m must be below '
     'max_displacement 0.02 m'),
    (['launch', 'sim', '--arg', 'controller:=displacement', '--param',
      'displacement_controller:min_tension:=25', '--dry-run'], BAD,
     'node displacement_controller: parameter min_tension: 25 N exceeds'),
    (['launch', 'sim', '--arg', 'use_sim_time:=true', '--arg', 'mode:=quasi_static',
      '--dry-run'], BAD, 'node simulator: parameter publish_clock: mode quasi_static has no '
     'simulated time to publish on /clock'),
    (['launch', 'sim', '--param', 'simulator:integrator:=explicit', '--param',
      'simulator:tip_tolerance:=0.001', '--dry-run'], BAD,
     'node simulator: parameter tip_tolerance: applies to the implicit integrator only'),
    (['launch', 'sim', '--param', 'simulator:no_such:=1', '--dry-run'], BAD,
     'node simulator has no such parameter'),
    (['launch', 'sim', '--param', 'no_such:=1'], BAD, "no node of stack 'sim' has it"),
    (['launch', 'hardware', '--param', 'hardware_bridge:robot_file:={binary}', '--dry-run'],
     BAD, 'not UTF-8'),
    # the view of real hardware served beyond this machine: only with the explicit opt-in
    (['launch', 'hardware', '--arg', 'view:=true', '--param', 'view:host:=0.0.0.0',
      '--dry-run'], BAD, 'node view: parameter host: 0.0.0.0 serves the page of real hardware '
     'beyond this machine; add --param view:remote_control:=true'),
    (['launch', 'hardware', '--arg', 'view:=true', '--param', 'host:=192.0.2.7',
      '--dry-run'], BAD, 'view:remote_control:=true'),
    # names against the ROS naming rules: refused before anything starts, not by rcl in a node
    (['launch', 'sim', '--arg', 'namespace:=bad name', '--dry-run'], BAD,
     'launch argument namespace: not a ROS namespace'),
    (['launch', 'sim', '--arg', 'namespace:=/1abc', '--dry-run'], BAD,
     "launch argument namespace: not a ROS namespace: the name '1abc' starts with a digit"),
    (['launch', 'hardware', '--arg', 'frame_prefix:=a b', '--dry-run'], BAD,
     'launch argument frame_prefix: not a prefix of tf2 frame ids'),
    (['launch', 'sim', '--param', 'simulator:setpoint_topic:=bad name', '--dry-run'], BAD,
     "parameter setpoint_topic: not a ROS topic name: ' ' is not allowed"),
    (['launch', 'sim', '--param', 'tip_frame:=/tip_link', '--dry-run'], BAD,
     "parameter tip_frame: a tf2 frame id does not start with '/'"),
    (['demo', '--tension', '-1'], BAD, 'argument --tension'),
    (['demo', '--robot', '{missing}'], BAD, 'argument --robot: {missing}: cannot read'),
    (['demo', '--elements', '0'], BAD, 'argument --elements'),
    (['demo', '--elements', '2.5'], BAD, "argument --elements: '2.5' is not a whole number"),
    (['demo', '--settle', '1e30'], BAD, 'argument --settle: must be a number within [0, 60] s'),
    # --target-hold where no tip-target step runs (the snake, the contact and hardware
    # demos), --hold and --settle where no step is held (the contact demo)
    (['demo', '--robot', SNAKE, '--target-hold', '3'], BAD,
     '--target-hold: only the simulated demo of a tendon robot has a tip-target step'),
    (['demo', '--world', str(ROOT / 'config' / 'world_post.yaml'), '--pull', 't1',
      '--target-hold', '3'], BAD, '--target-hold'),
    (['demo', '--world', str(ROOT / 'config' / 'world_post.yaml'), '--pull', 't1',
      '--hold', '3'], BAD, '--hold: the contact demo holds no step'),
    (['demo', '--world', str(ROOT / 'config' / 'world_post.yaml'), '--pull', 't1',
      '--settle', '3'], BAD, '--settle: the contact demo holds no step'),
    (['demo', '--hardware', 'tdcr', '--target-hold', '3'], BAD, '--target-hold'),
    (['demo', '--real-time-factor', '20'], BAD,
     'argument --real-time-factor: must be a number within [0.1, 10]'),
    (['emulate', '--dropout', '2'], BAD, 'argument --dropout'),
    (['emulate', '--motors', 'pty:{out}/missing/motors'], BAD,
     '--motors: {out}/missing does not exist; the link goes into an existing folder'),
    (['emulate', '--sensor', 'pty:{out}/missing/laser'], BAD,
     '--sensor: {out}/missing does not exist'),
    (['emulate', '--robot', '{empty}'], BAD, 'empty.yaml'),
    (['emulate', '--robot', '{missing}'], BAD, 'argument --robot: {missing}: cannot read'),
    (['emulate', '--urdf', '{missing}'], BAD, 'argument --urdf: {missing}: cannot read'),
    (['emulate', '--urdf', '{empty_dir}'], BAD,
     'argument --urdf: {empty_dir}: cannot read: Is a directory'),
    (['emulate', '--status-rate', 'inf'], BAD, 'argument --status-rate'),
    (['emulate', '--status-rate', '1e12'], BAD,
     'argument --status-rate: must be a number within [0.01, 10000] Hz'),
    # a noise of 1e30 m overflowed the LK-G's fields in the emulator's thread
    (['emulate', '--noise', '1e30'], BAD, 'argument --noise: must be a number within [0, 1] m'),
    (['record', '{out}/new_bag', '--duration', '-1'], BAD, 'argument --duration'),
    (['record', '{out}/new_bag', '--namespace', 'left arm'], BAD, '--namespace: not a ROS'),
    (['replay', '{missing}'], BAD, 'missing'),
    (['replay', '{empty_dir}'], BAD, 'empty_dir'),
    (['replay', '{missing}', '--rate', '0'], BAD, 'argument --rate'),
    # a replay that never ends
    (['replay', '{missing}', '--rate', '1e-30'], BAD,
     'argument --rate: must be a number within [0.001, 1000]'),
    (['replay', '{missing}', '--delay', '1e9'], BAD, 'argument --delay'),
    # rclpy would refuse it as the publisher is made: an internal error before
    (['replay', '{missing}', '--setpoint-topic', 'bad topic'], BAD,
     "--setpoint-topic: not a ROS topic name: ' ' is not allowed"),
    (['replay', '{missing}', '--setpoint-topic', ''], BAD,
     '--setpoint-topic: not a ROS topic name: an empty name'),
    (['view', '--bag', '{missing}'], BAD, 'missing'),
    (['view', '--bag', '{empty_dir}'], BAD, 'empty_dir'),
    (['view', '--port', '70000'], BAD, 'argument --port'),
    (['view', '--port', 'http'], BAD, 'argument --port'),
    (['view', '--host', 'no.such.host.invalid'], BAD, '--host'),
    (['view', '--namespace', '1arm'], BAD, '--namespace'),
    (['view', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['view', '--controller', 'position'], BAD, 'argument --controller: invalid choice'),
    # the sliders would drive the simulator directly: no displacement controller serves it
    (['view', '--robot', SNAKE, '--controller', 'displacement'], BAD,
     '--controller: launch argument controller:=displacement: displacement_controller is for '
     'tendon_robot robots'),
    (['view', '--watch', '--controller', 'tension'], BAD,
     '--controller: applies to a live view with sliders only'),
    (['view', '--bag', '{missing}', '--controller', 'tension'], BAD,
     '--controller: applies to a live view with sliders only'),
    # options that mean nothing together were taken silently: a bag's page drives nothing
    (['view', '--bag', '{missing}', '--watch'], BAD, '--watch: applies to a live view only'),
    (['view', '--bag', '{missing}', '--host', '0.0.0.0', '--remote-control'], BAD,
     '--remote-control: applies to a live view of real hardware only'),
    (['view', '--watch', '--host', '0.0.0.0', '--remote-control'], BAD,
     '--remote-control: applies to a view that commands only'),
    (['view', '--remote-control'], BAD,
     '--remote-control: applies with --host beyond this machine only'),
    # experiments
    (['synth-experiment', '{out}/new_bag', '--youngs-modulus', '-1'], BAD,
     'argument --youngs-modulus'),
    # beyond the robot files' bounds: it named rod.youngs_modulus, a key of no file given
    (['synth-experiment', '{out}/new_bag', '--youngs-modulus', '1'], BAD,
     '--youngs-modulus: must be within [1000, 1e+14] Pa (from a soft hydrogel to a nearly '
     'rigid rod), got 1'),
    (['synth-experiment', '{out}/new_bag', '--shear-modulus', '1e30'], BAD,
     '--shear-modulus: must be within'),
    (['synth-experiment', '{out}/new_bag', '--vertebra-mass', '1e9'], BAD,
     '--vertebra-mass: must be within [0, 1000] kg'),
    (['synth-experiment', '{out}/new_bag', '--noise', 'nan'], BAD, 'argument --noise'),
    (['synth-experiment', '{out}/new_bag', '--noise', '1e30'], BAD,
     'argument --noise: must be a number within [0, 1] m'),
    (['simulate', '--until-steady', '--max-time', '1e30'], BAD,
     '--max-time: 1e+30 s in steps of'),
    (['synth-experiment', '{out}/new_bag', '--robot', '{binary}'], BAD, 'not UTF-8'),
    (['synth-experiment', '{out}/step', '--experiment', 'step', '--tension', '1e9'], BAD,
     "the max_tension of tendon 't0'"),
    # the output is checked before the (long) simulation
    (['synth-experiment', '{empty_dir}'], BAD, 'OUT_BAG: '),
    (['synth-experiment', '{binary}/bag'], BAD, 'OUT_BAG: {binary} is a file, not a folder'),
    (['synth-experiment', '{out}/bag.csv'], BAD, 'written as a bag'),
    # a bellows run's CSV file: checked as a file to write, not as a new bag folder
    (['synth-experiment', '{out}/run.csv/', '--robot', BHA, '--pressures-csv',
      '{profile_high}'], BAD,
     'argument OUT_BAG: {out}/run.csv/ names a folder (it ends in /); give a file name'),
    (['synth-experiment', '{out}/missing/run.csv', '--robot', BHA, '--pressures-csv',
      '{profile_high}'], BAD,
     'argument OUT_BAG: {out}/missing does not exist; the file goes into an existing folder'),
    (['synth-experiment', '{empty_dir}/run.CSV/', '--robot', BHA], BAD,
     'argument OUT_BAG: {empty_dir}/run.CSV/ names a folder (it ends in /); give a file name'),
    (['simulate', '--trajectory-out', '{empty_dir}'], BAD,
     'argument --trajectory-out: {empty_dir} is a folder; give a file name'),
    (['synth-experiment', '{out}/twist', '--disc-twist-deg', '1e9'], BAD, '--disc-twist-deg'),
    (['synth-experiment', '{out}/twist', '--disc-twist-deg', 'nan'], BAD,
     'argument --disc-twist-deg'),
    (['synth-experiment', '{out}/truth', '--truth-model', 'exact'], BAD,
     'argument --truth-model'),
    (['synth-experiment', '{out}/truth', '--experiment', 'step', '--truth-model',
      'cosserat'], BAD, '--truth-model: a step response'),
    (['synth-experiment', '{out}/holds', '--damping-ratio', '0.2'], BAD,
     '--damping-ratio: only for --experiment step'),
    (['synth-experiment', '{out}/p', '--pressures-csv', '{profile_nan}'], BAD,
     '--pressures-csv: only for a bellows robot'),
    (['synth-experiment', '{out}/bha', '--robot', BHA], BAD, '--pressures-csv: '),
    (['synth-experiment', '{out}/bha', '--robot', BHA, '--pressures-csv', '{profile_nan}',
      '--youngs-modulus', '1e7'], BAD, '--youngs-modulus: only for a tendon robot'),
    (['synth-experiment', '{out}/bha', '--robot', BHA, '--pressures-csv',
      '{profile_unknown}'], BAD, '--pressures-csv: '),
    (['synth-experiment', '{out}/bha', '--robot', BHA, '--length-noise', '-1'], BAD,
     'argument --length-noise'),
    (['synth-experiment', '{out}/bha', '--robot', BHA, '--stiffness-factor', '0'], BAD,
     'argument --stiffness-factor'),
    (['synth-experiment', '{out}/bha', '--robot', BHA, '--damping-factor', 'inf'], BAD,
     'argument --damping-factor'),
    (['synth-experiment', '{out}/d', '--damping-factor', '2'], BAD,
     '--damping-factor: only for --experiment step'),
    (['synth-experiment', '{out}/d', '--experiment', 'step', '--damping-factor', '20'], BAD,
     "--damping-factor: the file's damping ratio 0.1 x 20 must stay < 1"),
    (['synth-experiment', '{out}/d', '--experiment', 'step', '--damping-factor', '2',
      '--damping-ratio', '0.2'], BAD, '--damping-ratio: give it or --damping-factor, not both'),
    (['validate', '{missing}', '--report', '{out}'], BAD, 'missing'),
    (['validate', '{binary}', '--report', '{out}'], BAD, 'binary'),
    (['validate', '{nan_holds}', '--report', '{out}'], BAD, 'holds.csv'),
    (['validate', '{missing}', '--report', '{out}', '--hold-time', '0'], BAD,
     'argument --hold-time'),
    (['validate', '{missing}', '--report', '{out}', '--start', '-1'], BAD, 'argument --start'),
    (['validate', '{holds}', '--report', '{out}', '--end', '1e30'], BAD,
     '--start, --end: apply to a bag'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '{out}/c.yaml', '--start',
      '1e30'], BAD, '--start, --end: apply to a bag'),
    (['validate', '{holds}', '--robot', BHA, '--report', '{out}', '--start', '1'], BAD,
     '--start: not for a bellows robot'),
    (['calibrate', '{holds}', '--robot', BHA, '--fit', 'stiffness', '--out', '{out}/c.yaml',
      '--end', '1'], BAD, '--end: not for a bellows robot'),
    (['validate', '{holds}', '--report', '{out}', '--model', 'discrete,exact'], BAD,
     "--model: 'exact' is not one of"),
    (['validate', '{holds}', '--report', '{out}', '--model', 'cosserat,cosserat'], BAD,
     '--model: a model is named twice'),
    (['validate', '{holds}', '--report', '{out}', '--fit', ','], BAD, '--fit: name at least'),
    (['validate', '{holds}', '--report', '{out}', '--fit', 'magic'], BAD, "'magic'"),
    (['validate', '{holds}', '--report', '{out}', '--fit', 'damping'], BAD,
     'damping has no static effect'),
    (['validate', '{bellows_run_no_tip}', '--robot', BHA, '--report', '{out}'], BAD,
     'no measured tip'),
    (['validate', '{bellows_run_no_tip}', '--robot', BHA, '--report', '{out}', '--model',
      'cosserat'], BAD, '--model: a bellows robot'),
    (['validate', '{holds}', '--robot', BHA, '--report', '{out}'], BAD, 'missing columns'),
    (['validate', '{binary}', '--robot', BHA, '--report', '{out}'], BAD, 'not a rosbag2 bag'),
    (['validate', '{binary}.csv', '--robot', BHA, '--report', '{out}'], BAD, 'cannot read'),
    (['calibrate', '{missing}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml'], BAD,
     'missing'),
    # a device fails only once the fit is done (/dev/full): refused before the work
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '/dev/full'], BAD,
     'argument --out: /dev/full is a device, not a regular file'),
    (['calibrate', '{nan_holds}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml'], BAD,
     "column 'tip_x'"),
    # a hold above the robot's max_tension (config/robot.yaml: 20 N): the file, line, column
    (['calibrate', '{high_holds}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml'], BAD,
     "{high_holds}: line 3, column 't1': a tension must be <= max_tension = 20 N of tendon "
     "'t1', got 200 N"),
    (['calibrate', '{holds}', '--fit', 'magic', '--out', '{out}/r.yaml'], BAD, 'magic'),
    (['calibrate', '{bellows_run_no_tip}', '--robot', BHA, '--fit', 'stiffness', '--model',
      'cosserat', '--out', '{out}/r.yaml'], BAD, '--model: a bellows robot'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--bounds', 'x', '--out',
      '{out}/r.yaml'], BAD, '--bounds'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--bounds',
      'youngs_modulus=nan:1e7', '--out', '{out}/r.yaml'], BAD, '--bounds: youngs_modulus'),
    (['calibrate', '{holds}', '--fit', '*.pretension', '--out', '{out}/r.yaml'], BAD,
     'fit: t0.pretension needs a compliance > 0'),
    (['calibrate', '{holds}', '--fit', 'q*.offset', '--out', '{out}/r.yaml'], BAD,
     "fit: q*.offset: no tendon matches 'q*'"),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus,youngs_modulus', '--out', '{out}/r.yaml'],
     BAD, 'fit: a parameter is given twice'),
    (['calibrate', '{holds}', '--fit', 'base.position.w', '--out', '{out}/r.yaml'], BAD,
     "unknown parameter 'base.position.w'"),
    (['calibrate', '{holds}', '--fit', 'base.position', '--bounds', 'base.position=1:2', '--out',
      '{out}/r.yaml'], BAD, 'bounds: base.position needs low <= initial (0) <= high'),
    (['calibrate', '{holds}', '--fit', '*.angle,t1.angle', '--out', '{out}/r.yaml'], BAD,
     'fit: t1.angle and *.angle both fit 1.angle'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--starts', '0', '--out',
      '{out}/r.yaml'], BAD, 'argument --starts'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--points', 'all', '--out',
      '{out}/r.yaml'], BAD, 'argument --points'),
    (['validate', '{holds}', '--report', '{out}', '--model', 'discrete,cosserat',
      '--samples-out', '{out}/s.csv'], BAD, '--samples-out: the table holds one model'),
    (['validate', '{holds}', '--report', '{out}', '--samples-out', '{out}/s.txt'], BAD,
     'must end in .csv'),
    (['validate', '{holds}', '--report', '{out}', '--step', '0'], BAD, 'argument --step'),
    # the options that find a bag's holds, given where nothing would read them
    (['validate', '{holds}', '--report', '{out}', '--hold-time', '2'], BAD,
     "--hold-time: applies to a bag's holds only; {holds} is a CSV file of holds"),
    (['validate', '{holds}', '--report', '{out}', '--points', 'samples'], BAD,
     "--points: applies to a bag's holds only; {holds} is a CSV file of holds"),
    (['validate', '{holds}', '--report', '{out}', '--after', '{holds}', '--tip-tolerance',
      '0.001'], BAD, '{holds} and --after {holds} are CSV files of holds'),
    (['validate', '{missing}', '--report', '{out}', '--points', 'samples', '--hold-time', '2'],
     BAD, '--hold-time: applies to --points holds only'),
    (['validate', '{bellows_run_no_tip}', '--robot', BHA, '--report', '{out}',
      '--tip-tolerance', '0.001'], BAD, "--tip-tolerance: applies to a tendon robot's holds "
     'only; a bellows robot is validated on its whole recorded run'),
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml',
      '--tip-tolerance', '0.001'], BAD, "--tip-tolerance: applies to a bag's holds only"),
    (['calibrate', '{missing}', '--model', 'dynamic', '--fit', 'damping', '--out',
      '{out}/r.yaml', '--points', 'samples'], BAD,
     '--points: applies to holds only; --model dynamic fits damping to the whole recorded '
     'trajectory'),
    (['calibrate', '{bellows_run_no_tip}', '--robot', BHA, '--fit', 'stiffness', '--out',
      '{out}/r.yaml', '--points', 'holds'], BAD, '--points: not for a bellows robot'),
    (['calibrate', '{bellows_run_no_tip}', '--robot', BHA, '--fit', 'stiffness', '--out',
      '{out}/r.yaml', '--hold-time', '2'], BAD,
     "--hold-time: applies to a bag's static points only; {bellows_run_no_tip} is a CSV file"),
    # damping alone reads the step response only: a CSV file, whatever the recording is
    (['calibrate', '{missing}', '--robot', BHA, '--fit', 'damping', '--step-response',
      '{bellows_run_no_tip}', '--out', '{out}/r.yaml', '--hold-time', '2'], BAD,
     "--hold-time: applies to a bag's static points only; {bellows_run_no_tip} is a CSV file"),
    # a step response only a bellows robot's damping fit reads
    (['calibrate', '{holds}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml',
      '--step-response', '{missing}'], BAD,
     "--step-response: applies to a bellows robot's --fit damping only"),
    (['calibrate', '{bellows_run_no_tip}', '--robot', BHA, '--fit', 'stiffness', '--out',
      '{out}/r.yaml', '--step-response', '{missing}'], BAD,
     '--step-response: applies to --fit damping only'),
    # a trajectory fit reads no hold, the dynamic simulator no statics option
    (['calibrate', '{missing}', '--model', 'dynamic', '--fit', 'damping', '--out',
      '{out}/r.yaml', '--every', '2'], BAD,
     '--every: applies to holds only; --model dynamic fits damping to the whole recorded '
     'trajectory'),
    (['calibrate', '{missing}', '--model', 'dynamic', '--fit', 'vertebra_mass', '--out',
      '{out}/r.yaml', '--step', '0.01'], BAD,
     '--step: applies to the statics models only; --model dynamic solves with the dynamic '
     'simulator'),
    (['validate', '{missing}', '--model', 'dynamic', '--report', '{out}', '--piece-length',
      '0.04'], BAD, '--piece-length: applies to the statics models only'),
    # read by one of the models: a missing file is the error
    (['validate', '{missing}', '--model', 'dynamic,cosserat', '--report', '{out}',
      '--piece-length', '0.04'], BAD, 'missing'),
    (['calibrate', '{missing}', '--fit', 'youngs_modulus', '--out', '{out}/r.yaml', '--every',
      '2', '--starts', '2', '--step', '0.01'], BAD, 'missing'),
    # a bellows robot's identification and validation read no option of a tendon robot's fit
    *[(['calibrate', '{bellows_run_no_tip}', '--robot', BHA, '--fit', 'stiffness', '--out',
        '{out}/r.yaml', option, value], BAD,
       f"{option}: applies to a tendon robot's fit only; a bellows robot is identified as "
       'Hadzic & Häseli do')
      for option, value in (('--every', '2'), ('--starts', '2'), ('--bounds', 'x=1:2'),
                            ('--step', '0.01'), ('--piece-length', '0.04'), ('--workers', '1'),
                            ('--scheduler', 'tcp://localhost:1'), ('--tls-cert', 'c.pem'))],
    *[(['validate', '{bellows_run_no_tip}', '--robot', BHA, '--report', '{out}', option,
        value], BAD,
       f"{option}: applies to a tendon robot's models only; a bellows robot's "
       'constant-curvature models run in this process')
      for option, value in (('--step', '0.01'), ('--piece-length', '0.04'), ('--workers', '1'),
                            ('--scheduler', 'tcp://localhost:1'))],
    # import: the table and its column map (more in test/experiment/test_table_import.py)
    (['import', '{missing}', '--columns', '{v4_map}', '--robot', V4, '--out', '{out}/bag'], BAD,
     'missing.yaml: cannot read'),
    (['import', '{v4_table}', '--columns', '{missing}', '--robot', V4, '--out', '{out}/bag'],
     BAD, 'missing.yaml: cannot read'),
    (['import', '{v4_table}', '--columns', '{binary}', '--robot', V4, '--out', '{out}/bag'], BAD,
     'not UTF-8'),
    (['import', '{v4_table}', '--columns', '{v4_map}', '--out', '{out}/bag'], BAD,
     "inputs.columns.s1_t0: the robot has no tendon 's1_t0'"),
    (['import', '{v4_table}', '--columns', '{v4_map_mile}', '--robot', V4, '--out',
      '{out}/bag'], BAD, "tip.unit: unknown unit 'mile'"),
    (['import', '{v4_nan}', '--columns', '{v4_map}', '--robot', V4, '--out', '{out}/bag'], BAD,
     "line 3, column 'tip_x': must be finite"),
    (['import', '{v4_back}', '--columns', '{v4_map}', '--robot', V4, '--out', '{out}/bag'], BAD,
     "line 3, column 'timestamp': the time stamp is before the one of line 2"),
    (['import', '{v4_table}', '--columns', '{v4_map}', '--robot', V4, '--out', '{empty_dir}'],
     BAD, 'exists already'),
    # two tendons sent to one column
    (['import', '{v4_table}', '--columns', '{v4_map_twice}', '--robot', V4, '--out',
      '{out}/twice_bag'], BAD, "{v4_map_twice}: inputs.columns.s1_t1: column 'servo_4_mm' is "
     "also the column of tendon 's1_t0'; each tendon needs its own column"),
    # a tension beyond the robot description's max_tension (50 N for the FTDCR v4)
    (['import', '{v4_tension}', '--columns', '{v4_tension_map}', '--robot', V4, '--out',
      '{out}/tension_bag'], BAD, "{v4_tension}: line 3, column 'servo_4_mm': a tension must be "
     "<= max_tension = 50 N of tendon 's1_t0', got 1e+09 N"),
    # 1000 km pulled in: a displacement longer than the rod (0.1865 m) either way
    (['import', '{v4_far}', '--columns', '{v4_map}', '--robot', V4, '--out', '{out}/far_bag'],
     BAD, "{v4_far}: line 3, column 'servo_3_mm': a displacement must be within [-0.1865, "
     '0.1865] m (the rod length either way), got 1e+06 m'),
    # dataset: counts, a sampler without its file, a model of another kind, a bad scheduler
    (['dataset', '--robot', '{missing}', '--model', 'cc', '--output', '{out}/d'], BAD,
     'argument --robot: {missing}: cannot read: No such file or directory'),
    (['dataset', '--robot', '{binary}', '--model', 'cc', '--output', '{out}/d'], BAD,
     'robot: {binary}: not UTF-8 text (byte 128)'),
    ([*DATASET, 'cc', '--samples', '0'], BAD, 'argument --samples: must be a whole number >= 1'),
    ([*DATASET, 'cc', '--samples', '1000000000000'], BAD, '--samples: 1000000000000 is more'),
    ([*DATASET, 'cc', '--chunk-size', 'nan'], BAD, 'argument --chunk-size'),
    ([*DATASET, 'cc', '--sampler', 'csv'], BAD, '--csv: --sampler csv needs'),
    ([*DATASET, 'cc', '--csv', '{binary}'], BAD,
     '--csv: applies with --sampler csv only (this run: --sampler uniform)'),
    ([*DATASET, 'cc', '--statics-model', 'cosserat'], BAD,
     '--statics-model: applies with --model statics only (this run: --model cc)'),
    ([*DATASET, 'cc', '--sampler', 'csv', '--csv', '{binary}'], BAD, '--csv: {binary}'),
    ([*DATASET, 'cc', '--sampler', 'csv', '--csv', '{binary}', '--samples', '5'], BAD,
     '--samples: applies with --sampler uniform or lhs only (this run: --sampler csv, one '
     'sample a row of --csv)'),
    ([*DATASET, 'cc', '--sampler', 'csv', '--csv', '{binary}', '--random-state', '0'], BAD,
     '--random-state: applies with --sampler uniform or lhs only (this run: --sampler csv, '
     'one sample a row of --csv)'),
    ([*DATASET, 'pcr'], BAD, 'kind: none given, so a tendon-driven continuum robot'),
    ([*DATASET, 'cc', '--scheduler', 'nowhere'], BAD,
     "--scheduler: 'nowhere' is not tcp://HOST:PORT"),
    # a robot the constant-curvature model does not take: bad input, as for `cc`, not a bug
    (['dataset', '--robot', V4, '--model', 'cc', '--output', '{out}/d'], BAD,
     f'{V4}: tendons[].end: constant curvature handles one section'),
    (['dataset', '--robot', HELICAL, '--model', 'cc', '--output', '{out}/d'], BAD,
     f'{HELICAL}: tendons '),
    (['dataset', '--robot', FRICTION, '--model', 'cc', '--output', '{out}/d'], BAD,
     f'{FRICTION}: tendons[0].friction: the constant-curvature model does not model'),
    # warmup takes no arguments (its cache folder check: test/cli/test_warmup_cli.py)
    (['warmup', '--fast'], BAD, 'unrecognized arguments: --fast'),
    # hardware: a port that is not there, baud rates the SDK does not open, currents
    (['hardware', 'scan', '--port', '{missing}', '--baud', '57600'], BAD, 'cannot open'),
    (['hardware', 'scan', '--port', '{missing}', '--baud', '12345'], BAD, 'not among the rates'),
    (['hardware', 'scan', '--port', '{missing}', '--baud', 'nan'], BAD, '--baud: item 0'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--baud', '-1'], BAD,
     '--baud: numbers > 0'),
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
     '--answers: {empty} holds 0 readings; 4 channels at 4 currents need 16'),
    (['hardware', 'calibrate-tension', '--port', '{missing}', '--answers', '{readings}'], BAD,
     '--port: cannot open'),
    # a file that is not a serial port
    (['hardware', 'scan', '--port', '/dev/null', '--baud', '57600'], BAD,
     '--port: cannot open /dev/null'),
    (['hardware', 'calibrate-tension', '--port', '/dev/null', '--answers', '{readings}'], BAD,
     '--port: cannot open /dev/null'),
    # reindex: no folder, a file, a folder without a bag
    (['reindex', '{missing}'], BAD, 'not a bag folder'),
    (['reindex', '{binary}'], BAD, 'not a bag folder'),
    (['reindex', '{empty_dir}'], BAD, 'expected one .mcap or .db3 file, found none'),
    # demo --hardware: an unknown device, a robot the hardware stack does not drive
    (['demo', '--hardware', 'servo'], BAD, "argument --hardware: invalid choice: 'servo'"),
    (['demo', '--hardware', 'dynamixel', '--robot', SNAKE], BAD,
     '--hardware: the hardware stack drives a tendon robot'),
    (['demo', '--hardware', 'dynamixel', '--elements', '5'], BAD,
     '--elements: the hardware demo has no simulated rod'),
    (['demo', '--hardware', 'dynamixel', '--real-time-factor', '2'], BAD,
     '--real-time-factor: the simulated demo only'),
]


@pytest.fixture(scope='module')
def files(tmp_path_factory):
    """Write the bad files of the table; make a folder for outputs."""
    folder = tmp_path_factory.mktemp('bad_input')
    robot = (ROOT / 'config' / 'robot.yaml').read_text()
    contents = {
        'empty': ('empty.yaml', ''),
        # the 16 load-cell readings of calibrate-tension's defaults (4 channels, 4 currents)
        'readings': ('readings.txt', ''.join(f'{k}\n' for k in range(16))),
        'binary': ('binary.bin', bytes(range(256)) * 4),
        'list': ('list.yaml', '- 1\n- 2\n'),
        'nan_rod': ('nan_rod.yaml', robot.replace('youngs_modulus:', 'youngs_modulus: .nan #')),
        'mm_reference': ('mm_reference.yaml', robot.replace(
            'angle_deg: 0.0,', 'angle_deg: 0.0, reference_length: 250,')),
        'nan_csv': ('nan.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                    + '0,0,0,0,0,0,0\n0.1,0,nan,0,0,0,0\n' + '0.2,0,0,0,0,0,0\n' * 3),
        'word_csv': ('word.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                     + '0,ten,0,0,0,0,0\n' + '0.2,0,0,0,0,0,0\n' * 4),
        'steep_csv': ('steep.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                      + ''.join(f'{0.01 * k:.2f},0,{k % 2:.1f},0,0,0,0\n'
                                for k in range(8))),
        'far_times_csv': ('far_times.csv', 'time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                          + ''.join(f'{k}e300,0,{0.01 * k},0,0,0,0\n' for k in range(4))),
        'repeat_times_csv': ('repeat_times.csv', 'time,theta1,theta2,theta3,theta4,theta5,'
                             'theta6\n' + ''.join(f'{t},0,{0.01 * k},0,0,0,0\n'
                                                  for k, t in enumerate((0, 1, 1, 2)))),
        'nan_holds': ('holds.csv', 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,nan,0,0.2\n'),
        'holds': ('good_holds.csv', 't0,t1,t2,t3,tip_x,tip_y,tip_z\n0,0,0,0,0.25,0,-0.01\n'
                  '0,2,0,0,0.24,0.02,-0.01\n'),
        'high_holds': ('high_holds.csv', 't0,t1,t2,t3,tip_x,tip_y,tip_z\n1,0,0,0,0,0,0.25\n'
                       '0,200,0,0,0,0,0.25\n'),
        'profile_nan': ('profile_nan.csv', 't,t1\n0,0\n1,nan\n'),
        'profile_back': ('profile_back.csv', 't,t1\n0,0\n2,1\n1,1\n'),
        'profile_unknown': ('profile_unknown.csv', 't,x1\n0,0\n1,1\n'),
        'profile_high': ('profile_high.csv', 't,t1\n0,0\n1,1e3\n'),
        'profile_zero': ('profile_zero.csv', 't,t1\n0,1\n'),
        'profile_far': ('profile_far.csv', 't,t1\n0,0\n1e300,1\n'),
        'profile_short': ('profile_short.csv', 't,t1\n0,0\n1e-12,1\n'),
        'bellows_run_no_tip': ('bellows_run.csv', 't,' + ','.join(
            [f'p{i}' for i in range(1, 10)] + [f'p{i}_length' for i in range(1, 10)])
            + '\n0' + ',0' * 9 + ',0.25' * 9 + '\n0.005' + ',0' * 9 + ',0.25' * 9 + '\n'),
        'nan_inputs': ('nan_inputs.csv', 't,t0,t1\n0,0,0\n0.5,1,nan\n'),
        'tx_inputs': ('tx_inputs.csv', 't,t0,tx\n0,0,0\n1,1,1\n'),
        'back_inputs': ('back_inputs.csv', 't,t0\n0,0\n1,1\n0.5,1\n'),
        # t0 and t2 held where they are while t1 pulls in 10 mm
        'far_inputs': ('far_inputs.csv', 't,t0,t1,t2\n0,0,0.01,0\n1,0,0.01,0\n'),
        # t1 pulled 20 mm from t = 0, t0 and t2 held: t0 would need more than its 10 N
        'held_inputs': ('held_inputs.csv', 't,t0,t1,t2\n0,0,0.02,0\n0.1,0,0.02,0\n'),
        'far_hole': ('far_hole.yaml', robot.replace('{name: t0, offset: 0.015,',
                                                    '{name: t0, offset: 0.05,')),
        'far_helix': ('far_helix.yaml', robot.replace(
            '{name: t1, offset: 0.015, angle_deg: 90.0, routing: parallel,',
            '{name: t1, offset: 0.02, angle_deg: 90.0, routing: helical, turns: 0.5,')),
        'far_taper': ('far_taper.yaml', robot.replace(
            '{name: t2, offset: 0.015, angle_deg: 180.0, routing: parallel,',
            '{name: t2, offset: 0.015, angle_deg: 180.0, routing: tapered, end_offset: 0.02,')),
        'tiny_pcr': ('tiny_pcr.yaml', Path(PCR).read_text().replace(
            '  radius: 0.002 ', '  radius: 1.0e-30 ')),
        'cone_world': ('cone_world.yaml', 'obstacles: [{name: tip, shape: cone}]'),
        'negative_world': ('negative_world.yaml',
                           'obstacles: [{name: ball, shape: sphere, radius: -0.01}]'),
        'base_world': ('base_world.yaml', 'obstacles: [{name: table, shape: plane}]'),
        # far too soft for the load: the discs sink through the floor, the rod into the lid
        'soft_floor': ('soft_floor.yaml', 'contact: {penalty_stiffness: 100.0}\n'
                       'obstacles: [{name: floor, shape: plane, position: [0, 0, -0.019]}]'),
        'soft_lid': ('soft_lid.yaml', 'contact: {penalty_stiffness: 10.0}\n'
                     'obstacles: [{name: lid, shape: cylinder, radius: 0.05, length: 0.1,\n'
                     '             position: [0.4, 0, 0.056], orientation: [-0.7071068, 0, 0,'
                     ' 0.7071068]}]'),
        'fake_mesh': ('fake.stl', 'solid fake\nthis is no mesh\n'),
        # a 0.2 m cube around the base (an OBJ is text)
        'crate_mesh': ('crate.obj', trimesh.creation.box(extents=[0.2] * 3).export(
            file_type='obj')),
        'mesh_base_world': ('mesh_base_world.yaml',
                            'obstacles: [{name: crate, shape: mesh, file: crate.obj}]'),
        'list_world': ('list_world.yaml', '[1, 2]'),
        # the same crate inside out (every face's order reversed), under the rod's tip
        'inside_out_mesh': ('inside_out.obj', re.sub(
            r'^f (\d+) (\d+) (\d+)$', r'f \1 \3 \2',
            trimesh.creation.box(extents=[0.2] * 3).export(file_type='obj'), flags=re.M)),
        'inside_out_world': ('inside_out_world.yaml', 'obstacles: [{name: crate, shape: mesh, '
                             'file: inside_out.obj, position: [0.25, 0, -0.2]}]'),
        'rod_world': ('rod_world.yaml', 'obstacles: [{name: ball, shape: sphere, radius: 0.02,'
                      ' position: [0.12, 0, 0]}]'),
        'mesh_world': ('mesh_world.yaml',
                       'obstacles: [{name: bone, shape: mesh, file: fake.stl}]'),
        'soft_nitinol': ('nitinol.yaml', (ROOT / 'config' / 'nitinol_robot.yaml').read_text()
                         .replace('compliance: 1.0e-4', 'compliance: 1.0e-3')),
        'v4_map': ('v4_columns.yaml', V4_MAP),
        'v4_map_mile': ('v4_mile.yaml', V4_MAP.replace('tip_z], unit: mm}',
                                                       'tip_z], unit: mile}')),
        'v4_map_twice': ('v4_twice.yaml', V4_MAP.replace('s1_t1: servo_3_mm',
                                                         's1_t1: servo_4_mm')),
        'v4_table': ('v4.csv', ''.join(V4_TABLE)),
        'v4_nan': ('v4_nan.csv', ''.join(
            V4_TABLE[:2] + [V4_TABLE[2].rsplit(',', 3)[0] + ',nan,1.0,180.0\n'])),
        'v4_back': ('v4_back.csv', ''.join(V4_TABLE[:2] + [V4_TABLE[2].replace(
            V4_TABLE[2].split(',')[0], '1778540000.0', 1)])),
        'v4_far': ('v4_far.csv', ''.join(V4_TABLE[:2] + [V4_TABLE[2].replace(
            ',' + V4_TABLE[2].split(',')[3] + ',', ',1e9,', 1)])),
        'v4_tension_map': ('v4_tension.yaml', V4_MAP.replace(
            '  kind: displacement\n  unit: mm\n', '  kind: tension\n  unit: N\n')),
        'v4_tension': ('v4_tension.csv', V4_TABLE[0] + '0,a' + ',1' * 9 + ',0,0,180\n'
                       + '1,a,1e9' + ',1' * 8 + ',0,0,180\n'),
    }
    paths = {'missing': str(folder / 'missing.yaml'), 'out': str(folder / 'out')}
    (folder / 'out').mkdir()     # what the cases write into, whichever runs first
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
                          capture_output=True, text=True, timeout=COMMAND_TIMEOUT, env=env)
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


@pytest.mark.parametrize('words', list(commands(cli.build_parser())))
def test_an_argument_no_option_takes_is_named_with_its_command(words, capsys):
    """
    ``reindex BAG extra`` and ``pcr ik --position ... extra`` said ``tendon-robot-sim: error:``.

    argparse reports unrecognized arguments from the tool's parser, not the command's: the
    error line must name the command (and action) as every other error of its parser does.
    """
    assert cli.main([*words.split(), '--no-such-option']) == BAD
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert err.startswith(f'tendon-robot-sim {words}: error: '), err


def input_file_options(parser, prefix=()):
    """Yield (command words, option) of every --robot and --urdf of every command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from input_file_options(sub, prefix + (name,))
        for option in action.option_strings:
            if option in ('--robot', '--urdf'):
                yield prefix, option


# launch names its --robot as the launch argument it sets (test_launch_bad_arguments.py)
NAMED_AS_LAUNCH_ARGUMENTS = {('launch',)}


@pytest.mark.parametrize('words, option', [
    found for found in input_file_options(cli.build_parser())
    if found[0] not in NAMED_AS_LAUNCH_ARGUMENTS], ids=lambda found: ' '.join(found))
def test_every_robot_file_that_cannot_be_read_is_named_by_its_option(words, option, tmp_path,
                                                                     capsys):
    """``--robot /nonexist.yaml`` named the path alone; the option too, of every command."""
    missing = tmp_path / 'nonexist.yaml'
    assert cli.main([*words, option, str(missing)]) == BAD
    err = capsys.readouterr().err
    assert err.count('\n') == 1, err
    assert f'argument {option}: {missing}: cannot read: No such file or directory' in err, err


def test_running_out_of_memory_is_bad_input_in_one_line(monkeypatch, capsys):
    """A size no check foresaw ends as exit 2 with one line, not as an internal error."""
    from tendon_robot_sim.commands import warmup

    def ask_too_much(args):
        raise MemoryError('Unable to allocate 29.1 TiB for an array')
    monkeypatch.setattr(warmup, 'run', ask_too_much)
    assert cli.main(['warmup']) == BAD
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'warmup: error: out of memory (Unable to allocate' in err


def test_a_dataset_without_pyarrow_says_what_to_install(monkeypatch, tmp_path, capsys):
    """Without pyarrow (optional beside colcon: docs/ros_interface.md): one line, exit 2."""
    monkeypatch.setitem(sys.modules, 'pyarrow', None)     # import pyarrow raises ImportError
    code = cli.main(['dataset', '--robot', ROBOT, '--model', 'cc', '--samples', '2',
                     '--output', str(tmp_path / 'd')])
    err = capsys.readouterr().err
    assert code == BAD and err.count('\n') == 1, err
    assert 'output: Parquet files need the pyarrow package (pip install pyarrow)' in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_failed_command_leaves_no_empty_folder_behind(tmp_path, capsys):
    """The output folder is made before the work (to fail early) and removed if it fails."""
    beyond = tmp_path / 'beyond.csv'    # joint 1 past the rolling surfaces: refused
    beyond.write_text('time,theta1,theta2,theta3,theta4,theta5,theta6\n'
                      '0,0,0,0,0,0,0\n0.1,4.5,0,0,0,0,0\n0.2,0,0,0,0,0,0\n0.3,0,0,0,0,0,0\n')
    out = tmp_path / 'new' / 'tensions'
    assert cli.main(['snake', 'inverse', '--trajectory', str(beyond), '--out', str(out)]) == BAD
    assert 'beyond the rolling surfaces' in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ['beyond.csv']


def test_a_failed_block_removes_only_the_empty_folders_it_made(tmp_path):
    from tendon_robot_sim.files.outputs import make_new_folders, removed_on_failure
    made = make_new_folders(tmp_path / 'a' / 'b' / 'c')
    assert made == [tmp_path / 'a' / 'b' / 'c', tmp_path / 'a' / 'b', tmp_path / 'a']
    (tmp_path / 'a' / 'kept.txt').write_text('a file of the work')
    with pytest.raises(RuntimeError), removed_on_failure(made):
        raise RuntimeError('the work failed')
    assert sorted(p.name for p in (tmp_path / 'a').iterdir()) == ['kept.txt']


def test_the_demo_removes_only_an_earlier_demos_bag(tmp_path):
    """A user's own bag at OUT/bag is kept and the demo refused; one beside its log goes."""
    from tendon_robot_sim.commands import CommandError
    from tendon_robot_sim.commands.demo_hardware import fresh_bag
    bag = tmp_path / 'bag'
    bag.mkdir()
    (bag / 'metadata.yaml').write_text('rosbag2_bagfile_information: {}\n')
    (bag / 'bag_0.mcap').write_bytes(b'a recording of the user')
    with pytest.raises(CommandError, match='is not a bag from an earlier demo'):
        fresh_bag(bag)
    assert (bag / 'bag_0.mcap').read_bytes() == b'a recording of the user'
    (tmp_path / 'stack.log').write_text('the log an earlier demo wrote before it recorded\n')
    fresh_bag(bag)
    assert not bag.exists()
