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
How the solutions of many inputs move when a parameter of the robot changes, without solving.

A calibration's Jacobian needs the measured point of every sample for the robot and for the
robot with each parameter changed a little. Solving each changed robot for each sample (warm
started: several residual evaluations, and Python around each solve) is most of a fit's time.
At a converged solution x of the shooting residual F(x, p) = 0 the implicit function theorem
gives dx/dp = -(dF/dx)^-1 dF/dp: :func:`linearize` builds, once per sample, dF/dx and the
derivative of the measured point by x (forward differences, as the solver's own Jacobian);
:func:`linear_points` then gives a changed robot's points from one residual evaluation per
sample and a linear step, all samples in one compiled call
(:mod:`~tendon_robot_sim.models.rod.statics.analysis._sensitivity_kernels`). The point's change is
exact to first order in the parameter's change: the same order as a forward difference of
two solves.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tendon_robot_sim.models.cosserat import StaticsInputError
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.rod.statics.analysis._sensitivity_kernels import (
    linear_points as _kernel)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver


#: The models whose points :func:`linear_points` gives to within about 0.5 % of the change a
#: full solve gives (``test_sensitivity.py``). Not ``discrete``: its bays, solved by an inner
#: iteration inside each residual, leave the derivatives by the unknowns 1 to 12 % off at the
#: forward-difference step, measured on the FTDCR v4 robot; its calibration solves each
#: changed robot.
LINEARISABLE = ('cosserat', 'kirchhoff')


@dataclass(frozen=True)
class Linearization:
    """Solutions of one solver with the derivatives :func:`linear_points` needs."""

    tension: bool            # inputs are tensions (else displacements)
    commands: np.ndarray     # (m, n) tensions [N] or displacements [m] per tendon
    x: np.ndarray            # (m, k) scaled unknowns of each solution; NaN: none
    inverse: np.ndarray      # (m, k, k) inverse of the shooting Jacobian dF/dx at each
    derivative: np.ndarray   # (m, 3, k) derivative of the point by x [m per unit]
    points: np.ndarray       # (m, 3) the measured point (tip + tip rotation @ marker) [m];
    #                          NaN: no solution or no linearisation
    residual: np.ndarray     # (m, k) the scaled shooting residual at x (within tolerance)
    lengths: np.ndarray      # (m, n) the tendons' path lengths at x [m]
    marker: np.ndarray       # (3,) the measured point in the tip frame [m]
    plan: tuple              # the solver's kernel plan (its grid, scales and tendon law)


def solutions(solver: StaticsSolver, memories: Sequence, tension: bool) -> np.ndarray:
    """
    Return the unknowns (m, k) of the solutions in memories (:meth:`StaticsSolver.memory`).

    One memory of ``solver`` per input, taken after its solve; None or a mode not solved: a
    row of NaN.
    """
    mode = kernels.TENSION if tension else kernels.DISPLACEMENT
    x = np.full((len(memories), solver.memory()[mode][1].size), np.nan)
    for i, memory in enumerate(memories):
        if memory is not None and memory[mode][0]:
            x[i] = memory[mode][1]
    return x


def restarted(memory: dict, tension: bool, step: np.ndarray | None = None,
              inverse: np.ndarray | None = None) -> dict:
    """
    Return a copy of a solver memory whose next solve of one mode starts elsewhere.

    ``memory``: of :meth:`StaticsSolver.memory`; the next solve of the mode starts ``step``
    (scaled unknowns) from its solution, with the inverse Jacobian ``inverse`` (None: as
    they were).

    A linearisation predicts where the solution goes when a parameter changes
    (:func:`linear_points`): starting there, with the linearisation's fresh Jacobian, saves
    the solve most of its iterations.
    """
    mode = kernels.TENSION if tension else kernels.DISPLACEMENT
    solved, x, J, u, S = memory[mode]
    return {**memory, mode: (solved, x if step is None else x + step,
                             J if inverse is None else np.array(inverse, dtype=float), u, S)}


def linearize(solver: StaticsSolver, commands: np.ndarray, tension: bool, x: np.ndarray,
              marker: np.ndarray) -> Linearization:
    """
    Linearise ``solver``'s solutions x (m, k) of ``commands`` (m, n) (:func:`solutions`).

    The measured point is the tip plus the tip rotation times ``marker`` (tip frame) [m].
    """
    commands = np.ascontiguousarray(commands, dtype=float)
    x = np.array(x, dtype=float)
    m, k = x.shape
    inverse, derivative = np.zeros((m, k, k)), np.zeros((m, 3, k))
    points, residual = np.full((m, 3), np.nan), np.zeros((m, k))
    lengths, ok = np.zeros((m, solver.n_tendons)), np.zeros(m, dtype=np.bool_)
    marker = np.asarray(marker, dtype=float).copy()
    plan = solver.kernel_plan()
    _kernel(plan, *_inputs(solver, commands, tension), x, marker, True, False, inverse,
            derivative, points, residual, lengths, np.zeros((0, 3)), np.zeros((0, k)), ok,
            *solver.kernel_buffers(tension)[2:])
    points[~ok] = np.nan
    x[~ok] = np.nan
    return Linearization(tension=tension, commands=commands, x=x, inverse=inverse,
                         derivative=derivative, points=points, residual=residual,
                         lengths=lengths, marker=marker, plan=plan)


def linear_points(solver: StaticsSolver, linearization: Linearization
                  ) -> tuple[np.ndarray, np.ndarray]:
    """
    Return the points (m, 3) [m] of ``solver``'s robot to first order from ``linearization``.

    ``solver``: the linearised robot with other parameter values (the same tendons and grid).
    Also returns the step (m, k) of the unknowns from the linearised solutions to the
    changed robot's (first order, in the linearisation's scales). NaN where the
    linearisation has none or the residual could not be evaluated.
    """
    lin = linearization
    plan = solver.kernel_plan()
    if plan.rt.shape != lin.plan.rt.shape or plan.tendon.shape != lin.plan.tendon.shape:
        raise StaticsInputError('solver: of another grid or other tendons than the '
                                'linearised one')
    tendon = plan.tendon.copy()
    tendon[kernels.TENDON_SLACK] = lin.plan.tendon[kernels.TENDON_SLACK]
    # the linearisation's scales: its unknowns and Jacobian are in them (the same solutions,
    # another choice of units)
    plan = plan._replace(scale=lin.plan.scale, tendon=tendon)
    m, k = lin.x.shape
    points, steps = np.full((m, 3), np.nan), np.full((m, k), np.nan)
    ok = np.zeros(m, dtype=np.bool_)
    _kernel(plan, *_inputs(solver, lin.commands, lin.tension), lin.x, lin.marker, False,
            _same_shape(plan, lin.plan), lin.inverse, lin.derivative, lin.points, lin.residual,
            lin.lengths, points, steps, ok, *solver.kernel_buffers(lin.tension)[2:])
    points[~ok] = np.nan
    steps[~ok] = np.nan
    return points, steps


def _same_shape(plan, linearised) -> bool:
    """Return whether two plans differ in the tendons' law alone (the same integration)."""
    for field, a, b in zip(plan._fields, plan, linearised):
        if field == 'tendon':
            continue
        if field in ('dyn', 'contact'):
            if not all(_equal(u, v) for u, v in zip(a, b)):
                return False
        elif not _equal(a, b):
            return False
    return True


def _equal(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.shape(a) == np.shape(b) and bool(np.array_equal(a, b))
    return a == b


def _inputs(solver: StaticsSolver, commands: np.ndarray, tension: bool) -> tuple:
    """Tendon modes, tensions, displacements (m, n) and tip load of the kernel."""
    modes, tip = solver.kernel_buffers(tension)[:2]
    zeros = np.zeros_like(commands)
    return (modes, commands, zeros, tip) if tension else (modes, zeros, commands, tip)
