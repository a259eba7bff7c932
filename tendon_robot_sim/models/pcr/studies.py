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
The studies of Rodrigues et al. 2024 (Sec. 4) on the 6-RUS parallel continuum robot.

* :func:`rotation_sweep`: inverse solves at one platform position for yaw angles about z
  (the paper: 0 to 90 deg at 0.4 m, Fig. 4b);
* :func:`compression_study`: inverse solves at one position under growing downward forces
  (the paper: 10 to 300 N at 0.4 m, largest force 267 N, Fig. 4a) and, with the motors held
  at their unloaded angles, the platform's height drop, secant and tangent axial stiffness
  (the paper: 989.75 N/m);
* :func:`helix_study`: inverse solves along the helix, forward solves of their motor angles,
  the position error FK(IK) (the paper: ~1e-7 m under 5 N, Fig. 5).

A sweep follows branches of solutions (:func:`follow`): from one sample to the next in warm
substeps of at most ``max_step``; where a substep fails, bisection locates the end of the
branch (the last parameter value it reaches, to ``resolution``); the next samples start cold
(rigid-link start, load continuation), and a branch found that way is also followed
backwards, filling the samples the last branch did not reach and locating its other end.
Each converged sample records the reciprocal condition number of the inverse problem's
Jacobian dE/dx (it goes to zero at a fold, where a branch ends) and the tangent stiffness
with the motors held there (:mod:`tendon_robot_sim.models.pcr.stiffness`): axial value and
stability (:func:`tendon_robot_sim.models.pcr.stability.unstable_because`: no rod buckled,
K positive definite), and its rod clearance (:mod:`tendon_robot_sim.models.pcr.clearance`:
below zero two rods pass through each other); so does each point of the helix.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
import math
from pathlib import Path
from typing import Callable

import numpy as np

from tendon_robot_sim import progress_bar
from tendon_robot_sim.files.outputs import open_output
from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.pcr.clearance import rod_clearance
from tendon_robot_sim.models.pcr.kinetostatics import helix, PcrResult, PcrSolver
from tendon_robot_sim.models.pcr.robot import PcrRobot
from tendon_robot_sim.models.pcr.stability import unstable_because
from tendon_robot_sim.models.pcr.stiffness import stiffness

# Substeps and end resolution of the sweeps: yaw [rad], force [N].
YAW_STEP = math.radians(1.0)
YAW_RESOLUTION = math.radians(0.01)
FORCE_STEP = 1.0
FORCE_RESOLUTION = 0.01
# The paper's studies (Sec. 4): rest height, samples, helix load.
REST_POSITION = (0.0, 0.0, 0.4)
PAPER_YAWS_DEG = np.linspace(0.0, 90.0, 46)
PAPER_FORCES = np.arange(10.0, 301.0, 10.0)
HELIX_LOAD = (0.0, 0.0, -5.0)


@dataclass
class Branch:
    """One branch of solutions along a sweep: the parameter range it was followed over."""

    index: int
    low: float
    high: float
    low_end: bool = False      # True: the branch ends at low (located by bisection)
    high_end: bool = False     # False: it was followed to the sweep's bound only

    def describe(self, unit: str, scale: float = 1.0) -> str:
        """One line: its range; '(end)' where it ends, else where the sweep starts or stops."""
        low = f'{self.low * scale:.2f}' + (' (end)' if self.low_end else '')
        high = f'{self.high * scale:.2f}' + (' (end)' if self.high_end else '')
        return f'branch {self.index}: {low} to {high} {unit}'


@dataclass
class Sweep:
    """Solutions along a parameter, branch by branch; extra per-sample data in ``data``."""

    values: np.ndarray                     # (n,) the samples
    results: list                          # PcrResult or None
    branch: np.ndarray                     # (n,) int, -1 where no solution was found
    start: list                            # 'warm', 'cold', 'backward' or ''
    branches: list = field(default_factory=list)
    data: dict = field(default_factory=dict)   # name -> (n,) float, NaN where none

    @property
    def converged(self) -> np.ndarray:
        return self.branch >= 0


def _advance(solve, a: float, b: float, max_step: float, resolution: float):
    """
    Follow the solution from a (solved: the solver's memory) to b in warm substeps.

    Returns (True, b, result at b) or, where a substep fails, (False, the last value reached
    to ``resolution`` by bisection, None).
    """
    count = max(1, math.ceil(abs(b - a) / max_step - 1e-9))
    reached = a
    for k in range(1, count + 1):
        value = a + (b - a) * k / count
        try:
            result = solve(value, False)
        except ConvergenceError:
            low, high = reached, value
            while abs(high - low) > resolution:
                middle = 0.5 * (low + high)
                try:
                    solve(middle, False)
                    low = middle
                except ConvergenceError:
                    high = middle
            return False, low, None
        reached = value
    return True, b, result


def follow(make_solve: Callable, values, max_step: float, resolution: float,
           on_sample: Callable | None = None, first=None, start: float | None = None,
           desc: str = 'sweep', progress: bool = True) -> Sweep:
    """
    Follow branches of solutions over the samples ``values`` (see the module docstring).

    ``make_solve()`` returns a new ``solve(value, cold, reset=False) -> PcrResult`` on a
    solver of its own (forwards, and backwards when a branch starts cold after the first
    sample). ``on_sample(sweep, i, solve)`` runs after sample i is solved, with the solver
    still there. ``first``, ``start``: a solve just solved at the value ``start``, to follow
    from instead of a cold start at the first sample.
    """
    values = np.asarray(values, dtype=float)
    sweep = Sweep(values=values, results=[None] * values.size,
                  branch=np.full(values.size, -1), start=[''] * values.size)
    solve = first or make_solve()
    back = None
    current, last = None, None
    if start is not None:
        current, last = Branch(0, start, start), start
        sweep.branches.append(current)

    def record(i, result, how, branch, by):
        sweep.results[i], sweep.start[i], sweep.branch[i] = result, how, branch.index
        if on_sample is not None:
            on_sample(sweep, i, by)

    for i in progress_bar(range(values.size), progress, desc=desc, unit='sample'):
        value = values[i]
        if current is not None:
            ok, reached, result = _advance(solve, last, value, max_step, resolution)
            if value < last:
                current.low, current.low_end = reached, not ok
            else:
                current.high, current.high_end = reached, not ok
            if ok:
                record(i, result, 'warm', current, solve)
                last = value
                continue
            current = None
        try:
            result = solve(value, True, reset=True)
        except ConvergenceError:
            continue
        current, last = Branch(len(sweep.branches), value, value), value
        sweep.branches.append(current)
        record(i, result, 'cold', current, solve)
        if i == 0:
            continue
        back = back or make_solve()
        try:
            again = back(value, True, reset=True)
        except ConvergenceError:
            continue
        if np.max(np.abs(again.motor_angles - result.motor_angles)) > 1e-8:
            continue         # another solution than the forward pass found: no backward pass
        reached = value
        for j in range(i - 1, -1, -1):
            ok, reached, earlier = _advance(back, reached, values[j], max_step, resolution)
            if not ok:
                current.low, current.low_end = reached, True
                break
            current.low = values[j]
            if sweep.results[j] is None:
                record(j, earlier, 'backward', current, back)
    return sweep


def _bind(solver: PcrSolver, solve_with: Callable):
    """``solve(value, cold, reset=False)``: ``solve_with(solver, value, cold)`` on one solver."""
    def solve(value, cold, reset=False):
        if reset:
            solver.reset()
        return solve_with(solver, value, cold)
    solve.solver = solver
    return solve


def _factory(robot: PcrRobot, solve_with: Callable) -> Callable:
    """Return a ``make_solve`` for :func:`follow`: a new solver each call."""
    return lambda: _bind(PcrSolver(robot), solve_with)


def _columns(sweep: Sweep, *names) -> None:
    for name in names:
        sweep.data.setdefault(name, np.full(sweep.values.size, np.nan))


def _held_stiffness(sweep: Sweep, i: int, solver: PcrSolver, result: PcrResult) -> None:
    """
    Record the axial stiffness and stability with the motors held at sample i's solution.

    Stable: as ``pcr ik`` judges it (:func:`unstable_because`). A sample whose stiffness
    cannot be taken (outside the motor limits, singular) keeps NaN in both columns.
    """
    _columns(sweep, 'axial_stiffness', 'stable')
    weight = solver.robot.platform_mass * solver.robot.gravity
    try:
        held = stiffness(solver, result.motor_angles, result.force - weight, result.moment)
    except (StaticsInputError, ConvergenceError, np.linalg.LinAlgError):
        return       # outside the motor limits, or singular
    sweep.data['axial_stiffness'][i] = held.axial
    unstable = unstable_because(solver.robot, held.equilibrium, held.matrix)
    sweep.data['stable'][i] = float(unstable is None)


def _inverse_diagnostics(sweep: Sweep, i: int, solve) -> None:
    """Record rcond of dE/dx (inverse), the rod clearance and the held-motor stiffness."""
    solver = solve.solver
    _columns(sweep, 'rcond', 'clearance')
    sweep.data['clearance'][i] = rod_clearance(solver.robot, sweep.results[i]).gap
    singular = np.linalg.svd(solver.jacobians(True)[0], compute_uv=False)
    sweep.data['rcond'][i] = singular[-1] / singular[0]
    try:
        solver.hold_motors()
    except (StaticsInputError, ConvergenceError):
        _columns(sweep, 'axial_stiffness', 'stable')
        return
    _held_stiffness(sweep, i, solver, sweep.results[i])


def _held_diagnostics(sweep: Sweep, i: int, solve) -> None:
    _held_stiffness(sweep, i, solve.solver, sweep.results[i])


def rotation_sweep(robot: PcrRobot, yaws, position=REST_POSITION, force=None, moment=None,
                   progress: bool = True) -> Sweep:
    """
    Follow the inverse solutions at ``position`` [m] over platform yaw angles ``yaws`` [rad].

    The platform level (roll = pitch = 0), under the description's load unless given.
    """
    def solve_with(solver, yaw, cold):
        return solver.inverse(position, (0.0, 0.0, yaw), force, moment, cold=cold)
    return follow(_factory(robot, solve_with), yaws, YAW_STEP, YAW_RESOLUTION,
                  _inverse_diagnostics, desc='pcr sweep --yaw', progress=progress)


@dataclass
class CompressionStudy:
    """Inverse solves under growing downward forces, and the same forces with motors held."""

    position: np.ndarray        # (3,) m
    inverse: Sweep              # over forces [N]: the motors hold the platform at position
    held: Sweep                 # over the same forces: motors held at their unloaded angles
    held_motor_angles: np.ndarray   # (6,) rad
    rest_height: float          # m, platform height at zero force (held motors)

    @property
    def largest_force(self) -> float:
        """Largest force [N] with an inverse solution: the highest end of a branch reached."""
        return max((b.high for b in self.inverse.branches), default=math.nan)

    @property
    def height_drop(self) -> np.ndarray:
        """(n,) m: rest height minus the held platform's height, NaN where none."""
        z = np.array([r.position[2] if r is not None else np.nan for r in self.held.results])
        return self.rest_height - z

    @property
    def fitted_stiffness(self) -> float:
        """
        Least-squares slope [N/m] through the origin of force against height drop.

        Over the held samples on the branch that starts from the unloaded robot (branch 0):
        sum(f dz) / sum(dz^2).
        """
        on = self.held.branch == 0
        drop, force = self.height_drop[on], self.held.values[on]
        return float(force @ drop / (drop @ drop)) if on.any() else math.nan


def compression_study(robot: PcrRobot, forces, position=REST_POSITION,
                      progress: bool = True) -> CompressionStudy:
    """
    Run the compression study at ``position`` [m] for downward forces ``forces`` [N].

    Inverse: under F = (0, 0, -f) (and the description's moment) at each sample, the motor
    angles that hold the platform at ``position``, followed from zero force. Held: the motor
    angles of the unloaded inverse solution fixed, the forward solution under each force,
    followed from zero force: height drop, secant f / drop, tangent axial stiffness.
    """
    position = np.asarray(position, dtype=float)

    def inverse_with(solver, f, cold):
        return solver.inverse(position, (0.0, 0.0, 0.0), (0.0, 0.0, -f), None, cold=cold)
    make_inverse = _factory(robot, inverse_with)
    first = make_inverse()
    first(0.0, True)
    inverse = follow(make_inverse, forces, FORCE_STEP, FORCE_RESOLUTION, _inverse_diagnostics,
                     first=first, start=0.0, desc='pcr sweep --force (motors move)',
                     progress=progress)
    solver = PcrSolver(robot)
    solver.inverse(position)
    rest = solver.hold_motors()
    q0 = rest.motor_angles

    def held_with(solver, f, cold):
        return solver.forward(q0, (0.0, 0.0, -f), None, cold=cold)
    held = follow(_factory(robot, held_with), forces, FORCE_STEP, FORCE_RESOLUTION,
                  _held_diagnostics, first=_bind(solver, held_with), start=0.0,
                  desc='pcr sweep --force (motors held)', progress=progress)
    return CompressionStudy(position=position, inverse=inverse, held=held,
                            held_motor_angles=q0, rest_height=float(rest.position[2]))


@dataclass
class HelixStudy:
    """Inverse solves along a path, forward solves at their motor angles, the FK(IK) error."""

    targets: np.ndarray         # (n, 3) m, the reference positions
    inverse: list               # PcrResult or None per target
    forward: list               # PcrResult or None per target
    force: np.ndarray           # (3,) N
    clearances: np.ndarray      # (n,) m, rod clearance of each inverse solution (NaN: none)

    @property
    def errors(self) -> np.ndarray:
        """(n,) m: |p_FK - p_ref|, NaN where either solve failed."""
        return np.array([np.linalg.norm(f.position - p) if f is not None else np.nan
                         for f, p in zip(self.forward, self.targets)])


def helix_study(robot: PcrRobot, targets=None, force=HELIX_LOAD,
                progress: bool = True) -> HelixStudy:
    """
    Follow a path of platform positions (default the paper's helix) by inverse kinetostatics.

    Then solve the forward kinetostatics at each inverse solution's motor angles, with a
    solver of its own (warm along the path, cold at the first point), under the same force
    [N] (default the paper's 5 N down); the platform level.
    """
    targets = helix() if targets is None else np.asarray(targets, dtype=float)
    ik, fk = PcrSolver(robot), PcrSolver(robot)
    inverse, forward = [], []
    for p in progress_bar(targets, progress, desc='pcr trajectory', unit='point'):
        try:
            result = ik.inverse(p, (0.0, 0.0, 0.0), force)
        except ConvergenceError:
            inverse.append(None)
            forward.append(None)
            continue
        inverse.append(result)
        try:
            forward.append(fk.forward(result.motor_angles, force))
        except (ConvergenceError, StaticsInputError):
            forward.append(None)
    clearances = np.array([rod_clearance(robot, r).gap if r is not None else np.nan
                           for r in inverse])
    return HelixStudy(targets=targets, inverse=inverse, forward=forward,
                      force=np.asarray(force, dtype=float), clearances=clearances)


def _cells(values, digits: int = 9) -> list[str]:
    return [f'{v:.{digits}g}' for v in values]


def _sweep_rows(sweep: Sweep) -> list[list[str]]:
    """Per sample: branch, start, q1 (6), q2 (6), q3 (6) [deg], limits, residual, diagnostics."""
    rows = []
    names = ('rcond', 'axial_stiffness', 'stable', 'clearance')
    for i, result in enumerate(sweep.results):
        extra = [sweep.data.get(name, np.full(sweep.values.size, np.nan))[i] for name in names]
        if result is None:
            rows.append([str(-1), ''] + ['nan'] * 18 + ['', 'nan'] + _cells(extra, 6))
            continue
        angles = np.degrees(np.column_stack((result.motor_angles, result.joint_angles)))
        rows.append([str(sweep.branch[i]), sweep.start[i]] + _cells(angles.T.ravel())
                    + [str(int(result.within_limits)), f'{result.residual:.3g}']
                    + _cells(extra, 6))
    return rows


SWEEP_HEADER = ([f'{q}_{i}_deg' for q in ('q1', 'q2', 'q3') for i in range(1, 7)]
                + ['within_limits', 'residual', 'rcond', 'axial_stiffness_N_per_m',
                   'stable_motors_held', 'rod_clearance_m'])


def write_rotation_csv(sweep: Sweep, path: str | Path) -> None:
    """One row per yaw [deg]: branch (-1: no solution), how it was started, angles, data."""
    with open_output(path, newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(['yaw_deg', 'branch', 'start'] + SWEEP_HEADER)
        for yaw, row in zip(np.degrees(sweep.values), _sweep_rows(sweep)):
            writer.writerow([f'{yaw:.9g}'] + row)


def write_compression_csv(study: CompressionStudy, path: str | Path) -> None:
    """
    One row per force [N]: the inverse solution, then the held-motor solution.

    Held: branch, platform height and drop [m], secant [N/m], tangent axial stiffness
    [N/m], stable.
    """
    drop = study.height_drop
    held = study.held
    with open_output(path, newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(['force_N', 'branch', 'start'] + SWEEP_HEADER
                        + ['held_branch', 'held_z_m', 'held_drop_m', 'held_secant_N_per_m',
                           'held_axial_stiffness_N_per_m', 'held_stable'])
        for i, (f, row) in enumerate(zip(study.inverse.values, _sweep_rows(study.inverse))):
            result = held.results[i]
            z = result.position[2] if result is not None else math.nan
            secant = f / drop[i] if result is not None and drop[i] != 0.0 else math.nan
            extra = [held.data.get(n, np.full(held.values.size, np.nan))[i]
                     for n in ('axial_stiffness', 'stable')]
            writer.writerow([f'{f:.9g}'] + row + [str(held.branch[i])]
                            + _cells([z, drop[i], secant]) + _cells(extra, 6))


def write_helix_csv(study: HelixStudy, path: str | Path) -> None:
    """
    One row per point: reference, motor angles [deg], forward position and rpy, error [m].

    Then the rod clearance of the inverse solution [m] (below zero: two rods cross).
    """
    with open_output(path, newline='') as handle:
        writer = csv.writer(handle)
        writer.writerow(['index', 'x_ref', 'y_ref', 'z_ref']
                        + [f'q1_{i}_deg' for i in range(1, 7)]
                        + ['x_fk', 'y_fk', 'z_fk', 'roll_fk', 'pitch_fk', 'yaw_fk', 'error_m',
                           'rod_clearance_m'])
        for k, (p, ik, fk, e, gap) in enumerate(zip(study.targets, study.inverse, study.forward,
                                                    study.errors, study.clearances)):
            q = np.degrees(ik.motor_angles) if ik is not None else np.full(6, np.nan)
            pose = (np.concatenate((fk.position, fk.orientation)) if fk is not None
                    else np.full(6, np.nan))
            writer.writerow([str(k)] + _cells(p) + _cells(q) + _cells(pose) + [f'{e:.4g}']
                            + _cells([gap], 6))
