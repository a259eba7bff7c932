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
Sensitivities of statics solutions (tendon_robot_sim.models.rod.statics.analysis.sensitivity).

The first-order points of a changed robot, from one residual evaluation at the solved robot's
solutions, against full solves of the changed robot (an independent path: no linearisation;
what a calibration's finite differences did before), for parameters that change the
integration (stiffness, hole angle, disc mass) and ones that change the tendons' law alone
(compliance, rest length), in both input modes and for every model it serves.
"""

import csv
from pathlib import Path

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.rod.statics.analysis.sensitivity import (
    linear_points, LINEARISABLE, linearize, restarted, solutions)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

ROOT = Path(__file__).resolve().parents[4]
V4 = load_robot(ROOT / 'config' / 'opencr_ftdcr_v4.yaml')
MARKER = np.array([0.001, -0.002, 0.008])     # m, tip frame
STEP = 0.01                                   # m, RK4: the calibration's of the v4 robot
# Relative change of a parameter, as a calibration's finite differences (a smaller one drowns
# in the solves' tolerance).
H = 1e-3


def changed(robot, name: str, factor: float):
    """Return the robot with one parameter times ``factor`` (angles: plus factor - 1 rad)."""
    data = robot.to_dict()
    if name in ('youngs_modulus',):
        data['rod'][name] *= factor
    elif name == 'vertebra_mass':
        data['vertebrae']['mass'] *= factor
    else:
        field = name.split('.')[1]
        tendon = data['tendons'][1]
        if field == 'angle':
            tendon['angle'] += factor - 1.0
        else:
            tendon[field] *= factor
    return robot_from_dict(data)


def solved(robot, model, commands, tension):
    solver = StaticsSolver(robot, model, step=STEP)
    solve = solver.solve_tensions if tension else solver.solve_displacements
    memories, points = [], []
    for values in commands:
        result = solve(values)
        memories.append(solver.memory())
        points.append(result.tip_position + result.tip_rotation @ MARKER)
    return solver, memories, np.array(points)


def v4_commands():
    """Four rows of the excerpt of the v4 train recording: displacements [m] per tendon."""
    with open(ROOT / 'test' / 'data' / 'opencr_ftdcr_v4'
              / 'tdcr_sysid_20260511-183002_train.csv', newline='') as handle:
        rows = list(csv.DictReader(handle))
    servos = (4, 3, 9, 5, 2, 8, 6, 1, 7)     # of each tendon (config/opencr_ftdcr_v4_columns)
    picked = rows[len(rows) // 8::len(rows) // 4][:4]
    return np.array([[float(r[f'servo_{k}_mm']) * 1e-3 for k in servos] for r in picked])


@pytest.mark.parametrize('model', LINEARISABLE)
@pytest.mark.parametrize('name', ['youngs_modulus', 'vertebra_mass', 's1_t1.angle',
                                  's1_t1.compliance', 's1_t1.reference_length'])
def test_linear_points_are_the_derivative_of_solved_points(model, name):
    commands = v4_commands()
    solver, memories, points = solved(V4, model, commands, tension=False)
    lin = linearize(solver, commands, False, solutions(solver, memories, False), MARKER)
    np.testing.assert_allclose(lin.points, points, atol=1e-9)    # the same solutions
    linear, steps = linear_points(StaticsSolver(changed(V4, name, 1.0 + H), model, step=STEP),
                                  lin)
    derivative = (linear - points) / H
    reference = (solved(changed(V4, name, 1.0 + H), model, commands, False)[2] - points) / H
    # the same forward difference, linearised or solved: they differ by O(H) of the curvature
    scale = np.abs(reference).max()
    assert scale > 1e-6, 'the parameter moves the points'
    np.testing.assert_allclose(derivative, reference, atol=5e-3 * scale)
    assert np.all(np.isfinite(steps))


def test_tension_mode_and_a_start_from_the_predicted_solution():
    robot = load_robot(default_robot_file())
    commands = np.array([[2.0, 0.5, 0.0, 1.0], [0.0, 3.0, 1.0, 0.0]])[:, :len(robot.tendons)]
    solver, memories, points = solved(robot, 'cosserat', commands, tension=True)
    lin = linearize(solver, commands, True, solutions(solver, memories, True), MARKER)
    stiffer = robot.with_changes(youngs_modulus=robot.rod.youngs_modulus * (1.0 + H))
    linear, steps = linear_points(StaticsSolver(stiffer, 'cosserat', step=STEP), lin)
    reference = (solved(stiffer, 'cosserat', commands, True)[2] - points) / H
    np.testing.assert_allclose((linear - points) / H, reference,
                               atol=5e-3 * np.abs(reference).max())
    # a change of 10 %, started where the linearisation predicts: fewer evaluations than from
    # the old solution, the same equilibrium
    much = robot.with_changes(youngs_modulus=robot.rod.youngs_modulus * (1.0 + 100 * H))
    results = []
    for memory in (memories[0], restarted(memories[0], True, 100 * steps[0], lin.inverse[0])):
        other = StaticsSolver(much, 'cosserat', step=STEP)
        other.recall(memory)
        results.append(other.solve_tensions(commands[0]))
    assert results[1].evaluations < results[0].evaluations
    # both within the solver's tolerance (about 1e-8 m of the tip)
    np.testing.assert_allclose(results[1].tip_position, results[0].tip_position, atol=1e-7)


def test_a_solver_of_another_grid_is_refused():
    commands = v4_commands()[:1]
    solver, memories, _ = solved(V4, 'cosserat', commands, tension=False)
    lin = linearize(solver, commands, False, solutions(solver, memories, False), MARKER)
    with pytest.raises(StaticsInputError, match='another grid'):
        linear_points(StaticsSolver(V4, 'cosserat', step=STEP / 2), lin)


def test_rows_without_a_solution_give_nan():
    commands = v4_commands()[:2]
    solver, memories, _ = solved(V4, 'cosserat', commands, tension=False)
    x = solutions(solver, [memories[0], None], False)
    assert np.isnan(x[1]).all()
    lin = linearize(solver, commands, False, x, MARKER)
    linear, steps = linear_points(solver, lin)
    assert np.isfinite(linear[0]).all() and np.isnan(linear[1]).all() and np.isnan(steps[1]).all()


def test_a_start_that_fails_is_not_run_twice(monkeypatch):
    # a calibration's solves recall each hold's own solution, moved where the linearisation
    # predicts it: the inputs are those of the memory, so the solver has no secant prediction
    # and its second warm start would be the first again
    commands = v4_commands()[:1]
    solver, memories, points = solved(V4, 'cosserat', commands, tension=False)
    unknowns = solutions(solver, memories, False).shape[1]
    runs = []
    original = StaticsSolver._run
    monkeypatch.setattr(StaticsSolver, '_run',
                        lambda self, *args: runs.append(1) or original(self, *args))
    cold = StaticsSolver(V4, 'cosserat', step=STEP).solve_displacements(commands[0])
    cold_runs = len(runs)
    runs.clear()
    lost = StaticsSolver(V4, 'cosserat', step=STEP)
    lost.recall(restarted(memories[0], False, np.full(unknowns, 30.0)))
    result = lost.solve_displacements(commands[0])
    # the same equilibrium (within the solver's tolerance), after one failed warm run
    np.testing.assert_allclose(result.tip_position, cold.tip_position, atol=1e-7)
    np.testing.assert_allclose(result.tip_position + result.tip_rotation @ MARKER, points[0],
                               atol=1e-7)
    assert len(runs) == cold_runs + 1, (len(runs), cold_runs)
