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
Numba kernels of contact: the gap to each obstacle and the contact laws.

The world (:mod:`tendon_robot_sim.models.contact.world`) is handed to the solvers' kernels as
one :data:`Contact` tuple of arrays. :func:`closest` gives the signed distance of a point to an
obstacle's surface (negative inside), the closest surface point and the outward normal;
:func:`contact_force` sums the load of every obstacle on a point of the robot's envelope
(radius ``a``):

* normal: the smooth penalty of the incremental-potential contact of DisMech (Choi, Tong &
  Jawed, "Implicit contact model for discrete elastic rods in knot tying", 2021; Tong et al.
  2023), energy per unit length E(g) = k/2 (delta softplus(-g/delta))^2 of the gap
  g = distance - a, so f_n = -dE/dg = k delta softplus(-g/delta) sigmoid(-g/delta): a linear
  spring k (-g) once g << -delta, exponentially small once g >> delta, smooth in between;
* normal damping (dynamics only): - c sigmoid(-g/delta) v_n, the total normal load kept >= 0
  (the damper may not pull the robot onto the obstacle);
* friction (dynamics only): regularised Coulomb, f_t = -mu f_n v_t / sqrt(|v_t|^2 + v_eps^2).

All loads are per unit length of rod [N/m] (k [N/m^2], c [N s/m^2]): the shooting integrates
them along the rod. :mod:`tendon_robot_sim.models.contact.reference` computes the same with
plain numpy, and is what the tests compare with.
"""

from collections import namedtuple
import math

from numba import njit
from tendon_robot_sim.models._numerics import kernel

# The broad phase is inlined where it is called: the explicit stepper tests every node of every
# step, and a call passes the world's arrays, whose reference counts cost more than the test.
# (Inlining the laws and the primitives too made the explicit contact 14 % faster, at a cost in
# compile time for every solver that calls them.)
inlined = njit(cache=True, error_model='numpy', inline='always')

# Obstacle shapes (Contact.shape)
PLANE, SPHERE, CYLINDER, CAPSULE, BOX, MESH = 0, 1, 2, 3, 4, 5
# Contact.law columns: penalty stiffness k [N/m^2], distance scale delta [m], normal damping
# c [N s/m^2], Coulomb coefficient mu, regularising slip velocity v_eps [m/s]
LAW_K, LAW_DELTA, LAW_DAMPING, LAW_MU, LAW_SLIP = 0, 1, 2, 3, 4
# Beyond this many distance scales the penalty is below 1e-17 k delta: not evaluated.
CUTOFF = 20.0
# Contact.grid columns of a mesh: origin (3) [m], cell size [m], cells per axis (3), first
# cell in Contact.cells, first triangle in Contact.tri (local frame)
GRID_ORIGIN, GRID_CELL, GRID_DIMS, GRID_CELL0, GRID_TRI0 = 0, 3, 4, 7, 8
GRID_SIZE = 9

Contact = namedtuple('Contact', [
    'shape',   # (n,) int: PLANE, SPHERE, ...
    'pose',    # (n, 12) position [m], then the rotation local -> world, row-major
    'dims',    # (n, 3): sphere radius; cylinder/capsule radius, half length; box half sizes
    'law',     # (n, 5) contact parameters (LAW_* columns)
    'grid',    # (n, GRID_SIZE) meshes: their spatial grid (GRID_* columns)
    'cells',   # (cells + 1,) int: first entry in items of every grid cell of every mesh
    'items',   # (m,) int: triangles (global index into tri) listed per cell
    'tri',     # (t, 3, 3) triangles of every mesh, vertices in the mesh's own frame [m]
    'bounds',  # (n, 4) a sphere enclosing each obstacle: centre, radius [m] (plane: -1)
    'radius',  # (2,) envelope of the robot: rod radius between discs, disc radius [m]
    'work',    # (CW_SIZE,) scratch of the solvers' kernels: contact_force's, then p, v, f
])
CW_P, CW_V, CW_F, CW_SIZE = 12, 15, 18, 21


@kernel
def softplus(x):
    """log(1 + exp(x)), without overflow."""
    return max(x, 0.0) + math.log1p(math.exp(-abs(x)))


@kernel
def sigmoid(x):
    """1 / (1 + exp(-x)), without overflow."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


@kernel
def penalty(g, k, delta):
    """Return the penalty's load [N/m] at gap g [m]: -dE/dg, E = k/2 (delta sp(-g/delta))^2."""
    x = -g / delta
    return k * delta * softplus(x) * sigmoid(x)


@kernel
def _to_local(pose, p, x):
    """Set x = R^T (p - o) for a pose row (o, R row-major)."""
    d0, d1, d2 = p[0] - pose[0], p[1] - pose[1], p[2] - pose[2]
    for i in range(3):
        x[i] = pose[3 + i] * d0 + pose[6 + i] * d1 + pose[9 + i] * d2


@kernel
def _to_world(pose, x, point, out):
    """Set out = R x (+ o when point)."""
    for i in range(3):
        out[i] = (pose[3 + 3 * i] * x[0] + pose[4 + 3 * i] * x[1] + pose[5 + 3 * i] * x[2]
                  + (pose[i] if point else 0.0))


@kernel
def _closest_on_triangle(p, a, b, c, out):
    """Write the closest point of triangle abc to p (Ericson, Real-Time Collision Detection)."""
    ab0, ab1, ab2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    ac0, ac1, ac2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    ap0, ap1, ap2 = p[0] - a[0], p[1] - a[1], p[2] - a[2]
    d1 = ab0 * ap0 + ab1 * ap1 + ab2 * ap2
    d2 = ac0 * ap0 + ac1 * ap1 + ac2 * ap2
    if d1 <= 0.0 and d2 <= 0.0:
        out[0], out[1], out[2] = a[0], a[1], a[2]
        return
    bp0, bp1, bp2 = p[0] - b[0], p[1] - b[1], p[2] - b[2]
    d3 = ab0 * bp0 + ab1 * bp1 + ab2 * bp2
    d4 = ac0 * bp0 + ac1 * bp1 + ac2 * bp2
    if d3 >= 0.0 and d4 <= d3:
        out[0], out[1], out[2] = b[0], b[1], b[2]
        return
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        out[0], out[1], out[2] = a[0] + v * ab0, a[1] + v * ab1, a[2] + v * ab2
        return
    cp0, cp1, cp2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    d5 = ab0 * cp0 + ab1 * cp1 + ab2 * cp2
    d6 = ac0 * cp0 + ac1 * cp1 + ac2 * cp2
    if d6 >= 0.0 and d5 <= d6:
        out[0], out[1], out[2] = c[0], c[1], c[2]
        return
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        out[0], out[1], out[2] = a[0] + w * ac0, a[1] + w * ac1, a[2] + w * ac2
        return
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        out[0] = b[0] + w * (c[0] - b[0])
        out[1] = b[1] + w * (c[1] - b[1])
        out[2] = b[2] + w * (c[2] - b[2])
        return
    denom = 1.0 / (va + vb + vc)
    v = vb * denom
    w = vc * denom
    for i in range(3):
        out[i] = a[i] + v * (b[i] - a[i]) + w * (c[i] - a[i])


@kernel
def _mesh_closest(world, j, x, reach, c, nrm, q):
    """
    Signed distance from local point x to mesh j within ``reach``, or a large number.

    Only the triangles listed in x's grid cell are visited: every triangle within the grid's
    margin of a cell is listed in it (:func:`tendon_robot_sim.models.contact.mesh.build_grid`).
    The sign is that of the closest triangle's face normal; c and nrm are local.
    """
    g = world.grid[j]
    h = g[GRID_CELL]
    idx = 0
    for a in range(3):
        n = int(g[GRID_DIMS + a])
        i = int(math.floor((x[a] - g[GRID_ORIGIN + a]) / h))
        if i < 0 or i >= n:
            return 1e30
        idx = idx * n + i
    cell = int(g[GRID_CELL0]) + idx
    best = reach * reach
    found = -1
    for e in range(world.cells[cell], world.cells[cell + 1]):
        t = world.items[e]
        tri = world.tri[t]
        _closest_on_triangle(x, tri[0], tri[1], tri[2], q)
        d2 = (x[0] - q[0]) ** 2 + (x[1] - q[1]) ** 2 + (x[2] - q[2]) ** 2
        if d2 < best:
            best = d2
            found = t
            c[0], c[1], c[2] = q[0], q[1], q[2]
    if found < 0:
        return 1e30
    tri = world.tri[found]
    e10, e11, e12 = tri[1, 0] - tri[0, 0], tri[1, 1] - tri[0, 1], tri[1, 2] - tri[0, 2]
    e20, e21, e22 = tri[2, 0] - tri[0, 0], tri[2, 1] - tri[0, 1], tri[2, 2] - tri[0, 2]
    f0, f1, f2 = e11 * e22 - e12 * e21, e12 * e20 - e10 * e22, e10 * e21 - e11 * e20
    d = math.sqrt(best)
    side = (x[0] - c[0]) * f0 + (x[1] - c[1]) * f1 + (x[2] - c[2]) * f2
    if d > 1e-12:
        s = 1.0 / d if side >= 0.0 else -1.0 / d
        for i in range(3):
            nrm[i] = (x[i] - c[i]) * s
    else:
        fn = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
        nrm[0], nrm[1], nrm[2] = f0 / fn, f1 / fn, f2 / fn
    return d if side >= 0.0 else -d


@kernel
def closest(world, j, p, reach, c, nrm, x, q):
    """
    Signed distance [m] from world point p to the surface of obstacle j (negative inside).

    Writes the closest surface point c and the outward unit normal nrm (world frame). A mesh is
    searched only within ``reach`` [m] (beyond: 1e30, c and nrm unset). Scratch: x, q (3,).
    """
    pose = world.pose[j]
    dims = world.dims[j]
    shape = world.shape[j]
    _to_local(pose, p, x)
    if shape == PLANE:
        d = x[2]
        q[0], q[1], q[2] = x[0], x[1], 0.0
        c[0], c[1], c[2] = 0.0, 0.0, 1.0
    elif shape == SPHERE or shape == CAPSULE:
        z = 0.0 if shape == SPHERE else min(max(x[2], -dims[1]), dims[1])
        r0, r1, r2 = x[0], x[1], x[2] - z
        rho = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
        if rho < 1e-15:
            r0, r1, r2, rho = 0.0, 0.0, 1.0, 1.0
        d = rho - dims[0]
        c[0], c[1], c[2] = r0 / rho, r1 / rho, r2 / rho
        for i in range(3):
            q[i] = dims[0] * c[i]
        q[2] += z
    elif shape == CYLINDER:
        rho = math.sqrt(x[0] * x[0] + x[1] * x[1])
        e0, e1 = (x[0] / rho, x[1] / rho) if rho > 1e-15 else (1.0, 0.0)
        dr = rho - dims[0]
        dz = abs(x[2]) - dims[1]
        sz = 1.0 if x[2] >= 0.0 else -1.0
        if dr > 0.0 and dz > 0.0:        # beyond the rim
            d = math.sqrt(dr * dr + dz * dz)
            q[0], q[1], q[2] = dims[0] * e0, dims[0] * e1, sz * dims[1]
            c[0], c[1], c[2] = dr * e0 / d, dr * e1 / d, sz * dz / d
        elif dr > dz:                    # nearest the side
            d = dr
            q[0], q[1], q[2] = dims[0] * e0, dims[0] * e1, x[2]
            c[0], c[1], c[2] = e0, e1, 0.0
        else:                            # nearest an end
            d = dz
            q[0], q[1], q[2] = x[0], x[1], sz * dims[1]
            c[0], c[1], c[2] = 0.0, 0.0, sz
    elif shape == BOX:
        outside = 0.0
        inside = -1e30
        face = 0
        for i in range(3):
            qi = abs(x[i]) - dims[i]
            q[i] = min(max(x[i], -dims[i]), dims[i])
            if qi > 0.0:
                outside += qi * qi
            if qi > inside:
                inside = qi
                face = i
        if outside > 0.0:
            d = math.sqrt(outside)
            for i in range(3):
                c[i] = (x[i] - q[i]) / d
        else:
            d = inside
            for i in range(3):
                c[i] = 0.0
            c[face] = 1.0 if x[face] >= 0.0 else -1.0
            q[face] = c[face] * dims[face]
    else:
        # mesh: closest point and normal in scratch; reuse c for the local normal
        d = _mesh_closest(world, j, x, reach, q, c, nrm)
        if d > 1e29:
            return d
    # q: local closest point, c: local normal -> world
    _to_world(pose, c, False, nrm)
    _to_world(pose, q, True, c)
    return d


@inlined
def beyond(world, j, p, reach):
    """Return whether point p [m] is farther than ``reach`` [m] from obstacle j's bounds."""
    b = world.bounds[j]
    pose = world.pose[j]
    if b[3] < 0.0:       # a plane: its signed distance, along its z axis
        d = ((p[0] - pose[0]) * pose[5] + (p[1] - pose[1]) * pose[8]
             + (p[2] - pose[2]) * pose[11])
        return d > reach
    d0, d1, d2 = p[0] - b[0], p[1] - b[1], p[2] - b[2]
    return d0 * d0 + d1 * d1 + d2 * d2 > (b[3] + reach) ** 2


@inlined
def within_reach(world, p, a):
    """
    Return whether the envelope of radius ``a`` [m] at p [m] is within any obstacle's reach.

    The broad phase at the caller: the solvers' right-hand sides call :func:`contact_force`
    only when this holds.
    """
    for j in range(world.shape.size):
        if not beyond(world, j, p, a + CUTOFF * world.law[j, LAW_DELTA]):
            return True
    return False


@inlined
def near(world, p, a, w):
    """
    Return whether a point p [m] is within ``a`` [m] plus the penalty's reach of any obstacle.

    The exact distance (:func:`closest`) after the bounds' test. Scratch: w (12,).
    """
    for j in range(world.shape.size):
        reach = a + CUTOFF * world.law[j, LAW_DELTA]
        if beyond(world, j, p, reach):
            continue
        if closest(world, j, p, reach, w[0:3], w[3:6], w[6:9], w[9:12]) < reach:
            return True
    return False


@kernel
def contact_force(world, p, vel, dynamic, a, f, w):
    """
    Add to f the load per unit length [N/m] of every obstacle on the envelope point p.

    p [m] and f in the world frame; ``a`` the envelope radius [m]; ``vel`` the point's velocity
    [m/s] (read when ``dynamic``: normal damping and friction). Returns the summed normal load
    [N/m]. Scratch: w (12,).
    """
    c, nrm, x, q = w[0:3], w[3:6], w[6:9], w[9:12]
    total = 0.0
    for j in range(world.shape.size):
        law = world.law[j]
        delta = law[LAW_DELTA]
        reach = a + CUTOFF * delta
        if beyond(world, j, p, reach):
            continue
        d = closest(world, j, p, reach, c, nrm, x, q)
        g = d - a
        if g > CUTOFF * delta:
            continue
        fn = penalty(g, law[LAW_K], delta)
        if dynamic:
            vn = vel[0] * nrm[0] + vel[1] * nrm[1] + vel[2] * nrm[2]
            fn = max(fn - law[LAW_DAMPING] * sigmoid(-g / delta) * vn, 0.0)
            t0, t1, t2 = vel[0] - vn * nrm[0], vel[1] - vn * nrm[1], vel[2] - vn * nrm[2]
            slip = math.sqrt(t0 * t0 + t1 * t1 + t2 * t2 + law[LAW_SLIP] ** 2)
            ft = law[LAW_MU] * fn / slip
            f[0] -= ft * t0
            f[1] -= ft * t1
            f[2] -= ft * t2
        for i in range(3):
            f[i] += fn * nrm[i]
        total += fn
    return total


@kernel
def probe(world, points, a, gaps, surface, normals, loads, w):
    """
    Gap [m], closest surface point, outward normal and penalty load [N/m] of every point.

    points (k, 3) world frame; a (k,) envelope radius of each; outputs (n, k) and (n, k, 3) per
    obstacle (gap 1e30 and zero load where a mesh is out of reach). For the contact reports.
    """
    c, nrm, x, q = w[0:3], w[3:6], w[6:9], w[9:12]
    for j in range(world.shape.size):
        law = world.law[j]
        for i in range(points.shape[0]):
            reach = a[i] + CUTOFF * law[LAW_DELTA]
            d = closest(world, j, points[i], reach, c, nrm, x, q)
            gaps[j, i] = d - a[i]
            if d > 1e29:
                loads[j, i] = 0.0
                continue
            loads[j, i] = penalty(gaps[j, i], law[LAW_K], law[LAW_DELTA])
            for e in range(3):
                surface[j, i, e] = c[e]
                normals[j, i, e] = nrm[e]
