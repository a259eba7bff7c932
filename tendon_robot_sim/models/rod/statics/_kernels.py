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
Numba kernels of the shooting statics solver (:mod:`tendon_robot_sim.models.rod.statics.solver`).

The models and their equations are documented in :mod:`tendon_robot_sim.models.rod.statics.solver`;
:mod:`tendon_robot_sim.models.rod.statics.reference` solves the same problems with plain
numpy/scipy so tests can compare. Everything below runs in nopython mode, so a whole
solve (Newton iterations, finite-difference Jacobians, fixed-step RK4 integrations)
pays the Python call overhead once. The rod itself (constitutive law, ODEs, RK4) and its
symbols are in :mod:`tendon_robot_sim.models._cosserat_kernels`.

Unknowns and residuals are scaled (``Plan.scale``) to be dimensionless and of order
one; the Newton tolerance is on the scaled residual.

Compile time matters as much as run time here (numba re-optimises every callee inside
each caller): functions take few, plain arrays, big pieces have one call site, and
only ``solve`` is called from Python (and ``_cosserat_kernels.poses``, for outputs).
"""

from collections import namedtuple
import math

from tendon_robot_sim.models._cosserat_kernels import (CONVERGED, COSSERAT, disc_contact,
                                                       disc_inertia, DISCRETE, DYN_C0, FAILED,
                                                       FD_STEP, fd_step, MAT_GRAVITY, MAT_P0,
                                                       MAT_USTAR,
                                                       MAX_ITERATIONS,
                                                       PYELASTICA, rk4, viscous_curvature,
                                                       viscous_strain, viscous_wrench, Z_Q,
                                                       Z_SIZE, Z_U, Z_V, Z_W)
from tendon_robot_sim.models._numerics import (broyden_inverse, cross, gauss_solve, invert,
                                               kernel, norm, rotate_by)
from tendon_robot_sim.models.rod.statics._node_kernels import (_keep_node, _restart, _resume,
                                                               NODE_SIZE, probes_by_interval)
from tendon_robot_sim.models.rod.statics._rotation_kernels import _bay_error, _orthonormalize
# the tendon law; its constants are the solver's too (kernels.TENSION, kernels.TENDON_REST)
from tendon_robot_sim.models.rod.statics._tendon_kernels import (  # noqa: F401
    DISPLACEMENT, slack_branches, TENDON_COMPLIANCE, TENDON_MOTOR, tendon_residuals, TENDON_REST,
    TENDON_SLACK, TENSION, tensions)
from tendon_robot_sim.models.rod.tendons._friction_kernels import (at_base, FR_COMPLIANCE,
                                                                   into_hole, out_of_hole,
                                                                   through_base)
from tendon_robot_sim.models.rod.tendons._kink_kernels import curvature_jumps, kink_loads

# A vertebra pose (discrete model) is converged when its error is below Plan.bay_tol, relative
# to the bay length (position) or in radians (rotation); round-off is ~1e-15. Where it stops is
# noise in the shooting residual: BAY_TOLERANCE_FINE where that is above the Newton tolerance
# (solver.py, _solve; docs/tendon_robot.md, "Close discs on a soft backbone": FTDCR v6).
BAY_TOLERANCE = 1e-11
BAY_TOLERANCE_FINE = 1e-13
BAY_MAX_ITERATIONS = 40

# Plan.seg columns
SEG_N, SEG_PT, SEG_ROW, SEG_VERT, SEG_FROM = 0, 1, 2, 3, 4


Plan = namedtuple('Plan', [
    'model',      # COSSERAT | KIRCHHOFF | DISCRETE
    'law',        # LINEAR | PYELASTICA constitutive law
    'nt',         # number of tendons
    'seg',        # (nseg, 5) int: RK4 steps, first routing sample in rt, first trajectory
                  #   row, vertebra index (1..k) at the segment's end and start (0: none)
    'seg_h',      # (nseg,) step size per segment [m]
    'rt',         # (npts, nt, 9) r, r_s, r_ss per tendon at s, s + h/2, s + h, ... (body)
    'active',     # (nseg, nt) the tendon runs along the segment
    'ends',       # (nseg, nt) the tendon terminates at the end of the segment
    'end_mass',   # (nseg,) vertebra mass at the end of the segment [kg], 0 if none
    'end_disc',   # (nseg,) thickness of the disc touching there [m] (discrete model), else 0
    'holes',      # (k + 1, nt, 3) hole of each tendon at the base (row 0) and vertebrae [m]
    'anchor',     # (nt,) vertebra index (1..k) at which each tendon ends (discrete model)
    'mat',        # (18,) Kse [N], Kbt [N m^2], rho A g [N/m], gravity [m/s^2], p0 [m],
                  #   rest curvature u* [1/m] (body): the shooting writes each segment's
                  #   from ustar there before integrating it
    'ustar',      # (nseg, 3) rest curvature of each segment [1/m] (body frame; zero but
                  #   for the bending friction of models.rod.statics.bending_friction)
    'R0',         # (3, 3) base orientation
    'scale',      # (2, 6 + nt) physical value of one unit of each unknown (N, N m, N) and
                  #   of each residual (N, N m, m)
    'tendon',     # (4, nt) slack length per newton of negative tendon unknown [m/N],
                  #   rest length l* [m], compliance C [1/N], motor distance d [m]
    'dyn',        # _cosserat_kernels.Dyn: one implicit time step, or statics (on False);
                  #   evaluation points (history rows) per segment k from z_row(pl, k)
    'nodes',      # (M,) segments at whose start the integration restarts from unknowns
                  #   (multiple shooting; none in statics): see _restart
    'node_R',     # (M, 3, 3) reference rotation of each node (its unknown turns it)
    'node_scale',  # (18,) physical value of one unit of a node unknown and of its defect:
                  #   p [m], rotation [rad], force [N], moment [N m], q [m/s], w [1/s]
    'contact',    # contact._kernels.Contact: the obstacles loading the rod (none: empty)
    'touch',      # (k,) bool: segments whose rod the obstacles load (not the implicit
    #               dynamics' coarse segments, checked after each step: dynamics/implicit_grid.py)
    'bay_tol',    # (1,) tolerance of the discrete model's bay iterations (BAY_TOLERANCE[_FINE])
])

Bays = namedtuple('Bays', [
    'P',       # (k + 1, 3) guessed position of vertebra j + 1 in the frame of vertebra j [m]
    'Q',       # (k + 1, 3, 3) guessed rotation of vertebra j + 1 relative to vertebra j
    'J',       # (k + 1, 6, 6) last Jacobian of the bay's fixed-point error
    'flags',   # (2, k + 1) P and Q hold a guess; J is usable
])

Work = namedtuple('Work', [
    'y',       # (3 [+ M [+ H]], ny) state, bay start state, finite-difference state [, the
               #   state propagated to each shooting node: _keep_node [, the holes: hole_rows]]
    'st',      # (3, ny) RK4: derivative, weighted sum, stage state
    'wk',      # (112,) scratch 3- and 6-vectors (regions per function, see each)
    'K',       # (6, 6) coefficient matrix of R&W Eq. (16), bay Newton matrix
    'M',       # (4, 3, 3) A_i, G_i, Eq. (17) matrix, sum of G_i / rotation scratch
    'hp',      # (nt, 3) previous tendon holes, world frame (discrete model)
    'vec',     # (5, nx) Newton: F, F_new, F of a finite-difference probe, x_new, step
    'Jc',      # (nx, nx) copy of the Jacobian for the linear solve
    'traj',    # (rows, ny) trajectory of the finite-difference integrations
])


# --------------------------------------------------------------------------- shooting residuals


@kernel
def z_row(pl, k):
    """
    Return the first history row (evaluation point) of segment k.

    A segment of n RK4 steps has 4 n stage points, then one for its end (point loads).
    """
    return 4 * pl.seg[k, SEG_ROW] + k


@kernel
def _shoot_continuous(pl, x, tau, tip, F, traj, lengths, w, part):
    """
    Compute the Cosserat/Kirchhoff shooting residual of a continuous robot.

    Integrate from the guessed base wrench to the tip, applying point loads at segment ends:
    vertebra weights and tendon terminations (R&W Eqs. 18-20: F_i = -tau pb/|pb|, L_i = r x
    F_i), also at interior ends of multi-section robots; with dynamics also the discs'
    inertia, and the wrench includes its viscous part. F[0:6] is the tip force and moment
    imbalance in the tip body frame, scaled; with nodes (multiple shooting) their defects
    end F (:func:`_restart`). With tendon friction (``dyn.friction``) each tendon's tension is
    a state from tau (at the base) on, its termination load takes the tension there, and its
    length is its unstretched length stretched by the base tension, (1 + C tau) l_0, which
    the length residual of :func:`_residual` then balances exactly. Scratch: wk[36:57].
    ``part``: one interval of the multiple shooting or all (:func:`_residual`).
    """
    y = w.y[0]
    wk = w.wk
    mat, dyn = pl.mat, pl.dyn
    nb, mb, fb, mm = wk[36:39], wk[39:42], wk[42:45], wk[45:48]
    tmp, pb, v = wk[48:51], wk[51:54], wk[54:57]
    g = mat[MAT_GRAVITY:MAT_GRAVITY + 3]
    cosserat = pl.model == COSSERAT
    nt = pl.nt
    iq = 18 + nt          # q, w in the state (dynamics)
    friction = dyn.on and dyn.friction.shape[1] > 0 and cosserat
    it = iq + 6           # tensions in the state (friction)
    node = 0              # next multiple-shooting node
    first = _resume(pl, w, part, y)
    if first > 0:
        # the body wrench the node's restart takes as propagated (kept in place of v, u)
        node = part - 1
        for i in range(3):
            nb[i] = y[12 + i]
            mb[i] = y[15 + i]
    else:
        for i in range(3):
            y[i] = mat[MAT_P0 + i]
            nb[i] = x[i] * pl.scale[0, i]
            mb[i] = x[3 + i] * pl.scale[0, 3 + i]
            for j in range(3):
                y[3 + 3 * i + j] = pl.R0[i, j]
        for t in range(nt):
            y[18 + t] = 0.0
            if friction:
                y[it + t] = tau[t]
        if dyn.on:
            for i in range(6):
                y[iq + i] = 0.0      # the base does not move
    nseg = pl.seg_h.size
    for k in range(first, nseg + 1):
        if k > first:
            # body wrench just before the end of segment k - 1, minus its point loads
            end = z_row(pl, k - 1) + 4 * pl.seg[k - 1, SEG_N]
            if cosserat:
                for i in range(3):
                    v[i] = y[12 + i]
                e = (math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
                     if pl.law == PYELASTICA else 1.0)
            else:
                v[0] = 0.0
                v[1] = 0.0
                v[2] = 1.0
                e = 1.0
                for i in range(3):
                    nb[i] = y[12 + i]
            viscous_wrench(not cosserat, v, y[15:18], e, mat, pl.law, dyn, end, nb, mb)
            for i in range(3):
                fb[i] = pl.end_mass[k - 1] * (y[3 + i] * g[0] + y[6 + i] * g[1]
                                              + y[9 + i] * g[2])
                mm[i] = 0.0
            if dyn.on:
                z = dyn.Z[end]
                for i in range(3):
                    z[Z_V + i] = v[i]
                    z[Z_U + i] = y[15 + i]
                    z[Z_Q + i] = y[iq + i]
                    z[Z_W + i] = y[iq + 3 + i]
                if pl.end_mass[k - 1] > 0.0:
                    disc_inertia(dyn, pl.end_mass[k - 1], end, y[iq:iq + 3], y[iq + 3:iq + 6],
                                 fb, mm)
            last = pl.seg[k - 1, SEG_PT] + 2 * pl.seg[k - 1, SEG_N]
            for t in range(nt):
                tension = y[it + t] if friction else tau[t]
                if pl.ends[k - 1, t] and tension != 0.0:
                    r = pl.rt[last, t, 0:3]
                    cross(y[15:18], r, pb)
                    for i in range(3):
                        pb[i] += pl.rt[last, t, 3 + i] + v[i]
                    c = -tension / math.sqrt(pb[0] * pb[0] + pb[1] * pb[1] + pb[2] * pb[2])
                    for i in range(3):
                        pb[i] *= c
                        fb[i] += pb[i]
                    cross(r, pb, tmp)
                    for i in range(3):
                        mm[i] += tmp[i]
            for i in range(3):
                nb[i] -= fb[i]
                mb[i] -= mm[i]
            if k < nseg and curvature_jumps(pl, k, mm):
                kink_loads(pl, k, z_row(pl, k), last, pl.seg[k, SEG_PT], tau,
                           it if friction else -1, y, v, nb, mb, w)
        if k == nseg:
            break
        if node < pl.nodes.size and pl.nodes[node] == k:
            if _keep_node(pl, w, part, node, y):
                for i in range(3):
                    w.y[3 + node, 12 + i] = nb[i]
                    w.y[3 + node, 15 + i] = mb[i]
            _restart(pl, node, x, F, y, nb, mb, iq, w)
            node += 1
            if 0 <= part < node and not friction:
                return True       # the interval ends at this node
        # state variables for the body wrench (nb, mb), with the history of the first stage;
        # the segment's rest curvature (the end of segment k - 1 above took the one before)
        for i in range(3):
            mat[MAT_USTAR + i] = pl.ustar[k, i]
        start = z_row(pl, k)
        if cosserat:
            e, y[12], y[13], y[14] = viscous_strain(nb[0], nb[1], nb[2], mat, pl.law, dyn,
                                                    start)
        else:
            e = 1.0
            for i in range(3):
                y[12 + i] = nb[i]
        viscous_curvature(mb, e, mat, dyn, start, y[15:18])
        if k == 0:
            for i in range(y.size):
                traj[0, i] = y[i]
        rk4(pl.model, pl.law, mat, pl.rt, pl.active[k], tau, pl.seg[k, SEG_PT],
            pl.seg[k, SEG_N], pl.seg_h[k], pl.seg[k, SEG_ROW], y, traj, w.st, w.K, w.M, dyn,
            start, pl.contact, pl.touch[k])
    for i in range(3):
        F[i] = (nb[i] - (y[3 + i] * tip[0] + y[6 + i] * tip[1] + y[9 + i] * tip[2])) \
            / pl.scale[1, i]
        F[3 + i] = (mb[i] - (y[3 + i] * tip[3] + y[6 + i] * tip[4] + y[9 + i] * tip[5])) \
            / pl.scale[1, 3 + i]
    for t in range(nt):
        lengths[t] = y[18 + t]
    return True


@kernel
def _bay_solve(pl, k, j, tau, yout, traj, bays, w):
    """
    Integrate bay k of the discrete model, from vertebra j (0: the base) to the next one.

    Start from w.y[1] (the state after the loads of vertebra j known so far).

    Tendons passing vertebra j pull it towards their next hole, which sits on the
    downstream vertebra. The pose (P, Q) of that vertebra relative to vertebra j is found
    by a damped Newton iteration on the bay's fixed-point error (integrated - guessed
    pose). The finite-difference Jacobian is kept in ``bays`` between calls and reused
    while it reduces the error fourfold per step; a step that increases the error is
    halved (fresh Jacobian) or triggers a new Jacobian (stale one). One integration per
    pass of the loop: ``probe`` < 0 integrates the trial guess into yout, ``probe`` =
    c >= 0 the finite-difference step along coordinate c into scratch. yout ends as the
    bay's end state; on failure the bay's memory is cleared.
    Scratch: wk[60:102], M[0:3].
    """
    ys, yfd = w.y[1], w.y[2]
    wk = w.wk
    e, ec, d, P2 = wk[60:66], wk[66:72], wk[72:78], wk[78:81]
    tmp, hn, f, rw = wk[81:84], wk[84:87], wk[87:90], wk[90:93]
    et, Pa = wk[93:99], wk[99:102]
    Q2, E, Qa = w.M[0], w.M[1], w.M[2]
    friction = pl.dyn.on and pl.dyn.friction.shape[1] > 0
    pulled = False
    if j > 0:
        for t in range(pl.nt):
            if pl.anchor[t] > j and tau[t] != 0.0:
                pulled = True
    n, h = pl.seg[k, SEG_N], pl.seg_h[k]
    ds = n * h
    P, Q, J = bays.P[j], bays.Q[j], bays.J[j]
    if not bays.flags[0, j]:
        for i in range(3):
            P[i] = 0.0
            for col in range(3):
                Q[i, col] = 1.0 if i == col else 0.0
        P[2] = ds
        bays.flags[0, j] = True
    probe = -1
    fresh = False
    err = math.inf      # error at the accepted guess (Pa, Qa), which is e
    lam = 1.0           # fraction of the Newton step d being tried
    for _ in range(7 * BAY_MAX_ITERATIONS):
        if probe < 0:
            Pc, Qc, yc, trc = P, Q, yout, traj
        else:
            Pc, Qc, yc, trc = P2, Q2, yfd, w.traj
        for i in range(ys.size):
            yc[i] = ys[i]
        for t in range(pl.nt):
            if not pulled or pl.anchor[t] <= j or tau[t] == 0.0:
                continue
            # pull towards the guessed next hole and its moment about the backbone
            hj1, hj = pl.holes[j + 1, t], pl.holes[j, t]
            for i in range(3):
                tmp[i] = Pc[i] + Qc[i, 0] * hj1[0] + Qc[i, 1] * hj1[1] + Qc[i, 2] * hj1[2]
            for i in range(3):
                R0i, R1i, R2i = ys[3 + 3 * i], ys[4 + 3 * i], ys[5 + 3 * i]
                hn[i] = ys[i] + R0i * tmp[0] + R1i * tmp[1] + R2i * tmp[2] - w.hp[t, i]
                rw[i] = R0i * hj[0] + R1i * hj[1] + R2i * hj[2]
            nh = math.sqrt(hn[0] * hn[0] + hn[1] * hn[1] + hn[2] * hn[2])
            tension = tau[t]
            if friction:
                # the next bay's tension, carried in the state
                tension = out_of_hole(pl.dyn.friction, pl.dyn.fw, t, ys[24 + t], hn, nh, rw,
                                      yc, f, tmp)
                yc[24 + t] = tension
            c = tension / nh
            for i in range(3):
                f[i] = c * hn[i]
            cross(rw, f, tmp)
            for i in range(3):
                yc[12 + i] -= f[i]
                yc[15 + i] -= tmp[i]
        rk4(pl.model, pl.law, pl.mat, pl.rt, pl.active[k], tau, pl.seg[k, SEG_PT], n, h,
            pl.seg[k, SEG_ROW], yc, trc, w.st, w.K, w.M, pl.dyn, z_row(pl, k),
            pl.contact, pl.touch[k])
        # RK4 leaves R orthogonal only to ~1e-8; the vertebra's holes (and the pose (P, Q)
        # they are matched with) need a rotation, so project it onto SO(3)
        _orthonormalize(yc, trc[pl.seg[k, SEG_ROW] + n])
        if not pulled:
            return True
        step = False     # next: a Newton step from the accepted guess
        if probe >= 0:
            _bay_error(ys, yfd, P2, Q2, ec, ds)
            # columns per unit of (P / ds, rotation angle)
            for i in range(6):
                J[i, probe] = (ec[i] - e[i]) / FD_STEP
            probe += 1
            if probe == 6:
                bays.flags[1, j] = True
                fresh = True
                probe = -1
                step = True
        else:
            new = _bay_error(ys, yout, P, Q, et, ds)
            if new <= pl.bay_tol[0]:
                return True
            if new < err:
                if new > 0.25 * err and not fresh:
                    bays.flags[1, j] = False
                if err < math.inf:
                    # good Broyden update with the accepted step lam d:
                    # J += ((e_new - e) - J lam d) (lam d)^T / |lam d|^2
                    ss = 0.0
                    for i in range(6):
                        ss += (lam * d[i]) ** 2
                    for i in range(6):
                        corr = et[i] - e[i]
                        for col in range(6):
                            corr -= J[i, col] * lam * d[col]
                        corr /= ss
                        for col in range(6):
                            J[i, col] += corr * lam * d[col]
                fresh = False
                err = new
                for i in range(6):
                    e[i] = et[i]
                for i in range(3):
                    Pa[i] = P[i]
                    for col in range(3):
                        Qa[i, col] = Q[i, col]
                step = True
            elif fresh and lam > 1.0 / 64.0:
                lam *= 0.5
            elif not fresh:
                bays.flags[1, j] = False
            else:
                break
            if not bays.flags[1, j]:
                probe = 0
                step = False
        if step:
            lam = 1.0
            A = w.K
            for i in range(6):
                d[i] = -e[i]
                for col in range(6):
                    A[i, col] = J[i, col]
            if not gauss_solve(A, d):
                if fresh:
                    break
                bays.flags[1, j] = False
                probe = 0
        if probe < 0:
            # trial guess: accepted guess + lam * d
            for i in range(3):
                P[i] = Pa[i] + lam * d[i] * ds
                tmp[i] = lam * d[3 + i]
            rotate_by(Qa, tmp, Q, E)
            continue
        # probe pose: accepted guess moved by one finite-difference step along `probe`
        for i in range(3):
            P[i] = Pa[i]
            P2[i] = Pa[i]
            tmp[i] = 0.0
            for col in range(3):
                Q[i, col] = Qa[i, col]
        if probe < 3:
            P2[probe] += FD_STEP * ds
            for i in range(3):
                for col in range(3):
                    Q2[i, col] = Qa[i, col]
        else:
            tmp[probe - 3] = FD_STEP
            rotate_by(Qa, tmp, Q2, E)
    bays.flags[0, j] = False
    bays.flags[1, j] = False
    return False


@kernel
def _shoot_discrete(pl, x, tau, tip, F, traj, lengths, bays, w, part):
    """
    Discrete (vertebra) model shooting residual.

    The backbone between vertebrae is a bare Cosserat rod; at vertebra j each tendon
    applies tau (unit vector to its next hole) - tau (unit vector from its previous hole),
    the moment of that force about the backbone, and the vertebra weight. The "to the
    next hole" part is resolved with the bay after the vertebra (``_bay_solve``); the
    rest is applied here; with dynamics also the discs' inertia (the state then holds q, w
    after the world-frame n, m). F[0:6] is the tip force and moment imbalance, world frame,
    scaled. Scratch: wk[36:57], wk[102:108].

    Tendon friction (dynamics with ``dyn.friction``): the tension of the bay being integrated
    is the state y[24 + t], set at each hole (the base's below, a disc's in ``_bay_solve``:
    rod/tendons/_friction_kernels.py), the hole's slip rate from its evaluation point (the end
    row of the bay reaching it; row 0 for the base); ``dyn.fw`` holds each tendon's last hole.
    ``lengths`` are then (1 + C tau) times the unstretched ones. ``part``: one interval of the
    multiple shooting or all (:func:`_residual`).
    """
    y, ys = w.y[0], w.y[1]
    wk = w.wk
    nb, mb, fw, mw = wk[36:39], wk[39:42], wk[42:45], wk[45:48]
    h, rw, fi = wk[48:51], wk[51:54], wk[54:57]
    fd, ld = wk[102:105], wk[105:108]
    mat, dyn = pl.mat, pl.dyn
    nt = pl.nt
    fr, hs = dyn.friction, dyn.fw
    friction = dyn.on and fr.shape[1] > 0
    node = 0              # next multiple-shooting node
    first = _resume(pl, w, part, y)
    if first > 0:
        node = part - 1
    else:
        if dyn.on:
            for i in range(6):
                y[18 + i] = 0.0      # the base does not move
        for i in range(3):
            nb[i] = x[i] * pl.scale[0, i]
            mb[i] = x[3 + i] * pl.scale[0, 3 + i]
        for i in range(3):
            y[i] = mat[MAT_P0 + i]
            y[12 + i] = pl.R0[i, 0] * nb[0] + pl.R0[i, 1] * nb[1] + pl.R0[i, 2] * nb[2]
            y[15 + i] = pl.R0[i, 0] * mb[0] + pl.R0[i, 1] * mb[1] + pl.R0[i, 2] * mb[2]
            for col in range(3):
                y[3 + 3 * i + col] = pl.R0[i, col]
        for t in range(nt):
            lengths[t] = 0.0
            for i in range(3):
                w.hp[t, i] = mat[MAT_P0 + i] + (pl.R0[i, 0] * pl.holes[0, t, 0]
                                                + pl.R0[i, 1] * pl.holes[0, t, 1]
                                                + pl.R0[i, 2] * pl.holes[0, t, 2])
        if friction:
            for t in range(nt):
                y[24 + t] = tau[t]
                at_base(fr, hs, t, tau[t], pl.R0, dyn.Z[0], dyn.Zh[0], dyn.coef[DYN_C0],
                        Z_SIZE)
        for i in range(y.size):
            traj[0, i] = y[i]
    for k in range(first, pl.seg_h.size):
        if node < pl.nodes.size and pl.nodes[node] == k:
            _keep_node(pl, w, part, node, y)
            _restart(pl, node, x, F, y, y[12:15], y[15:18], 18, w)
            node += 1
            if 0 <= part < node and not friction:
                return True       # the interval ends at this node
            # the tendons leave the node's vertebra from its holes
            j = pl.seg[k, SEG_FROM]
            for t in range(nt):
                if pl.anchor[t] > j:
                    hj = pl.holes[j, t]
                    for i in range(3):
                        w.hp[t, i] = y[i] + (y[3 + 3 * i] * hj[0] + y[4 + 3 * i] * hj[1]
                                             + y[5 + 3 * i] * hj[2])
        for i in range(y.size):
            ys[i] = y[i]
        for i in range(3):
            mat[MAT_USTAR + i] = pl.ustar[k, i]     # the bay's rest curvature (_rhs_rod)
        if not _bay_solve(pl, k, pl.seg[k, SEG_FROM], tau, y, traj, bays, w):
            return False
        j = pl.seg[k, SEG_VERT]
        n_k = pl.seg[k, SEG_N]
        end = z_row(pl, k) + 4 * n_k
        if dyn.on:
            for i in range(3):
                dyn.Z[end, Z_Q + i] = y[18 + i]
                dyn.Z[end, Z_W + i] = y[21 + i]
        if j == 0:
            continue
        for i in range(3):
            fw[i] = pl.end_mass[k] * mat[MAT_GRAVITY + i]
            mw[i] = 0.0
        if dyn.on and pl.end_mass[k] > 0.0:
            for i in range(3):
                fd[i] = 0.0
                ld[i] = 0.0
            disc_inertia(dyn, pl.end_mass[k], end, y[18:21], y[21:24], fd, ld)
            for i in range(3):
                fw[i] += y[3 + 3 * i] * fd[0] + y[4 + 3 * i] * fd[1] + y[5 + 3 * i] * fd[2]
                mw[i] += y[3 + 3 * i] * ld[0] + y[4 + 3 * i] * ld[1] + y[5 + 3 * i] * ld[2]
        if pl.end_disc[k] > 0.0 and pl.contact.shape.size:
            disc_contact(pl.contact, y, dyn.on, 18, pl.end_disc[k], fw)
        for t in range(nt):
            if pl.anchor[t] < j:
                continue
            hj = pl.holes[j, t]
            for i in range(3):
                rw[i] = y[3 + 3 * i] * hj[0] + y[4 + 3 * i] * hj[1] + y[5 + 3 * i] * hj[2]
                h[i] = y[i] + rw[i] - w.hp[t, i]
            dl = math.sqrt(h[0] * h[0] + h[1] * h[1] + h[2] * h[2])
            tension = tau[t]
            if friction:
                tension = y[24 + t]
                if pl.seg[k, SEG_FROM] == 0:
                    # the base took its hole's load; the bay's rows get its tension too
                    tension = y[24 + t] = through_base(fr, hs, t, tau[t], h, dl)
                    for row in range(pl.seg[k, SEG_ROW], pl.seg[k, SEG_ROW] + n_k + 1):
                        traj[row, 24 + t] = tension
                into_hole(fr, hs, t, tension, h, dl, dyn.Z[end], dyn.Zh[end], dyn.coef[DYN_C0],
                          Z_SIZE)
                lengths[t] += dl * (1.0 + fr[FR_COMPLIANCE, t] * tau[t]) / (
                    1.0 + fr[FR_COMPLIANCE, t] * tension)
            else:
                lengths[t] += dl
            if tension != 0.0:
                for i in range(3):
                    fi[i] = -tension * h[i] / dl
                    fw[i] += fi[i]
                cross(rw, fi, h)
                for i in range(3):
                    mw[i] += h[i]
            for i in range(3):
                w.hp[t, i] = y[i] + rw[i]
        for i in range(3):
            y[12 + i] -= fw[i]
            y[15 + i] -= mw[i]
    for i in range(3):
        F[i] = (y[12 + i] - tip[i]) / pl.scale[1, i]
        F[3 + i] = (y[15 + i] - tip[3 + i]) / pl.scale[1, 3 + i]
    return True


@kernel
def _residual(pl, modes, tau_in, q, tip, x, F, traj, tau, lengths, bays, w, part):
    """
    Scaled shooting residual F(x): 6, then one per tendon in displacement mode.

    ``modes`` (nt,): TENSION (tau_in[t] given) or DISPLACEMENT (q[t] given) per tendon.
    Unknowns x: base internal force nb(0) and moment mb(0) (body frame, scaled), then one
    variable z per displacement-mode tendon, in tendon order, holding tension (z > 0) or
    slack (z < 0), after Till's displacement-control example: tau = max(z, 0),
    slack = max(-z, 0) * (slack length per newton). The length residual is
    l + d + slack - (l* + d - q)(1 + C tau): the tendon spans the motor distance d and its path
    l (plus the slack), and is the motor's unstretched length l* + d - q stretched by C tau
    (:func:`tendon_robot_sim.models.tendon_robot.tendon_displacements`). Fills tau and lengths;
    False if the state became non-finite.

    ``part`` < 0: the whole rod. ``part`` = i >= 0: interval i of the multiple shooting alone
    (from the base, or from node i - 1, to node i or the tip), which writes only the residuals
    it changes: node i - 1's defect, node i's (or the tip's); tau and lengths are then not
    the rod's. It starts from the state the last whole integration propagated to node i - 1
    (:func:`_resume`), so it serves a finite-difference probe of an unknown of the interval's
    start when that integration was at the unknowns probed, with tensions given (no length
    residual, which sums over the intervals). With tendon friction, whose tensions run across
    the nodes (``_node_kernels.runs_on``), it goes on to the tip: every residual after i - 1's.
    """
    tensions(pl, modes, tau_in, x, tau)
    if pl.model == DISCRETE:
        ok = _shoot_discrete(pl, x, tau, tip, F, traj, lengths, bays, w, part)
    else:
        ok = _shoot_continuous(pl, x, tau, tip, F, traj, lengths, w, part)
    if not ok:
        return False
    return tendon_residuals(pl, modes, q, x, F, tau, lengths)


@kernel
def solve(pl, modes, tau_in, q, tip, x, J, jac_ok, tol, max_iter, reach, traj, tau, lengths,
          bays, w, info):
    """
    Damped Newton iteration with Broyden updates on the shooting residual.

    The Jacobian is rebuilt by forward differences when it is missing or when a step fails to
    halve ||F||, and inverted; J holds that inverse (kept by the caller between solves: warm
    start), and between rebuilds good-Broyden rank-one updates of the inverse keep it
    current (O(n^2) a step: the implicit dynamics' multiple shooting has 40 or more
    unknowns). A step with a stale Jacobian that does
    not decrease ||F|| triggers a rebuild; with a fresh one, backtracking halves the step
    (Armijo condition on ||F||_2). Each pass of the loop evaluates the residual once, at
    the point ``probe`` selects: < 0 a Newton trial point, >= 0 a finite-difference probe
    of column ``probe`` (written to scratch, so traj keeps the accepted solution). With
    multiple shooting (and a row per node in w.y) a probe integrates only the interval its
    unknown starts (:func:`_residual`'s ``part``): with three intervals a rebuild costs a
    third of the integrations (with tendon friction, from it to the tip: about half). A first
    iteration that leaves ||F||_inf above ``reach`` ends the solve unconverged (a
    continuation step out of Newton's reach, continuation.py; math.inf: never).
    A step that takes a taut tendon's tension/slack unknown below 0 is moved onto the slack
    branch of the tendon law (:func:`~._tendon_kernels.slack_branches`).

    On return x holds the last accepted iterate, traj/tau/lengths its solution, and
    info = [||F||_inf, iterations, residual evaluations, status].
    """
    n = x.size
    F, Fn, Fd, xn, dx = w.vec[0], w.vec[1], w.vec[2], w.vec[3], w.vec[4]
    Jc = w.Jc
    for r in range(n):
        xn[r] = x[r]
    probe = -1         # what the next evaluation is for
    first = True       # the next trial point is x itself
    alpha = 1.0
    fresh = False
    f2 = math.inf
    fnorm = math.inf
    it = 0
    nev = 0
    status = MAX_ITERATIONS
    # probes by interval (_node_kernels.probes_by_interval): nodes, tensions given, a row per
    # node to keep its state in; ``kept``: the states kept are those of x (its integration was
    # the last whole one)
    k0 = n - NODE_SIZE * pl.nodes.size
    by_interval = probes_by_interval(pl, w, k0)
    kept = False
    for _ in range(max_iter * (n + 32)):
        nev += 1
        # one call site: numba compiles the whole shooting code into each
        Fx, trx = (Fn, traj) if probe < 0 else (Fd, w.traj)
        part = -1
        if probe >= 0 and by_interval and kept:
            part = 0 if probe < k0 else (probe - k0) // NODE_SIZE + 1
            for r in range(n):
                Fd[r] = F[r]      # the residuals the interval does not change
        ok = _residual(pl, modes, tau_in, q, tip, xn, Fx, trx, tau, lengths, bays, w, part)
        if part < 0:
            kept = False
        if probe >= 0:
            if not ok:
                status = FAILED
                break
            step = xn[probe] - x[probe]
            for r in range(n):
                J[r, probe] = (Fd[r] - F[r]) / step
            xn[probe] = x[probe]
            probe += 1
            if probe < n:
                xn[probe] = x[probe] + fd_step(x[probe])
                continue
            probe = -1
            if not invert(J, Jc):
                status = FAILED
                break
            jac_ok[0] = True
            fresh = True
        elif first:
            if not ok:
                status = FAILED
                break
            first = False
            kept = True
            for r in range(n):
                F[r] = Fn[r]
            f2 = norm(F, 2)
            fnorm = norm(F, 0)
        else:
            fn2 = norm(Fn, 2) if ok else math.inf
            if fn2 <= (1.0 - 1e-4 * alpha) * f2:
                broyden_inverse(J, F, Fn, dx, alpha, Fd, Jc[0])     # accept
                if fn2 > 0.5 * f2:
                    jac_ok[0] = False
                fresh = False
                kept = True
                for r in range(n):
                    x[r] = xn[r]
                    F[r] = Fn[r]
                f2 = fn2
                fnorm = norm(F, 0)
            elif fresh and alpha > 1e-6:
                alpha *= 0.5
                for r in range(n):
                    xn[r] = x[r] + alpha * dx[r]
                continue
            elif fresh:
                status = FAILED
                break
            else:
                jac_ok[0] = False
        # at an accepted point (or after a rejected step with a stale Jacobian)
        if fnorm <= tol:
            status = CONVERGED
            break
        if it == 1 and fnorm > reach:
            break       # out of reach after one iteration: the continuation halves its step
        if not jac_ok[0]:
            probe = 0
            for r in range(n):
                xn[r] = x[r]
            xn[0] = x[0] + fd_step(x[0])
            continue
        if it >= max_iter:
            break
        it += 1
        for r in range(n):
            acc = 0.0
            for c in range(n):
                acc -= J[r, c] * F[c]
            dx[r] = acc
        slack_branches(pl, modes, x, J, dx, Jc, xn, Fd, Fn)     # Jc ... Fn: scratch
        alpha = 1.0
        for r in range(n):
            xn[r] = x[r] + dx[r]
    info[0] = fnorm
    info[1] = it
    info[2] = nev
    info[3] = status
