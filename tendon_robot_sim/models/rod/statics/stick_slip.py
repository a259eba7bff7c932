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
Path-dependent statics: tendons that stick and slide on their guides (capstan friction).

A quasi-static sequence of inputs, each state solved from the last. A tendon with
``friction: {law: sliding, coefficient: mu}`` is cut into pieces at the points where its
tension may change: at every vertebra up to its anchor in the ``discrete`` model (the spacer
discs of Shen, Browne, Ha & Chen, RA-L 2026), every ``piece_length`` along it for continuous
routing (``cosserat``, ``kirchhoff``: there the wrap angle is the integral of the tendon's
curvature, which the pieces' turning angles sum). Each piece either sticks, keeping its
tension from the last state, or slides on the edge of the capstan cone of the piece before it
(:func:`~tendon_robot_sim.models.rod.tendons.capstan.stick_slip`), with the wrap angles of the
solved shape: a fixed point of (angles -> tensions -> shape), iterated to
``tension_tolerance``.

The loads of a tendon on the rod are linear in its tension, so a tendon of piecewise constant
tension is the sum of tendons along the same holes ending at each break, each carrying the
step of the tension there (:meth:`StaticsSolver.solve_tension_steps`): the rod model and its
kernels are the frictionless ones, unchanged. The pieces' breaks lie on the frictionless
solver's grid, so with coefficient 0 every output equals the frictionless one to round-off.

Tensions in: the motor's (T_0). Displacements in: the motor tensions are solved so that each
tendon's unstretched length, motor distance d at T_0 and piece k of length l_k at T_k,
d / (1 + C T_0) + sum l_k / (1 + C T_k), plus its slack, is l* + d - q (the frictionless
relation of :func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`, per piece),
to 1e-8 m: in the same iteration of shape solves as the pieces' stick and slip, with a linear
model of the pieces' path lengths beside that of their wrap angles
(:meth:`StickSlipStatics._joint_displacements`).
The viscous law has no static part (its load is proportional to the sliding speed): such a
tendon is frictionless here. Out: each state's equilibrium with the tension at the motor
(``tensions``) and at the anchor (``tip_tensions``: the last piece's; for continuous routing
the tension in the middle of the last piece).
"""

from __future__ import annotations

import dataclasses
import math
import time

import numpy as np

from tendon_robot_sim.models._numerics import broyden
from tendon_robot_sim.models.cosserat import ConvergenceError, StaticsInputError
from tendon_robot_sim.models.description import POSITION_TOLERANCE
from tendon_robot_sim.models.rod.statics.bending_friction import (bay_moments,
                                                                  BendingFriction,
                                                                  segment_ends,
                                                                  set_rest_curvature)
from tendon_robot_sim.models.rod.statics.result import StaticsResult
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.tendons.capstan import path_turns, stick_slip_sweep
from tendon_robot_sim.models.rod.tendons.piece_lengths import settle_motors
from tendon_robot_sim.models.tendon_robot import Robot, Tendon, without_friction

# Length of the pieces of a continuously routed tendon [m]. A piece carries one tension, in
# effect its middle's (a midpoint rule, error ~ piece^2): the steel wire of test_stick_slip.py
# pulled to 10 N has its tip 19 um from the closed form with 10 mm pieces, 5 um with 5 mm.
DEFAULT_PIECE_LENGTH = 0.01
# The fixed point (angles -> tensions -> shape) has converged when no piece's tension moves by
# more than this fraction of the largest tendon tension (or 1e-8 N) in an iteration: about
# what the shape solves resolve (their tolerance, 1e-7 of E I / L^2 on the tip's force
# balance, is 2e-8 N on the default robot); tighter only adds solves (1e-9: 4.1 a state on the
# benchmark's sequence, 3.3 here) and moves the tips by 1e-8 m.
TENSION_TOLERANCE = 1e-8
MAX_FIXED_POINT = 60
# Displacement inputs: the tendon length error [m] at which the motor tensions are solved. Above
# the noise of the inner solves (~1e-8 m); antagonists near slack, whose errors move each other,
# settle to ~1e-7 m only slowly. A micrometre of tendon moves the tip by about as much.
LENGTH_TOLERANCE = 1e-6
MAX_LENGTH_ITERATIONS = 40
MAX_SWEEPS = 20       # of one-tendon solves, when Newton stalls
# The pieces' and motors' tensions solved together (_joint_displacements): the length error
# [m] at which they stop, and the probe [N] of the pieces' tensions whose finite differences
# start the model of their path lengths.
JOINT_LENGTH_TOLERANCE = 1e-8
LENGTH_PROBE = 1e-2
# The shortest step of the pieces' tensions [N] the path lengths' model learns from: the
# solves' noise in the lengths (~1e-10 m) is then below 1e-5 of the secant's change.
SECANT_STEP = 1e-4
MAX_HALVINGS = 4     # of a Newton step of the motor tensions in a row
# The first shape solve of a state whose pieces' tensions move by more than LOOSE_STEP [N] stops
# at this scaled residual (the solver's default is 1e-7): it only carries the linear models to
# the state (its tensions then move by ~1e-2 of that step), and every state still ends with a
# shape solved to the solver's tolerance. Two residual evaluations fewer a state of ~16 on the
# benchmark's sequence (bench_stick_slip.py; 1e-4: no fewer, the models learn less from it).
FIRST_TOLERANCE = 1e-5
LOOSE_STEP = 1e-3


def has_friction(robot: Robot) -> bool:
    """Tell whether any tendon of ``robot`` has a friction law, or its rod bending friction."""
    return (any(t.friction is not None for t in robot.tendons)
            or robot.rod.bending_friction is not None)


def capstan_coefficients(robot: Robot) -> np.ndarray:
    """Coulomb-capstan mu of each tendon (0: none, or the viscous law, which has no statics)."""
    return np.array([t.friction.coefficient if t.friction is not None
                     and t.friction.law == 'sliding' else 0.0 for t in robot.tendons])


def _piece(tendon: Tendon, end: float, index: int) -> Tendon:
    """Return the part of ``tendon`` from the base to ``end``, along the same holes."""
    share = end / tendon.end
    return dataclasses.replace(
        tendon, name=f'{tendon.name}#{index}', end=end, turns=tendon.turns * share,
        end_offset=tendon.offset + (tendon.end_offset - tendon.offset) * share,
        reference_length=None, friction=None)


class StickSlipStatics:
    """
    Quasi-static sequence of a robot whose tendons stick and slide (module docstring).

    Parameters
    ----------
    robot : Robot
        The description; tendons without a sliding friction law are one piece.
    model : {'cosserat', 'kirchhoff', 'discrete', 'auto'}
        The rod model (:class:`StaticsSolver`).
    piece_length : float
        Largest piece of a continuously routed tendon [m].
    options
        More arguments of :class:`StaticsSolver` (step, tolerance, constitutive, world: the
        obstacles press the rod as in a frictionless solve; their contacts are in each result).

    The state starts from rest: every tendon slack, no tension stored in its pieces.

    """

    def __init__(self, robot: Robot, model: str = 'auto', *,
                 piece_length: float = DEFAULT_PIECE_LENGTH, **options):
        if not (isinstance(piece_length, (int, float)) and math.isfinite(piece_length)
                and piece_length > 0.0):
            raise StaticsInputError(f'piece_length: must be a finite number > 0 m, got '
                                    f'{piece_length!r}')
        frictionless = StaticsSolver(without_friction(robot), model, **options)
        self.frictionless = frictionless    # its grid, rest lengths and input checks
        self.robot = robot
        self.model = frictionless.model
        self.tendon_names = robot.tendon_names
        self.mu = capstan_coefficients(robot)
        grid = frictionless.arc_lengths
        pieces, self._first = [], []
        for i, tendon in enumerate(robot.tendons):
            self._first.append(len(pieces))
            breaks = self._breaks(tendon, grid, piece_length) if (
                tendon.friction is not None and tendon.friction.law == 'sliding') else [tendon.end]
            pieces += [_piece(tendon, s, k) for k, s in enumerate(breaks)]
        self._first.append(len(pieces))
        self._first_array = np.array(self._first)
        # piece -> its tendon; whether it is its tendon's first (it starts at the base hole)
        self._tendon_of = np.repeat(np.arange(len(robot.tendons)), np.diff(self._first))
        self._opens = np.zeros(self._first[-1], dtype=bool)
        self._opens[self._first[:-1]] = True
        # each piece's neighbours towards the motor and the anchor (P: none, the index of an
        # appended value); the point its chord starts from (_angles): the end of the piece
        # before, or its tendon's base hole (P + tendon)
        count = self._first[-1]
        self._before = np.where(self._opens, count, np.arange(count) - 1)
        self._after = np.where(np.isin(np.arange(count), self._first_array[1:] - 1), count,
                               np.arange(count) + 1)
        self._start = np.where(self._opens, count + self._tendon_of, np.arange(count) - 1)
        self._tolerances = np.array([LENGTH_TOLERANCE, JOINT_LENGTH_TOLERANCE,
                                     TENSION_TOLERANCE])
        self.solver = StaticsSolver(dataclasses.replace(without_friction(robot),
                                                        tendons=tuple(pieces)),
                                    self.model, **options)
        self.constitutive = self.solver.constitutive
        # the grid rows and body-frame holes of the pieces' ends, then of the base holes
        # (_angles: the points of the tendon paths the solver gives, without building them)
        ends = [(t.end, t) for t in pieces] + [(0.0, t) for t in robot.tendons]
        arc = self.solver.arc_lengths
        self._rows = np.array([np.argmin(np.abs(arc - s)) for s, _ in ends])
        self._holes = np.array([t.hole(s)[0] for s, t in ends])
        # where the solver leaves each solve's trajectory and pieces' path lengths [m]
        _, _, self._traj, _, self._lengths, _, _ = self.solver.kernel_buffers(True)
        self.rest_lengths = frictionless.rest_lengths
        self._compliance = np.array([t.compliance for t in robot.tendons])
        self._motor = np.array([t.motor_distance for t in robot.tendons])
        self._incoming = robot.base.direction
        self._sliding = any(t.friction is not None and t.friction.law == 'sliding'
                            for t in robot.tendons)
        bending, bays = robot.rod.bending_friction, segment_ends(frictionless)
        self.bending = None if bending is None else BendingFriction(
            bay_moments(bending.moment, robot.segment_ends, bays), bending.stiffness_ratio,
            robot.rod.bending_stiffness, bays, bending.tension_arm,
            [t.end for t in robot.tendons])
        # the bay of the frictionless grid each segment of the pieces' grid lies in
        middles = segment_ends(self.solver).mean(axis=1)
        self._bay_of = np.searchsorted(segment_ends(frictionless)[:, 1], middles)
        self.reset()

    def _breaks(self, tendon: Tendon, grid: np.ndarray, piece_length: float) -> list[float]:
        """Return where the pieces of ``tendon`` end [m]: its discs, or grid points apart."""
        if self.model == 'discrete':
            discs = self.robot.vertebra_positions
            return [float(s) for s in discs if s <= tendon.end + POSITION_TOLERANCE]
        count = max(1, math.ceil(tendon.end / piece_length - 1e-9))
        targets = tendon.end * np.arange(1, count + 1) / count
        on_grid = grid[np.argmin(np.abs(grid[None, :] - targets[:, None]), axis=1)]
        return sorted({float(s) for s in on_grid if s > POSITION_TOLERANCE})

    @property
    def pieces(self) -> list[int]:
        """Return the number of pieces of each tendon."""
        return [int(k) for k in np.diff(self._first)]

    def set_tip_load(self, force, moment) -> None:
        """Replace ``robot.tip_load`` in later states: force [N], moment [N m], world frame."""
        self.solver.set_tip_load(force, moment)
        self.frictionless.set_tip_load(force, moment)

    def reset(self) -> None:
        """Return to rest: no tension stored in any piece, straight wrap angles."""
        self._tensions = np.zeros(self._first[-1])
        # the linear model of the wrap angles (_equilibrium): last shape solved, secant
        self._T_ref = np.zeros(self._first[-1])
        self._theta_ref = np.zeros(self._first[-1])
        self._A = np.zeros((self._first[-1], self._first[-1]))
        # and of the pieces' path lengths [m] (_joint_displacements): lengths of the last
        # shape solved, B = d lengths / d tensions (finite differences, then secant updates)
        self._ell_ref = self._B = None
        self._motor_tension = np.zeros(len(self.robot.tendons))
        self._jacobian = None
        self._rebased = False
        self.solver.reset()
        if self.bending is not None:
            self.bending.reset()
            self._set_rest_curvature(self.bending.rest_curvature(self.bending.moments))

    def path_state(self) -> tuple:
        """
        Return a copy of what the next state depends on: the stored tensions, the bays' friction.

        :meth:`restore_path` goes back to it (a setpoint solved and then refused).
        """
        bending = self.bending and (self.bending.moments.copy(), self.bending.curvatures.copy(),
                                    self.bending.bound.copy())
        return self._tensions.copy(), self._motor_tension.copy(), bending

    def restore_path(self, state: tuple) -> None:
        """Make the next state start from ``state`` (:meth:`path_state`), not the last solved."""
        tensions, motor, bending = state
        self._store(motor, tensions.copy())
        if bending:
            self.bending.moments, self.bending.curvatures, self.bending.bound = (
                a.copy() for a in bending)

    def _set_rest_curvature(self, ustar: np.ndarray) -> None:
        """Give both solvers the bays' rest curvature (k, 3) [1/m] (bending friction)."""
        set_rest_curvature(self.frictionless, ustar)
        set_rest_curvature(self.solver, ustar[self._bay_of])
        # the next shape moves by the curvature too, not by the tensions alone: it renews
        # the linear models' reference without a secant update (_learn)
        self._rebased = True

    # ------------------------------------------------------------------ one state

    def _propagate(self, motor: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return self._sweep(motor, theta)[0]

    def _sweep(self, motor: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pieces' tensions [N] from the stored ones, and their slopes dT_k / dT_0 [-]."""
        tensions, slopes = np.empty_like(self._tensions), np.empty_like(self._tensions)
        stick_slip_sweep(self._tensions, motor, theta, self.mu, self._first_array, tensions,
                         slopes)
        return tensions, slopes

    def _shape(self, tensions: np.ndarray, loose: bool = False):
        """
        Solve the shape of the pieces' ``tensions`` [N], its result not built (but on demand).

        ``loose``: to FIRST_TOLERANCE, not the solver's. Returns (a function that builds the
        StaticsResult until the next solve, the pieces' wrap angles [rad], their path lengths
        [m]).
        """
        solver, tolerance = self.solver, self.solver.tolerance
        if loose:
            solver.tolerance = max(tolerance, FIRST_TOLERANCE)
        try:
            build = solver.solve_tension_steps(self._steps(tensions), full=False)
        finally:
            solver.tolerance = tolerance
        return build, self._angles(), self._lengths.copy()

    def _loose(self, first: bool, tensions: np.ndarray) -> bool:
        """Tell whether the shape of ``tensions`` is solved loosely (FIRST_TOLERANCE)."""
        return first and float(np.max(np.abs(tensions - self._T_ref), initial=0.0)) > LOOSE_STEP

    def _angles(self) -> np.ndarray:
        """Wrap angles of all pieces in the last shape solved (:func:`~..capstan.wrap_angles`)."""
        theta = np.empty(self._start.size)
        path_turns(self._traj, self._rows, self._holes, self._start, self._before,
                   self._incoming, theta)
        return theta

    def _steps(self, tensions: np.ndarray) -> np.ndarray:
        """Tension steps of the pieces: T_k - T_(k+1) per tendon (the last piece: T_K)."""
        return tensions - np.append(tensions, 0.0)[self._after]

    def _equilibrium(self, motor: np.ndarray):
        """
        Solve the state the motor tensions ``motor`` [N] reach from the stored one.

        The fixed point T = G(T) of (tensions -> shape -> wrap angles -> stick-slip tensions),
        by a quasi-Newton method: the wrap angles, smooth in the tensions (the kinks of stick
        and slip are in the sweep, which is exact), are modelled linearly about the last
        shape solved, theta = theta_ref + A (T - T_ref), A a Broyden secant kept from state
        to state; the model's fixed point (cheap: no shape) is the next tensions to solve the
        shape of. With A = 0 this is the plain iteration, which contracts by 0.05 to 0.15 per
        shape solve on the default robot; a learnt A takes one or two.

        Returns (result of the pieces, piece tensions, wrap angles), the result that of
        tensions within the tolerance of the returned ones; does not store them.
        """
        tolerance = TENSION_TOLERANCE * max(1.0, float(np.max(motor, initial=0.0)))
        change = math.inf
        for k in range(MAX_FIXED_POINT):
            tensions = self._model_fixed_point(motor, tolerance)
            loose = self._loose(k == 0, tensions)
            build, theta, lengths = self._shape(tensions, loose)
            updated = self._propagate(motor, theta)
            last, change = change, float(np.max(np.abs(updated - tensions), initial=0.0))
            self._learn(tensions, theta, lengths, change > last)
            if change <= tolerance and not loose:
                return build(), updated, theta
        raise ConvergenceError(
            f'stick-slip statics: the tensions did not settle with the shape in '
            f'{MAX_FIXED_POINT} iterations (last change {change:.3g} N); the friction may '
            'be too large for this pose', change, MAX_FIXED_POINT)

    def _learn(self, tensions: np.ndarray, theta: np.ndarray, lengths: np.ndarray,
               misled: bool) -> None:
        """
        Move the linear models of the angles and lengths to a shape solved at ``tensions``.

        Broyden's secant updates of A (restarted from 0 where the last iteration ``misled``)
        and of B, and the new reference: the wrap angles ``theta`` and path lengths
        ``lengths`` (its pieces', base to end [m]) of that shape.
        """
        dT = tensions - self._T_ref
        if self._rebased:
            self._rebased = False
        elif dT @ dT > 0.0:
            if misled:       # the model misled: start learning afresh
                self._A[:] = 0.0
            else:
                broyden(self._A, self._theta_ref, theta, dT, 1.0)
            if self._B is not None and dT @ dT >= SECANT_STEP ** 2:
                broyden(self._B, self._ell_ref, lengths, dT, 1.0)
        self._T_ref, self._theta_ref, self._ell_ref = tensions, theta, lengths.copy()

    def _model_fixed_point(self, motor: np.ndarray, tolerance: float) -> np.ndarray:
        """Tensions T = sweep(theta_ref + A (T - T_ref)) of the linear angle model [N]."""
        tensions = self._propagate(motor, self._theta_ref)
        if not self._A.any():
            return tensions
        for _ in range(MAX_FIXED_POINT):
            theta = np.maximum(self._theta_ref + self._A @ (tensions - self._T_ref), 0.0)
            updated = self._propagate(motor, theta)
            if np.max(np.abs(updated - tensions), initial=0.0) <= 0.1 * tolerance:
                return updated
            tensions = updated
        return self._propagate(motor, self._theta_ref)     # the model does not contract

    def _needed_length(self, lengths: np.ndarray, motor: np.ndarray,
                       tensions: np.ndarray) -> np.ndarray:
        """Unstretched length each tendon needs, its pieces' path ``lengths`` [m] given [m]."""
        C = self._compliance
        pieces = lengths - np.append(lengths, 0.0)[self._before]
        return self._motor / (1.0 + C * motor) + np.add.reduceat(
            pieces / (1.0 + C[self._tendon_of] * tensions), self._first_array[:-1])

    def _physical(self, result: StaticsResult, motor: np.ndarray, tensions: np.ndarray,
                  displacements: np.ndarray, slack: np.ndarray, start: float
                  ) -> StaticsResult:
        last = np.array(self._first[1:]) - 1
        return dataclasses.replace(
            result, solve_time=time.perf_counter() - start, tensions=motor.copy(),
            tip_tensions=tensions[last].copy(),
            tendon_lengths=result.tendon_lengths[last].copy(),
            tendon_paths=tuple(result.tendon_paths[k] for k in last),
            tendon_displacements=displacements, slack=slack)

    def _store(self, motor: np.ndarray, tensions: np.ndarray) -> None:
        self._motor_tension = motor.copy()
        self._tensions = tensions

    # ------------------------------------------------------------------ public API

    def solve_tensions(self, tensions) -> StaticsResult:
        """
        Next state of the sequence: the motors hold ``tensions`` [N] (n,, or by name).

        Returns its equilibrium (``tensions`` at the motors, ``tip_tensions`` at the anchors)
        and stores it as the state the next one starts from.
        """
        return self._next(tensions, self._tendon_tensions, self.frictionless.solve_tensions)

    def solve_displacements(self, displacements) -> StaticsResult:
        """
        Next state: the motors have pulled in ``displacements`` [m] (n,, or by name).

        The motor tensions are solved (:meth:`_tendon_displacements`). Returns its equilibrium
        and stores it as the state the next one starts from.
        """
        return self._next(displacements, self._tendon_displacements,
                          self.frictionless.solve_displacements)

    def _next(self, values, with_tendons, frictionless) -> StaticsResult:
        """
        Next state by ``with_tendons`` (the tendons' stick and slip), with bending friction.

        With bending friction the state is solved again until the bays' friction moments
        settle with the shape (:meth:`BendingFriction.settle`), each solve from the tendons'
        stored state; without sliding tendons each is a frictionless solve (``frictionless``).
        """
        if self.bending is None:
            return with_tendons(values)
        start = time.perf_counter()
        if self._sliding:
            stored = self._tensions, self._motor_tension

            def solve():
                self._tensions, self._motor_tension = stored
                return with_tendons(values)
        else:
            def solve():
                result = frictionless(values)
                return dataclasses.replace(result, tip_tensions=result.tensions.copy())
        result = self.bending.settle(solve, self._set_rest_curvature)
        if not self._sliding:
            self._motor_tension = result.tensions.copy()
        return dataclasses.replace(result, solve_time=time.perf_counter() - start)

    def _tendon_tensions(self, tensions) -> StaticsResult:
        """Next state with the motor ``tensions``, the tendons sticking and sliding."""
        start = time.perf_counter()
        motor = self.frictionless.tendon_vector(tensions, 'tensions', tension=True)
        result, pieces, _ = self._equilibrium(motor)
        q = self.rest_lengths + self._motor - self._needed_length(result.tendon_lengths, motor,
                                                                  pieces)
        self._store(motor, pieces)
        return self._physical(result, motor, pieces, q, np.zeros_like(motor), start)

    def _tendon_displacements(self, displacements) -> StaticsResult:
        """
        Next state with the motor ``displacements``, the tendons sticking and sliding.

        The motor tensions are solved with the pieces' (:meth:`_joint_displacements`); where
        that does not settle, around the tension-driven state (:meth:`_by_lengths`).
        """
        start = time.perf_counter()
        q = self.frictionless.tendon_vector(displacements, 'displacements', tension=False)
        available = self.rest_lengths + self._motor - q
        try:
            result, motor, tensions, F = self._joint_displacements(available)
        except ConvergenceError:
            result, motor, tensions, F = self._by_lengths(q, available)
        self._store(motor, tensions)
        return self._physical(result, motor, tensions, q.copy(),
                              np.where(motor > 0.0, 0.0, np.maximum(-F, 0.0)), start)

    def _joint_displacements(self, available: np.ndarray):
        """
        Solve the motor and piece tensions whose shape gives the tendons ``available`` [m].

        One iteration of shape solves for the tendons' lengths and the pieces' stick and slip
        together: the linear models of the wrap angles (A) and of the pieces' path lengths (B)
        about the last shape solved give the motor tensions whose stick-slip tensions meet
        the lengths (:meth:`_model_motors`, no shape solved); the shape is solved at those
        tensions, the models learn from it, until the tensions settle with the shape and the
        lengths are met (the taut tendons', the slack ones no shorter than their paths).
        Returns (result, motor tensions, piece tensions, length errors [m]).
        """
        if self._ell_ref is None:   # no shape since the reset: the stored tensions' one
            _, self._theta_ref, self._ell_ref = self._shape(self._tensions)
            self._T_ref = self._tensions.copy()
        if self._B is None:
            self._B = self._length_jacobian()
        motor, change = self._motor_tension.copy(), math.inf
        for k in range(MAX_FIXED_POINT):
            try:
                motor, tensions = self._model_motors(available, motor)
            except ConvergenceError:    # the angles' model does not contract: without it
                self._A[:] = 0.0
                motor, tensions = self._model_motors(available, motor)
            loose = self._loose(k == 0, tensions)
            build, theta, lengths = self._shape(tensions, loose)
            updated = self._propagate(motor, theta)
            F = self._needed_length(lengths, motor, updated) - available
            last, change = change, float(np.max(np.abs(updated - tensions), initial=0.0))
            self._learn(tensions, theta, lengths, change > last)
            taut = motor > 0.0
            if (not loose and change <= TENSION_TOLERANCE * max(1.0, float(np.max(motor)))
                    and np.all(np.abs(F[taut]) <= JOINT_LENGTH_TOLERANCE)
                    and np.all(F[~taut] <= LENGTH_TOLERANCE)):
                return build(), motor, updated, F
        raise ConvergenceError('stick-slip statics: the lengths did not settle with the shape',
                               change, MAX_FIXED_POINT)

    def _length_jacobian(self) -> np.ndarray:
        """B = d (pieces' path lengths) / d (pieces' tensions) [m/N] about the reference."""
        B = np.empty((self._T_ref.size, self._T_ref.size))
        for k in range(self._T_ref.size):
            probe = self._T_ref.copy()
            probe[k] += LENGTH_PROBE
            B[:, k] = (self._shape(probe)[2] - self._ell_ref) / LENGTH_PROBE
        return B

    def _model_motors(self, available: np.ndarray, motor: np.ndarray):
        """
        Motor tensions [N] meeting the lengths ``available`` in the linear models, no shape.

        theta = theta_ref + A (T - T_ref), lengths = l_ref + B (T - T_ref), T the pieces'
        stick-slip tensions (exact, with their kinks): semismooth Newton on the taut tendons'
        length errors with the sweep's slopes, compiled
        (:func:`~..tendons.piece_lengths.settle_motors`). Returns (motor, piece tensions).
        """
        motor, tensions, slopes = motor.copy(), np.empty_like(self._tensions), \
            np.empty_like(self._tensions)
        F, J = np.empty(motor.size), np.empty((motor.size, motor.size))
        if not settle_motors(self._tensions, motor, self._theta_ref, self._A, self._T_ref,
                             self._ell_ref, self._B, self.mu, self._first_array,
                             self._compliance, self._motor, available, self._tolerances,
                             MAX_HALVINGS, MAX_FIXED_POINT, tensions, slopes, F, J):
            raise ConvergenceError('stick-slip statics: the linear model did not settle',
                                   float(np.max(np.abs(F))), MAX_FIXED_POINT)
        return motor, tensions

    def _by_lengths(self, q: np.ndarray, available: np.ndarray):
        """
        Solve the motor tensions around the tension-driven state (:meth:`_equilibrium`).

        Newton's method (Broyden updates of a finite-difference Jacobian kept from state to
        state) on the length errors of the taut tendons, the others slack at zero tension; a
        slack tendon found too short joins the taut ones, a taut one whose tension would fall
        below zero leaves them. The first guess of which tendons are taut: those of the last
        state and of the frictionless solution. Returns (result, motor, piece tensions, F).
        """

        def error(motor):
            """Unstretched length each tendon lacks [m] (< 0: slack) at motor tensions [N]."""
            out = self._equilibrium(motor)
            return self._needed_length(out[0].tendon_lengths, motor, out[1]) - available, out

        taut = self._motor_tension > 0.0
        try:
            taut = taut | (self.frictionless.solve_displacements(q).tensions > 0.0)
        except ConvergenceError:    # only a guess: the last state's taut tendons will do
            pass
        motor = np.where(taut, self._motor_tension, 0.0)
        F, out = error(motor)
        try:
            for _ in range(len(self.robot.tendons) + 1):
                motor, F, out, taut = self._taut_lengths(error, motor, F, out, taut)
                joining = ~taut & (F > LENGTH_TOLERANCE)
                if not joining.any():
                    break
                taut = taut | joining
            else:
                raise ConvergenceError('stick-slip statics: no set of taut tendons meets the '
                                       'displacements', float(np.max(F)), 0)
        except ConvergenceError:
            # Newton stalls where a released tendon sticks: its length does not change while
            # its motor tension falls (a flat stretch of F). One tendon at a time, bracketed.
            motor = np.where(taut, self._motor_tension, 0.0)
            for _ in range(MAX_SWEEPS):
                # past the flat stretches one tendon at a time, then Newton for the coupling
                motor, F, out = self._by_tendon(error, motor)
                taut = motor > 0.0
                self._jacobian = None
                try:
                    motor, F, out, taut = self._taut_lengths(error, motor, F, out, taut)
                except ConvergenceError:
                    continue
                if np.all(F[~taut] <= LENGTH_TOLERANCE):
                    break
            else:
                raise ConvergenceError(
                    f'stick-slip statics: the tendon lengths did not converge in {MAX_SWEEPS} '
                    'sweeps', float(np.max(np.abs(F))), MAX_SWEEPS)
        return out[0], motor, out[1], F

    def _taut_lengths(self, error, motor, F, out, taut):
        """
        Newton on the tensions of the ``taut`` tendons until their length errors vanish.

        A step that does not reduce the error renews the Jacobian, then is halved (a kink: a
        piece starting or stopping to slide); a tension that would go below zero makes its
        tendon slack. Returns (motor, F, out, taut).
        """
        if self._jacobian is None:
            self._jacobian = self._finite_differences(error, motor, F)
        fresh, fraction = False, 1.0
        for _ in range(MAX_LENGTH_ITERATIONS):
            if not taut.any() or np.max(np.abs(F[taut])) <= LENGTH_TOLERANCE:
                return motor, F, out, taut
            active = np.ix_(taut, taut)
            step = np.zeros_like(motor)
            step[taut] = -fraction * np.linalg.lstsq(self._jacobian[active], F[taut],
                                                     rcond=1e-10)[0]
            trial = np.maximum(motor + step, 0.0)
            tried = None
            if np.all(trial <= 2.0 * self.robot.max_tensions):
                try:
                    tried = error(trial)
                except ConvergenceError:    # no equilibrium there: a shorter step
                    tried = None
            if tried is not None and (np.linalg.norm(tried[0][taut])
                                      < 0.9 * np.linalg.norm(F[taut])):
                dz = trial - motor
                self._jacobian += np.outer(tried[0] - F - self._jacobian @ dz, dz) / (dz @ dz)
                motor, (F, out) = trial, tried
                fresh, fraction = False, 1.0
                taut = taut & ~((motor == 0.0) & (F < 0.0))     # released into slack
            elif not fresh:     # a stale Jacobian (or the other side of a kink): renew it
                self._jacobian = self._finite_differences(error, motor, F)
                fresh, fraction = True, 1.0
            else:
                fraction *= 0.5
        raise ConvergenceError(
            f'stick-slip statics: the tendon lengths did not converge in '
            f'{MAX_LENGTH_ITERATIONS} iterations (error {np.max(np.abs(F[taut])):.3g} m)',
            float(np.max(np.abs(F[taut]))), MAX_LENGTH_ITERATIONS)

    def _by_tendon(self, error, motor: np.ndarray):
        """
        One Gauss-Seidel sweep: each tendon's tension bracketed and solved alone (Brent).

        A tendon's length error does not increase with its own tension (pulling harder never
        lengthens its path), so a root within [0, 2 max_tension] is bracketed, or the tendon
        is slack (error <= 0 at zero tension). Returns (motor, F, out).
        """
        # here, not at the module's top: scipy.optimize is 0.4 s of every statics command's
        # start, and only a sequence with friction that this sweep rescues needs it
        from scipy.optimize import brentq

        limits = 2.0 * self.robot.max_tensions
        for i in range(motor.size):
            def lacking(tension, i=i):
                probe = motor.copy()
                probe[i] = tension
                return error(probe)[0][i]
            # bracket from the tension it has: the probes stay near the solution
            low = high = max(motor[i], 0.1)
            value = lacking(low)
            while value <= 0.0 and low > 0.0:       # too long: less tension
                high, low = low, (low / 4.0 if low > 1e-3 else 0.0)
                value = lacking(low)
            if value <= LENGTH_TOLERANCE and low == 0.0:
                motor[i] = 0.0      # slack
                continue
            above = value if high == low else lacking(high)
            while above > 0.0:                      # too short: more tension
                if high >= limits[i]:
                    raise ConvergenceError(
                        f'stick-slip statics: tendon {self.tendon_names[i]} needs more '
                        f'than {limits[i]:g} N for its displacement', float(high), 0)
                low, value, high = high, above, min(2.0 * high, limits[i])
                above = lacking(high)
            # an end that meets the length already is the answer: Brent evaluates the ends
            # again, and the solves' noise (~1e-11 m, warm starts) flips a sign found there
            if above >= -LENGTH_TOLERANCE or value <= LENGTH_TOLERANCE:
                motor[i] = high if -above <= value else low
            else:
                motor[i] = brentq(lacking, low, high, xtol=1e-12, rtol=1e-10)
        F, out = error(motor)
        return motor, F, out

    def _finite_differences(self, error, motor: np.ndarray, F: np.ndarray) -> np.ndarray:
        J = np.empty((motor.size, motor.size))
        for j in range(motor.size):
            h = 1e-4 * max(1.0, abs(motor[j]))
            probe = motor.copy()
            probe[j] += h
            J[:, j] = (error(probe)[0] - F) / h
        return J


def plot_hysteresis(inputs: np.ndarray, tips: np.ndarray, tensions: np.ndarray,
                    tip_tensions: np.ndarray, label: str, path) -> None:
    """
    PNG of a quasi-static sequence of one tendon: the tip and the tip tension against its input.

    ``inputs`` (k,): the tendon's motor tension [N] or displacement [m] per state (``label``
    names it); ``tips`` (k, 3) [m]; ``tensions``, ``tip_tensions`` (k,) [N] at the motor and the
    anchor. Rising inputs are drawn solid, falling ones dashed: the gap between them at one
    input is the hysteresis.
    """
    import matplotlib
    matplotlib.use('Agg')
    from matplotlib import pyplot as plt
    from tendon_robot_sim.files.outputs import save_figure
    from tendon_robot_sim.models.plotting import legend_beside

    step = np.sign(np.diff(inputs))
    moving = np.flatnonzero(step)
    # runs of states between which the input moves one way: (first, last, rising)
    runs = []
    for k in moving:
        if runs and runs[-1][2] == (step[k] > 0) and runs[-1][1] == k:
            runs[-1][1] = k + 1
        else:
            runs.append([k, k + 1, step[k] > 0])
    fig, (tip_ax, tension_ax) = plt.subplots(1, 2, figsize=(12, 4.5))
    for ax, curves, ylabel in (
            (tip_ax, [(tips[:, axis] * 1e3, f'tip {name}') for axis, name in enumerate('xyz')
                      if np.ptp(tips[:, axis]) > 1e-6], 'tip position [mm], base frame'),
            (tension_ax, [(tip_tensions, 'at the anchor'), (tensions, 'at the motor')],
             'tension [N]')):
        for colour, (values, name) in enumerate(curves):
            labelled = set()
            for first, last, up in runs:
                word = 'rising' if up else 'falling'
                ax.plot(inputs[first:last + 1], values[first:last + 1], '-' if up else '--',
                        color=f'C{colour}', marker='.',
                        label=None if word in labelled else f'{name}, {word}')
                labelled.add(word)
        ax.set_xlabel(label)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        legend_beside(ax, fontsize=8)
    fig.tight_layout()
    save_figure(fig, path)
    plt.close(fig)
