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
Kinematics of the rolling-joint snake: link poses, velocities, accelerations, cables.

Rolling joint n (D'Antuono et al. 2023, Section 2.2; frames f1..f5 of Kim et al. 2018). Link
n-1's distal surface and link n's proximal surface are circular arcs of the same radius R in
the joint plane (x, b), b = a x x, a the joint axis. In link n-1's frame (origin f1 at the
distal vertex) the centre of its arc is f2 = -R x; rolling without slipping by theta turns
the line of centres by theta/2, so

    contact point   f3 = -R x + R u(theta/2)                    (x axis of f3: u(theta/2))
    link n's centre f4 = -R x + 2 R u(theta/2)
    link n's frame  r(theta) = f4 + (H - R) u(theta),   R_rel = Rot_a(theta)

with u(phi) = cos(phi) x + sin(phi) b. The material points of both links at f3 have the
same velocity, so link n turns about the contact line at the rate theta_dot relative to
link n-1 (the paper's rotation about the instantaneous contact point).

Velocities and accelerations propagate base to tip (Eqs. (2)-(13)) in the world frame, with
the relative translation r(theta) differentiated exactly:

    v_n = v_{n-1} + w_{n-1} x rho + R_{n-1} r' qd
    a_n = a_{n-1} + wd_{n-1} x rho + w_{n-1} x (w_{n-1} x rho)
          + 2 w_{n-1} x (R_{n-1} r' qd) + R_{n-1} (r'' qd^2 + r' qdd),    rho = R_{n-1} r

(the paper's Eq. (11) writes the same with vectors fixed in the links; the contact point slides
along both surfaces at R qd / 2, which the exact derivative of r(theta) includes).

Cables run straight between holes (Eqs. (14)-(15)); the hole of a cable opens on the
rolling surface, so segment n of a cable with in-plane offset beta (and rho = sqrt(R^2 -
beta^2)) has the length l = 2 R - 2 rho cos(theta/2) - 2 beta sin(theta/2).

All functions take joint angles of shape (K, N) (K samples) and return arrays with a
leading K axis. Units: m, rad, s.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tendon_robot_sim.models.snake.robot import RollingJointSnake

X = np.array([1.0, 0.0, 0.0])


def cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Return a x b over the last axis (3,) of broadcastable arrays (numpy.cross costs ~10 us)."""
    return np.stack((a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]), axis=-1)


def rotation(axis: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """Rot_a(theta) (K, 3, 3) about a unit axis (3,) (Rodrigues)."""
    k = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]],
                  [-axis[1], axis[0], 0.0]])
    s, c = np.sin(theta)[:, None, None], np.cos(theta)[:, None, None]
    return np.eye(3) + s * k + (1.0 - c) * (k @ k)


@dataclass(frozen=True)
class ChainState:
    """The snake at K samples. Index n-1 of a per-joint or per-link axis is joint/link n."""

    rotations: np.ndarray      # (K, N+1, 3, 3) link frames (0 = base), link -> world
    origins: np.ndarray        # (K, N+1, 3) m, link frame origins (distal vertices)
    centers: np.ndarray        # (K, N, 3) m, centres of mass of links 1..N
    contacts: np.ndarray       # (K, N, 3) m, contact point f3 of joint n
    normals: np.ndarray        # (K, N, 3) x axis of f3: contact normal, into link n
    axes: np.ndarray           # (K, N, 3) joint axes (z of f3)
    proximal_holes: np.ndarray  # (K, N, C, 3) m, holes of link n on joint n's surface
    distal_holes: np.ndarray   # (K, N, C, 3) m, holes of link n-1 on joint n's surface
    omega: np.ndarray | None = None          # (K, N, 3) rad/s, links 1..N
    omega_dot: np.ndarray | None = None      # (K, N, 3) rad/s^2
    center_acceleration: np.ndarray | None = None   # (K, N, 3) m/s^2, no gravity
    center_velocity: np.ndarray | None = None       # (K, N, 3) m/s

    @property
    def tip_position(self) -> np.ndarray:
        """(K, 3) m: the distal vertex of the last link."""
        return self.origins[:, -1]

    def cable_segments(self) -> tuple[np.ndarray, np.ndarray]:
        """
        Lengths (K, N, C) [m] and unit directions (K, N, C, 3) of the cable segments.

        Segment n of a cable runs from link n's proximal hole to link n-1's distal hole;
        its direction is that of the pull on link n (Eqs. (14)-(16)). The two holes are
        mirror images in the tangent plane at the contact, so every segment of joint n is
        along -normal, also at zero length (a hole on the contact line at theta = 0).
        """
        e = np.broadcast_to(-self.normals[:, :, None, :], self.proximal_holes.shape)
        length = np.einsum('kncj,kncj->knc', self.distal_holes - self.proximal_holes, e)
        return length, e

    def cable_levers(self) -> np.ndarray:
        """
        Return lambda (K, N, C) [m]: moment of segment n's unit pull on link n about joint n.

        Equals -dl/dtheta_n, the generalised force of a unit tension on joint n.
        """
        _, e = self.cable_segments()
        arm = self.proximal_holes - self.contacts[:, :, None, :]
        return np.einsum('knj,kncj->knc', self.axes, cross(arm, e))


class SnakeKinematics:
    """Rolling-joint kinematics of one snake description."""

    def __init__(self, snake: RollingJointSnake):
        self.snake = snake
        link = snake.link
        self.R = link.radius_of_curvature
        self.H = link.height
        self.a = snake.joint_axes                       # (N, 3) in link n-1 (= link n)
        self.b = cross(self.a, X)                       # (N, 3) in-plane direction
        lateral = np.array([c.lateral for c in snake.cables])          # (C, 3)
        beta = self.b @ lateral.T                                      # (N, C)
        depth = self.R - np.sqrt(self.R ** 2 - beta ** 2)              # surface below vertex
        # distal holes of link n-1 and proximal holes of link n, in their own frames
        self.distal_hole_local = lateral[None] - depth[..., None] * X            # (N, C, 3)
        self.proximal_hole_local = (lateral[None]
                                    - (self.H - depth)[..., None] * X)           # (N, C, 3)

    def _plane(self, n: int, phi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """u(phi) and u_perp(phi) = du/dphi of joint n, (K, 3) each, in link n-1's frame."""
        c, s = np.cos(phi)[:, None], np.sin(phi)[:, None]
        return c * X + s * self.b[n], -s * X + c * self.b[n]

    def relative(self, n: int, theta: np.ndarray):
        """
        Joint n (0-based) at angles (K,): R_rel, r, r', r'', contact point, normal.

        All in link n-1's frame; r is link n's origin, primes are d/dtheta.
        """
        R, H = self.R, self.H
        u_half, up_half = self._plane(n, theta / 2.0)
        u, up = self._plane(n, theta)
        r = -R * X + 2.0 * R * u_half + (H - R) * u
        r1 = R * up_half + (H - R) * up
        r2 = -0.5 * R * u_half - (H - R) * u
        contact = -R * X + R * u_half
        return rotation(self.a[n], theta), r, r1, r2, contact, u_half

    def state(self, q, qd=None, qdd=None) -> ChainState:
        """
        Poses (and with qd, qdd: velocities and accelerations) at K samples.

        Parameters
        ----------
        q, qd, qdd : array (K, N) or (N,)
            Joint angles [rad], rates [rad/s], accelerations [rad/s^2].

        """
        q = np.atleast_2d(np.asarray(q, dtype=float))
        K, N = q.shape
        if N != self.snake.n_joints:
            raise ValueError(f'q: {N} joint angles, the snake has {self.snake.n_joints}')
        moving = qd is not None
        if moving:
            qd = np.atleast_2d(np.asarray(qd, dtype=float))
            qdd = (np.zeros_like(q) if qdd is None
                   else np.atleast_2d(np.asarray(qdd, dtype=float)))
        C = len(self.snake.cables)
        rotations = np.empty((K, N + 1, 3, 3))
        origins = np.empty((K, N + 1, 3))
        rotations[:, 0] = np.eye(3)
        origins[:, 0] = 0.0
        contacts, normals, axes = (np.empty((K, N, 3)) for _ in range(3))
        proximal, distal = np.empty((K, N, C, 3)), np.empty((K, N, C, 3))
        d_c = self.snake.link.center_of_mass
        w = np.zeros((K, 3))
        wd = np.zeros((K, 3))
        v = np.zeros((K, 3))
        acc = np.zeros((K, 3))
        omega, omega_dot, a_c, v_c = (np.empty((K, N, 3)) for _ in range(4))
        for n in range(N):
            Rp, op = rotations[:, n], origins[:, n]
            R_rel, r, r1, r2, contact, normal = self.relative(n, q[:, n])
            rotations[:, n + 1] = Rp @ R_rel
            rho = np.einsum('kij,kj->ki', Rp, r)
            origins[:, n + 1] = op + rho
            contacts[:, n] = op + np.einsum('kij,kj->ki', Rp, contact)
            normals[:, n] = np.einsum('kij,kj->ki', Rp, normal)
            axes[:, n] = Rp @ self.a[n]
            distal[:, n] = op[:, None] + np.einsum('kij,cj->kci', Rp, self.distal_hole_local[n])
            proximal[:, n] = origins[:, n + 1][:, None] + np.einsum(
                'kij,cj->kci', rotations[:, n + 1], self.proximal_hole_local[n])
            if not moving:
                continue
            A = axes[:, n]
            t1, t2 = qd[:, n, None], qdd[:, n, None]
            dr = np.einsum('kij,kj->ki', Rp, r1) * t1            # R_{n-1} r' qd
            ddr = np.einsum('kij,kj->ki', Rp, r2 * t1 ** 2 + r1 * t2)
            v = v + cross(w, rho) + dr
            acc = (acc + cross(wd, rho) + cross(w, cross(w, rho))
                   + 2.0 * cross(w, dr) + ddr)
            wd = wd + t2 * A + t1 * cross(w, A)               # Eqs. (3), (7)
            w = w + t1 * A                                       # Eqs. (2), (6)
            arm = np.einsum('kij,j->ki', rotations[:, n + 1], d_c)
            omega[:, n], omega_dot[:, n] = w, wd
            v_c[:, n] = v + cross(w, arm)                                     # (12)
            a_c[:, n] = acc + cross(wd, arm) + cross(w, cross(w, arm))  # (13)
        centers = origins[:, 1:] + np.einsum('knij,j->kni', rotations[:, 1:], d_c)
        return ChainState(rotations, origins, centers, contacts, normals, axes, proximal,
                          distal, *((omega, omega_dot, a_c, v_c) if moving else ()))
