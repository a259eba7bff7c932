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
Newton-Euler dynamics of the rolling-joint snake: minimum cable tensions and simulation.

Inverse dynamics (D'Antuono et al. 2023, Sections 3.2-3.5). Given q, qd, qdd the kinematics
propagate base to tip; then for n = N..1 the balance of link n (Newton (25)/(28), Euler
(27)/(30)) is

    sum_k T_nk e_nk + F_c1 + F_c2 = m (a_C - g) - F_distal
    sum_k (h_1nk - p_c) x T_nk e_nk + sum_i (p_ci - p_c) x F_ci = M_in + ... - M_distal

with moments about the contact point p_c of joint n, T_nk the tension of cable k between
links n-1 and n (the paper's F_T,1,n,k; segment 1 leaves the base), F_distal, M_distal the
wrench of link n+1 (contacts and segment n+1) on link n. In the contact frame f3 (x the
normal, z the joint axis, y = z x x) the two contact points sit at p_c -+ w z. The contact
wrench has no moment about z (Eqs. (32)-(33): normal forces along x, friction in y-z), so
the z row is one equation on the tensions alone,

    sum_k lambda_nk T_nk = tau_n,     lambda_nk = z . ((h_1nk - p_c) x e_nk),

and the other five rows give the contact forces from the tensions:

    N_1,2 = (S_x +- M_y / w) / 2,   f_y1,2 = (S_y -+ M_x / w) / 2,   f_z1 + f_z2 = S_z

(S, M: the force and moment the contacts must supply). Problem (37) is then a linear
programme in the tensions:

    min sum_k T_nk   s.t.  the z row,  T_nk >= pretension (31),  T_nk <= max_tension,
                          N_i >= f_c (34),  |f_yi| <= mu N_i (35),  |S_z| <= mu (N_1 + N_2) (36)

((36) for both points holds for some split f_z1 + f_z2 = S_z iff |S_z| <= mu (N_1 + N_2);
the split reported is f_zi = S_z N_i / (N_1 + N_2)). With C cables it has C - 1 free
variables after the z row and 8 + 2C inequalities; its optimum is a vertex, and the
vertices of all time steps of a trajectory are enumerated at once in numpy (the LP of one
step does not depend on another step), or of one step in a numba kernel
(:meth:`SnakeDynamics.inverse_step`). Tests compare both with scipy's HiGHS, which is not
used here because a call costs 1 to 3 ms, six calls a step (about 50 to 170 steps/s).

The tension in a cable may differ from segment to segment in the paper's model (the holes
take the difference); a snake with 4 motors and frictionless holes has one tension per
cable along its whole length: :meth:`SnakeDynamics.simulate` takes either.

Forward dynamics: the same chain with the rolling constraints, generalised coordinates q,

    M(q) qdd = sum_k lambda_nk T_nk - tau_n(q, qd, 0)

with M from the Jacobians of the links (link j turns about the contact line of every joint
n <= j at qd_n) and tau from the Newton-Euler recursion above; tau_n(q, qd, qdd) is the
z row (the moment about joint n of the links n..N).

External loads (:class:`~tendon_robot_sim.models.snake.loads.LinkWrench`, the paper's
"external loads": a force and moment on any link, in the world or the link frame) enter every
method through ``loads``: they are subtracted from the links' m (a_C - g) and I wd + w x I w,
so the inverse, the minimum tensions, the contact forces and the forward dynamics all see
them. Units: N, m, s, rad.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
import math
import time as _time

import numpy as np

from tendon_robot_sim.models.snake import _kernels as _snake_kernels, loads as _loads
from tendon_robot_sim.models.snake.kinematics import ChainState, cross, SnakeKinematics
from tendon_robot_sim.models.snake.robot import RollingJointSnake

# Constraint groups of (37), in the row order of the inequalities of one link.
GROUPS = ('contact', 'friction', 'pretension', 'max_tension')
# Tension [N] by which a constraint may be violated at a vertex (solver round-off) and
# within which a constraint counts as active.
FEASIBILITY_TOLERANCE = 1e-7
ACTIVE_TOLERANCE = 1e-6
# Tension or force [N] by which given tensions may break a constraint and still count as
# keeping it: a simulated motion riding on a limit (as minimum tensions do) strays from it
# by integration error (below 1e-6 N for the paper's trajectories at 5 ms steps).
CHECK_TOLERANCE = 1e-4
# What a constraint of (37) that given tensions break means for a simulated motion (users read
# it: commands print it).
BROKEN_MEANING = ('a broken constraint means that the real snake would slip (friction), its links '
                  'would lift off each other (contact) or a cable would leave its limits there, '
                  'while the model keeps the links rolling: its motion from that step on is not '
                  "the robot's")
# Floats of the largest array of a vertex enumeration (steps x vertices x rows): 4 MB,
# the fastest of 2, 4, 8 and 32 MB on this VM (the arrays stay in the CPU's caches).
VERTEX_BUDGET = 500_000


class SnakeDynamicsError(ValueError):
    """Inputs of the snake dynamics are inconsistent; the message names the field."""


class SnakeDivergedError(SnakeDynamicsError):
    """The forward integration ran away (non-finite or absurd state): the step is too large."""

    def __init__(self, message: str, time: float):
        super().__init__(message)
        self.time = time    # s, first sample of the runaway


def _check_finite(**arrays) -> None:
    """Raise SnakeDynamicsError naming the first argument that holds NaN or infinity."""
    for name, value in arrays.items():
        value = np.asarray(value, dtype=float)
        if not np.all(np.isfinite(value)):
            index = np.unravel_index(np.argmin(np.isfinite(value)), value.shape)
            raise SnakeDynamicsError(f'{name}: must be finite, got {value[index]} at index '
                                     f'{tuple(int(i) for i in index)}')


def _checked(snake: RollingJointSnake, loads) -> tuple:
    """Return the loads as a tuple; raise SnakeDynamicsError naming the field of a bad one."""
    try:
        return _loads.check(snake, loads)
    except _loads.LoadError as error:
        raise SnakeDynamicsError(f'loads: {error}') from None


@dataclass(frozen=True)
class Infeasible:
    """A step at which the tensions of one joint break a constraint of (37)."""

    time: float        # s
    joint: int         # 1-based
    # minimum tensions: the group whose removal makes the step feasible, or 'several';
    # given tensions: the first group they break
    constraint: str

    def __str__(self) -> str:
        return f't = {self.time:.3f} s, joint {self.joint}: {self.constraint} constraint broken'


@dataclass(frozen=True)
class InverseDynamics:
    """Minimum cable tensions over a trajectory and the contact forces they give."""

    time: np.ndarray              # (K,) s
    q: np.ndarray                 # (K, N) rad
    tensions: np.ndarray          # (K, N, C) N, segment n (between links n-1 and n)
    normal_forces: np.ndarray     # (K, N, 2) N, at c1, c2 of joint n
    friction_forces: np.ndarray   # (K, N, 2, 2) N, (y, z) in f3 at c1, c2
    active: dict                  # group -> (K, N) bool: the constraint is active
    infeasible: tuple             # of Infeasible, in time order
    solve_time: float             # s of wall time for the whole trajectory

    @property
    def base_tensions(self) -> np.ndarray:
        """(K, C) N: tensions the motors at the base apply (segment 1)."""
        return self.tensions[:, 0]

    @property
    def feasible(self) -> bool:
        return not self.infeasible


def study_trajectory(snake: RollingJointSnake, which: str, duration: float = 12.6,
                     dt: float = 0.005):
    """
    Return the study of D'Antuono et al. 2023: theta_n = (pi/18) sin(t/2) on some joints.

    The pan joints, the tilt joints or both. SnakeDynamicsError for joints the snake lacks.

    Returns
    -------
    t : (K,) s;  q, qd, qdd : (K, N) rad, rad/s, rad/s^2

    """
    types = {'pan': ('pan',), 'tilt': ('tilt',), 'both': ('pan', 'tilt')}
    if which not in types:
        raise SnakeDynamicsError(f'trajectory: must be one of {list(types)}, got {which!r}')
    for kind in types[which]:
        # else that part of the motion is no motion, and its tensions those of rest
        if kind not in snake.joints:
            raise SnakeDynamicsError(f'{which} moves the {kind} joints, and the snake has none '
                                     f'(its joints: {", ".join(snake.joints)})')
    t = np.arange(0.0, duration + dt / 2, dt)
    moving = np.array([j in types[which] for j in snake.joints], dtype=float)
    amplitude = np.pi / 18.0
    q = amplitude * np.sin(t / 2)[:, None] * moving
    qd = amplitude * 0.5 * np.cos(t / 2)[:, None] * moving
    qdd = -amplitude * 0.25 * np.sin(t / 2)[:, None] * moving
    return t, q, qd, qdd


class SnakeDynamics:
    """Newton-Euler inverse dynamics with minimum tensions, and forward dynamics."""

    def __init__(self, snake: RollingJointSnake):
        self.snake = snake
        self.kinematics = SnakeKinematics(snake)
        C = len(snake.cables)
        self.n_rows = 8 + 2 * C
        self.vertices = np.array(list(combinations(range(self.n_rows), C - 1)))
        self.group_rows = {'contact': slice(0, 2), 'friction': slice(2, 8),
                           'pretension': slice(8, 8 + C), 'max_tension': slice(8 + C, 8 + 2 * C)}

    # ----------------------------------------------------------------- Newton-Euler

    def _link_wrenches(self, s: ChainState, loads=()):
        """
        Force (K, N, 3) and moment about the centre of mass (K, N, 3) the joints give each link.

        m (a_C - g) - F and I wd + w x I w - M - (p - p_C) x F with the loads' F, M at p.
        """
        link = self.snake.link
        force = link.mass * (s.center_acceleration - self.snake.gravity)
        R = s.rotations[:, 1:]
        inertia = np.einsum('knij,j,knlj->knil', R, link.inertia, R)       # R I R^T
        moment = (np.einsum('knij,knj->kni', inertia, s.omega_dot)
                  + cross(s.omega, np.einsum('knij,knj->kni', inertia, s.omega)))
        _loads.apply(force, moment, s, loads)
        return force, moment

    def joint_torques(self, q, qd, qdd, loads=()) -> np.ndarray:
        """
        Return tau (K, N) [N m]: moment about joint n's contact line the cables must supply.

        The z row of the balance of links n..N (inertia, gravity and the external loads).
        """
        s = self.kinematics.state(q, qd, qdd)
        force, moment = self._link_wrenches(s, _checked(self.snake, loads))
        # wrench of links j >= n about the origin, summed from the tip
        F = np.cumsum(force[:, ::-1], axis=1)[:, ::-1]
        M = np.cumsum((moment + cross(s.centers, force))[:, ::-1], axis=1)[:, ::-1]
        return np.einsum('knj,knj->kn', s.axes, M - cross(s.contacts, F))

    def mass_matrix(self, q) -> np.ndarray:
        """M(q) (K, N, N) [kg m^2] from the link Jacobians."""
        q = np.atleast_2d(q)
        K, N = q.shape
        s = self.kinematics.state(q)
        link = self.snake.link
        # Jv[k, j, :, n] = a_n x (p_Cj - p_cn) for n <= j, else 0
        arm = s.centers[:, :, None, :] - s.contacts[:, None, :, :]           # (K, j, n, 3)
        Jv = cross(np.broadcast_to(s.axes[:, None], arm.shape), arm)
        lower = np.tril(np.ones((N, N)))[None, :, :, None]
        Jv = Jv * lower
        Jw = np.broadcast_to(s.axes[:, None], Jv.shape) * lower             # (K, j, n, 3)
        R = s.rotations[:, 1:]
        inertia = np.einsum('kjab,b,kjcb->kjac', R, link.inertia, R)
        return (link.mass * np.einsum('kjna,kjma->knm', Jv, Jv)
                + np.einsum('kjna,kjab,kjmb->knm', Jw, inertia, Jw))

    def accelerations(self, q, qd, tensions, loads=()) -> np.ndarray:
        """
        Return qdd (K, N) [rad/s^2] under segment tensions (K, N, C) [N] (numpy path).

        The reference of the kernel behind :meth:`acceleration` and :meth:`simulate`.
        """
        q, qd = np.atleast_2d(q), np.atleast_2d(qd)
        tensions = np.broadcast_to(tensions, q.shape + (len(self.snake.cables),))
        levers = self.kinematics.state(q).cable_levers()
        drive = np.einsum('knc,knc->kn', levers, tensions)
        bias = self.joint_torques(q, qd, np.zeros_like(q), loads)
        return np.linalg.solve(self.mass_matrix(q), (drive - bias)[..., None])[..., 0]

    def _model(self, loads=()) -> tuple:
        """Return the snake and the loads as the arguments of the numba kernels."""
        link = self.snake.link
        return (self.snake.joint_axes, self.kinematics.b, link.radius_of_curvature,
                link.height, link.center_of_mass, self.kinematics.proximal_hole_local,
                self.kinematics.distal_hole_local, link.mass, link.inertia, self.snake.gravity,
                *_loads.pack(_checked(self.snake, loads)))

    def acceleration(self, q, qd, tensions, loads=()) -> np.ndarray:
        """Return qdd (N,) of one state (N,) under segment tensions (N, C): the numba kernel."""
        return _snake_kernels.accelerations(np.asarray(q, dtype=float),
                                            np.asarray(qd, dtype=float),
                                            np.asarray(tensions, dtype=float),
                                            *self._model(loads))

    def energy(self, q, qd) -> np.ndarray:
        """Return the kinetic plus gravitational energy [J], (K,), zero at the base height."""
        s = self.kinematics.state(q, qd)
        link = self.snake.link
        R = s.rotations[:, 1:]
        w_body = np.einsum('knji,knj->kni', R, s.omega)
        kinetic = 0.5 * (link.mass * np.sum(s.center_velocity ** 2, axis=-1)
                         + np.sum(link.inertia * w_body ** 2, axis=-1)).sum(axis=1)
        potential = -link.mass * np.einsum('knj,j->k', s.centers, self.snake.gravity)
        return kinetic + potential

    # ----------------------------------------------------------------- inverse dynamics

    def inverse(self, t, q, qd, qdd, tensions=None, loads=()) -> InverseDynamics:
        """
        Compute the minimum tensions of problem (37) along a trajectory, joint N to 1 at each step.

        With ``tensions`` given instead (e.g. a motion from :meth:`simulate` and the
        accelerations :meth:`accelerations` gives under those tensions), the contact and
        friction forces they need, and as infeasible every step and joint where these break
        a constraint (contact lost, slipping, tension out of its bounds).

        Parameters
        ----------
        t : array (K,)
            Sample times [s].
        q, qd, qdd : arrays (K, N)
            Joint angles [rad], rates [rad/s] and accelerations [rad/s^2].
        tensions : array (K, N, C), optional
            Segment tensions [N].
        loads : iterable of :class:`~tendon_robot_sim.models.snake.loads.LinkWrench`
            External loads, constant over the trajectory.

        Raises
        ------
        SnakeDynamicsError
            If a joint angle leaves the rolling surfaces (|theta| > 2 alpha), or a load is
            not one.

        """
        start = _time.perf_counter()
        _check_finite(t=t, q=q, qd=qd, qdd=qdd,
                      **({} if tensions is None else {'tensions': tensions}))
        t = np.atleast_1d(np.asarray(t, dtype=float))
        q = np.atleast_2d(q)
        self._check_limits(t, q)
        s = self.kinematics.state(q, qd, qdd)
        K, N = q.shape
        C = len(self.snake.cables)
        given = None if tensions is None else np.broadcast_to(tensions, (K, N, C))
        force, moment = self._link_wrenches(s, _checked(self.snake, loads))
        _, e = s.cable_segments()
        levers = s.cable_levers()
        tensions = np.empty((K, N, C))
        normal = np.empty((K, N, 2))
        friction = np.empty((K, N, 2, 2))
        active = {g: np.zeros((K, N), dtype=bool) for g in GROUPS}
        problems = []
        distal_force = np.zeros((K, 3))      # wrench of link n+1 on link n, about the origin
        distal_moment = np.zeros((K, 3))
        w = self.snake.link.contact_offset
        for n in range(N - 1, -1, -1):
            p_c = s.contacts[:, n]
            ex, ez = s.normals[:, n], s.axes[:, n]
            basis = np.stack((ex, cross(ez, ex), ez), axis=1)              # (K, 3, 3)
            # what the contacts and segment n must supply: force, and moment about p_c
            need_f = force[:, n] - distal_force
            need_m = (moment[:, n] + cross(s.centers[:, n] - p_c, force[:, n])
                      - (distal_moment - cross(p_c, distal_force)))
            arm = s.proximal_holes[:, n] - p_c[:, None]
            unit_f = e[:, n]                                                 # (K, C, 3)
            unit_m = cross(arm, unit_f)
            # contact wrench = need - (unit wrench) T, in f3: S = s0 - sg T, M = m0 - mg T
            s0 = np.einsum('kij,kj->ki', basis, need_f)
            sg = np.einsum('kij,kcj->kic', basis, unit_f)
            m0 = np.einsum('kij,kj->ki', basis, need_m)
            mg = np.einsum('kij,kcj->kic', basis, unit_m)
            if given is None:
                T, rows_c = self._minimum_tensions(levers[:, n], m0[:, 2], s0, sg, m0, mg, w)
            else:
                T = given[:, n]
                rows_c = self._violations(T, *self.inequality_rows(s0, sg, m0, mg, w))
            tensions[:, n] = T
            S = s0 - np.einsum('kic,kc->ki', sg, T)
            Mc = m0 - np.einsum('kic,kc->ki', mg, T)
            normal[:, n] = np.stack(((S[:, 0] + Mc[:, 1] / w) / 2,
                                     (S[:, 0] - Mc[:, 1] / w) / 2), axis=-1)
            share = normal[:, n] / normal[:, n].sum(axis=1, keepdims=True)
            friction[:, n, :, 0] = np.stack(((S[:, 1] - Mc[:, 0] / w) / 2,
                                             (S[:, 1] + Mc[:, 0] / w) / 2), axis=-1)
            friction[:, n, :, 1] = S[:, 2, None] * share
            slack = rows_c[0] - np.einsum('krc,kc->kr', rows_c[1], T)
            for group in GROUPS:
                active[group][:, n] = np.any(
                    slack[:, self.group_rows[group]] <= ACTIVE_TOLERANCE, axis=1)
            for k, name in rows_c[2]:
                problems.append(Infeasible(float(t[k]), n + 1, name))
            # on link n-1: the reaction of the contacts and the pull of segment n
            contact_f = np.einsum('kij,ki->kj', basis, S)
            contact_m = np.einsum('kij,ki->kj', basis, Mc)
            pull = T[..., None] * unit_f
            distal_force = -contact_f - pull.sum(axis=1)
            distal_moment = (-(contact_m + cross(p_c, contact_f))
                             - cross(s.distal_holes[:, n], pull).sum(axis=1))
        problems.sort(key=lambda p: (p.time, p.joint))
        return InverseDynamics(t, q, tensions, normal, friction, active, tuple(problems),
                               _time.perf_counter() - start)

    def inverse_step(self, t: float, q, qd, qdd, loads=()) -> InverseDynamics:
        """
        :meth:`inverse` at one step (N,), with the numba kernel when there are 4 cables.

        For a controller asking for the next step's tensions: the numpy path's cost is
        per call, not per step. Infeasible steps go through :meth:`inverse` to name the
        constraint.
        """
        start = _time.perf_counter()
        _check_finite(t=t, q=q, qd=qd, qdd=qdd)
        q, qd, qdd = (np.asarray(v, dtype=float) for v in (q, qd, qdd))
        if len(self.snake.cables) != 4:
            return self.inverse([t], q[None], qd[None], qdd[None], loads=loads)
        self._check_limits(np.array([t]), q[None])
        snake = self.snake
        tensions, normal, friction, active, feasible = _snake_kernels.inverse_step(
            q, qd, qdd, *self._model(loads), snake.link.contact_offset,
            snake.friction_coefficient, snake.min_contact_force, snake.pretension,
            snake.max_tension, self.vertices, FEASIBILITY_TOLERANCE, ACTIVE_TOLERANCE)
        if not feasible.all():
            return self.inverse([t], q[None], qd[None], qdd[None], loads=loads)
        return InverseDynamics(np.array([t]), q[None], tensions[None], normal[None],
                               friction[None],
                               {g: active[None, :, i] for i, g in enumerate(GROUPS)}, (),
                               _time.perf_counter() - start)

    def _check_limits(self, t: np.ndarray, q: np.ndarray) -> None:
        worst = np.unravel_index(np.argmax(np.abs(q)), q.shape)
        if abs(q[worst]) > self.snake.joint_limit:
            raise SnakeDynamicsError(
                f'q: joint {worst[1] + 1} reaches {q[worst]:.4g} rad at t = {t[worst[0]]:.3f} s, '
                f'beyond the rolling surfaces (2 alpha = {self.snake.joint_limit:.4g} rad)')

    def inequality_rows(self, s0, sg, m0, mg, w):
        """
        Rows G (K, 8 + 2C, C) and bounds h (K, 8 + 2C) of (31), (34)-(36): G T <= h.

        The contact quantities are affine in the tensions, value = c - g T.
        """
        mu, f_min = self.snake.friction_coefficient, self.snake.min_contact_force
        C = sg.shape[-1]
        n1 = (s0[:, 0] + m0[:, 1] / w) / 2, (sg[:, 0] + mg[:, 1] / w) / 2
        n2 = (s0[:, 0] - m0[:, 1] / w) / 2, (sg[:, 0] - mg[:, 1] / w) / 2
        fy1 = (s0[:, 1] - m0[:, 0] / w) / 2, (sg[:, 1] - mg[:, 0] / w) / 2
        fy2 = (s0[:, 1] + m0[:, 0] / w) / 2, (sg[:, 1] + mg[:, 0] / w) / 2
        fz = s0[:, 2], sg[:, 2]
        total = n1[0] + n2[0], n1[1] + n2[1]
        # value >= bound  <=>  g T <= c - bound;  value <= 0  <=>  -g T <= -c
        rows = [(n1[1], n1[0] - f_min), (n2[1], n2[0] - f_min)]
        for f, n in ((fy1, n1), (fy2, n2), (fz, total)):
            for sign in (1.0, -1.0):      # sign * f - mu n <= 0
                c = sign * f[0] - mu * n[0]
                g = sign * f[1] - mu * n[1]
                rows.append((-g, -c))
        K = s0.shape[0]
        eye = np.broadcast_to(np.eye(C), (K, C, C))
        G = np.concatenate([np.stack([g for g, _ in rows], axis=1), -eye, eye], axis=1)
        h = np.concatenate([np.stack([c for _, c in rows], axis=1),
                            np.full((K, C), -self.snake.pretension),
                            np.full((K, C), self.snake.max_tension)], axis=1)
        return G, h

    def _minimum_tensions(self, a, b, s0, sg, m0, mg, w):
        """Solve (37) for one joint at K steps; returns T (K, C) and (h, G, problems)."""
        G, h = self.inequality_rows(s0, sg, m0, mg, w)
        T = np.empty_like(a)
        C = a.shape[1]
        # first guesses: all cables but one at the pretension, then the optimal vertices of
        # the previous chunk of steps (a trajectory changes its active set rarely)
        guesses = [tuple(8 + i for i in range(C) if i != j) for j in range(C)]
        chunk = max(1, VERTEX_BUDGET // (len(self.vertices) * self.n_rows))
        for lo in range(0, a.shape[0], chunk):
            part = slice(lo, lo + chunk)
            T[part], found = self.solve_lp(a[part], b[part], G[part], h[part],
                                           np.array(guesses))
            guesses = list(dict.fromkeys(guesses[:C] + found))[:C + 16]
        problems = []
        for k in np.flatnonzero(np.isnan(T[:, 0])):
            name = 'several'
            for group in ('friction', 'contact', 'max_tension'):
                relaxed = h[k].copy()
                relaxed[self.group_rows[group]] = 1e9
                x, _ = self.solve_lp(a[k:k + 1], b[k:k + 1], G[k:k + 1], relaxed[None])
                if not np.isnan(x[0, 0]):
                    T[k], name = x[0], group
                    break
            problems.append((k, name))
        return T, (h, G, problems)

    def _violations(self, T, G, h):
        """(h, G, problems) of given tensions T (K, C): the first group each step breaks."""
        broken = h - np.einsum('krc,kc->kr', G, T) < -CHECK_TOLERANCE
        problems = []
        for k in np.flatnonzero(broken.any(axis=1)):
            problems.append((k, next(g for g in GROUPS if broken[k, self.group_rows[g]].any())))
        return h, G, problems

    def solve_lp(self, a, b, G, h, guesses=None):
        """
        Minimize sum(T) s.t. a.T = b and G T <= h, for K problems at once, by vertices.

        A vertex is a set of C - 1 rows of G held with equality. Each guessed vertex is
        tried first and accepted where it is feasible and optimal (KKT: the objective's
        gradient is a non-negative combination of the active rows' normals); the other
        problems enumerate all vertices and keep the cheapest feasible one.

        Parameters
        ----------
        a, b : arrays (K, C) and (K,)
            The equality a.T = b of each problem.
        G, h : arrays (K, M, C) and (K, M)
            The inequalities G T <= h. The polytope must be bounded (it is:
            pretension <= T <= max_tension).
        guesses : (P, C - 1) int, optional
            Row sets to try first.

        Returns
        -------
        T : (K, C), NaN where the problem is infeasible.
        found : list of tuples, the row sets optimal somewhere (for the next guesses).

        """
        K, C = a.shape
        # T = T0 + Z y with Z (K, C, C-1) an orthonormal basis of a's null space
        # (columns 2.. of the Householder reflector that maps a onto e1)
        norm = np.linalg.norm(a, axis=1)
        v = a.copy()
        v[:, 0] += np.where(a[:, 0] >= 0, 1.0, -1.0) * norm
        Z = (np.eye(C)[:, 1:] - 2.0 * v[:, :, None] * v[:, None, 1:]
             / np.sum(v * v, axis=1)[:, None, None])
        T0 = a * (b / norm ** 2)[:, None]
        g = G @ Z
        c = h - np.einsum('kmc,kc->km', G, T0)
        scale = np.maximum(np.linalg.norm(g, axis=2), 1e-12)
        g, c = g / scale[..., None], c / scale
        gradient = Z.sum(axis=1)                                  # d(sum T)/dy, (K, d)
        y = np.full((K, C - 1), np.nan)
        found = []
        todo = np.arange(K)
        if guesses is not None and len(guesses):
            rows = g[:, guesses]                                  # (K, P, d, d)
            yg, ok = _solve_square(rows, c[:, guesses])
            slack_ok = np.all(yg @ np.swapaxes(g, 1, 2)
                              <= c[:, None] + FEASIBILITY_TOLERANCE, axis=2)
            # KKT: -gradient = rows^T mu with mu >= 0
            mu, ok_t = _solve_square(np.swapaxes(rows, -1, -2),
                                     np.broadcast_to(-gradient[:, None], yg.shape))
            good = ok & ok_t & slack_ok & np.all(mu >= -1e-9, axis=2)
            hit = good.any(axis=1)
            first = np.argmax(good, axis=1)
            y[hit] = yg[hit, first[hit]]
            found = [tuple(guesses[i]) for i in np.unique(first[hit])]
            todo = np.flatnonzero(~hit)
        if todo.size:
            gt, ct = g[todo], c[todo]
            yv, ok = _solve_square(gt[:, self.vertices], ct[:, self.vertices])
            feasible = ok & np.all(yv @ np.swapaxes(gt, 1, 2)
                                   <= ct[:, None] + FEASIBILITY_TOLERANCE, axis=2)
            cost = np.where(feasible, np.einsum('kpd,kd->kp', yv, gradient[todo]), np.inf)
            best = np.argmin(cost, axis=1)
            solved = feasible.any(axis=1)
            y[todo[solved]] = yv[np.flatnonzero(solved), best[solved]]
            found += [tuple(self.vertices[i]) for i in np.unique(best[solved])]
        return T0 + np.einsum('kcd,kd->kc', Z, y), found

    # ----------------------------------------------------------------- simulation

    def simulate(self, t, tensions, q0, qd0, substeps: int = 1, loads=()):
        """
        Integrate the forward dynamics (RK4, numba kernel) under sampled tensions.

        Parameters
        ----------
        t : (K,) s, increasing
            Sample times; the state is returned at these times.
        tensions : (K, N, C) or (K, C) N
            Tensions per segment (as from :meth:`inverse`) or per whole cable, linear
            between samples.
        q0, qd0 : (N,) or (B, N)
            Initial state; B independent runs share the time grid (B = 1 if 1-D).
        substeps : int
            RK4 steps per sample interval.
        loads : iterable of :class:`~tendon_robot_sim.models.snake.loads.LinkWrench`
            External loads, constant.

        Returns
        -------
        q, qd : (K, B, N)

        Raises
        ------
        SnakeDivergedError
            If the state runs away (``_kernels.RUNAWAY_ANGLE``, ``RUNAWAY_RATE``): the
            RK4 step (sample interval / substeps) is too large for these tensions.

        """
        _check_finite(t=t, tensions=tensions, q0=q0, qd0=qd0)
        t = np.asarray(t, dtype=float)
        q = np.atleast_2d(np.asarray(q0, dtype=float)).copy()
        qd = np.atleast_2d(np.asarray(qd0, dtype=float)).copy()
        B, N = q.shape
        C = len(self.snake.cables)
        tensions = np.asarray(tensions, dtype=float)
        if tensions.ndim == 2:
            tensions = np.broadcast_to(tensions[:, None], (t.size, N, C))
        if tensions.shape[:3] != (t.size, N, C):
            raise SnakeDynamicsError(f'tensions: shape {tensions.shape}, expected '
                                     f'({t.size}, {N}, {C}) or ({t.size}, {C})')
        tensions = np.ascontiguousarray(tensions)
        model = self._model(loads)
        runs = [_snake_kernels.integrate(t, tensions, q[b], qd[b], substeps, *model)
                for b in range(B)]
        q, qd = (np.stack([r[0] for r in runs], axis=1), np.stack([r[1] for r in runs], axis=1))
        runaway = ~(np.isfinite(q) & np.isfinite(qd)
                    & (np.abs(q) < _snake_kernels.RUNAWAY_ANGLE))
        if runaway.any():
            k = int(np.argmax(runaway.any(axis=(1, 2))))
            step = float(np.min(np.diff(t))) / substeps if t.size > 1 else math.nan
            raise SnakeDivergedError(f'dt: the RK4 step of {step:.3g} s diverges at t = '
                                     f'{t[k]:.3f} s under these tensions', float(t[k]))
        return q, qd


def _solve_square(rows: np.ndarray, rhs: np.ndarray):
    """Solve rows y = rhs for stacks of d x d systems; ok marks the non-singular ones."""
    d = rows.shape[-1]
    if d == 3:      # Cramer's rule with cross products: many times faster than LAPACK here
        r0, r1, r2 = rows[..., 0, :], rows[..., 1, :], rows[..., 2, :]
        c12, c20, c01 = cross(r1, r2), cross(r2, r0), cross(r0, r1)
        det = np.einsum('...i,...i->...', r0, c12)
        ok = np.abs(det) > 1e-10
        safe = np.where(ok, det, 1.0)
        y = (rhs[..., 0, None] * c12 + rhs[..., 1, None] * c20
             + rhs[..., 2, None] * c01) / safe[..., None]
        return y, ok
    ok = np.abs(np.linalg.det(rows)) > 1e-10
    safe = np.where(ok[..., None, None], rows, np.eye(d))
    return np.linalg.solve(safe, rhs[..., None])[..., 0], ok
