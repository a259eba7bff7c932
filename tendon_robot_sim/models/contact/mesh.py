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
Mesh obstacles: an STL or OBJ file read by trimesh, and the spatial grid of its closest points.

A point's closest triangle is looked for only among the triangles listed in the point's grid
cell: :func:`build_grid` lists in a cell every triangle whose bounding box, grown by the grid's
``margin``, overlaps the cell, so every triangle within ``margin`` of any point of the cell is
there. Contact needs nothing farther than the envelope radius plus the penalty's cut-off
(:data:`tendon_robot_sim.models.contact._kernels.CUTOFF` distance scales); beyond the grid
there is no contact.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Bounds against hostile files: a mesh of more faces is refused (simplify it first), as is a
# file larger than MAX_MESH_BYTES (a binary STL of MAX_MESH_FACES faces is 5 MB).
MAX_MESH_FACES = 100_000
MAX_MESH_BYTES = 20_000_000
# Cells per grid at most (memory), and per axis.
MAX_CELLS = 64 ** 3


class MeshError(ValueError):
    """A mesh file that cannot be an obstacle; the message says why (the caller names the key)."""


def load_mesh(path: Path, scale: float) -> np.ndarray:
    """
    Triangles (t, 3, 3) [m] of the STL or OBJ file at ``path``, vertices times ``scale``.

    Raises MeshError: unreadable, not a triangle mesh, empty, too large.
    """
    try:
        import trimesh
    except ImportError:      # pragma: no cover - trimesh is in the requirements
        raise MeshError('mesh obstacles need the trimesh package (pip install trimesh)') from None
    suffix = path.suffix.lower()
    if suffix not in ('.stl', '.obj'):
        raise MeshError(f'must be an .stl or .obj file, got {path.name!r}')
    try:
        size = path.stat().st_size
    except OSError as error:
        raise MeshError(f'cannot read {path}: {error.strerror}') from None
    if size > MAX_MESH_BYTES:
        raise MeshError(f'{path} is larger than {MAX_MESH_BYTES} bytes')
    try:
        mesh = trimesh.load(str(path), file_type=suffix[1:], force='mesh', process=False)
        triangles = np.asarray(mesh.triangles, dtype=float)
    except Exception as error:   # noqa: BLE001 - any parser failure means: not a mesh
        raise MeshError(f'{path} is not a readable {suffix[1:].upper()} mesh '
                        f'({type(error).__name__})') from None
    if triangles.ndim != 3 or triangles.shape[0] == 0:
        raise MeshError(f'{path} holds no triangles: not a {suffix[1:].upper()} mesh')
    if triangles.shape[0] > MAX_MESH_FACES:
        raise MeshError(f'{path} has {triangles.shape[0]} faces, at most {MAX_MESH_FACES} '
                        f'(simplify it)')
    if not np.all(np.isfinite(triangles)):
        raise MeshError(f'{path} has non-finite vertices')
    triangles = triangles * scale
    area = np.linalg.norm(np.cross(triangles[:, 1] - triangles[:, 0],
                                   triangles[:, 2] - triangles[:, 0]), axis=1)
    triangles = triangles[area > 0.0]     # degenerate faces have no normal
    if not triangles.size:
        raise MeshError(f'{path} has only degenerate faces')
    volume = closed_volume(triangles)
    if volume is not None and volume < 0.0:
        # its solid would be all space outside it: the rod is pushed in, where nothing holds it
        raise MeshError(f'{path} is a closed mesh whose face normals point inwards (volume '
                        f'{volume:.3g} m^3); flip its faces')
    return triangles


def closed_volume(triangles: np.ndarray) -> float | None:
    """
    Signed volume [m^3] of a closed mesh (t, 3, 3), positive when its normals point out; None open.

    Closed: every edge, its vertices matched to 1e-9 of the mesh's size (an STL repeats them in
    each face), is shared by exactly two faces. An open mesh (a terrain) has no volume.
    """
    vertices = triangles.reshape(-1, 3)
    size = float(np.max(vertices.max(axis=0) - vertices.min(axis=0)))
    keys = np.round((vertices - vertices.min(axis=0)) / (1e-9 * size)).astype(np.int64)
    ids = np.unique(keys, axis=0, return_inverse=True)[1].reshape(-1, 3)
    edges = np.sort(np.concatenate((ids[:, [0, 1]], ids[:, [1, 2]], ids[:, [2, 0]])), axis=1)
    counts = np.unique(edges, axis=0, return_counts=True)[1]
    if np.any(counts != 2):
        return None
    a, b, c = (triangles[:, i] - vertices.mean(axis=0) for i in range(3))
    return float(np.einsum('ij,ij->', a, np.cross(b, c)) / 6.0)


def build_grid(triangles: np.ndarray, margin: float):
    """
    Uniform grid over the triangles' bounding box grown by ``margin`` [m].

    Returns (origin (3,), cell size, dims (3,), cells (c + 1,) int, items (m,) int): the
    triangles of cell i are items[cells[i]:cells[i + 1]], cells numbered x-major
    (i = (ix * ny + iy) * nz + iz).
    """
    low = triangles.min(axis=(0, 1)) - margin
    high = triangles.max(axis=(0, 1)) + margin
    extent = high - low
    # about one triangle per cell, cells no smaller than the margin, no more than MAX_CELLS
    cell = max(margin, (np.prod(extent) / len(triangles)) ** (1.0 / 3.0),
               (np.prod(extent) / MAX_CELLS) ** (1.0 / 3.0))
    dims = np.maximum(1, np.ceil(extent / cell).astype(np.int64))
    while np.prod(dims) > MAX_CELLS:
        cell *= 1.1
        dims = np.maximum(1, np.ceil(extent / cell).astype(np.int64))
    lo = np.clip(np.floor((triangles.min(axis=1) - margin - low) / cell), 0, dims - 1).astype(int)
    hi = np.clip(np.floor((triangles.max(axis=1) + margin - low) / cell), 0, dims - 1).astype(int)
    lists = [[] for _ in range(int(np.prod(dims)))]
    for t in range(len(triangles)):
        for ix in range(lo[t, 0], hi[t, 0] + 1):
            for iy in range(lo[t, 1], hi[t, 1] + 1):
                base = (ix * dims[1] + iy) * dims[2]
                for iz in range(lo[t, 2], hi[t, 2] + 1):
                    lists[base + iz].append(t)
    counts = np.array([len(items) for items in lists], dtype=np.int64)
    cells = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    items = (np.concatenate([np.array(items, dtype=np.int64) for items in lists])
             if cells[-1] else np.zeros(0, dtype=np.int64))
    return low, float(cell), dims, cells, items


def winding_number(triangles: np.ndarray, point: np.ndarray) -> float:
    """
    Generalised winding number of the triangles (t, 3, 3) around ``point`` (3,), same frame [m].

    1 inside a closed mesh whose face normals point out, 0 outside (Jacobson, Kavan &
    Sorkine-Hornung, "Robust inside-outside segmentation using generalized winding numbers",
    2013: the solid angles of the faces, Van Oosterom & Strackee's formula, over 4 pi). It
    needs no grid: it tells inside from outside however far the point is from the surface,
    where the contact search (reach-limited) sees nothing.
    """
    a, b, c = (triangles[:, i] - point for i in range(3))
    la, lb, lc = (np.linalg.norm(v, axis=1) for v in (a, b, c))
    det = np.einsum('ij,ij->i', a, np.cross(b, c))
    den = (la * lb * lc + np.einsum('ij,ij->i', a, b) * lc + np.einsum('ij,ij->i', b, c) * la
           + np.einsum('ij,ij->i', c, a) * lb)
    return float(np.sum(np.arctan2(det, den)) / (2.0 * np.pi))
