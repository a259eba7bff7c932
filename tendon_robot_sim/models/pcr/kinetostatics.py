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
Kinetostatics of the 6-RUS parallel continuum robot (Rodrigues et al. 2024).

Rodrigues, Yu, Stoeffler, Kumar, "Kinetostatic Analysis for 6RUS Parallel Continuum Robot
using Cosserat Rod Theory" ("the paper"). Six pre-curved Cosserat rods (Eqs. 1-2, linear
law n = R Kse (v - e3), m = R Kbt (u - u*), u* = [1/r, 0, 0], self weight) join the
crank tips of six motors (universal joints, angles q2 about y and q3 about x) to the
platform (spherical joints). Boundary conditions (Sec. 3.1):

* base of rod i: p0 = p_M + R_M [0, l1 cos q1, l1 sin q1],
  R0 = R_M Rx(q1) Ry(q2) Rx(q3), n(0) unknown, m(0) = m_z R0 e3;
* tip: p_e + R_e C_i - p_i(L) = 0 (Eq. 4), m_i(L) = 0 (Eq. 5);
* platform: sum n_i(L) - F = 0, sum (p_i(L) x n_i(L) + m_i(L)) - p_e x F - M = 0 (Eq. 3).

Inverse kinetostatics: pose (p_e, roll/pitch/yaw of R_e = Rz Ry Rx) and wrench -> q1, q2,
q3, base wrenches, rod shapes (unknowns per rod: n(0), m_z, q1, q2, q3). Forward: q1 and
wrench -> pose and the rest (per rod n(0), m_z, q2, q3; and the pose). 42 x 42 either
way, solved by :func:`~tendon_robot_sim.models.pcr._kernels.pcr_solve`: fixed-step RK4,
Newton with a Jacobian assembled from each rod's block (the derivatives of its end p, n, m
by its own unknowns: the block structure). A block is computed exactly by integrating the
rod's variational equations along with it (one integration with 7 tangents per rod instead
of 7 finite-difference probes), and between those follows each Newton step by a
good-Broyden update of its own (six rank-one secants per step).

``compat: dfki2024`` reproduces the authors' published code instead: precurvature 1/0.3,
R0 = R_M Ry(q2) Rx(q3), m(0) = m_z e3 (world), and no p_e x F in Eq. 3.

A solve starts from the last solution of its kind, moved by a secant prediction of how
the solution follows the inputs, with the last Jacobian blocks (warm start: it stays on the
branch of the last solution; ``reset()`` before unrelated solves, as the workspace does);
failing that from the rigid-link solution (:func:`rigid_inverse`, :func:`rigid_forward`:
each rod replaced by its stress-free arc, exact without gravity and load), then in 4 and
16 load steps (gravity and wrench scaled up together from zero), before raising
:class:`~tendon_robot_sim.models.cosserat.ConvergenceError` with the residual.
:mod:`tendon_robot_sim.models.pcr.reference` solves the same problem with scipy.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import time

import numpy as np

from tendon_robot_sim.models.cosserat import (ConvergenceError, StaticsInputError,
                                              stiffness_matrices)
from tendon_robot_sim.models.cosserat import vector3
from tendon_robot_sim.models.geometry import hat
from tendon_robot_sim.models.pcr import _kernels as kernels
from tendon_robot_sim.models.pcr.robot import PcrRobot

# RK4 steps per rod: the motor angles are within ~1e-7 rad of the converged
# discretisation (tests compare with the adaptive scipy path).
DEFAULT_STEPS = 32
# Newton tolerance on the scaled residual (max norm): positions in rod lengths, forces in
# E I / L^2, moments in E I / L.
DEFAULT_TOLERANCE = 1e-10
CONTINUATION_STEPS = (4, 16)


@dataclass(frozen=True)
class PcrResult:
    """One equilibrium of the parallel robot. World frame, SI units, angles in rad."""

    position: np.ndarray        # (3,) m, platform centre p_e
    orientation: np.ndarray     # (3,) rad, roll, pitch, yaw: R_e = Rz(yaw) Ry(pitch) Rx(roll)
    rotation: np.ndarray        # (3, 3) R_e
    motor_angles: np.ndarray    # (6,) rad, q1
    joint_angles: np.ndarray    # (6, 2) rad, universal joint q2 (about y), q3 (about x)
    base_positions: np.ndarray  # (6, 3) m, universal joints (crank tips)
    base_rotations: np.ndarray  # (6, 3, 3) R0 of each rod: columns d1 d2 d3
    base_forces: np.ndarray     # (6, 3) N, n_i(0): internal force of each rod at its base
    base_moments: np.ndarray    # (6, 3) N m, m_i(0)
    tip_forces: np.ndarray      # (6, 3) N, n_i(L): force of the platform on each rod
    arc_lengths: np.ndarray     # (k,) m
    centerlines: np.ndarray     # (6, 3, k) m, rod shapes p_i(s)
    force: np.ndarray           # (3,) N, external force at p_e (platform weight included)
    moment: np.ndarray          # (3,) N m, external moment
    within_limits: bool         # every q1 within the motor limits
    residual: float             # scaled residual (max norm)
    iterations: int             # Newton iterations
    evaluations: int            # rod integrations
    solve_time: float           # s, wall time

    def beyond_limits(self, robot: PcrRobot) -> str | None:
        """
        Say which motor angles this pose needs beyond the motor limits of ``robot``.

        None: it needs none. Solved for a pose, the motor angles are an output: such a
        solution is no result for the robot (exit 1 in the commands, as
        ``StaticsResult.beyond_limits``).
        """
        if self.within_limits:
            return None
        low, high = np.degrees(robot.motor_limits)
        return (f'this pose needs motor angles '
                f'{np.round(np.degrees(self.motor_angles), 2).tolist()} deg, outside the '
                f'motor limits [{low:g}, {high:g}] deg')

    def to_dict(self) -> dict:
        """Plain JSON-ready summary."""
        return {
            'position': self.position.tolist(),
            'orientation_rpy': self.orientation.tolist(),
            'motor_angles': self.motor_angles.tolist(),
            'motor_angles_deg': np.degrees(self.motor_angles).tolist(),
            'joint_angles': self.joint_angles.tolist(),
            'base_forces': self.base_forces.tolist(),
            'base_moments': self.base_moments.tolist(),
            'force': self.force.tolist(),
            'moment': self.moment.tolist(),
            'within_limits': self.within_limits,
            'residual': self.residual,
            'iterations': self.iterations,
            'evaluations': self.evaluations,
            'solve_time_ms': self.solve_time * 1e3,
        }


def rest_chord(robot: PcrRobot) -> np.ndarray:
    """
    Return the tip of the stress-free rod in its base frame [m].

    c = [0, -r (1 - cos phi), r sin phi] with phi = L / r
    (u* = [1/r, 0, 0] turns d3 towards -d2).
    """
    r = 1.0 / robot.precurvature
    phi = robot.rods.length / r
    return np.array([0.0, -r * (1.0 - math.cos(phi)), r * math.sin(phi)])


def platform_rotation(orientation) -> np.ndarray:
    """R_e = Rz(yaw) Ry(pitch) Rx(roll) of orientation = (roll, pitch, yaw) [rad]."""
    roll, pitch, yaw = orientation
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch),
                              math.sin(pitch), math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def rot_x(a: float) -> np.ndarray:
    c, s = math.cos(a), math.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def crank_tips(robot: PcrRobot, q1: np.ndarray) -> np.ndarray:
    """Universal joint positions p0 (6, 3) [m] for motor angles q1 (6,) [rad]."""
    local = robot.crank_length * np.stack((np.zeros(6), np.cos(q1), np.sin(q1)), axis=1)
    return robot.motor_positions + np.einsum('iab,ib->ia', robot.motor_rotations, local)


def _joint_angles(robot: PcrRobot, q1: np.ndarray, chords: np.ndarray) -> np.ndarray:
    """
    Return q2, q3 (6, 2) that turn the rest chord c onto the world chords (6, 3).

    Ry(q2) Rx(q3) c = d, d the chord in the crank frame (paper) or motor frame (dfki2024).
    Rx(q3) c has y = -a cos q3 - b sin q3 (c = [0, -a, b]) and z >= 0 on the branch taken;
    Ry(q2) [0, y, z] = [z sin q2, y, z cos q2].
    """
    c = rest_chord(robot)
    a, b = -c[1], c[2]
    length = math.hypot(a, b)
    out = np.zeros((6, 2))
    for i in range(6):
        frame = robot.motor_rotations[i]
        if robot.compat == 'paper':
            frame = frame @ rot_x(q1[i])
        d = frame.T @ chords[i]
        q3 = math.atan2(b, a) - math.acos(np.clip(-d[1] / length, -1.0, 1.0))
        out[i] = math.atan2(d[0], d[2]), q3
    return out


def rigid_inverse(robot: PcrRobot, position, orientation=(0.0, 0.0, 0.0)) -> np.ndarray:
    """
    Inverse kinematics of the rigid-link 6-RUS robot whose links are the stress-free rods.

    |C_i - p0(q1)| = |c| (c: :func:`rest_chord`) is, in the motor frame with
    d = R_M^T (C_i - p_M): d_y cos q1 + d_z sin q1 = (|d|^2 + l1^2 - |c|^2) / (2 l1); the
    branch q1 = atan2(d_z, d_y) - acos(...) keeps the crank outward (the robot's working
    mode). Returns q (6, 3) [rad]: q1, q2, q3; NaN where a leg cannot reach.
    """
    position = np.asarray(position, dtype=float)
    joints = position + robot.joint_positions @ platform_rotation(orientation).T
    d = np.einsum('iba,ib->ia', robot.motor_rotations, joints - robot.motor_positions)
    l1 = robot.crank_length
    chord = np.linalg.norm(rest_chord(robot))
    k = (np.sum(d * d, axis=1) + l1 ** 2 - chord ** 2) / (2.0 * l1)
    rho = np.hypot(d[:, 1], d[:, 2])
    with np.errstate(invalid='ignore'):
        q1 = np.arctan2(d[:, 2], d[:, 1]) - np.arccos(k / rho)
    q = np.full((6, 3), np.nan)
    q[:, 0] = q1
    if np.all(np.isfinite(q1)):
        q[:, 1:] = _joint_angles(robot, q1, joints - crank_tips(robot, q1))
    return q


def rigid_forward(robot: PcrRobot, motor_angles, guess=None) -> np.ndarray:
    """
    Solve the forward kinematics of the rigid-link robot (links: stress-free rods).

    Return the pose [x, y, z, roll, pitch, yaw] with |p_e + R_e C_i - p0_i| = |c| for all six
    legs, by damped Newton from ``guess`` (default: centred, level, 0.4 m up). NaN if it fails.
    """
    q1 = np.asarray(motor_angles, dtype=float)
    tips = crank_tips(robot, q1)
    chord = np.linalg.norm(rest_chord(robot))
    pose = np.array([0.0, 0.0, 0.4, 0.0, 0.0, 0.0] if guess is None else guess, dtype=float)

    def error(z):
        joints = z[:3] + robot.joint_positions @ platform_rotation(z[3:]).T
        return np.sum((joints - tips) ** 2, axis=1) - chord ** 2

    e = error(pose)
    for _ in range(50):
        if np.max(np.abs(e)) < 1e-15:
            return pose
        J = np.empty((6, 6))
        for c in range(6):
            dz = np.zeros(6)
            dz[c] = 1e-7
            J[:, c] = (error(pose + dz) - e) / 1e-7
        try:
            step = np.linalg.solve(J, -e)
        except np.linalg.LinAlgError:
            break
        step *= min(1.0, 0.1 / np.max(np.abs(step)))
        pose = pose + step
        e = error(pose)
    return np.full(6, np.nan)


class _Memory:
    """
    Warm-start memory of one kind of solve (inverse or forward).

    The unknowns ``x`` and Jacobian blocks ``B`` (6, 9, 7) being iterated, those of the last
    solution (``x_last``, ``B_last``) with its inputs ``u`` (target and wrench, 12), and
    ``S``, a secant estimate of dx/du (good-Broyden updates from consecutive solutions) that
    predicts the next start, x_last + S (u_new - u): along a path the start is then
    second-order close. The arrays are :class:`~tendon_robot_sim.models.pcr._kernels.PcrMemory`
    (``arrays``), which the kernels restore and update (``pcr_warm_solve``, ``pcr_keep``).
    """

    def __init__(self):
        self.arrays = kernels.PcrMemory(
            x=np.zeros(42), B=np.zeros((6, 9, 7)), jac_ok=np.zeros(1, dtype=np.bool_),
            x_last=np.zeros(42), B_last=np.zeros((6, 9, 7)), u=np.zeros(12),
            S=np.zeros((42, 12)), du=np.zeros(12), solved=np.zeros(1, dtype=np.bool_))
        self.x, self.B, self.x_last, self.B_last, self.u = (
            self.arrays.x, self.arrays.B, self.arrays.x_last, self.arrays.B_last, self.arrays.u)

    @property
    def solved(self) -> bool:
        return bool(self.arrays.solved[0])

    @solved.setter
    def solved(self, value: bool) -> None:
        self.arrays.solved[0] = value

    def forget(self) -> None:
        self.solved = False
        self.arrays.jac_ok[0] = False
        self.arrays.S[:] = 0.0

    def restore_last(self) -> None:
        """Start again from the last solution and its blocks."""
        self.x[:] = self.x_last
        self.B[:] = self.B_last
        self.arrays.jac_ok[0] = True

    # The same bookkeeping in plain numpy: the reference the kernels are tested against.

    def reference_start(self, u: np.ndarray, predict: bool) -> None:
        """Start from the last solution, moved by S (u - u_last) if ``predict``."""
        self.x[:] = self.x_last + (self.arrays.S @ (u - self.u) if predict else 0.0)
        self.B[:] = self.B_last
        self.arrays.jac_ok[0] = True

    def reference_keep(self, u: np.ndarray) -> None:
        """Remember the solution x for inputs u; good-Broyden update of S by its secant."""
        S = self.arrays.S
        if self.solved:
            du = u - self.u
            if du @ du > 0.0:
                S += np.outer(self.x - self.x_last - S @ du, du) / (du @ du)
        self.solved = True
        self.u[:] = u
        self.x_last[:] = self.x
        self.B_last[:] = self.B


class PcrSolver:
    """
    Inverse and forward kinetostatics of one parallel robot (see the module docstring).

    Parameters
    ----------
    robot : PcrRobot
        Geometry, material, gravity, compat (paper or dfki2024).
    steps : int
        RK4 steps per rod.
    tolerance : float
        Newton tolerance on the scaled residual (max norm): positions / L, forces /
        (E I / L^2), moments / (E I / L).
    max_iterations : int
        Newton iterations per attempt.
    tolerance_m : float, optional
        The same tolerance in metres (it replaces ``tolerance``, as tolerance_m / L): each
        coordinate of the gap between a rod's end and its joint on the platform is at most
        this (the distance at most sqrt(3) times it), and the platform's force and moment
        balance to the same fraction of E I / L^2 and E I / L. The default 1e-10 is
        5.3e-11 m for the paper's 0.53 m rods; docs/performance.md gives what 1e-5 m
        (a warm solve about twice as fast) leaves in the motor angles and the pose.

    """

    def __init__(self, robot: PcrRobot, steps: int = DEFAULT_STEPS,
                 tolerance: float = DEFAULT_TOLERANCE, max_iterations: int = 60,
                 tolerance_m: float | None = None):
        if not isinstance(steps, int) or steps < 2:
            raise StaticsInputError(f'steps: must be an integer >= 2, got {steps!r}')
        for name, value in (('tolerance', tolerance), ('tolerance_m', tolerance_m)):
            if value is not None and not (isinstance(value, float) and value > 0.0):
                raise StaticsInputError(f'{name}: must be a number > 0, got {value!r}')
        rods = robot.rods
        L, EI = rods.length, rods.bending_stiffness
        self.robot = robot
        self.steps = steps
        self.tolerance = tolerance if tolerance_m is None else tolerance_m / L
        self.max_iterations = max_iterations
        self.scale = np.array([EI / L ** 2, EI / L, L])
        # the paper's Kse = diag(G A, G A, E A): no shear correction
        self.Kse, self.Kbt = stiffness_matrices(rods, shear_coefficient=1.0)
        self.arc_lengths = np.linspace(0.0, L, steps + 1)
        self._traj = np.zeros((6, steps + 1, 18))
        self._info = np.zeros(4)
        self._work = kernels.PcrWork(
            y=np.zeros(18), st=np.zeros((3, 18)), M=np.zeros((4, 3, 3)), vec3=np.zeros((2, 3)),
            T=np.zeros((15, 7)), dn=np.zeros((3, 7)), tan=np.zeros((3, 15, 7)),
            out=np.zeros((6, 9)), outx=np.zeros((6, 9)), vec=np.zeros((4, 42)),
            Jc=np.zeros((42, 42)), traj=np.zeros((steps + 1, 18)))
        self._memory = {kind: _Memory() for kind in (True, False)}
        self._weight = robot.platform_mass * robot.gravity
        # the wrench of a solve without one given: the description's load and the weight
        self._load = np.concatenate((robot.load_force + self._weight, robot.load_moment))
        self._totals = [0, 0]     # iterations and rod integrations of the solve so far
        self._plans = {kind: self._plan(kind) for kind in (True, False)}

    def _plan(self, inverse: bool, load_scale: float = 1.0) -> kernels.PcrPlan:
        robot, rods = self.robot, self.robot.rods
        ustar = np.array([robot.precurvature, 0.0, 0.0])
        gravity = robot.gravity * load_scale
        mat = np.concatenate((self.Kse, self.Kbt, rods.linear_density * gravity, gravity,
                              np.zeros(3), ustar))
        return kernels.PcrPlan(
            inverse=inverse, compat=kernels.PAPER if robot.compat == 'paper' else kernels.DFKI2024,
            mat=mat, motor_p=robot.motor_positions, motor_R=robot.motor_rotations,
            crank=robot.crank_length, joints=robot.joint_positions, steps=self.steps,
            h=rods.length / self.steps, scale=self.scale)

    @property
    def tolerance_m(self) -> float:
        """Return the tolerance in metres: the largest coordinate of a rod end's gap."""
        return self.tolerance * self.robot.rods.length

    def reset(self) -> None:
        """Forget the warm-start memory: the next solves start cold."""
        for memory in self._memory.values():
            memory.forget()

    # ------------------------------------------------------------------ public API

    def inverse(self, position, orientation=(0.0, 0.0, 0.0), force=None,
                moment=None, cold: bool = True) -> PcrResult:
        """
        Motor angles (and everything else) that hold the platform at a pose.

        Parameters
        ----------
        position : (3,)
            Platform centre p_e [m], world frame.
        orientation : (3,)
            Roll, pitch, yaw [rad]: R_e = Rz(yaw) Ry(pitch) Rx(roll).
        force, moment : (3,), optional
            External wrench at p_e [N, N m], world frame; default the description's load.
            The platform weight is added to the force.
        cold : bool
            Fall back to cold starts when the warm start fails (default). False: warm
            starts only (but a first solve is cold), and a failure keeps the last solution
            for the next warm start (to follow one branch of solutions to where it ends).

        Raises
        ------
        StaticsInputError, ConvergenceError

        """
        start = time.perf_counter()
        u = np.empty(12)
        u[:3] = vector3(position, 'position')
        u[3:6] = vector3(orientation, 'orientation')
        self._wrench(force, moment, u[6:])
        return self._solve(True, u, start, cold)

    def forward(self, motor_angles, force=None, moment=None, cold: bool = True) -> PcrResult:
        """
        Solve for the platform pose (and everything else) at motor angles q1 (6,) [rad].

        The wrench and ``cold`` are as in :meth:`inverse`. Angles outside the motor limits are
        rejected.
        """
        start = time.perf_counter()
        q1 = np.asarray(motor_angles, dtype=float)
        if q1.shape != (6,) or not np.all(np.isfinite(q1)):
            raise StaticsInputError(
                f'motor_angles: must be 6 finite numbers, got {motor_angles!r}')
        low, high = self.robot.motor_limits
        for i, q in enumerate(q1):
            if not low <= q <= high:
                raise StaticsInputError(
                    f'motor_angles[{i}]: must be within the motor limits '
                    f'[{math.degrees(low):g}, {math.degrees(high):g}] deg, got '
                    f'{_outside(math.degrees(q), math.degrees(low), math.degrees(high))} deg')
        u = np.zeros(12)
        u[:6] = q1
        self._wrench(force, moment, u[6:])
        return self._solve(False, u, start, cold)

    def hold_motors(self) -> PcrResult:
        """
        Return the last inverse solution solved again as a forward one: motors held, same load.

        The forward solve starts from the inverse solution itself (the same rod unknowns,
        the pose as unknowns), so it returns the same equilibrium: a cold forward solve
        at those motor angles may find another assembly of the robot. Afterwards
        :meth:`jacobians` (forward) and warm forward solves continue from it.
        StaticsInputError if there is no inverse solution yet or its motor angles are
        outside the motor limits.
        """
        inverse, forward = self._memory[True], self._memory[False]
        if not inverse.solved:
            raise StaticsInputError('hold_motors: no inverse solution yet')
        rods = inverse.x_last.reshape(6, 7)
        keep = [0, 1, 2, 3, 5, 6]            # n(0), m_z, q2, q3: all but q1
        forward.forget()
        forward.x_last[:36] = rods[:, keep].ravel()
        forward.x_last[36:39] = inverse.u[:3] / self.scale[2]
        forward.x_last[39:42] = inverse.u[3:6]
        forward.B_last[:, :, :6] = inverse.B_last[:, :, keep]
        forward.u[:6] = rods[:, 4]
        forward.u[6:] = inverse.u[6:]
        forward.solved = True
        force = inverse.u[6:9] - self.robot.platform_mass * self.robot.gravity
        return self.forward(rods[:, 4], force, inverse.u[9:12], cold=False)

    def jacobians(self, inverse: bool) -> tuple[np.ndarray, np.ndarray]:
        """
        Return the derivatives of the residual E at the last solution of a kind (42, 42), (42, 6).

        dE/dx by the unknowns x (scaled as in the kernels: forces / force scale, moments /
        moment scale, the platform position / L, angles in rad; the forward problem's pose
        is x[36:39] L = p_e and x[39:42] = roll, pitch, yaw), its rod columns exact from the
        variational equations (the Newton iteration's own Jacobian, freshly computed), and
        dE/dw by the external wrench w = [F, M] (world frame, at p_e; Eq. 3 is linear in
        it). With dE/dx regular, dx/dw = -(dE/dx)^-1 dE/dw (implicit function theorem);
        dE/dx is singular at a fold of the solutions (a limit point). StaticsInputError if
        there is no solution of that kind yet.
        """
        memory = self._memory[inverse]
        if not memory.solved:
            kind = 'inverse' if inverse else 'forward'
            raise StaticsInputError(f'jacobians: no {kind} solution yet')
        plan, work = self._plans[inverse], self._work
        x = memory.x_last.copy()
        k = 7 if inverse else 6
        target, wrench = memory.u[:6], memory.u[6:]
        E = np.zeros(42)
        kernels._pcr_residual(plan, x, target, wrench, np.zeros_like(self._traj), work, E)
        blocks = np.zeros((6, 9, 7))
        kernels._pcr_blocks(plan, x, target, work, blocks)
        dEdx = np.zeros((42, 42))
        kernels._pcr_jacobian(plan, x, target, wrench, E, blocks, work.out, dEdx, work)
        force_scale, moment_scale = self.scale[0], self.scale[1]
        dEdw = np.zeros((42, 6))
        dEdw[36:39, 0:3] = -np.eye(3) / force_scale
        dEdw[39:42, 3:6] = -np.eye(3) / moment_scale
        if self.robot.compat == 'paper':   # - p_e x F in the moment balance
            pe = target[:3] if inverse else x[6 * k:6 * k + 3] * self.scale[2]
            dEdw[39:42, 0:3] = -hat(pe) / moment_scale
        return dEdx, dEdw

    # ------------------------------------------------------------------ internals

    def _wrench(self, force, moment, wrench: np.ndarray) -> None:
        """Set wrench (6,) to the external force (the platform weight added) and moment."""
        wrench[:] = self._load
        if force is not None:
            wrench[:3] = vector3(force, 'force') + self._weight
        if moment is not None:
            wrench[3:] = vector3(moment, 'moment')

    def _cold_guess(self, inverse: bool, target: np.ndarray, wrench: np.ndarray,
                    x: np.ndarray) -> bool:
        """
        Return the unknowns of the rigid-link solution, or False if the rigid robot cannot reach.

        Each rod carries a sixth of the load and its own weight, n(0) = F / 6 + rho A g L.
        """
        robot = self.robot
        if inverse:
            q = rigid_inverse(robot, target[:3], target[3:])
            pose = target
        else:
            pose = rigid_forward(robot, target)
            q = np.full((6, 3), np.nan)
            if np.all(np.isfinite(pose)):
                joints = pose[:3] + robot.joint_positions @ platform_rotation(pose[3:]).T
                q[:, 0] = target
                q[:, 1:] = _joint_angles(robot, target, joints - crank_tips(robot, target))
        if not np.all(np.isfinite(q)):
            return False
        n0 = wrench[:3] / 6.0 + robot.rods.linear_density * robot.rods.length * robot.gravity
        k = 7 if inverse else 6
        for i in range(6):
            x[k * i:k * i + 3] = n0 / self.scale[0]
            x[k * i + 3] = 0.0
            x[k * i + 4:k * i + k] = q[i] if inverse else q[i, 1:]
        if not inverse:
            x[36:39] = pose[:3] / self.scale[2]
            x[39:42] = pose[3:]
        return True

    def _run(self, plan, target, wrench, memory) -> bool:
        arrays = memory.arrays
        kernels.pcr_solve(plan, target, wrench, arrays.x, arrays.B, arrays.jac_ok,
                          self.tolerance, self.max_iterations, self._traj, self._work,
                          self._info)
        self._count()
        return self._info[3] == kernels.CONVERGED

    def _count(self) -> None:
        """Add the last kernel call's iterations and rod integrations to the solve's."""
        info = self._info
        self._totals[0] += int(info[1])
        self._totals[1] += int(info[2])

    def _solve(self, inverse: bool, u: np.ndarray, start, cold: bool = True) -> PcrResult:
        """
        Solve from a warm start (predicted, then from the last solution), else from cold starts.

        u: the target (inverse: pose; forward: motor angles and 0) and the wrench. The cold
        starts use load continuation (see the module docstring); without ``cold``, a failed
        warm start leaves the memory of the last solution as it was.
        """
        memory = self._memory[inverse]
        x = memory.x
        target, wrench = u[:6], u[6:]
        plan = self._plans[inverse]
        self._totals[:] = 0, 0
        solved = memory.solved
        converged = solved and kernels.pcr_warm_solve(
            plan, target, wrench, memory.arrays, self.tolerance, self.max_iterations,
            self._traj, self._work, self._info)
        if solved:
            self._count()
        if converged:       # kept by the kernel
            return self._result(inverse, u, x, start)
        residual = self._info[0] if solved else math.inf
        reach = ''
        if not (cold or not solved):
            memory.restore_last()
            raise ConvergenceError(
                f'pcr {"inverse" if inverse else "forward"} kinetostatics: no solution near '
                f'the last one (warm start only): scaled residual {residual:.3g}',
                float(residual), self._totals[0])
        for steps in (1,) + CONTINUATION_STEPS:
            if converged:
                break
            memory.forget()
            if not self._cold_guess(inverse, target, wrench, x):
                reach = ' (out of reach of the rigid-link robot too)'
                break
            converged = all(self._run(plan if k == steps else self._plan(inverse, k / steps),
                                      target, wrench * k / steps, memory)
                            for k in range(1, steps + 1))
            residual = self._info[0]
        if not converged:
            memory.forget()
            kind = 'inverse' if inverse else 'forward'
            what = (f'pose {np.round(target, 6).tolist()}' if inverse
                    else f'motor angles {np.round(np.degrees(target), 4).tolist()} deg')
            raise ConvergenceError(
                f'pcr {kind} kinetostatics did not converge for {what}{reach} and wrench '
                f'{np.round(wrench, 4).tolist()}, also with load continuation: scaled residual '
                f'{residual:.3g} (tolerance {self.tolerance:g}); the pose may be out of reach '
                f'or the load beyond what the rods carry', float(residual),
                self._totals[0])
        kernels.pcr_keep(target, wrench, memory.arrays)
        return self._result(inverse, u, x, start)

    def _result(self, inverse, u, x, start) -> PcrResult:
        """Return the result of the solution x for inputs u (it keeps u: u is its own)."""
        robot = self.robot
        k = 7 if inverse else 6
        # one copy of the unknowns and one of the trajectories: the result's arrays are views
        blocks = x[:6 * k].reshape(6, k).copy()
        if inverse:
            pose = u[:6]
            q1 = blocks[:, 4]
        else:
            pose = np.concatenate((x[36:39] * self.scale[2], x[39:42]))
            q1 = u[:6]
        traj = self._traj.copy()
        low, high = robot.motor_limits
        angles = q1.tolist()      # plain floats: min and max of 6 without numpy's overhead
        return PcrResult(
            position=pose[:3], orientation=pose[3:],
            rotation=platform_rotation(pose[3:]), motor_angles=q1,
            joint_angles=blocks[:, k - 2:], base_positions=traj[:, 0, 0:3],
            base_rotations=traj[:, 0, 3:12].reshape(6, 3, 3),
            base_forces=traj[:, 0, 12:15], base_moments=traj[:, 0, 15:18],
            tip_forces=traj[:, -1, 12:15], arc_lengths=self.arc_lengths.copy(),
            centerlines=traj[:, :, 0:3].transpose(0, 2, 1),
            force=u[6:9], moment=u[9:12],
            within_limits=bool(low <= min(angles) and max(angles) <= high),
            residual=float(self._info[0]), iterations=self._totals[0],
            evaluations=self._totals[1], solve_time=time.perf_counter() - start)


def helix(points: int = 500, radius: float = 0.25, heights=(0.40, 0.55),
          turns: float = 1.0) -> np.ndarray:
    """
    Return platform positions (points, 3) [m] along the paper's helical trajectory.

    Sec. 4, Fig. 5a: radius 0.25 m, z from 0.40 to 0.55 m; the paper does not give the number
    of turns, the authors' code (``helicalTraj``: t from 0 to 2 pi, 500 points) makes one.
    """
    t = np.linspace(0.0, 1.0, points)
    angle = 2.0 * np.pi * turns * t
    return np.column_stack((radius * np.cos(angle), radius * np.sin(angle),
                            heights[0] + (heights[1] - heights[0]) * t))


def _outside(value: float, low: float, high: float) -> str:
    """``value`` in as few digits (4 at least) as show it outside [low, high]."""
    for digits in range(4, 18):
        text = f'{value:.{digits}g}'
        if not low <= float(text) <= high:
            return text
    return repr(value)
