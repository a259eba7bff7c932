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
The world description: obstacles the robot touches and the contact parameters (``--world FILE``).

One YAML file, read by the package's one YAML loader and checked like a robot description
(:mod:`tendon_robot_sim.models.description`): a bad file raises :class:`WorldError`, one line
naming the file, the key and the problem (``world.yaml: obstacles[1].radius: must be > 0``).

.. code-block:: yaml

    contact:                       # defaults of every obstacle (all optional)
      penalty_stiffness: 1.0e7     # N/m^2: load per metre of rod per metre of penetration
      distance_scale: 1.0e-5       # m: width of the smooth penalty's transition
      normal_damping: 0.0          # N s/m^2 (dynamics)
      friction_coefficient: 0.0    # Coulomb mu (dynamics)
      slip_velocity: 1.0e-3        # m/s: regularises Coulomb's law below this slip
    obstacles:
      - {name: table, shape: plane, position: [0, 0, -0.1], normal: [0, 0, 1]}
      - {name: post, shape: cylinder, radius: 0.01, length: 0.2, capsule: true,
         position: [0.1, 0, 0], orientation: [0, 0, 0, 1], contact: {friction_coefficient: 0.3}}
      - {name: ball, shape: sphere, radius: 0.02, position: [0, 0.1, 0]}
      - {name: crate, shape: box, size: [0.1, 0.1, 0.05], position: [0.2, 0, 0]}
      - {name: bone, shape: mesh, file: bone.stl, scale: 0.001, position: [0, 0, 0.2]}

Poses are in the robot's world frame (the base frame of its description, REP 103): ``position``
[m] and ``orientation`` [qx, qy, qz, qw] (default identity, normalised when loaded). A cylinder's
axis is its own z, centred on its position; ``capsule: true`` rounds its ends (hemispheres of
its radius beyond ``length``). A box's ``size`` is its full edge lengths. A plane passes through
``position`` with outward ``normal`` (an ``orientation`` is refused). A mesh file (STL or OBJ, at
most :data:`~tendon_robot_sim.models.contact.mesh.MAX_MESH_FACES` faces) is relative to the world
file; its vertices are multiplied by ``scale`` and then posed; a mesh is solid on the side its
face normals point away from (a closed one whose normals point inwards is refused).

The robot touches with its contact envelope: the rod's radius between discs and the disc radius
at the discs (the robot description's ``contact: {rod_radius, disc_radius}``, by default
``rod.radius`` and ``vertebrae.radius``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tendon_robot_sim.models.contact import _kernels as kernels
from tendon_robot_sim.models.contact.mesh import (build_grid, load_mesh, MeshError,
                                                  winding_number)
from tendon_robot_sim.models.description import (check_unique_names, describe_value,
                                                 DescriptionMapping, read_yaml,
                                                 require_mapping, RobotDescriptionError)

SHAPES = {'plane': kernels.PLANE, 'sphere': kernels.SPHERE, 'cylinder': kernels.CYLINDER,
          'box': kernels.BOX, 'mesh': kernels.MESH}
MAX_OBSTACLES = 100
# Contact parameters (key, default, column of Contact.law). The defaults hold the propped
# cantilever of docs/tendon_robot.md ("Contact") within 2 %: see there for their effect.
CONTACT_KEYS = (('penalty_stiffness', 1.0e7, kernels.LAW_K),
                ('distance_scale', 1.0e-5, kernels.LAW_DELTA),
                ('normal_damping', 0.0, kernels.LAW_DAMPING),
                ('friction_coefficient', 0.0, kernels.LAW_MU),
                ('slip_velocity', 1.0e-3, kernels.LAW_SLIP))
_POSITIVE = ('penalty_stiffness', 'distance_scale', 'slip_velocity')
# the keys of each shape: required, optional
_OBSTACLE_KEYS = {
    'plane': ((), ('normal',)), 'sphere': (('radius',), ()),
    'cylinder': (('radius', 'length'), ('capsule',)), 'box': (('size',), ()),
    'mesh': (('file',), ('scale',)),
}


class WorldError(ValueError):
    """A world description that cannot be used; one line naming the file and the key."""


@dataclass(frozen=True)
class Obstacle:
    """One obstacle: its shape and size, its pose in the world frame, its contact law."""

    name: str
    shape: str                   # a key of SHAPES
    position: np.ndarray         # (3,) m
    rotation: np.ndarray         # (3, 3) obstacle frame -> world frame
    dims: np.ndarray             # (3,) see _kernels.Contact.dims
    law: np.ndarray              # (5,) see CONTACT_KEYS
    capsule: bool = False
    triangles: np.ndarray | None = None    # (t, 3, 3) mesh vertices in its own frame [m]

    def bounding_sphere(self) -> np.ndarray:
        """Return centre [m] and radius [m] of a sphere enclosing it (a plane: radius -1)."""
        if self.shape == 'plane':
            return np.concatenate((self.position, [-1.0]))
        if self.shape == 'mesh':
            vertices = self.triangles.reshape(-1, 3)
            middle = 0.5 * (vertices.min(axis=0) + vertices.max(axis=0))
            radius = float(np.linalg.norm(vertices - middle, axis=1).max())
            return np.concatenate((self.position + self.rotation @ middle, [radius]))
        r, h = self.dims[0], self.dims[1]
        radius = {'sphere': r, 'cylinder': r + h if self.capsule else float(np.hypot(r, h)),
                  'box': float(np.linalg.norm(self.dims))}[self.shape]
        return np.concatenate((self.position, [radius]))


@dataclass(frozen=True)
class World:
    """The obstacles and the contact defaults of a world file."""

    obstacles: tuple[Obstacle, ...]
    law: np.ndarray = field(default_factory=lambda: np.array([d for _, d, _ in CONTACT_KEYS]))

    @property
    def names(self) -> list[str]:
        return [o.name for o in self.obstacles]

    def contact(self, envelope: tuple[float, float]) -> kernels.Contact:
        """
        Return the world as the kernels' Contact tuple for a robot's ``envelope`` (rod, disc) [m].

        Mesh grids are built here: their margin is the largest envelope radius plus the
        penalty's cut-off.
        """
        n = len(self.obstacles)
        shape = np.array([SHAPES[o.shape] + (o.capsule and o.shape == 'cylinder')
                          for o in self.obstacles], dtype=np.int64)
        pose = np.zeros((n, 12))
        dims = np.zeros((n, 3))
        law = np.zeros((n, 5))
        grid = np.zeros((n, kernels.GRID_SIZE))
        bounds = np.array([o.bounding_sphere() for o in self.obstacles]).reshape(n, 4)
        cells, items, tris = [np.zeros(1, dtype=np.int64)], [], []
        n_tri = n_cell = 0
        for j, o in enumerate(self.obstacles):
            pose[j, 0:3] = o.position
            pose[j, 3:12] = o.rotation.ravel()
            dims[j] = o.dims
            law[j] = o.law
            if o.triangles is None:
                continue
            margin = max(envelope) + kernels.CUTOFF * o.law[kernels.LAW_DELTA]
            origin, cell, size, starts, listed = build_grid(o.triangles, margin)
            grid[j, kernels.GRID_ORIGIN:kernels.GRID_ORIGIN + 3] = origin
            grid[j, kernels.GRID_CELL] = cell
            grid[j, kernels.GRID_DIMS:kernels.GRID_DIMS + 3] = size
            grid[j, kernels.GRID_CELL0] = n_cell
            grid[j, kernels.GRID_TRI0] = n_tri
            cells.append(starts[1:] + cells[-1][-1])
            items.append(listed + n_tri)
            tris.append(o.triangles)
            n_tri += len(o.triangles)
            n_cell += len(starts) - 1
        return kernels.Contact(
            shape=shape, pose=pose, dims=dims, law=law, grid=grid,
            cells=np.concatenate(cells).astype(np.int64),
            items=(np.concatenate(items) if items else np.zeros(0)).astype(np.int64),
            tri=np.concatenate(tris) if tris else np.zeros((0, 3, 3)), bounds=bounds,
            radius=np.array(envelope, dtype=float), work=np.zeros(kernels.CW_SIZE))


def no_contact() -> kernels.Contact:
    """Return the Contact tuple of an empty world (what every solve without --world carries)."""
    return World(obstacles=()).contact((0.0, 0.0))


def load_world(path: str | Path) -> World:
    """
    Load and check a world file.

    Raises
    ------
    WorldError
        One line: the file, the key and the problem.

    """
    path = Path(path)
    try:
        return world_from_dict(read_yaml(path), path.parent)
    except (RobotDescriptionError, WorldError) as error:
        message = str(error)
        raise WorldError(message if message.startswith(f'{path}:') else f'{path}: {message}'
                         ) from None
    except (ArithmeticError, TypeError, ValueError) as error:
        raise WorldError(f'{path}: cannot load: {type(error).__name__}: '
                         f'{" ".join(str(error).split())[:300]}') from None


def world_from_dict(data: Any, folder: Path = Path('.')) -> World:
    """Build a checked :class:`World` from plain data; mesh files are relative to ``folder``."""
    # named here: an empty key would be reported as the robot description's
    require_mapping(data, 'world description')
    top = DescriptionMapping(data, '', required=('obstacles',), optional=('contact',))
    defaults = _contact_law(top.get('contact'), 'contact', np.array(
        [d for _, d, _ in CONTACT_KEYS]))
    items = top.get('obstacles')
    top.finish()
    if items is None:
        items = []
    if not isinstance(items, list):
        raise WorldError(f'obstacles: must be a list, got {describe_value(items)}')
    if len(items) > MAX_OBSTACLES:
        raise WorldError(f'obstacles: at most {MAX_OBSTACLES}, got {len(items)}')
    obstacles = tuple(_obstacle(item, f'obstacles[{i}]', defaults, folder)
                      for i, item in enumerate(items))
    check_unique_names([o.name for o in obstacles], 'obstacles', 'obstacle')
    return World(obstacles=obstacles, law=defaults)


def _contact_law(data: Any, key: str, defaults: np.ndarray) -> np.ndarray:
    m = DescriptionMapping(data, key, optional=[k for k, _, _ in CONTACT_KEYS])
    law = defaults.copy()
    for name, _, column in CONTACT_KEYS:
        if name in m:
            law[column] = m.number(name, positive=name in _POSITIVE, minimum=0.0)
    m.finish()
    return law


def _obstacle(data: Any, key: str, defaults: np.ndarray, folder: Path) -> Obstacle:
    first = DescriptionMapping(data, key, required=('name', 'shape'))
    shape = first.choice('shape', list(SHAPES), default=None)
    required, optional = _OBSTACLE_KEYS[shape]
    m = DescriptionMapping(data, key, required=('name', 'shape') + required,
                           optional=('position', 'orientation', 'contact') + optional)
    name = m.string('name')
    m.get('shape')
    if shape == 'plane' and 'orientation' in m:
        # it was ignored: a plane tilted by an orientation stayed horizontal
        raise WorldError(f'{key}.orientation: a plane is posed by its outward normal '
                         f'(normal: [nx, ny, nz], default [0, 0, 1]), not an orientation')
    position = m.vector('position', default=(0.0, 0.0, 0.0))
    rotation = _rotation(m.number_list('orientation', size=4) if 'orientation' in m else None,
                         key)
    law = _contact_law(m.get('contact'), f'{key}.contact', defaults)
    dims = np.zeros(3)
    triangles = None
    capsule = False
    if shape == 'plane':
        normal = m.unit_vector('normal', default=(0.0, 0.0, 1.0))
        rotation = _frame_of(normal)
    elif shape == 'sphere':
        dims[0] = m.number('radius', positive=True)
    elif shape == 'cylinder':
        dims[0] = m.number('radius', positive=True)
        dims[1] = 0.5 * m.number('length', positive=True)
        capsule = m.boolean('capsule', default=False)
    elif shape == 'box':
        size = m.number_list('size', size=3)
        for i, value in enumerate(size):
            if not value > 0.0:
                raise WorldError(f'{key}.size[{i}]: must be > 0, got {value:g}')
        dims[:] = 0.5 * size
    else:
        file = m.string('file')
        scale = m.number('scale', default=1.0, positive=True)
        try:
            triangles = load_mesh(folder / file, scale)
        except MeshError as error:
            raise WorldError(f'{key}.file: {error}') from None
    m.finish()
    return Obstacle(name=name, shape=shape, position=position, rotation=rotation, dims=dims,
                    law=law, capsule=capsule, triangles=triangles)


def _rotation(q: np.ndarray | None, key: str) -> np.ndarray:
    """Rotation matrix of the quaternion [qx, qy, qz, qw] (normalised); identity for None."""
    if q is None:
        return np.eye(3)
    norm = float(np.linalg.norm(q))
    if norm == 0.0:
        raise WorldError(f'{key}.orientation: must be a non-zero quaternion [qx, qy, qz, qw]')
    x, y, z, w = q / norm
    return np.array([
        [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
        [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
        [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
    ])


def _frame_of(normal: np.ndarray) -> np.ndarray:
    """Return a rotation whose z column is ``normal`` (a plane's frame)."""
    helper = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, normal)
    x /= np.linalg.norm(x)
    return np.column_stack((x, np.cross(normal, x), normal))


def _depths(world: World, contact: kernels.Contact, points: np.ndarray,
            radii: np.ndarray) -> np.ndarray:
    """
    Return the depth [m] of envelope spheres inside each obstacle, (n, k): positive inside.

    ``points`` (k, 3) [m], ``radii`` (k,) [m]; inf where a mesh holds the point beyond the
    probe's reach.
    """
    n, k = len(world.obstacles), len(points)
    gaps, surface = np.zeros((n, k)), np.zeros((n, k, 3))
    kernels.probe(contact, points, radii, gaps, surface, np.zeros((n, k, 3)), np.zeros((n, k)),
                  np.zeros(12))
    for j, o in enumerate(world.obstacles):
        if o.shape != 'mesh':
            continue
        # the probe sees a mesh only near its faces: deeper inside, ask its winding number
        # (points within the mesh's bounding box only: it costs a pass over every face)
        local = (points - o.position) @ o.rotation
        vertices = o.triangles.reshape(-1, 3)
        boxed = np.all((local >= vertices.min(axis=0)) & (local <= vertices.max(axis=0)), axis=1)
        for i in np.flatnonzero((gaps[j] > 1e29) & boxed):
            if winding_number(o.triangles, local[i]) > 0.5:
                gaps[j, i] = -np.inf
    return -gaps


def check_clear(world: World, contact: kernels.Contact, point: np.ndarray, what: str) -> None:
    """
    Raise WorldError naming the first obstacle the robot's envelope at ``point`` [m] touches.

    ``what`` says which part is there (``the robot's base``): a robot cannot start inside an
    obstacle (its clamp is fixed; no solve could push it out).
    """
    point = np.asarray(point, dtype=float)
    depths = _depths(world, contact, point[None], contact.radius[:1])
    for j, o in enumerate(world.obstacles):
        if depths[j, 0] == np.inf:
            raise WorldError(f'obstacles[{j}] ({o.name}): intersects {what} '
                             f'({np.round(point, 6).tolist()} is inside the mesh)')
        if depths[j, 0] > 0.0:
            raise WorldError(f'obstacles[{j}] ({o.name}): intersects {what} (the envelope of '
                             f'radius {contact.radius[0]:g} m at {np.round(point, 6).tolist()} '
                             f'is {depths[j, 0]:.3g} m inside it)')


def check_start_clear(world: World, contact: kernels.Contact, robot, discs: bool) -> None:
    """
    Raise WorldError naming the first obstacle the robot's base or unloaded straight shape is in.

    :func:`check_clear` at the base, then :func:`check_rest_clear`. ``robot``: a tendon robot
    description; ``discs``: whether the model touches with its vertebra discs too (else with
    the rod only). The models at their start, and
    :func:`~tendon_robot_sim.models.registry.world_refusal` before a node starts, ask here.
    """
    check_clear(world, contact, robot.base.position, "the robot's base")
    check_rest_clear(world, contact, robot.base.position, robot.base.direction,
                     robot.rod.length, robot.vertebra_positions if discs else np.zeros(0))


def check_rest_clear(world: World, contact: kernels.Contact, base: np.ndarray,
                     direction: np.ndarray, length: float, discs: np.ndarray) -> None:
    """
    Raise WorldError naming the first obstacle the unloaded straight robot is inside.

    Every solve starts from that robot (``base`` [m] + s ``direction``, s in [0, ``length``]
    [m]): the rod's envelope every millimetre (at most its radius apart) and, at the arc
    lengths ``discs`` [m], the discs' (empty where the solver touches with the rod only). An
    envelope deeper than the obstacle's distance scale is loaded by the penalty before any
    input (about k times the depth per metre of rod): no solve could start there.
    """
    rod, disc = contact.radius
    steps = int(np.ceil(length / min(1e-3, rod)))     # the envelope radius is > 0
    arc = np.concatenate((np.linspace(0.0, length, steps + 1), discs))
    radii = np.concatenate((np.full(steps + 1, rod), np.full(len(discs), disc)))
    points = np.asarray(base, dtype=float) + arc[:, None] * np.asarray(direction, dtype=float)
    depths = _depths(world, contact, points, radii)
    for j, o in enumerate(world.obstacles):
        i = int(np.argmax(depths[j]))
        if depths[j, i] > o.law[kernels.LAW_DELTA]:
            part = 'rod' if i <= steps else 'disc'
            deep = 'its axis is inside' if depths[j, i] == np.inf else \
                f'{depths[j, i]:.3g} m inside'
            raise WorldError(f'obstacles[{j}] ({o.name}): intersects the unloaded straight robot '
                             f'every solve starts from (its {part} at s = {arc[i]:.4g} m, '
                             f'{deep}); move the obstacle clear of it')
