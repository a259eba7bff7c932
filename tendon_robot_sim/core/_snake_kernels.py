"""Numba kernel of the rolling-joint snake's forward dynamics (one state at a time).

The same equations as :class:`~tendon_robot_sim.core.snake_dynamics.SnakeDynamics`
(kinematics of :mod:`~tendon_robot_sim.core.snake_kinematics`, M qdd = lambda T - tau),
written out for one state so that a live simulation is not bound by numpy's per-call cost
on 3-vectors. Tests compare it with the numpy path.
"""

from numba import njit
import numpy as np

from tendon_robot_sim.core._statics_kernels import _cross as _cross_into


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
def accelerations(q, qd, tensions, axes, planes, radius, height, center_of_mass,
                  proximal_holes, mass, inertia, gravity):
    """qdd (N,) [rad/s^2] of the snake at (q, qd) (N,) under segment tensions (N, C) [N].

    axes, planes : (N, 3) joint axes a and in-plane directions b = a x x (link frames);
    radius, height : R, H [m]; center_of_mass : (3,) link frame; proximal_holes :
    (N, C, 3) link frames; mass [kg]; inertia : (3,) principal [kg m^2]; gravity : (3,).
    """
    N = q.shape[0]
    C = tensions.shape[1]
    x = np.array([1.0, 0.0, 0.0])
    Rp = np.eye(3)
    op = np.zeros(3)
    w = np.zeros(3)
    wd = np.zeros(3)
    acc = np.zeros(3)
    contacts = np.empty((N, 3))
    world_axes = np.empty((N, 3))
    centers = np.empty((N, 3))
    force = np.empty((N, 3))
    moment = np.empty((N, 3))
    inertias = np.empty((N, 3, 3))
    drive = np.empty(N)
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
        p_c = op + Rp @ (-radius * x + radius * u_half)
        A = Rp @ a
        normal = Rp @ u_half
        contacts[n] = p_c
        world_axes[n] = A
        # kinematics with qdd = 0: the bias accelerations
        dr = (Rp @ r1) * th_d
        acc = (acc + _cross(wd, rho) + _cross(w, _cross(w, rho)) + 2.0 * _cross(w, dr)
               + (Rp @ r2) * th_d ** 2)
        wd = wd + th_d * _cross(w, A)
        w = w + th_d * A
        arm = Rn @ center_of_mass
        centers[n] = on + arm
        a_c = acc + _cross(wd, arm) + _cross(w, _cross(w, arm))
        inertia_w = Rn @ np.diag(inertia) @ Rn.T
        inertias[n] = inertia_w
        force[n] = mass * (a_c - gravity)
        moment[n] = inertia_w @ wd + _cross(w, inertia_w @ w)
        # generalised force of segment n's cables (each pulls along -normal)
        drive[n] = 0.0
        for k in range(C):
            hole = on + Rn @ proximal_holes[n, k]
            drive[n] += tensions[n, k] * (A @ _cross(hole - p_c, -normal))
        Rp, op = Rn, on
    # tau_n = a_n . sum_{j >= n} (moment_j + (p_Cj - p_cn) x force_j)
    rhs = np.empty(N)
    F = np.zeros(3)
    M = np.zeros(3)
    for n in range(N - 1, -1, -1):
        F = F + force[n]
        M = M + moment[n] + _cross(centers[n], force[n])
        rhs[n] = drive[n] - world_axes[n] @ (M - _cross(contacts[n], F))
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
def integrate(t, tensions, q0, qd0, substeps, axes, planes, radius, height, center_of_mass,
              proximal_holes, mass, inertia, gravity):
    """RK4 from (q0, qd0) (N,) over the sample times t (K,) under tensions (K, N, C),
    linear between samples; returns q, qd (K, N) at the samples."""
    K, N = t.shape[0], q0.shape[0]
    q_out, qd_out = np.empty((K, N)), np.empty((K, N))
    q, qd = q0.copy(), qd0.copy()
    q_out[0], qd_out[0] = q, qd
    model = (axes, planes, radius, height, center_of_mass, proximal_holes, mass, inertia,
             gravity)
    for i in range(K - 1):
        h = (t[i + 1] - t[i]) / substeps
        change = tensions[i + 1] - tensions[i]
        for j in range(substeps):
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
