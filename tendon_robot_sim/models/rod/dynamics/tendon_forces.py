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
Tendon, vertebra-weight and tip loads on a PyElastica Cosserat rod.

One :class:`TendonForces` forcing object loads the rod with every tendon of a
robot, the weight of the vertebrae and the external tip wrench. It follows the
procedure of G. Tuzlaci's TendonForces add-on to PyElastica (gabotuzl/TendonForces):
each tendon runs in straight segments between the holes of consecutive
vertebrae and pulls each vertebra towards the holes of its neighbours with its
tension T.

Model decisions
---------------
* A vertebra at arc length s_k sits at the nearest node k of the rod (k >= 1;
  node 0 is the clamp). With ``rod.elements`` a multiple of ``L / spacing`` the
  vertebrae fall exactly on nodes.
* Its orientation is the mean of those of the two elements meeting at its node,
  k - 1 and k (the midpoint of the rotation from one to the other); the tip
  vertebra takes the last element's. A vertebra therefore turns with the rod at
  its node, also the first one, whose element k - 1 = 0 is clamped.
* The moment of its hole offset, r x F, is shared equally by the free elements
  meeting at its node: k - 1 and k, only k when k - 1 is the clamped element 0
  (where it would be lost), only k - 1 at the tip.
* A tendon's first segment starts at its hole in the base plate (s = 0, at the
  fixed base pose). The plate is part of the clamp, so the reaction of that
  segment goes into the clamp and is not applied.
* The anchor vertebra (at ``tendon.end``) gets only the pull towards the
  previous hole; vertebrae past a tendon's anchor are not loaded by it.
* Holes come from ``Tendon.hole(s_k)`` at each vertebra's own arc length, so
  helical and tapered routings are followed vertebra by vertebra.
* The vertebra weight ``vertebra_mass * robot.gravity`` acts at the vertebra
  node (on the centreline, so it makes no moment).
* The tip wrench ``robot.tip_load`` (world frame) adds its force at the last
  node and its moment, turned into the local frame, to the last element.

Unlike the published add-on, directors are indexed by element (not node) and
never past the last element, no hole moment is lost in the clamp, the tip vertebra
gets its moment, the weight follows ``robot.gravity`` (not a fixed -z), and all
tendons share one forcing object (one Python call per step instead of one per tendon).

PyElastica conventions used: forces are per node in the world frame, shape
(3, n_nodes); torques are per element in the local material frame, shape
(3, n_elems); ``director_collection[:, :, e]`` has rows d1, d2, d3, so
Q = directors maps world -> local and Q.T local -> world.

The per-step work is in
:func:`~tendon_robot_sim.models.rod.dynamics._explicit_kernels.tendon_wrench_kernel` (numba,
next to the compiled stepper that inlines it); the same maths in plain numpy is
:func:`tendon_wrench_numpy`, which tests compare the kernel to.
"""

from __future__ import annotations

from dataclasses import dataclass

from elastica.external_forces import NoForces
import numpy as np

from tendon_robot_sim.models.rod.dynamics._explicit_kernels import tendon_wrench_kernel
from tendon_robot_sim.models.rod.dynamics.simulation import vertebra_nodes
from tendon_robot_sim.models.tendon_robot import Robot


@dataclass(frozen=True)
class TendonLayout:
    """
    Where the vertebrae and tendon holes are on a discretised rod.

    Attributes
    ----------
    nodes : int array (k,)
        Node index of each vertebra (>= 1): between elements ``nodes - 1`` and ``nodes``.
    mismatch : float array (k,)
        Node arc length minus vertebra arc length [m] (0 when on a node).
    holes : float array (n_tendons, 3, k)
        Hole of each tendon in each vertebra, body frame (d1, d2, d3) [m];
        zero past the tendon's anchor.
    base_holes : float array (n_tendons, 3)
        Hole of each tendon in the base plate, world frame [m].
    anchors : int array (n_tendons,)
        Index (into the vertebrae) of each tendon's anchor vertebra.

    """

    nodes: np.ndarray
    mismatch: np.ndarray
    holes: np.ndarray
    base_holes: np.ndarray
    anchors: np.ndarray

    @classmethod
    def from_robot(cls, robot: Robot, n_elements: int | None = None) -> 'TendonLayout':
        """
        Place the vertebrae of ``robot`` on a rod of ``n_elements`` (default rod.elements).

        Raises
        ------
        ValueError
            If the rod is too coarse to give each vertebra its own node, or a
            tendon has no vertebra to anchor to.

        """
        nodes, spacing = vertebra_nodes(robot, n_elements)
        s = robot.vertebra_positions
        anchors = np.array([int(np.argmin(np.abs(s - t.end))) for t in robot.tendons])
        holes = np.zeros((len(robot.tendons), 3, s.size))
        base_holes = np.empty((len(robot.tendons), 3))
        base = robot.base
        for j, (tendon, anchor) in enumerate(zip(robot.tendons, anchors)):
            holes[j, :, :anchor + 1] = tendon.hole(s[:anchor + 1])[0]
            base_holes[j] = base.position + base.rotation @ tendon.hole(0.0)[0]
        return cls(nodes=nodes, mismatch=nodes * spacing - s, holes=holes,
                   base_holes=base_holes, anchors=anchors)

    def hole_positions(self, position: np.ndarray, director: np.ndarray) -> np.ndarray:
        """
        World position of every vertebra hole, shape (n_tendons, 3, k) [m].

        ``position`` is the rod's (3, n_nodes) node positions, ``director`` its
        (3, 3, n_elems) directors. Entries past a tendon's anchor are the
        vertebra centre (their body-frame hole is zero) and carry no meaning.
        """
        q = vertebra_directors(director, self.nodes)  # (3, 3, k), world -> local
        # r = Q.T h: world offset of the hole from the vertebra centre
        offsets = np.einsum('bak,jbk->jak', q, self.holes)
        return position[:, self.nodes][np.newaxis] + offsets

    def tendon_paths(self, position: np.ndarray, director: np.ndarray) -> tuple:
        """Each tendon's polyline (3, anchor + 2) [m]: the base hole, then its vertebra holes."""
        holes = self.hole_positions(position, director)
        return tuple(
            np.concatenate((self.base_holes[j][:, np.newaxis], holes[j, :, :anchor + 1]), axis=1)
            for j, anchor in enumerate(self.anchors))

    @staticmethod
    def path_lengths(paths: tuple) -> np.ndarray:
        """Length of each polyline of :meth:`tendon_paths`, (n_tendons,) [m]."""
        return np.array([np.sqrt((np.diff(path, axis=1) ** 2).sum(axis=0)).sum()
                         for path in paths])


class TendonForces(NoForces):
    """
    All tendons, the vertebra weights and the tip wrench as one PyElastica forcing.

    Use it as ``simulator.add_forcing_to(rod).using(TendonForces, robot=robot,
    tensions=tensions)``. See the module docstring for the model.

    Parameters
    ----------
    robot : Robot
        Geometry, vertebra mass, gravity and tip load.
    tensions : float64 array (n_tendons,)
        Tendon tensions [N]. Kept by reference (``np.asarray``): PyElastica 1.0
        gives no handle on a forcing object after ``finalize()``, so the owner
        changes the tensions by writing into this array in place
        (``tensions[:] = ...``); the next stage uses the new values.
    n_elements : int, optional
        Elements of the rod (default ``robot.rod.elements``).
    vertebra_weight : bool
        Apply the vertebra weights (Tuzlaci's W_n). False when the vertebra masses
        are part of the rod's nodal masses, so that ``GravityForces`` weighs them
        (the simulator: :func:`~tendon_robot_sim.models.rod.dynamics.explicit.add_vertebra_discs`).
    tip_wrench : float64 array (2, 3), optional
        Tip force [N] and moment [N m], world frame; kept by reference like
        ``tensions``, so the owner can change the tip load at run time. Default: a
        private copy of ``robot.tip_load``.

    Notes
    -----
    Forces and torques come from the same hole geometry, so :meth:`apply_forces`
    adds both in one kernel call and :meth:`apply_torques` is the inherited
    no-op. PyElastica calls both at the same time and state in ``synchronize``
    and only then uses the external loads (the dynamic step), so the order does
    not matter; one call halves the Python and numba dispatch cost per stage.

    """

    def __init__(self, robot: Robot, tensions: np.ndarray, n_elements: int | None = None,
                 vertebra_weight: bool = True, tip_wrench: np.ndarray | None = None):
        super().__init__()
        self.tensions = np.asarray(tensions)
        if self.tensions.dtype != np.float64 or self.tensions.shape != (len(robot.tendons),):
            raise ValueError(
                f'tensions: must be a float64 array of shape ({len(robot.tendons)},) shared '
                f'with the caller, got {self.tensions.dtype} {self.tensions.shape}')
        self.layout = layout = TendonLayout.from_robot(robot, n_elements)
        self.weight = robot.vertebra_mass * robot.gravity * float(vertebra_weight)
        if tip_wrench is None:
            tip_wrench = np.array((robot.tip_load.force, robot.tip_load.moment), dtype=float)
        if tip_wrench.dtype != np.float64 or tip_wrench.shape != (2, 3):
            raise ValueError(f'tip_wrench: must be a float64 array of shape (2, 3), got '
                             f'{tip_wrench.dtype} {tip_wrench.shape}')
        self.tip_force, self.tip_moment = tip_wrench     # views: see changes in place
        # the kernel's arguments between (position, director) and the outputs, looked up
        # once (this runs every step), with its scratch arrays; the simulator's compiled
        # stepper passes them on
        self.kernel_arguments = (layout.nodes, layout.holes, layout.base_holes,
                                 layout.anchors, self.tensions, self.weight, self.tip_force,
                                 self.tip_moment, np.empty((3, 3)), np.empty(layout.holes.shape),
                                 np.empty((3, layout.nodes.size)))

    def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
        """Add tendon, weight and tip forces and torques to ``system`` (see class notes)."""
        tendon_wrench_kernel(system.position_collection, system.director_collection,
                             *self.kernel_arguments, system.external_forces,
                             system.external_torques)


def vertebra_directors(director: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """
    Directors (rows d1 d2 d3, world -> local) of the vertebrae on ``nodes``, (3, 3, k).

    The midpoint of the rotation from element k - 1 to element k,
    Q = D^(1/2) Q_(k-1) with D = Q_k Q_(k-1).T; the last node takes the last element's.
    (At the last node both are the last element: D = I.) With s = sin(theta/2) a
    (a the axis of D, theta its angle) and c = cos(theta/2),
    D^(1/2) = I + [s]x + [s]x^2 / (1 + c), s = w / (2 c), where the skew part of D
    is sin(theta) [a]x = [w]x and 4 c^2 = 1 + tr D: no division by small angles.
    """
    n_elems = director.shape[2]
    before = director[:, :, nodes - 1]
    after = director[:, :, np.minimum(nodes, n_elems - 1)]
    d = np.einsum('abk,cbk->ack', after, before)                       # D = Q_k Q_(k-1).T
    c = 0.5 * np.sqrt(1.0 + np.einsum('aak->k', d))
    s = np.stack((d[2, 1] - d[1, 2], d[0, 2] - d[2, 0], d[1, 0] - d[0, 1])) / (4.0 * c)
    skew = np.zeros((3, 3, nodes.size))
    skew[0, 1], skew[0, 2], skew[1, 2] = -s[2], s[1], -s[0]
    skew[1, 0], skew[2, 0], skew[2, 1] = s[2], -s[1], s[0]
    half = (np.eye(3)[:, :, np.newaxis] + skew
            + np.einsum('abk,bck->ack', skew, skew) / (1.0 + c))
    return np.einsum('abk,bck->ack', half, before)


def tendon_wrench_numpy(position: np.ndarray, director: np.ndarray, layout: TendonLayout,
                        tensions: np.ndarray, weight: np.ndarray, tip_force: np.ndarray,
                        tip_moment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """
    Load of :class:`TendonForces` in plain numpy (reference for the kernel).

    Parameters
    ----------
    position : array (3, n_nodes)
        Node positions, world [m].
    director : array (3, 3, n_elems)
        Directors, rows d1 d2 d3 (world -> local).
    layout : TendonLayout
        Vertebra nodes and holes.
    tensions : array (n_tendons,)
        Tendon tensions [N].
    weight : array (3,)
        Weight of one vertebra, world [N].
    tip_force, tip_moment : arrays (3,)
        Tip wrench, world [N], [N m].

    Returns
    -------
    forces : (3, n_nodes) world frame [N]
    torques : (3, n_elems) local frame of each element [N m]

    """
    n_tendons, _, n_vertebrae = layout.holes.shape
    holes = layout.hole_positions(position, director)                   # (j, 3, k)
    path = np.concatenate((layout.base_holes[:, :, np.newaxis], holes), axis=2)
    segment = np.diff(path, axis=2)                                     # hole i-1 -> hole i
    with np.errstate(invalid='ignore', divide='ignore'):                # zero past the anchor
        pull = tensions[:, np.newaxis, np.newaxis] * segment / np.linalg.norm(
            segment, axis=1, keepdims=True)
    index = np.arange(n_vertebrae)
    loaded = index[np.newaxis, :] <= layout.anchors[:, np.newaxis]     # (j, k)
    beyond = index[np.newaxis, :] < layout.anchors[:, np.newaxis]      # has a next hole
    pull = np.where(loaded[:, np.newaxis, :], pull, 0.0)
    # vertebra i: towards hole i-1 along its own segment, towards hole i+1 along the next
    force = -pull
    force[:, :, :-1] += np.where(beyond[:, np.newaxis, :-1], pull[:, :, 1:], 0.0)
    # moment (Q.T h) x F about the node, world frame
    offsets = holes - position[:, layout.nodes][np.newaxis]             # (j, 3, k)
    moment = np.cross(offsets, force, axis=1).sum(axis=0)               # (3, k)

    forces = np.zeros_like(position)
    n_elems = director.shape[2]
    torques = np.zeros((3, n_elems))
    forces[:, layout.nodes] += force.sum(axis=0) + weight[:, np.newaxis]
    for i, k in enumerate(layout.nodes):
        elements = [e for e in (k - 1, k) if 0 < e < n_elems] or [k - 1]
        for e in elements:
            torques[:, e] += director[:, :, e] @ moment[:, i] / len(elements)
    forces[:, -1] += tip_force
    torques[:, -1] += director[:, :, -1] @ tip_moment
    return forces, torques
