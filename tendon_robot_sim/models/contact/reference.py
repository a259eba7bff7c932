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
Plain-numpy twin of :mod:`tendon_robot_sim.models.contact._kernels`, for the tests.

Written from the geometry, not from the kernels: signed distances as the minimum over each
shape's faces, a mesh as the minimum over all its triangles (no grid), the laws with numpy's
``logaddexp``. Slow, independent, vectorised over the points.
"""

from __future__ import annotations

import numpy as np

from tendon_robot_sim.models.contact._kernels import (BOX, CAPSULE, CYLINDER, LAW_DAMPING,
                                                      LAW_DELTA, LAW_K, LAW_MU, LAW_SLIP, PLANE,
                                                      SPHERE)


def penalty(g, k, delta):
    """Return the load [N/m] at gap g [m]: k delta softplus(-g/delta) sigmoid(-g/delta)."""
    x = -np.asarray(g, dtype=float) / delta
    return k * delta * np.logaddexp(0.0, x) * np.exp(-np.logaddexp(0.0, -x))


def energy(g, k, delta):
    """Penalty energy per length [J/m]: k/2 (delta softplus(-g/delta))^2."""
    return 0.5 * k * (delta * np.logaddexp(0.0, -np.asarray(g, dtype=float) / delta)) ** 2


def _triangle_closest(p, a, b, c):
    """Closest points of triangles (a, b, c: (t, 3)) to points p (k, 3): (k, t, 3)."""
    p = p[:, None, :]
    # candidates: projection onto the plane if inside, else the closest point of each edge
    n = np.cross(b - a, c - a)
    n2 = np.sum(n * n, axis=-1)
    proj = p - (np.sum((p - a) * n, axis=-1) / n2)[..., None] * n
    inside = np.ones(proj.shape[:2], dtype=bool)
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.sum(np.cross(v - u, proj - u) * n, axis=-1) >= 0.0
    best = np.where(inside[..., None], proj, np.nan)
    best_d = np.where(inside, np.sum((p - proj) ** 2, axis=-1), np.inf)
    for u, v in ((a, b), (b, c), (c, a)):
        e = v - u
        t = np.clip(np.sum((p - u) * e, axis=-1) / np.sum(e * e, axis=-1), 0.0, 1.0)
        q = u + t[..., None] * e
        d = np.sum((p - q) ** 2, axis=-1)
        better = d < best_d
        best = np.where(better[..., None], q, best)
        best_d = np.where(better, d, best_d)
    return best, n


def signed_distance(shape, pose, dims, p, triangles=None):
    """
    Signed distance of world points p (k, 3) to one obstacle, closest points and normals.

    ``pose`` (12,) position and row-major rotation, ``dims`` as in ``Contact.dims``,
    ``triangles`` (t, 3, 3) local vertices of a mesh. Returns d (k,), c (k, 3), n (k, 3).
    """
    o, R = pose[0:3], pose[3:12].reshape(3, 3)
    x = (p - o) @ R
    if shape == PLANE:
        d = x[:, 2]
        q = x * [1.0, 1.0, 0.0]
        n = np.tile([0.0, 0.0, 1.0], (len(x), 1))
    elif shape in (SPHERE, CAPSULE):
        axis = np.zeros_like(x)
        if shape == CAPSULE:
            axis[:, 2] = np.clip(x[:, 2], -dims[1], dims[1])
        r = x - axis
        rho = np.linalg.norm(r, axis=1)
        n = r / rho[:, None]
        d = rho - dims[0]
        q = axis + dims[0] * n
    elif shape == CYLINDER:
        # the distance to a convex solid: to its side, its caps and their rims
        rho = np.hypot(x[:, 0], x[:, 1])
        e = np.column_stack((x[:, 0] / rho, x[:, 1] / rho, np.zeros(len(x))))
        zc = np.clip(x[:, 2], -dims[1], dims[1])
        radial = np.minimum(rho, dims[0])
        q_out = e * radial[:, None] + np.column_stack((0 * zc, 0 * zc, zc))
        d_out = np.linalg.norm(x - q_out, axis=1)
        dr, dz = dims[0] - rho, dims[1] - np.abs(x[:, 2])
        inside = (dr > 0) & (dz > 0)
        side = dr < dz
        q_in = np.where(side[:, None], e * dims[0] + np.column_stack((0 * zc, 0 * zc, x[:, 2])),
                        np.column_stack((x[:, 0], x[:, 1], np.sign(x[:, 2]) * dims[1])))
        d = np.where(inside, -np.minimum(dr, dz), d_out)
        q = np.where(inside[:, None], q_in, q_out)
        n = (x - q) / d[:, None]
    elif shape == BOX:
        h = np.asarray(dims)
        q = np.clip(x, -h, h)
        gap = np.abs(x) - h
        inside = np.all(gap <= 0.0, axis=1)
        d = np.where(inside, gap.max(axis=1), np.linalg.norm(x - q, axis=1))
        face = np.argmax(gap, axis=1)
        rows = np.arange(len(x))
        q_in = x.copy()
        q_in[rows, face] = np.sign(x[rows, face]) * h[face]
        q = np.where(inside[:, None], q_in, q)
        n = (x - q) / d[:, None]
    else:
        best, normals = _triangle_closest(x, triangles[:, 0], triangles[:, 1], triangles[:, 2])
        dist = np.linalg.norm(x[:, None, :] - best, axis=-1)
        t = np.argmin(dist, axis=1)
        rows = np.arange(len(x))
        q = best[rows, t]
        side = np.sign(np.sum((x - q) * normals[t], axis=1))
        d = dist[rows, t] * np.where(side >= 0, 1.0, -1.0)
        n = (x - q) / d[:, None]
    return d, q @ R.T + o, n @ R.T


def contact_force(law, d, n, a, vel=None):
    """
    Load per unit length [N/m] of one obstacle on envelope points (radius a) at distance d.

    ``law`` (5,) as ``Contact.law``; with ``vel`` (k, 3) [m/s] the normal damping and the
    regularised Coulomb friction. Returns (k, 3).
    """
    g = d - a
    fn = penalty(g, law[LAW_K], law[LAW_DELTA])
    if vel is None:
        return fn[:, None] * n
    vn = np.sum(vel * n, axis=1)
    on = np.exp(-np.logaddexp(0.0, g / law[LAW_DELTA]))
    fn = np.maximum(fn - law[LAW_DAMPING] * on * vn, 0.0)
    vt = vel - vn[:, None] * n
    slip = np.sqrt(np.sum(vt * vt, axis=1) + law[LAW_SLIP] ** 2)
    return fn[:, None] * n - (law[LAW_MU] * fn / slip)[:, None] * vt
