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
Numba kernel of the rolling-joint snake's forward dynamics (one state at a time).

The same equations as :class:`~tendon_robot_sim.models.snake.dynamics.SnakeDynamics`
(kinematics of :mod:`~tendon_robot_sim.models.snake.kinematics`, M qdd = lambda T - tau, with
the external loads of :mod:`~tendon_robot_sim.models.snake.loads`),
written out for one state so that a live simulation is not bound by numpy's per-call cost
on 3-vectors. Tests compare it with the numpy path.
"""

from numba import njit
import numpy as np

from tendon_robot_sim.models._numerics import cross as _cross_into

# A state beyond these is a runaway integration, whatever the snake (the rolling surfaces end
# at 2 alpha < pi): joint angle [rad], joint rate [rad/s].
RUNAWAY_ANGLE = 100.0
RUNAWAY_RATE = 1e8


@njit(cache=True)
def _cross(a, b):
    out = np.empty(3)
    _cross_into(a, b, out)
    return out


@njit(cache=True)
def _rotation(axis, theta):
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                  [-axis[1], axis[0], 0.0]])
    return np.eye(3) + np.sin(theta) * k + (1.0 - np.cos(theta)) * (k @ k)


@njit(cache=True)
def _chain(q, qd, qdd, axes, planes, radius, height, center_of_mass, proximal_holes,
           distal_holes, mass, inertia, gravity, load_links, load_in_link, load_vectors):
    """
    Evaluate the chain at one state, world frame.

    Contacts, joint axes, normals, centres of mass (N, 3); link force m (a_C - g) - F and
    moment I wd + w x I w - M - (p - p_C) x F (N, 3) with the external loads (see
    :func:`~tendon_robot_sim.models.snake.loads.pack`); inertias (N, 3, 3); proximal and
    distal holes of joint n (N, C, 3).
    """
    N, C = q.shape[0], proximal_holes.shape[1]
    x = np.array([1.0, 0.0, 0.0])
    Rp = np.eye(3)
    op = np.zeros(3)
    w = np.zeros(3)
    wd = np.zeros(3)
    acc = np.zeros(3)
    contacts = np.empty((N, 3))
    world_axes = np.empty((N, 3))
    normals = np.empty((N, 3))
    centers = np.empty((N, 3))
    force = np.empty((N, 3))
    moment = np.empty((N, 3))
    inertias = np.empty((N, 3, 3))
    rotations = np.empty((N, 3, 3))
    origins = np.empty((N, 3))
    proximal = np.empty((N, C, 3))
    distal = np.empty((N, C, 3))
    for n in range(N):
        a, b = axes[n], planes[n]
        th, th_d = q[n], qd[n]
        u_half = np.cos(th / 2) * x + np.sin(th / 2) * b
        up_half = -np.sin(th / 2) * x + np.cos(th / 2) * b
        u = np.cos(th) * x + np.sin(th) * b
        up = -np.sin(th) * x + np.cos(th) * b
        r = -radius * x + 2.0 * radius * u_half + (height - radius) * u
        r1 = radius * up_half + (height - radius) * up
        r2 = -0.5 * radius * u_half - (height - radius) * u
        Rn = Rp @ _rotation(a, th)
        rho = Rp @ r
        on = op + rho
        A = Rp @ a
        contacts[n] = op + Rp @ (-radius * x + radius * u_half)
        world_axes[n] = A
        normals[n] = Rp @ u_half
        for k in range(C):
            distal[n, k] = op + Rp @ distal_holes[n, k]
            proximal[n, k] = on + Rn @ proximal_holes[n, k]
        dr = (Rp @ r1) * th_d
        acc = (acc + _cross(wd, rho) + _cross(w, _cross(w, rho)) + 2.0 * _cross(w, dr)
               + Rp @ (r2 * th_d ** 2 + r1 * qdd[n]))
        wd = wd + qdd[n] * A + th_d * _cross(w, A)
        w = w + th_d * A
        arm = Rn @ center_of_mass
        centers[n] = on + arm
        a_c = acc + _cross(wd, arm) + _cross(w, _cross(w, arm))
        inertia_w = Rn @ np.diag(inertia) @ Rn.T
        inertias[n] = inertia_w
        force[n] = mass * (a_c - gravity)
        moment[n] = inertia_w @ wd + _cross(w, inertia_w @ w)
        rotations[n], origins[n] = Rn, on
        Rp, op = Rn, on
    for i in range(load_links.shape[0]):
        n = load_links[i]
        R = rotations[n]
        F, M = load_vectors[i, 0], load_vectors[i, 1]
        if load_in_link[i]:
            F, M = R @ F, R @ M
        force[n] = force[n] - F
        moment[n] = moment[n] - M - _cross(origins[n] + R @ load_vectors[i, 2] - centers[n], F)
    return contacts, world_axes, normals, centers, force, moment, inertias, proximal, distal


@njit(cache=True)
def accelerations(q, qd, tensions, axes, planes, radius, height, center_of_mass,
                  proximal_holes, distal_holes, mass, inertia, gravity, load_links, load_in_link,
                  load_vectors):
    """
    Return qdd (N,) [rad/s^2] of the snake at (q, qd) (N,) under segment tensions (N, C) [N].

    axes, planes : (N, 3) joint axes a and in-plane directions b = a x x (link frames);
    radius, height : R, H [m]; center_of_mass : (3,) link frame; proximal_holes,
    distal_holes : (N, C, 3) of joint n, in links n and n-1; mass [kg]; inertia : (3,)
    principal [kg m^2]; gravity : (3,); load_links, load_in_link, load_vectors : the external
    loads (:func:`~tendon_robot_sim.models.snake.loads.pack`).
    """
    N, C = q.shape[0], tensions.shape[1]
    contacts, world_axes, normals, centers, force, moment, inertias, proximal, _ = _chain(
        q, qd, np.zeros(N), axes, planes, radius, height, center_of_mass, proximal_holes,
        distal_holes, mass, inertia, gravity, load_links, load_in_link, load_vectors)
    # tau_n = a_n . sum_{j >= n} (moment_j + (p_Cj - p_cn) x force_j); the cables of
    # segment n pull link n along -normal
    rhs = np.empty(N)
    F = np.zeros(3)
    M = np.zeros(3)
    for n in range(N - 1, -1, -1):
        F = F + force[n]
        M = M + moment[n] + _cross(centers[n], force[n])
        drive = 0.0
        for k in range(C):
            drive += tensions[n, k] * (world_axes[n] @ _cross(proximal[n, k] - contacts[n],
                                                              -normals[n]))
        rhs[n] = drive - world_axes[n] @ (M - _cross(contacts[n], F))
    # mass matrix from the Jacobians: link j turns about joint n's contact line, n <= j
    mass_matrix = np.zeros((N, N))
    for j in range(N):
        Jv = np.zeros((N, 3))
        for n in range(j + 1):
            Jv[n] = _cross(world_axes[n], centers[j] - contacts[n])
        for n in range(j + 1):
            for m in range(j + 1):
                mass_matrix[n, m] += (mass * (Jv[n] @ Jv[m])
                                      + world_axes[n] @ (inertias[j] @ world_axes[m]))
    return np.linalg.solve(mass_matrix, rhs)


@njit(cache=True)
def _vertex_lp(a, b, G, h, vertices, tolerance):
    """
    Minimize sum(T) s.t. a.T = b, G T <= h for 4 tensions, by its vertices.

    See SnakeDynamics.solve_lp; returns T (4,) and whether it is feasible.
    """
    C = a.shape[0]
    norm = np.sqrt(a @ a)
    v = a.copy()
    v[0] += norm if a[0] >= 0 else -norm
    Z = np.empty((C, 3))
    for i in range(C):
        for j in range(3):
            Z[i, j] = (1.0 if i == j + 1 else 0.0) - 2.0 * v[i] * v[j + 1] / (v @ v)
    T0 = a * (b / norm ** 2)
    g = G @ Z
    c = h - G @ T0
    for m in range(g.shape[0]):
        scale = max(np.sqrt(g[m] @ g[m]), 1e-12)
        g[m] /= scale
        c[m] /= scale
    gradient = Z.sum(axis=0)
    best = np.inf
    y_best = np.zeros(3)
    y = np.empty(3)
    for p in range(vertices.shape[0]):
        i, j, m3 = vertices[p, 0], vertices[p, 1], vertices[p, 2]
        # Cramer's rule: y = (c_i (g_j x g_m3) + c_j (g_m3 x g_i) + c_m3 (g_i x g_j)) / det
        x0 = g[j, 1] * g[m3, 2] - g[j, 2] * g[m3, 1]
        x1 = g[j, 2] * g[m3, 0] - g[j, 0] * g[m3, 2]
        x2 = g[j, 0] * g[m3, 1] - g[j, 1] * g[m3, 0]
        det = g[i, 0] * x0 + g[i, 1] * x1 + g[i, 2] * x2
        if abs(det) <= 1e-10:
            continue
        y0 = g[m3, 1] * g[i, 2] - g[m3, 2] * g[i, 1]
        y1 = g[m3, 2] * g[i, 0] - g[m3, 0] * g[i, 2]
        y2 = g[m3, 0] * g[i, 1] - g[m3, 1] * g[i, 0]
        z0 = g[i, 1] * g[j, 2] - g[i, 2] * g[j, 1]
        z1 = g[i, 2] * g[j, 0] - g[i, 0] * g[j, 2]
        z2 = g[i, 0] * g[j, 1] - g[i, 1] * g[j, 0]
        y[0] = (c[i] * x0 + c[j] * y0 + c[m3] * z0) / det
        y[1] = (c[i] * x1 + c[j] * y1 + c[m3] * z1) / det
        y[2] = (c[i] * x2 + c[j] * y2 + c[m3] * z2) / det
        cost = gradient @ y
        if cost >= best:
            continue
        feasible = True
        for m in range(g.shape[0]):
            if g[m] @ y > c[m] + tolerance:
                feasible = False
                break
        if feasible:
            best = cost
            y_best[:] = y
    return T0 + Z @ y_best, best < np.inf


@njit(cache=True)
def inverse_step(q, qd, qdd, axes, planes, radius, height, center_of_mass, proximal_holes,
                 distal_holes, mass, inertia, gravity, load_links, load_in_link, load_vectors, w,
                 mu, f_min, pretension, max_tension, vertices, feasibility_tolerance,
                 active_tolerance):
    """
    Minimum tensions of (37) at one step, joint N to 1, for 4 cables.

    Returns tensions (N, 4), normal forces (N, 2), friction (N, 2, 2) ((y, z) in f3 at c1,
    c2), active (N, 4) per group (contact, friction, pretension, max_tension) and feasible
    (N,); see SnakeDynamics.inverse for the equations.
    """
    N, C = q.shape[0], proximal_holes.shape[1]
    contacts, world_axes, normals, centers, force, moment, _, proximal, distal = _chain(
        q, qd, qdd, axes, planes, radius, height, center_of_mass, proximal_holes,
        distal_holes, mass, inertia, gravity, load_links, load_in_link, load_vectors)
    tensions = np.empty((N, C))
    normal = np.empty((N, 2))
    friction = np.empty((N, 2, 2))
    active = np.zeros((N, 4), dtype=np.bool_)
    feasible = np.ones(N, dtype=np.bool_)
    distal_force = np.zeros(3)
    distal_moment = np.zeros(3)
    G = np.zeros((8 + 2 * C, C))
    h = np.empty(8 + 2 * C)
    groups = np.array([0, 0, 1, 1, 1, 1, 1, 1] + [2] * C + [3] * C)
    for n in range(N - 1, -1, -1):
        p_c = contacts[n]
        basis = np.empty((3, 3))
        basis[0], basis[2] = normals[n], world_axes[n]
        basis[1] = _cross(basis[2], basis[0])
        need_f = force[n] - distal_force
        need_m = (moment[n] + _cross(centers[n] - p_c, force[n])
                  - (distal_moment - _cross(p_c, distal_force)))
        s0, m0 = basis @ need_f, basis @ need_m
        sg, mg = np.empty((3, C)), np.empty((3, C))
        for k in range(C):
            sg[:, k] = basis @ -normals[n]
            mg[:, k] = basis @ _cross(proximal[n, k] - p_c, -normals[n])
        # contact quantities value = c - g T: N1, N2, fy1, fy2, Sz (see inequality_rows)
        n1c, n1g = (s0[0] + m0[1] / w) / 2, (sg[0] + mg[1] / w) / 2
        n2c, n2g = (s0[0] - m0[1] / w) / 2, (sg[0] - mg[1] / w) / 2
        f1c, f1g = (s0[1] - m0[0] / w) / 2, (sg[1] - mg[0] / w) / 2
        f2c, f2g = (s0[1] + m0[0] / w) / 2, (sg[1] + mg[0] / w) / 2
        G[0], h[0] = n1g, n1c - f_min
        G[1], h[1] = n2g, n2c - f_min
        row = 2
        for fc, fg, nc, ng in ((f1c, f1g, n1c, n1g), (f2c, f2g, n2c, n2g),
                               (s0[2], sg[2], n1c + n2c, n1g + n2g)):
            for sign in (1.0, -1.0):
                G[row], h[row] = -(sign * fg - mu * ng), -(sign * fc - mu * nc)
                row += 1
        for k in range(C):
            G[8 + k, k], h[8 + k] = -1.0, -pretension
            G[8 + C + k, k], h[8 + C + k] = 1.0, max_tension
        T, ok = _vertex_lp(mg[2], m0[2], G, h, vertices, feasibility_tolerance)
        feasible[n] = ok
        tensions[n] = T
        slack = h - G @ T
        for r in range(slack.shape[0]):
            if slack[r] <= active_tolerance:
                active[n, groups[r]] = True
        S, Mc = s0 - sg @ T, m0 - mg @ T
        normal[n, 0], normal[n, 1] = (S[0] + Mc[1] / w) / 2, (S[0] - Mc[1] / w) / 2
        friction[n, 0, 0], friction[n, 1, 0] = (S[1] - Mc[0] / w) / 2, (S[1] + Mc[0] / w) / 2
        total = normal[n, 0] + normal[n, 1]
        friction[n, 0, 1], friction[n, 1, 1] = (S[2] * normal[n, 0] / total,
                                                S[2] * normal[n, 1] / total)
        contact_f, contact_m = basis.T @ S, basis.T @ Mc
        distal_force = -contact_f
        distal_moment = -(contact_m + _cross(p_c, contact_f))
        for k in range(C):
            pull = -T[k] * normals[n]
            distal_force = distal_force - pull
            distal_moment = distal_moment - _cross(distal[n, k], pull)
    return tensions, normal, friction, active, feasible


@njit(cache=True)
def integrate(t, tensions, q0, qd0, substeps, axes, planes, radius, height, center_of_mass,
              proximal_holes, distal_holes, mass, inertia, gravity, load_links, load_in_link,
              load_vectors):
    """
    Integrate by RK4 from (q0, qd0) (N,) over the sample times t (K,).

    Under tensions (K, N, C), linear between samples; returns q, qd (K, N) at the samples.
    A runaway state (|q| >= RUNAWAY_ANGLE, |qd| >= RUNAWAY_RATE or not finite: the step is
    too large) ends the integration; the samples from there on are NaN.
    """
    K, N = t.shape[0], q0.shape[0]
    q_out, qd_out = np.empty((K, N)), np.empty((K, N))
    q, qd = q0.copy(), qd0.copy()
    q_out[0], qd_out[0] = q, qd
    model = (axes, planes, radius, height, center_of_mass, proximal_holes, distal_holes, mass,
             inertia, gravity, load_links, load_in_link, load_vectors)
    for i in range(K - 1):
        h = (t[i + 1] - t[i]) / substeps
        change = tensions[i + 1] - tensions[i]
        for j in range(substeps):
            if not (np.abs(q).max() < RUNAWAY_ANGLE and np.abs(qd).max() < RUNAWAY_RATE):
                q_out[i + 1:], qd_out[i + 1:] = np.nan, np.nan
                return q_out, qd_out
            f = j / substeps
            T_a = tensions[i] + f * change
            T_m = tensions[i] + (f + 0.5 / substeps) * change
            T_b = tensions[i] + (f + 1.0 / substeps) * change
            a1 = accelerations(q, qd, T_a, *model)
            v2 = qd + 0.5 * h * a1
            a2 = accelerations(q + 0.5 * h * qd, v2, T_m, *model)
            v3 = qd + 0.5 * h * a2
            a3 = accelerations(q + 0.5 * h * v2, v3, T_m, *model)
            v4 = qd + h * a3
            a4 = accelerations(q + h * v3, v4, T_b, *model)
            q = q + h / 6.0 * (qd + 2.0 * v2 + 2.0 * v3 + v4)
            qd = qd + h / 6.0 * (a1 + 2.0 * a2 + 2.0 * a3 + a4)
        q_out[i + 1], qd_out[i + 1] = q, qd
    return q_out, qd_out
