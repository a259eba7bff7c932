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
Static equilibrium of tendon-driven continuum robots by the shooting method.

Three models of the same robot description (:mod:`tendon_robot_sim.models.tendon_robot`):

``cosserat``
    Rucker & Webster 2011 ("Statics and Dynamics of Continuum Robots With General
    Tendon Routing and External Loading", IEEE T-RO 27(6)): a Cosserat rod (shear and
    extension) with tendons routed continuously along general paths r_i(s). The tendons
    load the backbone with distributed wrenches, so the ODE is implicit in (v_s, u_s);
    each step solves the 6x6 system of Eq. (16) built from the sums of Eq. (15).
    Tendon terminations are point loads (Eqs. 18-20), applied wherever a tendon ends.
``kirchhoff``
    The same with v = e3 (no shear, no extension): the state holds n^b instead of v
    and each step solves the 3x3 system of Eq. (17).
``discrete``
    The static twin of the dynamic PyElastica model
    (:mod:`tendon_robot_sim.models.rod.dynamics.explicit`, Tuzlaci's "TendonForces"): tendons
    are straight between the holes of consecutive vertebrae and load the backbone only at the
    vertebrae, with force tau (unit vector to the next hole) - tau (unit vector from the
    previous hole) (the first segment starts at the base hole at s = 0), the moment of that
    force about the backbone (hole offset in the vertebra's own frame x force) and the
    vertebra weight. Between vertebrae the backbone is a bare Cosserat rod with self weight.
    The next hole is downstream of the vertebra it loads, so each bay is solved for its end
    pose by a small Newton iteration inside the shooting residual.

Constitutive law
----------------
Kse = diag(alpha G A, alpha G A, E A) and Kbt = diag(E I, E I, G J), with the shear
coefficient alpha = 27/28 that PyElastica 1.0 uses (``elastica/rod/factory_function.py``:
Kaneko's Timoshenko correction for Poisson ratio 0.5) in every model, so models can be
compared with each other and with the simulator. ``constitutive='linear'`` is the
Rucker & Webster law n^b = Kse (v - e3), m^b = Kbt u; ``'pyelastica'`` is what the
PyElastica discretisation converges to, n^b = Kse (v - e3) / e and m^b = Kbt u / e^3
with e = |v| the dilatation (Gazzola et al. 2018). The two differ only through
extension, by about 3 x axial strain in bending stiffness. Default: ``'pyelastica'``
for ``discrete`` (it must agree with the simulator), ``'linear'`` for ``cosserat``;
``kirchhoff`` is inextensible (e = 1), where the two coincide.

Loads
-----
Self weight rho A g per unit (reference) length, and the vertebra weights
``vertebra_mass * gravity`` as point forces at the vertebra arc lengths in all three
models (the vertebrae of the default robot weigh about as much as the rod); a robot
description with ``vertebrae.mass: 0`` drops them. External tip force and moment come
from ``robot.tip_load`` (world frame) unless given per solve.

Tendon inputs
-------------
Tensions, or displacements q (unstretched length the motor has pulled in past the base,
positive when pulling) with compliance C (1/N) and slack, after Till's displacement-control
example: the tendon length l above the base satisfies
``l + d + slack = (l* + d - q)(1 + C tau)``, with ``tau >= 0``, ``slack >= 0`` and one of them
zero; d is the tendon's ``motor_distance`` (motor to base hole), l* is the tendon's reference
length: its ``reference_length`` in the description, by default its path length from its base
hole (s = 0) to its anchor in the straight configuration (continuous curve for
``cosserat``/``kirchhoff``, polyline through the holes for ``discrete``). In tension mode the
displacement is ``l* + d - (l + d) / (1 + C tau)`` (the same formula as the simulators',
:func:`~tendon_robot_sim.models.tendon_robot.tendon_displacements`).

Numerics
--------
Fixed-step RK4 (``DEFAULT_STEPS``) with segments split at vertebrae and tendon ends,
and a damped Newton/Broyden iteration with finite-difference Jacobians on the scaled
shooting residual, all numba-compiled in :mod:`tendon_robot_sim.models.rod.statics._kernels`.
The solver keeps the last solution and Jacobian of each input mode and starts the next
solve from them, moved by a secant estimate of how the solution follows the inputs
(warm start: two residual evaluations for a 1 kHz stream of slowly varying tensions).
Failing that it starts cold from the straight robot, then continues in 4 and 16 load
steps (tensions or displacements, tip load), then from the unloaded rod in adaptive steps of
gravity and tip load, then of the inputs
(:mod:`~tendon_robot_sim.models.rod.statics.continuation`; a robot heavy for its stiffness
starts from the unloaded rod), before raising :class:`ConvergenceError`.
:mod:`tendon_robot_sim.models.rod.statics.reference` solves the same models with scipy.

Against the simulator (default robot, gravity, 3 N and 2 N on two tendons) the
``discrete`` tip agrees within 0.12 % of the length at 50 elements (0.23 % at 30); with
the ``linear`` law it would be 0.45 %, and ``cosserat`` (continuous tendons) is 0.5 %.
"""

from __future__ import annotations

import math
import time
from typing import Mapping, Sequence

import numpy as np

from tendon_robot_sim.models._cosserat_kernels import Dyn, DYN_SIZE, poses, Z_SIZE
from tendon_robot_sim.models.contact.reach import reach_zones
from tendon_robot_sim.models.contact.report import ContactPoint, probe_points, rod_contacts
from tendon_robot_sim.models.contact.world import check_start_clear, no_contact, World
from tendon_robot_sim.models.cosserat import (ConvergenceError, PYELASTICA_SHEAR_COEFFICIENT,
                                              StaticsInputError, stiffness_matrices, vector3)
from tendon_robot_sim.models.description import POSITION_TOLERANCE
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.rod.statics.continuation import (
    CONTINUATION_STEPS, continue_from_last, continue_in_equal_steps, continue_in_load,
    gravity_load, HEAVY)
from tendon_robot_sim.models.rod.statics.grid import shooting_grid
from tendon_robot_sim.models.rod.statics.result import Shape, StaticsResult
from tendon_robot_sim.models.rod.tendons._friction_kernels import FR_SIZE, FW_SIZE
from tendon_robot_sim.models.rod.tendons.inputs import tendon_values
from tendon_robot_sim.models.rod.tendons.routing import routing_functions, RoutingFunction
from tendon_robot_sim.models.tendon_robot import (friction_refused, Robot, tendon_displacements,
                                                  vertebrae_required)

MODELS = ('cosserat', 'kirchhoff', 'discrete')
#: The nodes' choices: a model, or ``auto`` (:func:`model_for`).
NODE_MODELS = ('auto',) + MODELS

CONSTITUTIVE_LAWS = ('linear', 'pyelastica')
# Largest RK4 step [m] per model: for the default robot the tip is within 1e-6 m of a
# converged fine-step solution up to full tension on one tendon (a full curl), within
# 1e-7 m at moderate tensions (benchmarks/bench_statics.py measures it). The discrete
# model's bays, loaded by the tendon chords at both ends, need the finer step.
DEFAULT_STEPS = {'cosserat': 0.005, 'kirchhoff': 0.005, 'discrete': 0.0025}
# Largest default step [m] with obstacles, from the first arc length at which the rod can reach
# one (contact/reach.py; before it the step of the model): a contact patch on a curved obstacle
# can be ~1 mm long (a propped steel rod on a 10 mm post: its deflection within 0.9 % at 1 mm,
# 1.3 % at 2 mm).
CONTACT_STEP = 0.001
DEFAULT_TOLERANCE = 1e-7
# Newton iterations from the predicted warm start, then the last solution (docs/performance.md)
PREDICTED_ITERATIONS = 30


class _ModeState:
    """
    Warm-start memory of one input mode and its buffers.

    After a solve: the unknowns ``x`` and Jacobian ``J`` (also kept as ``x_last``,
    ``J_last``), the inputs ``u`` (tensions or displacements, tip force and moment) and
    ``S``, a secant estimate of dx/du (good-Broyden updates from consecutive solves)
    that predicts the next start point, x_last + S (u_new - u).
    """

    def __init__(self, nx: int, ny: int, nt: int, rows: int):
        self.x = np.zeros(nx)
        self.J = np.zeros((nx, nx))
        self.jac_ok = np.zeros(1, dtype=np.bool_)
        self.solved = False
        self.x_last = np.zeros(nx)
        self.J_last = np.zeros((nx, nx))
        self.u = np.zeros(nt + 6)
        self.S = np.zeros((nx, nt + 6))
        self.work = kernels.Work(
            y=np.zeros((3, ny)), st=np.zeros((3, ny)), wk=np.zeros(112), K=np.zeros((6, 6)),
            M=np.zeros((4, 3, 3)), hp=np.zeros((nt, 3)), vec=np.zeros((5, nx)),
            Jc=np.zeros((nx, nx)), traj=np.zeros((rows, ny)))


def model_for(robot: Robot, model: str) -> str:
    """Return ``model``; ``auto``: discrete with vertebra discs, cosserat without."""
    if model != 'auto':
        return model
    return 'discrete' if robot.vertebra_positions.size else 'cosserat'


class StaticsSolver:
    """
    Shooting-method statics of one robot in one model.

    Parameters
    ----------
    robot : Robot
        The robot description (geometry, material, gravity, vertebrae, tendons).
    model : {'cosserat', 'kirchhoff', 'discrete', 'auto'}
        See the module docstring; ``auto``: :func:`model_for`.
    constitutive : {'linear', 'pyelastica'}, optional
        Constitutive law; default 'pyelastica' for 'discrete', 'linear' otherwise.
    shear_coefficient : float
        alpha in Kse = diag(alpha G A, alpha G A, E A); default PyElastica's 27/28.
    step : float, optional
        Largest RK4 step [m]; segments between vertebrae/tendon ends are split evenly.
        Default ``DEFAULT_STEPS[model]``.
    contact_step : float, optional
        With a world: the largest RK4 step [m] in the contact zones (the continuous models'
        grid breaks at their ends, the discrete model refines each bay that overlaps one).
        Default: ``step`` if given (one step everywhere), else ``min(DEFAULT_STEPS[model],
        CONTACT_STEP)``.
    contact_zones : sequence of (float, float), optional
        Arc-length intervals [m]; default: from the first arc length at which the rod can reach
        an obstacle (:func:`~tendon_robot_sim.models.contact.reach.first_reach`) to its end.
    breaks : sequence of float
        More arc lengths [m] where segments end (the implicit dynamics' shooting nodes).
    routing : mapping {tendon name: callable}, optional
        Replaces ``Tendon.hole`` of the named tendons: ``f(s) -> (r, r_s, r_ss)`` with s
        an array (k,) of arc lengths in [0, end] [m] and each output (3, k) in the body
        frame [m, -, 1/m]. Checked against finite differences of itself.
        Not used by 'discrete' beyond the hole positions at the vertebrae.
    tolerance : float
        Newton tolerance on the scaled residual (max norm): tip force error / (E I / L^2),
        moment error / (E I / L), length error / (length change per newton of a tendon at
        zero load x E I / L^2). The default 1e-7 leaves the tip ~1e-8 m from the exact
        solution of the discretised model; below ~1e-10 the discrete model's bay
        iterations set a floor.
    max_iterations : int
        Newton iterations per attempt.
    world : World, optional
        Obstacles (:mod:`tendon_robot_sim.models.contact.world`): a smooth penalty load along
        the rod's envelope (``robot.contact_envelope``), and the contacts in every result.
        WorldError if an obstacle intersects the base.

    Attributes
    ----------
    rest_lengths : ndarray (n,)
        l* of each tendon [m].
    arc_lengths : ndarray (k,)
        Reference arc length of each backbone point of a solution (RK4 grid) [m].
    Kse, Kbt : ndarray (3,)
        Stiffness diagonals [N], [N m^2].

    """

    def __init__(self, robot: Robot, model: str = 'cosserat', *, constitutive: str | None = None,
                 shear_coefficient: float = PYELASTICA_SHEAR_COEFFICIENT,
                 step: float | None = None, contact_step: float | None = None,
                 contact_zones: Sequence[tuple[float, float]] | None = None,
                 breaks: Sequence[float] = (),
                 routing: Mapping[str, RoutingFunction] | None = None,
                 tolerance: float = DEFAULT_TOLERANCE, max_iterations: int = 100,
                 world: World | None = None):
        refused = friction_refused(robot, 'single statics solve (it has no memory of the path)')
        if refused:
            raise StaticsInputError(refused)
        model = model_for(robot, model)
        if model not in MODELS:
            raise StaticsInputError(f'model: must be one of {list(NODE_MODELS)}, got {model!r}')
        if constitutive is None:
            constitutive = 'pyelastica' if model == 'discrete' else 'linear'
        if constitutive not in CONSTITUTIVE_LAWS:
            raise StaticsInputError(
                f'constitutive: must be one of {list(CONSTITUTIVE_LAWS)}, got {constitutive!r}')
        if contact_step is None:
            contact_step = step if step is not None else min(DEFAULT_STEPS[model], CONTACT_STEP)
        if step is None:
            step = DEFAULT_STEPS[model]
        if model == 'kirchhoff' and constitutive != 'linear':
            raise StaticsInputError(
                'constitutive: the kirchhoff model is inextensible, where the laws coincide; '
                "leave it at 'linear'")
        for name, value, low in (('shear_coefficient', shear_coefficient, 0.0),
                                 ('step', step, 0.0), ('contact_step', contact_step, 0.0),
                                 ('tolerance', tolerance, 0.0)):
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > low):
                raise StaticsInputError(
                    f'{name}: must be a finite number > {low:g}, got {value!r}')
        if not isinstance(max_iterations, int) or max_iterations < 1:
            raise StaticsInputError(
                f'max_iterations: must be an integer >= 1, got {max_iterations!r}')
        if model == 'discrete' and robot.vertebra_positions.size == 0:
            raise StaticsInputError(vertebrae_required('discrete statics'))
        self.robot, self.model, self.world = robot, model, world
        self._contact = (no_contact() if world is None
                         else world.contact(robot.contact_envelope))
        if world is not None:
            # the continuous models touch with the rod only: their discs cannot be inside
            check_start_clear(world, self._contact, robot, discs=model == 'discrete')
        self.constitutive, self.tolerance, self.max_iterations = (constitutive, float(tolerance),
                                                                  max_iterations)
        self.tendon_names = robot.tendon_names
        self.n_tendons = len(robot.tendons)
        self.Kse, self.Kbt = stiffness_matrices(robot.rod, shear_coefficient)
        # heavier, a cold solve starts from the unloaded rod (_solve)
        self.gravity_load = gravity_load(robot)
        self._max_tensions = robot.max_tensions
        self.hole_functions = routing_functions(robot, routing)
        self.set_tip_load(robot.tip_load.force, robot.tip_load.moment)
        # the rod within reach of an obstacle gets the contact step, the rest the model's
        self.contact_zones = (
            reach_zones(world, self._contact, robot.base.position, robot.rod.length)
            if contact_zones is None and world is not None and contact_step < step
            else [(float(a), float(b)) for a, b in contact_zones or ()])
        self._build(float(step), breaks, float(contact_step))
        nt = self.n_tendons
        ny = 18 if model == 'discrete' else 18 + nt
        rows = self._arc.size
        self._modes = {kernels.TENSION: _ModeState(6, ny, nt, rows),
                       kernels.DISPLACEMENT: _ModeState(6 + nt, ny, nt, rows)}
        # the kernels take the input mode per tendon
        self._tendon_modes = {kernels.TENSION: np.full(nt, kernels.TENSION),
                              kernels.DISPLACEMENT: np.full(nt, kernels.DISPLACEMENT)}
        self._traj = np.zeros((rows, ny))
        self._tau, self._lengths, self._empty = np.zeros(nt), np.zeros(nt), np.zeros(nt)
        self._info = np.zeros(4)

    # ------------------------------------------------------------------ set-up

    def _build(self, step: float, extra_breaks: Sequence[float], contact_step: float) -> None:
        """Segments (:mod:`.grid`), routing samples, point loads and scales (the kernel Plan)."""
        robot, rod, L = self.robot, self.robot.rod, self.robot.rod.length
        nt = self.n_tendons
        vertebrae = robot.vertebra_positions
        ends = np.array([t.end for t in robot.tendons])
        breaks = (list(vertebrae) + [L] + ([] if self.model == 'discrete' else list(ends))
                  + [b for b in extra_breaks if 0.0 < b < L]
                  + ([] if self.model == 'discrete' else
                     [s for zone in self.contact_zones for s in zone if 0.0 < s < L]))
        seg_start, seg_end, seg_n, seg_h, seg_pt, seg_row = shooting_grid(
            breaks, step, contact_step, self.contact_zones)
        nseg = seg_end.size

        def near(a, b):
            return abs(a - b) <= POSITION_TOLERANCE

        active = np.array([[seg_end[k] <= ends[t] + POSITION_TOLERANCE for t in range(nt)]
                           for k in range(nseg)], dtype=np.bool_)
        tendon_ends = np.array([[near(seg_end[k], ends[t]) for t in range(nt)]
                                for k in range(nseg)], dtype=np.bool_)
        vert_index = np.zeros(nseg, dtype=np.int64)
        for j, s in enumerate(vertebrae):
            vert_index[int(np.argmin(np.abs(seg_end - s)))] = j + 1
        end_mass = np.where(vert_index > 0, robot.vertebra_mass, 0.0)
        # the discrete model's discs touch obstacles with their own envelope (continuous
        # models: the rod's only)
        end_disc = np.where((vert_index > 0) & (self.model == 'discrete'), robot.disc_thickness,
                            0.0)
        anchor = np.array([vert_index[k] for t in range(nt)
                           for k in range(nseg) if tendon_ends[k, t]], dtype=np.int64)

        # routing samples at s, s + h/2, ..., s + n h of every segment
        points = np.concatenate([seg_start[k] + seg_h[k] * np.arange(2 * seg_n[k] + 1) / 2.0
                                 for k in range(nseg)])
        points = np.minimum(points, L)
        rt = np.zeros((points.size, nt, 9))
        rest = np.zeros(nt)
        for t in range(nt):
            mask = np.zeros(points.size, dtype=bool)
            for k in range(nseg):
                if active[k, t]:
                    mask[seg_pt[k]:seg_pt[k] + 2 * seg_n[k] + 1] = True
            r, r_s, r_ss = self.hole_functions[t](points[mask])
            rt[mask, t, 0:3] = r.T
            rt[mask, t, 3:6] = r_s.T
            rt[mask, t, 6:9] = r_ss.T
        # hole of each tendon at the base and at each vertebra up to its anchor
        holes = np.zeros((vertebrae.size + 1, nt, 3))
        for t in range(nt):
            s = np.concatenate(([0.0], vertebrae[vertebrae <= ends[t] + POSITION_TOLERANCE]))
            holes[:s.size, t] = self.hole_functions[t](np.minimum(s, ends[t]))[0].T
        if self.model == 'discrete':
            for t in range(nt):
                chords = np.diff(holes[:anchor[t] + 1, t], axis=0)
                chords[:, 2] += np.diff(np.concatenate(([0.0], vertebrae[:anchor[t]])))
                rest[t] = np.linalg.norm(chords, axis=1).sum()
        else:
            # Simpson on the RK4 grid: what the integrator gives for the straight rod
            for t in range(nt):
                for k in range(nseg):
                    if not active[k, t]:
                        continue
                    sl = slice(seg_pt[k], seg_pt[k] + 2 * seg_n[k] + 1)
                    f = np.linalg.norm(rt[sl, t, 3:6] + np.array([0.0, 0.0, 1.0]), axis=1)
                    rest[t] += seg_h[k] / 6.0 * (f[0:-1:2] + 4.0 * f[1::2] + f[2::2]).sum()

        EI = rod.bending_stiffness
        force_scale, moment_scale = EI / L ** 2, EI / L
        # length change per newton of a tendon at zero load (bending + compression +
        # stretch): makes the tension/slack unknown equally sensitive on both sides of 0
        radius2 = np.array([np.mean(np.sum(rt[rt[:, t, 0:3].any(axis=1), t, 0:2] ** 2, axis=1))
                            if rt[:, t, 0:3].any() else 0.0 for t in range(nt)])
        compliance = np.array([t.compliance for t in robot.tendons])
        rest = robot.reference_lengths(rest)
        motor = np.array([t.motor_distance for t in robot.tendons])
        slack = rest * (radius2 / EI + 1.0 / self.Kse[2] + compliance)
        x_scale = np.concatenate(([force_scale] * 3, [moment_scale] * 3, [force_scale] * nt))
        f_scale = np.concatenate(([force_scale] * 3, [moment_scale] * 3, slack * force_scale))
        mat = np.concatenate((self.Kse, self.Kbt, rod.linear_density * robot.gravity,
                              robot.gravity, robot.base.position, np.zeros(3))).astype(float)
        # per segment: steps, first routing sample, first trajectory row, vertebra at its
        # end and at its start (Plan.seg columns)
        seg = np.column_stack((seg_n, seg_pt, seg_row, vert_index,
                               np.concatenate(([0], vert_index[:-1])))).astype(np.int64)
        self._plan = kernels.Plan(
            model=MODELS.index(self.model), law=CONSTITUTIVE_LAWS.index(self.constitutive),
            nt=nt, seg=seg, seg_h=seg_h, rt=rt, active=active, ends=tendon_ends, end_mass=end_mass,
            end_disc=end_disc, ustar=np.zeros((nseg, 3)),
            holes=holes, anchor=anchor, mat=mat, R0=robot.base.rotation.astype(float),
            scale=np.vstack((x_scale, f_scale)),
            tendon=np.vstack((slack, rest, compliance, motor)),
            dyn=Dyn(on=False, coef=np.zeros(DYN_SIZE), Zh=np.zeros((1, Z_SIZE)),
                    Z=np.zeros((1, Z_SIZE)), friction=np.zeros((FR_SIZE, 0)),
                    fw=np.zeros((1, FW_SIZE))),
            nodes=np.zeros(0, dtype=np.int64), node_R=np.zeros((0, 3, 3)),
            node_scale=np.zeros(kernels.NODE_SIZE), contact=self._contact,
            touch=np.ones(nseg, dtype=np.bool_), bay_tol=np.array([kernels.BAY_TOLERANCE]))
        nv = vertebrae.size + 1 if self.model == 'discrete' else 0
        self._bays = kernels.Bays(P=np.zeros((nv, 3)), Q=np.zeros((nv, 3, 3)),
                                  J=np.zeros((nv, 6, 6)), flags=np.zeros((2, nv), dtype=np.bool_))
        self._arc = np.concatenate(([0.0], np.concatenate(
            [seg_start[k] + seg_h[k] * np.arange(1, seg_n[k] + 1) for k in range(nseg)])))
        self._vertebra_rows = np.array([seg_row[k] + seg_n[k] for k in range(nseg)
                                        if vert_index[k] > 0], dtype=np.int64)
        # rows and body-frame holes of each tendon path (base, vertebrae up to the anchor)
        path_rows, path_holes, sizes = [], [], []
        for t in range(nt):
            rows = [0] + [int(r) for r, s in zip(self._vertebra_rows, vertebrae)
                          if s <= ends[t] + POSITION_TOLERANCE]
            s = [0.0] + [s for s in vertebrae if s <= ends[t] + POSITION_TOLERANCE]
            if not near(s[-1], ends[t]):
                k = int(np.argmin(np.abs(seg_end - ends[t])))
                rows.append(int(seg_row[k] + seg_n[k]))
                s.append(ends[t])
            path_rows += rows
            path_holes.append(self.hole_functions[t](np.array(s))[0].T)
            sizes.append(len(rows))
        self._path_rows = np.array(path_rows)
        self._path_holes = np.concatenate(path_holes)
        ends = np.cumsum(sizes)
        self._path_slices = list(zip(ends - sizes, ends))
        self._frame_rows = np.concatenate(([self._arc.size - 1], self._vertebra_rows))
        self.rest_lengths = self._plan.tendon[kernels.TENDON_REST].copy()
        self.arc_lengths = self._arc.copy()
        self._slack_scale = slack

    # ------------------------------------------------------------------ public API

    def reset(self) -> None:
        """Forget the warm-start memory: the next solve starts cold."""
        for state in self._modes.values():
            self._forget(state)

    def compile_kernels(self) -> None:
        """
        Compile the kernels this solver's solves run, or load them from numba's cache.

        One Newton iteration of each mode on the unloaded robot from the straight guess, the
        result's shape and contacts, then :meth:`reset`: a solve timed after it times no
        compilation, and it costs a fraction of a solve (a command that solved twice to time
        the second doubled a contact solve of seconds).
        """
        zero, tip = np.zeros(self.n_tendons), np.zeros_like(self._tip_load)
        self._totals = np.zeros(2)
        for mode, state in self._modes.items():
            self._cold_guess(zero, tip, state.x)
            self._run(mode, state, zero, zero, tip, iterations=1)
        self.shape(self._traj)
        self.contacts(self._traj)
        self.reset()

    def memory(self) -> dict:
        """
        Return a copy of the warm-start memory: what the next solve of each mode starts from.

        :meth:`recall` gives it to another solver of the same robot (the same tendons and
        grid) with slightly other parameter values: the finite differences of a calibration
        then start at the solution they perturb and take a few residual evaluations.
        """
        return {mode: (state.solved, state.x_last.copy(), state.J_last.copy(), state.u.copy(),
                       state.S.copy()) for mode, state in self._modes.items()}

    def recall(self, memory: dict) -> None:
        """Start the next solves from ``memory`` (:meth:`memory` of a solver of this robot)."""
        for mode, (solved, x, J, u, S) in memory.items():
            state = self._modes[mode]
            if state.x_last.shape != x.shape or state.S.shape != S.shape:
                raise StaticsInputError('memory: of a solver of another robot (other tendons)')
            state.solved = solved
            state.x_last[:], state.J_last[:], state.u[:], state.S[:] = x, J, u, S

    def _forget(self, state: _ModeState) -> None:
        state.solved = False
        state.jac_ok[0] = False
        # as a fresh solver's: the contact continuation from the unloaded rod, which needs no
        # Newton iteration, starts from the Jacobian in J (it once took the last solve's)
        state.J[:] = 0.0
        state.S[:] = 0.0
        self._bays.flags[:] = False

    def solve_tensions(self, tensions, tip_force=None, tip_moment=None) -> StaticsResult:
        """
        Equilibrium for given tendon tensions.

        Parameters
        ----------
        tensions : sequence (n,) or mapping {name: N}
            N, finite, 0 <= tension <= max_tension; a mapping leaves unnamed tendons at 0.
        tip_force, tip_moment : (3,), optional
            N and N m in the world frame; default ``robot.tip_load`` or what
            :meth:`set_tip_load` set.

        Raises
        ------
        StaticsInputError, ConvergenceError

        """
        start = time.perf_counter()
        tau = self.tendon_vector(tensions, 'tensions', tension=True)
        tip = self._tip(tip_force, tip_moment)
        return self._solve(kernels.TENSION, tau, self._empty, tip, start)

    def solve_tension_steps(self, steps: np.ndarray, full: bool = True):
        """
        Equilibrium for tendons that carry the steps of a tension, each of either sign.

        The path-dependent statics (:mod:`~tendon_robot_sim.models.rod.statics.stick_slip`)
        cuts a tendon whose tension changes along its path (friction) into pieces that share
        its holes and end where the tension changes; the loads are linear in the tensions, so
        the piece ending at break k carries the step T_k - T_(k+1), negative where the tension
        rises towards the anchor. ``steps`` (n,) [N], finite; the tip load of
        :meth:`set_tip_load`. Returns the StaticsResult; ``full`` False: a function that builds
        it until the next solve (the path lengths and trajectory are in :meth:`kernel_buffers`).
        """
        start = time.perf_counter()
        steps = np.asarray(steps, dtype=float)
        if steps.shape != (self.n_tendons,) or not np.all(np.isfinite(steps)):
            raise StaticsInputError(f'steps: must be {self.n_tendons} finite numbers [N]')
        return self._solve(kernels.TENSION, steps, self._empty, self._tip(None, None), start, full)

    def solve_displacements(self, displacements, tip_force=None, tip_moment=None
                            ) -> StaticsResult:
        """
        Equilibrium for given tendon displacements (the tensions are solved for).

        Parameters
        ----------
        displacements : sequence (n,) or mapping {name: m}
            Length of each tendon pulled in past the base [m], positive when pulling;
            a negative value pushes tendon out, which goes slack (tension 0).
        tip_force, tip_moment : (3,), optional
            N and N m in the world frame; default ``robot.tip_load`` or what
            :meth:`set_tip_load` set.

        """
        start = time.perf_counter()
        q = self.tendon_vector(displacements, 'displacements', tension=False)
        tip = self._tip(tip_force, tip_moment)
        return self._solve(kernels.DISPLACEMENT, self._empty, q, tip, start)

    # ------------------------------------------------------------------ internals

    def tendon_vector(self, values, field: str, tension: bool) -> np.ndarray:
        """
        Return per-tendon ``values`` (a sequence, or a mapping by name: others 0) as (n,).

        Tensions (``tension``) within [0, max_tension] N; StaticsInputError names ``field``.
        """
        return tendon_values(values, field, self.tendon_names,
                             self._max_tensions if tension else None)

    def set_tip_load(self, force, moment) -> None:
        """
        Replace ``robot.tip_load`` as the default tip force and moment of later solves.

        Force [N] and moment [N m] in the world frame, e.g. from a run-time ``tip/wrench``.
        """
        self._tip_load = np.concatenate((vector3(force, 'tip_force'),
                                         vector3(moment, 'tip_moment')))

    def _tip(self, force, moment) -> np.ndarray:
        tip = self._tip_load.copy()
        if force is not None:
            tip[0:3] = vector3(force, 'tip_force')
        if moment is not None:
            tip[3:6] = vector3(moment, 'tip_moment')
        return tip

    def _cold_guess(self, tau: np.ndarray, tip: np.ndarray, x: np.ndarray) -> None:
        """
        Write the scaled base wrench x[0:6] of the straight robot carrying its loads.

        The tip conditions of R&W Eqs. 18-20 moved to the base: n(0) = external forces - sum
        tau d3, m(0) = their moments about the base - sum tau r_i x d3.
        """
        robot, pl = self.robot, self._plan
        L = robot.rod.length
        R0 = pl.R0
        d3 = R0[:, 2]
        rod_weight = robot.rod.linear_density * L * robot.gravity
        vert_weight = robot.vertebra_mass * robot.gravity
        force = tip[0:3] + rod_weight + vert_weight * robot.vertebra_positions.size
        moment = (tip[3:6] + np.cross(L * d3, tip[0:3]) + np.cross(0.5 * L * d3, rod_weight)
                  + sum(np.cross(s * d3, vert_weight) for s in robot.vertebra_positions))
        x[0:6] = np.concatenate((R0.T @ force, R0.T @ moment)) / pl.scale[0, 0:6]
        self._add_tendon_guess(tau, x)

    def _add_tendon_guess(self, tau: np.ndarray, x: np.ndarray) -> None:
        """Add to the scaled base wrench x[0:6] what tensions tau add on a straight robot."""
        pull = np.array([0.0, 0.0, 1.0])
        x[0:3] -= tau.sum() * pull / self._plan.scale[0, 0:3]
        x[3:6] -= (sum(T * np.cross(self._plan.holes[0, t], pull) for t, T in enumerate(tau))
                   / self._plan.scale[0, 3:6])

    def _natural_state(self, tip: np.ndarray):
        """
        Solve the robot with slack tendons (zero tension) and tip load ``tip``.

        Uses the tension mode's buffers but not its warm-start memory. Returns the
        displacements at which each tendon just becomes taut, l* - l, and the scaled base
        wrench; None if that solve fails.
        """
        state = self._modes[kernels.TENSION]
        zero = np.zeros(self.n_tendons)
        for steps in (1,) + CONTINUATION_STEPS:
            state.jac_ok[0] = False
            self._cold_guess(zero, tip / steps, state.x)
            if all(self._run(kernels.TENSION, state, zero, self._empty, tip * k / steps)
                   for k in range(1, steps + 1)):
                return self._plan.tendon[kernels.TENDON_REST] - self._lengths, state.x[0:6].copy()
        return None

    def _run(self, mode: int, state: _ModeState, tau_in, q, tip, iterations=10**9,
             reach=math.inf) -> bool:
        if self.world is not None:
            # the discrete model's bays start straight, not from the poses the last residual
            # evaluation left (continuation's docstring: why); without obstacles the
            # memory was not seen to mislead and halves a warm solve's time
            self._bays.flags[:] = False
        kernels.solve(self._plan, self._tendon_modes[mode], tau_in, q, tip, state.x, state.J,
                      state.jac_ok, self.tolerance, min(iterations, self.max_iterations), reach,
                      self._traj, self._tau, self._lengths, self._bays, state.work, self._info)
        self._totals += self._info[1:3]
        return self._info[3] == kernels.CONVERGED

    def _solve(self, mode: int, tau_in, q, tip, start: float, full: bool = True):
        """
        Solve from a warm start, a cold start, then by continuation.

        Warm start from the last solution (first with the secant prediction, then without);
        then, without obstacles, :func:`~.continuation.continue_in_equal_steps` (the cold start
        from the straight guess, then equal load steps); last
        :func:`~.continuation.continue_in_load`, from the unloaded rod, gravity scaled too
        (with obstacles, at once; without, first for a robot whose ``gravity_load`` is above
        :data:`~.continuation.HEAVY`). All failed, a discrete solver keeps finer bays, tries again.
        """
        state = self._modes[mode]
        u = np.concatenate((tau_in if mode == kernels.TENSION else q, tip))
        self._totals = np.zeros(2)

        def warm(predict: bool) -> bool:
            state.x[:] = state.x_last + (state.S @ (u - state.u) if predict else 0.0)
            state.J[:] = state.J_last
            state.jac_ok[0] = True
            return self._run(mode, state, tau_in, q, tip, PREDICTED_ITERATIONS if predict else 999)

        if self.world is not None:
            # obstacles: warm along the inputs' line, each step checked for a jump through one
            converged = state.solved and continue_from_last(self, mode, state, tau_in, q, tip)
        else:
            # no prediction (the same inputs again, as a calibration's): the plain start alone
            predicted = np.any(state.S @ (u - state.u) != 0.0)
            converged = state.solved and ((predicted and warm(True)) or warm(False))
        if converged:
            du = u - state.u
            if du @ du > 0.0:
                dx = state.x - state.x_last
                state.S += np.outer(dx - state.S @ du, du) / (du @ du)

        def from_unloaded() -> bool:
            self._forget(state)
            return continue_in_load(self, mode, state, tau_in, q, tip)

        # from the unloaded rod, gravity too: with obstacles at once (the straight guess sinks
        # into them); without, first for a heavy soft rod (gravity load above HEAVY), whose rest
        # shape is out of reach of the straight guess at full weight and from which Newton can
        # converge on an unstable root, the rod curled up over its base; else last
        unloaded_first = self.world is not None or self.gravity_load > HEAVY

        def cold() -> tuple[bool, tuple | None]:
            # progress: (steps solved, steps) of the equal load steps' last attempt
            converged, progress = unloaded_first and from_unloaded(), None
            if not converged and self.world is None:
                converged, progress = continue_in_equal_steps(self, mode, state, tau_in, q, tip)
            return converged or (not unloaded_first and from_unloaded()), progress

        converged, progress = (True, None) if converged else cold()
        fine = kernels.BAY_TOLERANCE_FINE
        if not converged and self.model == 'discrete' and self._plan.bay_tol[0] > fine:
            # the bays' noise in the residual (_kernels.BAY_TOLERANCE): finer, kept for later
            self._plan.bay_tol[0] = fine
            converged, progress = cold()
        if not converged:
            state.solved = False
            raise self._not_converged(mode, tau_in if mode == kernels.TENSION else q, progress)
        state.solved = True
        state.u[:] = u
        state.x_last[:] = state.x
        state.J_last[:] = state.J
        args = (mode, q, state.x, float(self._info[0]), *map(int, self._totals[:2]), start)
        return self._result(*args) if full else (lambda: self._result(*args))

    def _not_converged(self, mode: int, inputs, progress: tuple | None) -> ConvergenceError:
        """Return the error of a failed solve: its ``inputs``, its continuation's ``progress``."""
        residual, status, iterations = self._info[0], self._info[3], self._totals[0]
        # the iterations of every attempt: with a world, the last is a continuation step
        # refused after one iteration (continuation.REACH); a last continuation that
        # converged on a step short of the inputs has that step's residual, none at them
        reason = {kernels.MAX_ITERATIONS: 'did not converge in %d Newton iterations in all'
                  % iterations, kernels.CONVERGED: 'stopped short of the inputs'}.get(
                      status, 'failed (non-finite state or no descent direction)')
        residual = math.inf if status == kernels.CONVERGED else residual
        name, unit = ('tensions', 'N') if mode == kernels.TENSION else ('displacements', 'm')
        steps = ('' if progress is None else
                 '; the continuation solved %d of its %d equal steps to them' % progress)
        return ConvergenceError(
            f'{self.model} statics {reason}, also with continuation: scaled residual '
            f'{residual:.3g} (tolerance {self.tolerance:g}); inputs may be out of reach '
            f'({name} [{", ".join(f"{v:.4g}" for v in inputs)}] {unit}{steps})',
            residual, int(iterations))

    def kernel_plan(self, **fields) -> kernels.Plan:
        """
        Return this solver's kernel plan (grid, routing, scales) with ``fields`` replaced.

        The implicit dynamics (:mod:`tendon_robot_sim.models.rod.dynamics.implicit`) solves its
        time steps with this solver's kernels on the same grid: ``dyn``, and for multiple
        shooting ``nodes``, ``node_R``, ``node_scale`` (see ``_kernels.Plan``).
        """
        return self._plan._replace(**fields)

    def kernel_buffers(self, tension: bool) -> tuple:
        """
        Return the kernels' inputs of one input mode besides the plan.

        The tendon modes, the tip load (force, moment; world frame), traj, tau, lengths,
        bays and work buffers: :mod:`~tendon_robot_sim.models.rod.statics.analysis.sensitivity`
        evaluates residuals with them.
        """
        mode = kernels.TENSION if tension else kernels.DISPLACEMENT
        return (self._tendon_modes[mode], self._tip(None, None), self._traj, self._tau,
                self._lengths, self._bays, self._modes[mode].work)

    def shape(self, traj: np.ndarray) -> Shape:
        """
        Poses of a solution trajectory of this solver's grid (rows of p, R, ...).

        Also of the implicit dynamics (:mod:`~tendon_robot_sim.models.rod.dynamics.implicit`):
        the same grid, more state columns.
        """
        centerline = traj[:, 0:3].T.copy()
        rotations = traj[:, 3:12].reshape(-1, 3, 3).copy()
        rows = self._vertebra_rows
        quats = np.empty((self._frame_rows.size, 4))     # tip, then vertebrae
        points = np.empty((3, self._path_rows.size))     # all tendon paths
        poses(traj, self._frame_rows, self._path_rows, self._path_holes, quats, points)
        return Shape(centerline=centerline, rotations=rotations, tip_orientation=quats[0],
                     vertebra_positions=centerline[:, rows], vertebra_rotations=rotations[rows],
                     vertebra_orientations=quats[1:],
                     tendon_paths=tuple(points[:, a:b] for a, b in self._path_slices))

    def _result(self, mode, q, x, residual, iterations, evaluations, start) -> StaticsResult:
        pl = self._plan
        shape = self.shape(self._traj)
        tau, lengths = self._tau.copy(), self._lengths.copy()
        x_scale = pl.scale[0]
        slack_scale, rest, compliance, motor = pl.tendon
        if mode == kernels.TENSION:
            slack = np.zeros_like(tau)
            displacements = tendon_displacements(rest, lengths, tau, compliance, motor)
        else:
            slack = np.maximum(-x[6:], 0.0) * x_scale[6:] * slack_scale
            displacements = q.copy()
        return StaticsResult(
            model=self.model, arc_lengths=self._arc.copy(), centerline=shape.centerline,
            rotations=shape.rotations, tip_position=shape.centerline[:, -1].copy(),
            tip_rotation=shape.rotations[-1].copy(), tip_orientation=shape.tip_orientation,
            vertebra_positions=shape.vertebra_positions,
            vertebra_rotations=shape.vertebra_rotations,
            vertebra_orientations=shape.vertebra_orientations, tendon_paths=shape.tendon_paths,
            base_force=pl.R0 @ (x[0:3] * x_scale[0:3]),
            base_moment=pl.R0 @ (x[3:6] * x_scale[3:6]),
            tensions=tau, tendon_lengths=lengths, tendon_displacements=displacements,
            slack=slack, converged=True, residual=residual, iterations=iterations,
            evaluations=evaluations, solve_time=time.perf_counter() - start,
            contacts=self.contacts(self._traj))

    def gaps(self, traj: np.ndarray) -> np.ndarray:
        """Return the smallest gap [m] of the rod's envelope to each obstacle, (obstacles,)."""
        gaps = probe_points(self._contact, traj[:, 0:3],
                            np.full(len(traj), self._contact.radius[0]))[0]
        return gaps.min(axis=1)

    def contacts(self, traj: np.ndarray) -> tuple[ContactPoint, ...] | None:
        """Return the contacts of a trajectory (rows p, R, ...) of this grid; None: no world."""
        if self.world is None:
            return None
        discs = None
        if self.model == 'discrete':
            rows = self._vertebra_rows
            discs = (self._arc[rows], traj[rows, 0:3], self.robot.disc_thickness)
        return tuple(rod_contacts(self.world.names, self._contact, self._arc, traj[:, 0:3],
                                  traj[:, [5, 8, 11]], discs))
