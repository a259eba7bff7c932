"""Tendon, vertebra-weight and tip loads on a PyElastica Cosserat rod.

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
* Its orientation is that of element k - 1, the element ending at its node.
  This is valid for every vertebra, the tip one included, and never indexes one
  element past the end of the rod.
* The moment of its hole offset, r x F, is applied to element k - 1.
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
never past the last element, the tip vertebra gets its moment, the weight
follows ``robot.gravity`` (not a fixed -z), and all tendons share one forcing
object (one Python call per step instead of one per tendon).

PyElastica conventions used: forces are per node in the world frame, shape
(3, n_nodes); torques are per element in the local material frame, shape
(3, n_elems); ``director_collection[:, :, e]`` has rows d1, d2, d3, so
Q = directors maps world -> local and Q.T local -> world.

The per-step work is in :func:`_tendon_wrench_kernel` (numba); the same maths in
plain numpy is :func:`tendon_wrench_numpy`, which tests compare the kernel to.
"""

from __future__ import annotations

from dataclasses import dataclass

from elastica.external_forces import NoForces
from numba import njit
import numpy as np

from tendon_robot_sim.core.robot import Robot, vertebrae_required


@dataclass(frozen=True)
class TendonLayout:
    """Where the vertebrae and tendon holes are on a discretised rod.

    Attributes
    ----------
    nodes : int array (k,)
        Node index of each vertebra (>= 1); its element is ``nodes - 1``.
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
        """Place the vertebrae of ``robot`` on a rod of ``n_elements`` (default rod.elements).

        Raises
        ------
        ValueError
            If the rod is too coarse to give each vertebra its own node, or a
            tendon has no vertebra to anchor to.
        """
        n_elements = robot.rod.elements if n_elements is None else n_elements
        s = robot.vertebra_positions
        if s.size == 0:
            raise ValueError(vertebrae_required('dynamic model'))
        spacing = robot.rod.length / n_elements
        nodes = np.rint(s / spacing).astype(np.int64)
        if nodes[0] < 1 or np.any(np.diff(nodes) == 0):
            raise ValueError(
                f'rod.elements: {n_elements} elements (node spacing {spacing:.4g} m) are too '
                f'coarse to give each vertebra its own node (vertebrae at '
                f'{np.round(s, 6).tolist()} m); use more elements')
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
        """World position of every vertebra hole, shape (n_tendons, 3, k) [m].

        ``position`` is the rod's (3, n_nodes) node positions, ``director`` its
        (3, 3, n_elems) directors. Entries past a tendon's anchor are the
        vertebra centre (their body-frame hole is zero) and carry no meaning.
        """
        q = director[:, :, self.nodes - 1]            # (3, 3, k), world -> local
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
    """All tendons, the vertebra weights and the tip wrench as one PyElastica forcing.

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

    Notes
    -----
    Forces and torques come from the same hole geometry, so :meth:`apply_forces`
    adds both in one kernel call and :meth:`apply_torques` is the inherited
    no-op. PyElastica calls both at the same time and state in ``synchronize``
    and only then uses the external loads (the dynamic step), so the order does
    not matter; one call halves the Python and numba dispatch cost per stage.
    """

    def __init__(self, robot: Robot, tensions: np.ndarray, n_elements: int | None = None):
        super().__init__()
        self.tensions = np.asarray(tensions)
        if self.tensions.dtype != np.float64 or self.tensions.shape != (len(robot.tendons),):
            raise ValueError(
                f'tensions: must be a float64 array of shape ({len(robot.tendons)},) shared '
                f'with the caller, got {self.tensions.dtype} {self.tensions.shape}')
        self.layout = layout = TendonLayout.from_robot(robot, n_elements)
        self.weight = robot.vertebra_mass * robot.gravity
        self.tip_force = np.array(robot.tip_load.force, dtype=np.float64)
        self.tip_moment = np.array(robot.tip_load.moment, dtype=np.float64)
        # the kernel's inputs that never change, looked up once (this runs every step)
        self._constants = (layout.nodes, layout.holes, layout.base_holes, layout.anchors,
                           self.tensions, self.weight, self.tip_force, self.tip_moment)

    def apply_forces(self, system, time: np.float64 = np.float64(0.0)) -> None:
        """Add tendon, weight and tip forces and torques to ``system`` (see class notes)."""
        _tendon_wrench_kernel(system.position_collection, system.director_collection,
                              *self._constants, system.external_forces, system.external_torques)


def tendon_wrench_numpy(position: np.ndarray, director: np.ndarray, layout: TendonLayout,
                        tensions: np.ndarray, weight: np.ndarray, tip_force: np.ndarray,
                        tip_moment: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Loads of :class:`TendonForces` in plain numpy (reference for the kernel).

    Parameters
    ----------
    position : (3, n_nodes) node positions, world [m].
    director : (3, 3, n_elems) directors, rows d1 d2 d3 (world -> local).
    layout : vertebra nodes and holes.
    tensions : (n_tendons,) [N].
    weight : (3,) weight of one vertebra, world [N].
    tip_force, tip_moment : (3,) tip wrench, world [N], [N m].

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
    q = director[:, :, layout.nodes - 1]                                # (3, 3, k)
    # moment h x (Q F) in the vertebra's local frame
    local_force = np.einsum('abk,jbk->jak', q, force)
    torque = np.cross(layout.holes, local_force, axis=1).sum(axis=0)   # (3, k)

    forces = np.zeros_like(position)
    torques = np.zeros((3, director.shape[2]))
    forces[:, layout.nodes] += force.sum(axis=0) + weight[:, np.newaxis]
    torques[:, layout.nodes - 1] += torque
    forces[:, -1] += tip_force
    torques[:, -1] += director[:, :, -1] @ tip_moment
    return forces, torques


@njit(cache=True)
def _add_hole_load(k, e, h0, h1, h2, fx, fy, fz, director, external_forces, external_torques):
    """Add force F (world) at the hole (h0, h1, h2) (body frame) of the vertebra at node k.

    The moment about the node, h x (Q F), goes to element e in its local frame.
    """
    external_forces[0, k] += fx
    external_forces[1, k] += fy
    external_forces[2, k] += fz
    lx = director[0, 0, e] * fx + director[0, 1, e] * fy + director[0, 2, e] * fz
    ly = director[1, 0, e] * fx + director[1, 1, e] * fy + director[1, 2, e] * fz
    lz = director[2, 0, e] * fx + director[2, 1, e] * fy + director[2, 2, e] * fz
    external_torques[0, e] += h1 * lz - h2 * ly
    external_torques[1, e] += h2 * lx - h0 * lz
    external_torques[2, e] += h0 * ly - h1 * lx


@njit(cache=True)
def _tendon_wrench_kernel(position, director, nodes, holes, base_holes, anchors, tensions,
                          weight, tip_force, tip_moment, external_forces, external_torques):
    """Add all loads of :class:`TendonForces`; same maths as :func:`tendon_wrench_numpy`.

    Shapes as in :func:`tendon_wrench_numpy`; ``nodes`` (k,), ``holes``
    (n_tendons, 3, k), ``base_holes`` (n_tendons, 3), ``anchors`` (n_tendons,).
    """
    for i in range(nodes.shape[0]):
        for a in range(3):
            external_forces[a, nodes[i]] += weight[a]
    n_elems = director.shape[2]
    for a in range(3):
        external_forces[a, n_elems] += tip_force[a]
        external_torques[a, n_elems - 1] += (director[a, 0, n_elems - 1] * tip_moment[0]
                                             + director[a, 1, n_elems - 1] * tip_moment[1]
                                             + director[a, 2, n_elems - 1] * tip_moment[2])

    for j in range(tensions.shape[0]):
        tension = tensions[j]
        if tension == 0.0:
            continue
        # Walk the tendon from the base plate (part of the clamp, so its share of the
        # first segment is not applied). Segment i runs from hole i-1 to hole i with
        # pull T u_i; vertebra i gets -T u_i + T u_(i+1), the anchor only -T u_i.
        px = base_holes[j, 0]
        py = base_holes[j, 1]
        pz = base_holes[j, 2]
        fx = 0.0                # -T u_(i-1): what vertebra i-1 has so far
        fy = 0.0
        fz = 0.0
        for i in range(anchors[j] + 1):
            k = nodes[i]
            e = k - 1
            h0 = holes[j, 0, i]
            h1 = holes[j, 1, i]
            h2 = holes[j, 2, i]
            # hole in the world: x_k + Q.T h, with this vertebra's own rotation
            # (the seed's delta formula writes Rot_{n+1} on both terms; each
            # hole belongs to its own vertebra, so each uses its own Q).
            hx = position[0, k] + director[0, 0, e] * h0 + director[1, 0, e] * h1 \
                + director[2, 0, e] * h2
            hy = position[1, k] + director[0, 1, e] * h0 + director[1, 1, e] * h1 \
                + director[2, 1, e] * h2
            hz = position[2, k] + director[0, 2, e] * h0 + director[1, 2, e] * h1 \
                + director[2, 2, e] * h2
            dx = hx - px
            dy = hy - py
            dz = hz - pz
            scale = tension / np.sqrt(dx * dx + dy * dy + dz * dz)
            if i > 0:           # vertebra i-1 is complete: add T u_i and apply
                _add_hole_load(nodes[i - 1], nodes[i - 1] - 1, holes[j, 0, i - 1],
                               holes[j, 1, i - 1], holes[j, 2, i - 1], fx + dx * scale,
                               fy + dy * scale, fz + dz * scale, director,
                               external_forces, external_torques)
            fx = -dx * scale
            fy = -dy * scale
            fz = -dz * scale
            px = hx
            py = hy
            pz = hz
        # the anchor: only the pull back towards the previous hole
        i = anchors[j]
        _add_hole_load(nodes[i], nodes[i] - 1, holes[j, 0, i], holes[j, 1, i], holes[j, 2, i],
                       fx, fy, fz, director, external_forces, external_torques)
