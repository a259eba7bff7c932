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
The contacts of a solution: where the robot touches which obstacle, how hard, how deep.

A rod loaded by the distributed penalty touches an obstacle along patches: each stretch of
arc length over which the envelope is within :data:`PATCH_SCALES` distance scales of the
obstacle (its load above ~1e-6 k delta) is one contact, reported by its resultant.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tendon_robot_sim.models.contact import _kernels as kernels

# A patch: envelope points closer than this many distance scales (load > ~1e-6 k delta).
PATCH_SCALES = 7.0


@dataclass(frozen=True)
class ContactPoint:
    """
    One contact patch, world frame, SI units.

    ``s``: the load-weighted mean arc length [m]; ``point``: the obstacle's surface point
    nearest the rod at the patch's median of load [m]; ``normal``: the direction of the
    resultant, the load-weighted mean of the obstacle's outward normals; ``force``: the
    resultant the obstacle exerts on the robot over the patch [N] (penalty only: the normal
    load); ``penetration``: the largest depth of the envelope inside the obstacle [m] (0 when
    the smooth penalty holds it off the surface).
    """

    obstacle: str
    s: float
    point: np.ndarray
    normal: np.ndarray
    force: np.ndarray
    penetration: float

    def to_dict(self) -> dict:
        return {'obstacle': self.obstacle, 's': self.s, 'point': self.point.tolist(),
                'normal': self.normal.tolist(), 'force': self.force.tolist(),
                'penetration': self.penetration}


def rod_contacts(names, contact: kernels.Contact, arc: np.ndarray, points: np.ndarray,
                 tangents: np.ndarray, discs: tuple | None = None) -> list[ContactPoint]:
    """
    Contacts of a rod whose envelope (``contact.radius[0]``) passes through ``points``.

    ``arc`` (k,) reference arc lengths [m] of the points (k, 3) [m] (the solver's grid),
    ``tangents`` (k, 3) the rod's dp/ds there. The load is integrated along arc length as the
    solver's RK4 steps integrate it, by Simpson's rule on each step, its midpoint on the cubic
    Hermite curve through the points: the reported forces are those the solution balances
    (a patch narrower than the step is then resolved no better than the solver resolves it).
    ``discs``: (arc lengths (d,) [m], centres (d, 3) [m], thickness [m]) of discs whose
    envelope (``contact.radius[1]``) replaces the rod's over their thickness, as the discrete
    model applies them (``_cosserat_kernels.disc_contact``).
    """
    t = np.array([0.0, 0.5])
    h = np.diff(arc)[:, None, None]
    h00, h10 = 2 * t ** 3 - 3 * t ** 2 + 1, t ** 3 - 2 * t ** 2 + t
    h01, h11 = -2 * t ** 3 + 3 * t ** 2, t ** 3 - t ** 2
    fine = (h00[None, :, None] * points[:-1, None] + h10[None, :, None] * h * tangents[:-1, None]
            + h01[None, :, None] * points[1:, None] + h11[None, :, None] * h * tangents[1:, None])
    points = np.concatenate((fine.reshape(-1, 3), points[-1:]))
    arc = np.concatenate(((arc[:-1, None] + h[:, :, 0] * t).ravel(), arc[-1:]))
    k = len(arc)
    gaps, surface, normals, loads = probe_points(contact, points, np.full(k, contact.radius[0]))
    weights = np.zeros(k)
    steps = np.diff(arc[0::2])
    weights[0:-1:2] += steps / 6.0
    weights[1::2] += 4.0 * steps / 6.0
    weights[2::2] += steps / 6.0
    forces = loads * weights
    if discs is not None and len(discs[0]):
        where, centres, thickness = discs
        d_gaps, d_surface, d_normals, d_loads = probe_points(
            contact, centres, np.full(len(where), contact.radius[1]))
        rod_gaps, _, _, rod_loads = probe_points(contact, centres,
                                                 np.full(len(where), contact.radius[0]))
        order = np.argsort(np.concatenate((arc, where)), kind='stable')
        arc = np.concatenate((arc, where))[order]
        gaps = np.concatenate((gaps, np.minimum(d_gaps, rod_gaps)), axis=1)[:, order]
        surface = np.concatenate((surface, d_surface), axis=1)[:, order]
        normals = np.concatenate((normals, d_normals), axis=1)[:, order]
        forces = np.concatenate((forces, thickness * (d_loads - rod_loads)), axis=1)[:, order]
    return _patches(names, contact, arc, gaps, surface, normals, forces)


def node_contacts(names, contact: kernels.Contact, arc: np.ndarray, points: np.ndarray,
                  rod_lengths: np.ndarray, disc_lengths: np.ndarray) -> list[ContactPoint]:
    """
    Contacts of a rod whose load is lumped on nodes (the explicit dynamics).

    ``arc`` (k,) reference arc lengths [m] of the nodes ``points`` (k, 3) [m]; each node
    carries the load of ``rod_lengths`` [m] of the rod's envelope (``contact.radius[0]``) and
    of ``disc_lengths`` of the disc's (``contact.radius[1]``), as
    ``_explicit_kernels.contact_loads`` applies it: the reported forces are those it applies.
    """
    points = np.ascontiguousarray(points, dtype=float)
    k = len(arc)
    gaps, surface, normals, loads = probe_points(contact, points, np.full(k, contact.radius[0]))
    disc_gaps, _, _, disc_loads = probe_points(contact, points, np.full(k, contact.radius[1]))
    has_disc = disc_lengths > 0.0
    gaps = np.where(has_disc, np.minimum(gaps, disc_gaps), gaps)
    return _patches(names, contact, arc, gaps, surface, normals,
                    loads * rod_lengths + disc_loads * disc_lengths)


def probe_points(contact: kernels.Contact, points: np.ndarray, radii: np.ndarray):
    """Gaps (n, k), surface points and normals (n, k, 3) and penalty loads (n, k) [N/m]."""
    n, k = contact.shape.size, len(points)
    gaps = np.zeros((n, k))
    surface = np.zeros((n, k, 3))
    normals = np.zeros((n, k, 3))
    loads = np.zeros((n, k))
    kernels.probe(contact, np.ascontiguousarray(points, dtype=float), radii, gaps, surface,
                  normals, loads, np.zeros(12))
    return gaps, surface, normals, loads


def _patches(names, contact: kernels.Contact, arc: np.ndarray, gaps: np.ndarray,
             surface: np.ndarray, normals: np.ndarray, forces: np.ndarray
             ) -> list[ContactPoint]:
    """Group the points' normal forces [N] (n, k) per obstacle into patches (PATCH_SCALES)."""
    found = []
    for j, name in enumerate(names):
        near = gaps[j] < PATCH_SCALES * contact.law[j, kernels.LAW_DELTA]
        edges = np.flatnonzero(np.diff(np.concatenate(([0], near.astype(int), [0]))))
        for start, stop in zip(edges[0::2], edges[1::2]):
            rows = slice(start, stop)
            w = forces[j, rows]
            total = w.sum()
            if not total > 0.0:
                continue
            force = (w[:, None] * normals[j, rows]).sum(axis=0)
            centre = start + int(np.argmax(np.cumsum(w) >= 0.5 * total))
            found.append(ContactPoint(
                obstacle=name, s=float((w * arc[rows]).sum() / total),
                point=surface[j, centre].copy(), normal=force / np.linalg.norm(force),
                force=force, penetration=float(max(0.0, -gaps[j, rows].min()))))
    return found


def sunk_message(contacts, radius: float, dt: float) -> str | None:
    """
    One line on a contact deeper than the envelope's ``radius`` [m], else None.

    A time step (of ``dt`` [s]) that leaves the robot's axis inside an obstacle has not solved
    the contact: the penalty was too stiff for the step (it overshot) or too soft for the load.
    """
    deepest = max(contacts or (), key=lambda c: c.penetration, default=None)
    if deepest is None or deepest.penetration <= radius:
        return None
    return (f'contact with obstacle {deepest.obstacle!r} not resolved at dt = {dt:g} s: the '
            f'envelope is {deepest.penetration:.3g} m inside it at s = {deepest.s:.4g} m, deeper '
            f'than its radius {radius:g} m; give a smaller dt or a lower penalty_stiffness (or a '
            'higher one if the load sinks it: the penetration is about load per length / '
            'stiffness)')


def largest_penetration(contacts: list[ContactPoint]) -> float:
    """Return the deepest penetration of any contact [m] (0 without contacts)."""
    return max((c.penetration for c in contacts), default=0.0)


def total_force(contacts: list[ContactPoint]) -> np.ndarray:
    """Return the sum of the contacts' forces on the robot [N] (zero without contacts)."""
    return np.sum([c.force for c in contacts], axis=0) if contacts else np.zeros(3)
