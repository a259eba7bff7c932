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
The implicit dynamics' grid along the rod: where its shooting restarts, where it is fine.

**Shooting nodes.** J. Till, V. Aloi, D. C. Rucker, "Real-time dynamics of soft and continuum
robots based on Cosserat rod models" (IJRR 2019) shoot each time step's boundary value problem
from the base; at the small steps a stiff rod needs, that loses Newton's basin (see
NODE_SPACING), so :class:`~tendon_robot_sim.models.rod.dynamics.implicit.ImplicitSimulator`
restarts the integration from unknowns at the arc lengths of :func:`shooting_nodes`.

**Contact zones.** A contact patch needs the statics' ``CONTACT_STEP`` (1 mm) of the RK4
grid; the rest of the rod runs at the contact-free step. :class:`ContactZones` (a base class of
the simulator) keeps the fine step in *contact zones*, the arc lengths at which the rod's last
pose comes within the penalty's reach (CUTOFF distance scales) plus 2 ZONE_MARGIN of an
obstacle:

* at rest (every start): the static equilibrium is solved on the grid of every arc length that
  can reach an obstacle at all (:func:`~tendon_robot_sim.models.contact.reach.first_reach`),
  and again on the grid of its zones;
* every converged time step is checked (``_implicit_kernels.near_coarse``): where a coarse RK4
  step of the rod comes within the penalty's reach plus ZONE_MARGIN of an obstacle (sampled at
  WATCH_POINTS + 1 points per step, the bound allowing for the rod between them), the step is
  refused, the zones grow by that step and by the pose's own zones, and the step is taken again
  on the new grid. So no accepted step has a contact on a coarse step;
* every COARSEN_PERIOD of simulated time the zones of the last pose are compared with the
  grid's; a grid of RK4 steps COARSEN_SHARE fewer replaces it.

**Smaller steps.** A time step's equations grow and decay along s faster as dt shrinks
(:func:`wave_rate`), so a halved step (adaptive dt, retries of a failed step) runs on the grid
of its own dt (``ContactZones._grid_for``, its RK4 step from the simulator's ``grid_step``),
built when first needed and kept, with the same contact zones; the user's dt keeps its grid.

A change of grid carries the BDF-alpha history over (:func:`transfer`): the history of every
RK4 stage (``Dyn.Zh``, z and z_t of the last step) and the last trajectory. Segments the new
grid shares with the old one are copied; the others (where a zone ends: ZONE_MARGIN and more
from any contact; everywhere on a finer grid of a smaller dt) are interpolated along the rod by
cubic splines through the old RK4 stages, between the point loads (discs, tendon ends), where
the rod's state is smooth; a segment's end row, which holds the state at its point loads, is
copied from the old grid's at the same arc length. The shooting
unknowns (base wrench, shooting nodes' states) do not depend on the grid.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from tendon_robot_sim.models.contact._kernels import CUTOFF, LAW_DELTA
from tendon_robot_sim.models.contact.report import probe_points
from tendon_robot_sim.models.cosserat import stiffness_matrices
from tendon_robot_sim.models.description import POSITION_TOLERANCE
from tendon_robot_sim.models.rod.dynamics import _implicit_kernels as stepper
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.tendon_robot import Robot, without_friction

# Multiple shooting: a time step's BVP grows and decays like exp(+-lambda s), lambda =
# (rho A c0^2 / (E I))^(1/4) / sqrt(2) for bending, so one shooting over the whole rod loses
# exp(lambda L) in accuracy and, far sooner, Newton's method its basin: the nitinol robot at
# dt = 2 ms has lambda L ~ 7. The integration restarts from unknowns at nodes no more than
# NODE_SPACING / lambda apart.
NODE_SPACING = 3.0


def bending_wavenumber(robot: Robot, dt: float, alpha: float) -> float:
    """Return lambda [1/m] of a time step of ``dt`` s (see NODE_SPACING), discs' mass spread."""
    rod = robot.rod
    c0 = stepper.bdf_coefficients(dt, alpha)[0]
    mass = rod.linear_density + robot.vertebra_mass * robot.vertebra_positions.size / rod.length
    return (mass * c0 * c0 / rod.bending_stiffness) ** 0.25 / math.sqrt(2.0)


def wave_rate(robot: Robot, dt: float, alpha: float) -> float:
    """
    Return the fastest rate [1/m] at which a time step of ``dt`` s grows or decays along s.

    The larger of the bending wavenumber lambda (:func:`bending_wavenumber`) and c0 / c, c the
    slowest of the rod's shear, axial and torsion wave speeds (sqrt(Kse_i / (rho A)),
    sqrt(E / rho), sqrt(G / rho)): their rates grow like 1 / dt, lambda's like dt^-1/2, so
    on a soft rod they take over at small dt (the silicone default robot: 141 against
    lambda = 151 1/m at dt = 0.125 ms, 282 against 214 at 62.5 us). The discs' inertia acts
    at points, not along the RK4 steps between them: the rod's own.
    """
    rod = robot.rod
    c0 = stepper.bdf_coefficients(dt, alpha)[0]
    kse = stiffness_matrices(rod)[0]
    slowness = math.sqrt(max(rod.linear_density / kse.min(), rod.density / rod.shear_modulus,
                             rod.density / rod.youngs_modulus))
    return max(bending_wavenumber(robot, dt, alpha), c0 * slowness)


def shooting_nodes(robot: Robot, model: str, dt: float, alpha: float) -> list[float]:
    """
    Arc lengths [m] where the implicit step restarts its integration (multiple shooting).

    Intervals of at most NODE_SPACING / lambda (see NODE_SPACING), with the discs' mass
    spread over the rod; the discrete model puts its nodes on discs (whose bays its tendons
    span), continuous models anywhere.
    """
    rod = robot.rod
    intervals = math.ceil(bending_wavenumber(robot, dt, alpha) * rod.length / NODE_SPACING)
    targets = rod.length * np.arange(1, intervals) / intervals
    if model != 'discrete':
        return targets.tolist()
    # the vertebra at which each bay starts (not the last, at the tip)
    discs = robot.vertebra_positions[robot.vertebra_positions < rod.length - 1e-9]
    if not discs.size:
        return []
    return sorted({float(discs[np.argmin(np.abs(discs - s))]) for s in targets})


# How near [m] (beyond the penalty's reach) the rod may come to an obstacle on a coarse step
# before its grid is refined there; zones are built for twice that, so a grid lasts until the
# rod has moved ZONE_MARGIN towards an obstacle (a tip swinging at 1 m/s: 0.5 ms). A smaller
# margin: smaller zones at rest; a larger one: fewer grid changes (about 3.5 ms each) while a
# contact slides
ZONE_MARGIN = 0.0005
# Zone ends are rounded outwards to multiples of this arc length [m]
ZONE_SNAP = 0.002
# Simulated time [s] between checks whether the zones of the last pose need fewer RK4 steps,
# and the share of the steps a new grid must save
COARSEN_PERIOD = 0.05
COARSEN_SHARE = 0.2
# Layouts of the grid kept for reuse (a contact sliding to and fro)
KEPT_LAYOUTS = 8


def merge(zones) -> list[tuple[float, float]]:
    """Return the union of arc-length intervals (a, b) [m], sorted and disjoint."""
    merged = []
    for a, b in sorted(zones):
        if merged and a <= merged[-1][1] + POSITION_TOLERANCE:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def hermite(s: np.ndarray, traj: np.ndarray, spacing: float) -> tuple[np.ndarray, np.ndarray]:
    """
    Points [m] of the rod of a trajectory (rows p, R at arc lengths s) at most ``spacing`` apart.

    On the cubic Hermite curve through each RK4 step's end positions and tangents d3 (the
    stretch left out, as ``_implicit_kernels.near_coarse`` does). Returns (arc lengths, points).
    """
    h = np.diff(s)
    m = np.maximum(1, np.ceil(h / spacing - 1e-9)).astype(int)
    step = np.repeat(np.arange(h.size), m)
    t = np.concatenate([np.arange(k) / k for k in m])
    p0, p1 = traj[step, 0:3], traj[step + 1, 0:3]
    d0, d1 = traj[step][:, [5, 8, 11]], traj[step + 1][:, [5, 8, 11]]
    t = t[:, None]
    points = ((1 + 2 * t) * (1 - t) ** 2 * p0 + t * t * (3 - 2 * t) * p1
              + h[step, None] * (t * (1 - t) ** 2 * d0 + t * t * (t - 1) * d1))
    return (np.concatenate((s[step] + t[:, 0] * h[step], s[-1:])),
            np.vstack((points, traj[-1:, 0:3])))


class ContactZones:
    """
    The grid near contact of :class:`ImplicitSimulator` (a base class; module docstring).

    The simulator calls :meth:`_setup_grid` with its grid's parameters and provides the
    buffers' sizes (``_ny``, ``n_tendons``), ``_unknowns``, ``_bays`` and the history the
    step control keeps; this class sets the grid's attributes (``statics``, ``steps``,
    ``_plan``, ``_static_plan``, ``_single_plan``, ``_node_rows``, ``_grid``, ``_traj``,
    ``_good``, ``_Zold``, ``_Zt``, ``_bays``). Grids are kept per contact zones and per RK4
    step (the user's dt's and those of halved steps: :meth:`_grid_for`).
    """

    def _setup_grid(self, robot, model, step, contact_step, tolerance, node_positions, world,
                    make_plan, grid_step):
        """
        Build the first grid: ``contact_step`` where the rod can reach an obstacle (None: none).

        ``make_plan(statics, rows, nodes)`` returns the time step's kernel plan of a statics
        solver, with ``rows`` history rows and the shooting nodes at segments ``nodes``;
        ``grid_step(dt)`` the longest RK4 step [m] valid for time steps of dt s (the grid of
        a smaller step than the user's: :meth:`_grid_for`).
        """
        self._grid_args = {'robot': without_friction(robot), 'model': model, 'step': step,
                           'contact_step': contact_step, 'tolerance': tolerance,
                           'breaks': node_positions if model != 'discrete' else (),
                           'world': world}
        self._node_positions = node_positions
        self._make_plan = make_plan
        self._grid_step = grid_step
        self.adaptive_grid = (contact_step is not None and world is not None
                              and bool(world.obstacles) and contact_step < step)
        self._layouts = {}
        self._fine_h = (contact_step or step) * (1.0 + 1e-9)     # the longest fine RK4 step
        self._reach_layout = self._layout(None, step)
        self._use_layout(self._reach_layout)
        self._zones_checked = 0.0
        self.regrids = 0          # grid changes since the start (t = 0)

    @property
    def contact_zones(self) -> list[tuple[float, float]]:
        """Arc-length intervals [m] of the grid's contact step now."""
        return list(self.statics.contact_zones)

    # ------------------------------------------------------------------ layouts

    def _layout(self, zones, step=None):
        """
        Return the grid of contact ``zones`` (None: where the rod can reach an obstacle).

        ``step``: its longest RK4 step [m], by default the present grid's (a smaller dt's:
        :meth:`_grid_for`).
        """
        step = self._layout_now.step if step is None else step
        key = (None if zones is None else tuple(zones), step)
        if key in self._layouts:
            return self._layouts[key]
        args = self._grid_args
        statics = StaticsSolver(**{**args, 'step': step, 'contact_step': None if args[
            'contact_step'] is None else min(args['contact_step'], step)}, contact_zones=zones)
        seg = statics.kernel_plan().seg
        starts = statics.arc_lengths[seg[:, kernels.SEG_ROW]]
        nodes = np.array([int(np.argmin(np.abs(starts - s))) for s in self._node_positions],
                         dtype=np.int64)
        rows = int(4 * seg[:, kernels.SEG_N].sum() + seg.shape[0])
        plans = [self._make_plan(statics, rows, nodes) for _ in range(2)]
        plans.append(self._make_plan(statics, rows, nodes[:0]))
        if self.adaptive_grid:
            # the time steps leave the world out of the coarse steps: each step is checked
            # there afterwards (near_coarse), and the statics is not
            plans[0] = plans[0]._replace(touch=plans[0].seg_h <= self._fine_h)
        grid = statics.arc_lengths.size
        old = getattr(self, '_layout_now', None)
        if old is not None:
            # the same tendons' reference lengths on every grid (Simpson's rule on each
            # differs by its error), the same memory of the discrete model's bays
            for plan in plans:
                plan.tendon[kernels.TENDON_REST] = old.plan.tendon[kernels.TENDON_REST]
        bays = ([old.bays[id(p)] for p in (old.plan, old.static_plan, old.single_plan)]
                if old is not None else [self._new_bays() for _ in plans])
        z_size = plans[0].dyn.Zh.shape[1]
        watch, reach = self._watch(statics)
        layout = SimpleNamespace(
            statics=statics, steps=int(seg[:, kernels.SEG_N].sum()), plan=plans[0],
            static_plan=plans[1], single_plan=plans[2], node_rows=seg[nodes, kernels.SEG_ROW],
            zones=zones, step=step,
            grid=grid, traj=np.zeros((grid, self._ny)), good=np.zeros((grid, self._ny)),
            Zold=np.zeros((rows, z_size)), Zt=np.zeros((rows, z_size)),
            bays={id(p): b for p, b in zip(plans, bays)}, watch=watch, reach=reach)
        if len(self._layouts) >= KEPT_LAYOUTS:
            # the oldest, but never the user's dt's grid without zones (every run returns to
            # it) nor the one in use; the others are built again when needed
            keep = {id(getattr(self, name, None)) for name in ('_reach_layout', '_layout_now')}
            self._layouts.pop(next((k for k, kept in self._layouts.items()
                                    if id(kept) not in keep), None), None)
        self._layouts[key] = layout
        return layout

    def _use_layout(self, layout) -> None:
        """Make ``layout`` the simulator's grid (its arrays, not copies)."""
        self._layout_now = layout
        self.statics, self.steps = layout.statics, layout.steps
        self._plan, self._static_plan = layout.plan, layout.static_plan
        self._single_plan, self._node_rows = layout.single_plan, layout.node_rows
        self._grid, self._traj, self._good = layout.grid, layout.traj, layout.good
        self._Zold, self._Zt, self._bays = layout.Zold, layout.Zt, layout.bays

    def _watch(self, statics):
        """Return the coarse RK4 steps of a grid (first rows), their lengths and nearness [m]."""
        if statics is None or not self.adaptive_grid:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 2))
        plan = statics.kernel_plan()
        seg = plan.seg
        rows = [seg[k, kernels.SEG_ROW] + np.arange(seg[k, kernels.SEG_N])
                for k in range(seg.shape[0]) if plan.seg_h[k] > self._fine_h]
        rows = np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
        h = np.diff(statics.arc_lengths)[rows]
        # the rod between two samples is within (1 + STRETCH) / 2 of their spacing of one
        near = plan.contact.radius[0] + ZONE_MARGIN + 0.55 * h / stepper.WATCH_POINTS
        return rows, np.column_stack((h, near))

    def _unknowns_work(self, unknowns):
        """Return ``unknowns`` with work buffers of this grid's trajectory rows."""
        if unknowns.work.traj.shape[0] != self._grid:
            unknowns.work = unknowns.work._replace(traj=np.zeros((self._grid, self._ny)))
        return unknowns

    # ------------------------------------------------------------------ zones

    def _zones_near(self, traj: np.ndarray) -> list[tuple[float, float]]:
        """Return the contact zones of a trajectory of this grid (the module docstring)."""
        statics = self.statics
        contact = statics._contact
        spacing = self._grid_args['contact_step']
        s, points = hermite(statics.arc_lengths, traj, spacing)
        gaps = probe_points(contact, points, np.full(len(points), contact.radius[0]))[0]
        coarse = self._layout_now.step
        extra = (2.0 * ZONE_MARGIN + 0.55 * coarse / stepper.WATCH_POINTS + 0.55 * spacing)
        near = np.any(gaps < (CUTOFF * contact.law[:, LAW_DELTA] + extra)[:, None], axis=0)
        return self._snapped([(a - spacing, a + spacing) for a in s[near]])

    def _snapped(self, zones) -> list[tuple[float, float]]:
        """Zones rounded outwards to ZONE_SNAP, within the rod, merged."""
        length = self.robot.rod.length
        return merge((max(0.0, math.floor(a / ZONE_SNAP + 1e-9) * ZONE_SNAP),
                      min(length, math.ceil(b / ZONE_SNAP - 1e-9) * ZONE_SNAP))
                     for a, b in zones)

    def _steps_of(self, zones) -> int:
        """RK4 steps of a grid of ``zones`` (an estimate: the fine and coarse lengths)."""
        fine = sum(b - a for a, b in zones)
        args = self._grid_args
        return (math.ceil(fine / args['contact_step'])
                + math.ceil((self.robot.rod.length - fine) / self._layout_now.step))

    # ------------------------------------------------------------------ changes

    def place_at_rest(self) -> None:
        """Put the robot at rest (StaticEquilibrium) on the grid of its contact zones."""
        if self._layout_now is not self._reach_layout:
            # the grid of the user's dt (a smaller step's may be in use)
            memory = self.statics.memory()
            self._use_layout(self._reach_layout)
            self.statics.recall(memory)
        super().place_at_rest()
        if not self.adaptive_grid:
            return
        layout = self._layout(self._zones_near(self._good))
        if layout is not self._reach_layout:
            layout.statics.recall(self.statics.memory())
            self._use_layout(layout)
            super().place_at_rest()
        self._zones_checked = 0.0
        self.regrids = 0

    def _grid_for(self, dt: float) -> None:
        """
        Move to the grid valid for time steps of ``dt`` s, the history carried over.

        The grid of the user's dt, or of a smaller step (a halving): RK4 steps of
        ``grid_step(dt)`` at most, the same contact zones. A step's equations grow and decay
        along s faster as dt shrinks (``wave_rate``): on the coarser grid a halved step could
        not be integrated at all.
        """
        old = self._layout_now
        step = min(self._reach_layout.step, self._grid_step(dt))
        if step != old.step:
            self._move_to(self._layout(old.zones, step))

    def _regrid(self, zones) -> None:
        """Move to the grid of ``zones``, the history and last step carried over."""
        self._move_to(self._layout(merge(zones)))

    def _move_to(self, new) -> None:
        """Make ``new`` the grid, the history and last step carried over (:func:`transfer`)."""
        old = self._layout_now
        if new is old:
            return
        new.statics.recall(old.statics.memory())
        old_plan, new_plan = old.plan, new.plan
        transfer(old.statics, new.statics, old.good, new.good, (
            (old_plan.dyn.Zh, new_plan.dyn.Zh), (old.Zold, new.Zold), (old.Zt, new.Zt)))
        new.traj[:] = new.good
        for plan in (new_plan, new.static_plan):
            plan.node_R[:] = old_plan.node_R
        self._use_layout(new)
        self.regrids += 1

    def _advance_grid(self, unknowns, tau_in, q_in, tip, record):
        """
        ``_implicit_kernels.advance`` of the rows, refined where a step comes near the world.

        Returns (steps taken, status, tendon over its limit or -1).
        """
        done, n = 0, tau_in.shape[0]
        while True:
            lay = self._layout_now
            unknowns = self._unknowns_work(unknowns)
            steps, status, which = stepper.advance(
                self._plan, self._modes, self._last, tau_in[done:], q_in[done:], tip[done:],
                unknowns.x, unknowns.xs, unknowns.J, unknowns.jac_ok, self._tolerance,
                self._max_iterations, self._traj, self._scratch[0], self._scratch[1],
                self._bays[id(self._plan)], unknowns.work, self._info, self._bdf, self._Zold,
                self._Zt, self._max_tensions, self._iq, self._good, record[done:], self.stats,
                lay.watch, lay.reach)
            done += steps
            if status != stepper.REGRID:
                break
            # the step near the world on a coarse step: that step and the pose's zones fine
            s = self.statics.arc_lengths
            row = lay.watch[which]
            pad = self._grid_args['contact_step']
            self._regrid(self._snapped(self.contact_zones + self._zones_near(self._good)
                                       + [(s[row] - pad, s[row + 1] + pad)]))
        if status == stepper.DONE and done == n and self.adaptive_grid:
            self._coarsen(done)
        return done, status, which

    def _coarsen(self, done: int) -> None:
        """Every COARSEN_PERIOD: the grid of the last pose's zones, if it saves steps."""
        time = self.time + done * self.dt
        if time - self._zones_checked < COARSEN_PERIOD:
            return
        self._zones_checked = time
        zones = self._zones_near(self._good)
        if self._steps_of(zones) < (1.0 - COARSEN_SHARE) * self._steps_of(self.contact_zones):
            self._regrid(zones)


def _pieces(statics) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """
    Arc length and smooth piece of every history row and trajectory row of a grid.

    Pieces end where point loads act (discs, tendon ends): the rod's state jumps there. A
    segment's rows belong to its piece (its end row holds the state before the point loads);
    a trajectory row to the segment it ends (row 0: the first). Last: whether a history row
    is a segment's end row (the kernels fill only the columns its point loads read).
    """
    plan = statics.kernel_plan()
    seg, h = plan.seg, plan.seg_h
    arc = statics.arc_lengths
    starts = arc[seg[:, kernels.SEG_ROW]]
    hard = np.concatenate((statics.robot.vertebra_positions,
                           [t.end for t in statics.robot.tendons]))
    piece = np.array([np.sum(hard <= a + POSITION_TOLERANCE) for a in starts])
    stage = np.array([0.0, 0.5, 0.5, 1.0])
    z_s, z_piece, t_piece = [], [], [np.zeros(1, dtype=int)]
    for k in range(seg.shape[0]):
        n = seg[k, kernels.SEG_N]
        z_s.append(starts[k] + h[k] * np.concatenate(
            ((np.arange(n)[:, None] + stage).ravel(), [n])))
        z_piece.append(np.full(4 * n + 1, piece[k]))
        t_piece.append(np.full(n, piece[k]))
    z_end = np.concatenate([np.arange(4 * n + 1) == 4 * n for n in seg[:, kernels.SEG_N]])
    return (np.concatenate(z_s), np.concatenate(z_piece), arc, np.concatenate(t_piece), z_end)


def _segments(statics) -> dict:
    """{(start, end, steps): (first history row, first trajectory row)} of a grid."""
    plan = statics.kernel_plan()
    seg = plan.seg
    arc = statics.arc_lengths
    out = {}
    for k in range(seg.shape[0]):
        n, row = int(seg[k, kernels.SEG_N]), int(seg[k, kernels.SEG_ROW])
        out[(round(arc[row], 9), round(arc[row + n], 9), n)] = (4 * row + k, row)
    return out


def _interpolate(s_old, piece_old, values, s_new, piece_new, out, rows) -> None:
    """Write into out[rows] the values at s_new[rows], by cubic splines per piece."""
    # here, not at the top: a run that never changes its grid does not load scipy.linalg
    from scipy.interpolate import CubicSpline
    for p in np.unique(piece_new[rows]):
        where = rows[piece_new[rows] == p]
        mine = piece_old == p
        s, inverse = np.unique(np.round(s_old[mine], 12), return_inverse=True)
        data = np.zeros((s.size, values.shape[1]))
        np.add.at(data, inverse, values[mine])
        data /= np.bincount(inverse)[:, None]
        out[where] = (CubicSpline(s, data, axis=0)(s_new[where]) if s.size > 1
                      else data[0])


def transfer(old, new, good_old, good_new, history) -> None:
    """
    Carry a trajectory and history arrays from the grid of statics ``old`` to ``new``'s.

    ``history``: pairs (old, new) of arrays with a row per history row (Dyn.Zh, z, z_t).
    Segments both grids share are copied, the others interpolated (module docstring); the
    rotations of the trajectory are made orthonormal again.
    """
    z_old, zp_old, t_old, tp_old, end_old = _pieces(old)
    z_new, zp_new, t_new, tp_new, end_new = _pieces(new)
    shared = _segments(old)
    z_rows, t_rows = [], []
    for key, (z_row, t_row) in _segments(new).items():
        n = key[2]
        if key in shared:
            z0, t0 = shared[key]
            for a, b in history:
                b[z_row:z_row + 4 * n + 1] = a[z0:z0 + 4 * n + 1]
            good_new[t_row + 1:t_row + n + 1] = good_old[t0 + 1:t0 + n + 1]
        else:
            z_rows.append(np.arange(z_row, z_row + 4 * n + 1))
            t_rows.append(np.arange(t_row + 1, t_row + n + 1))
    good_new[0] = good_old[0]
    if z_rows:
        z_rows, t_rows = np.concatenate(z_rows), np.concatenate(t_rows)
        # the stages along the rod are smooth; an end row holds the state at a point load
        # (the velocities of a disc, the friction at its holes; zero elsewhere): the old end
        # row at the same arc length, if any
        stages = ~end_old
        ends = {round(s, 9): row for row, s in zip(np.flatnonzero(end_old), z_old[end_old])}
        pairs = [(row, ends.get(round(z_new[row], 9))) for row in z_rows[end_new[z_rows]]]
        pairs = np.array([pair for pair in pairs if pair[1] is not None], dtype=int)
        for a, b in history:
            _interpolate(z_old[stages], zp_old[stages], a[stages], z_new, zp_new, b, z_rows)
            if pairs.size:
                b[pairs[:, 0]] = a[pairs[:, 1]]
        _interpolate(t_old, tp_old, good_old, t_new, tp_new, good_new, t_rows)
        u, _, vt = np.linalg.svd(good_new[t_rows, 3:12].reshape(-1, 3, 3))
        good_new[t_rows, 3:12] = (u @ vt).reshape(-1, 9)


__all__ = ['ContactZones', 'shooting_nodes', 'transfer', 'wave_rate']
