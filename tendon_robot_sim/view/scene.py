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
Draw a :class:`~tendon_robot_sim.view.markers.MarkerScene` with viser scene nodes.

Each line marker becomes one line-segments node; the solids of one namespace and shape (the
vertebra discs, the snake's links) become one instanced mesh, so a frame of the default
robot is four small updates whatever its disc count. The arrows of one namespace (the
contacts with one obstacle) become one arrows node, a triangle list (a mesh obstacle) one
mesh. Nodes are kept between frames and only
what changed is sent (viser skips equal arrays), so a still robot costs nothing.
"""

from __future__ import annotations

import re

import numpy as np
from tendon_robot_sim import interrupts_deferred
from tendon_robot_sim.view.markers import ArrowBatch, Key, Lines, MarkerScene, SolidBatch, \
    Triangles

with interrupts_deferred():    # trimesh swallows a KeyboardInterrupt in its imports
    import trimesh

# Unit solids, centred at the origin: scaled per instance by the marker's scale (diameters
# x, y, height z), as RViz draws CUBE, SPHERE and CYLINDER markers.
_UNIT_MESHES = {
    'cube': trimesh.creation.box(extents=(1.0, 1.0, 1.0)),
    'sphere': trimesh.creation.icosphere(subdivisions=2, radius=0.5),
    'cylinder': trimesh.creation.cylinder(radius=0.5, height=1.0, sections=24),
}


def node_name(root: str, *parts) -> str:
    """Return a scene-tree name under ``root``: characters other than [A-Za-z0-9_-] become _."""
    return '/'.join([root] + [re.sub(r'[^A-Za-z0-9_-]', '_', str(p)) or '_' for p in parts])


class SceneRenderer:
    """The viser nodes of a marker scene, under ``root`` of the viser ``scene`` API."""

    def __init__(self, scene, root: str = '/robot'):
        self.scene = scene
        self.root = root
        self._lines: dict[Key, object] = {}
        self._solids: dict[tuple[str, str], object] = {}
        self._arrows: dict[str, object] = {}
        self._meshes: dict[Key, object] = {}
        self._shown: dict[int, object] = {}   # id(handle) -> what it shows

    def draw(self, markers: MarkerScene) -> None:
        """Create, update or remove nodes so that the scene shows ``markers``."""
        lines = markers.lines()
        for key in set(self._lines) - set(lines):
            self._remove(self._lines.pop(key))
        for key, item in lines.items():
            self._draw_lines(key, item)
        solids = markers.solids()
        for key in set(self._solids) - set(solids):
            self._remove(self._solids.pop(key))
        for key, batch in solids.items():
            self._draw_solids(key, batch)
        arrows = markers.arrows()
        for key in set(self._arrows) - set(arrows):
            self._remove(self._arrows.pop(key))
        for key, batch in arrows.items():
            self._draw_arrows(key, batch)
        meshes = markers.meshes()
        for key in set(self._meshes) - set(meshes):
            self._remove(self._meshes.pop(key))
        for key, mesh in meshes.items():
            self._draw_mesh(key, mesh)

    def _draw_arrows(self, ns: str, batch: ArrowBatch) -> None:
        handle = self._arrows.get(ns)
        shown = self._shown.get(id(handle))
        if shown is not None and shown.points.shape == batch.points.shape and \
                (shown.shaft, shown.head, shown.head_length) == \
                (batch.shaft, batch.head, batch.head_length):
            self._shown[id(handle)] = batch
            if not np.array_equal(shown.points, batch.points):
                handle.points = batch.points.astype(np.float32)
            if not np.array_equal(shown.colors, batch.colors):
                handle.colors = batch.colors
            return
        if handle is not None:   # another count or size: a new node
            self._remove(handle)
        handle = self._arrows[ns] = self.scene.add_arrows(
            node_name(self.root, ns, 'arrows'), batch.points.astype(np.float32), batch.colors,
            shaft_radius=0.5 * batch.shaft, head_radius=0.5 * batch.head,
            head_length=batch.head_length)
        self._shown[id(handle)] = batch

    def _draw_mesh(self, key: Key, mesh: Triangles) -> None:
        handle = self._meshes.get(key)
        shown = self._shown.get(id(handle))
        if shown is not None and all(np.array_equal(getattr(shown, f), getattr(mesh, f))
                                     for f in ('vertices', 'color', 'position', 'wxyz')) \
                and shown.opacity == mesh.opacity:
            return   # obstacles do not move: nothing to send
        if handle is not None:
            self._remove(handle)
        vertices = mesh.vertices.reshape(-1, 3)
        handle = self._meshes[key] = self.scene.add_mesh_simple(
            node_name(self.root, key[0], key[1]), vertices,
            np.arange(len(vertices)).reshape(-1, 3), color=tuple(int(c) for c in mesh.color),
            opacity=mesh.opacity, side='double', position=mesh.position, wxyz=mesh.wxyz)
        self._shown[id(handle)] = mesh

    def _draw_lines(self, key: Key, item: Lines) -> None:
        handle = self._lines.get(key)
        if handle is not None and len(handle.points) != len(item.points):
            self._remove(handle)   # a new segment count: a new node (arrays keep their shape)
            handle = None
        if handle is None:
            handle = self._lines[key] = self.scene.add_line_segments(
                node_name(self.root, key[0], key[1]), item.points, item.colors,
                thickness=max(item.width, 1e-4), position=item.position, wxyz=item.wxyz)
            self._shown[id(handle)] = item
            return
        # only what changed: viser's own checks cost more than these comparisons
        shown, self._shown[id(handle)] = self._shown[id(handle)], item
        if not np.array_equal(shown.points, item.points):
            handle.points = item.points
        if not np.array_equal(shown.colors, item.colors):
            handle.colors = item.colors
        if shown.width != item.width:
            handle.thickness = max(item.width, 1e-4)
        if not np.array_equal(shown.position, item.position):
            handle.position = item.position
        if not np.array_equal(shown.wxyz, item.wxyz):
            handle.wxyz = item.wxyz

    def _draw_solids(self, key: tuple[str, str], batch: SolidBatch) -> None:
        handle = self._solids.get(key)
        if handle is not None and len(handle.batched_positions) != len(batch.positions):
            self._remove(handle)
            handle = None
        if handle is None:
            mesh = _UNIT_MESHES[batch.shape]
            handle = self._solids[key] = self.scene.add_batched_meshes_simple(
                node_name(self.root, key[0], f'{key[1]}s'), mesh.vertices, mesh.faces,
                batched_wxyzs=batch.wxyzs, batched_positions=batch.positions,
                batched_scales=batch.scales, batched_colors=batch.colors,
                batched_opacities=batch.opacities, lod='off')
            self._shown[id(handle)] = batch
            return
        shown, self._shown[id(handle)] = self._shown[id(handle)], batch
        if not np.array_equal(shown.positions, batch.positions):
            handle.batched_positions = batch.positions
        if not np.array_equal(shown.wxyzs, batch.wxyzs):
            handle.batched_wxyzs = batch.wxyzs
        if not np.array_equal(shown.scales, batch.scales):
            handle.batched_scales = batch.scales.astype(np.float32)
        if not np.array_equal(shown.colors, batch.colors):
            handle.batched_colors = batch.colors
        if not np.array_equal(shown.opacities, batch.opacities):
            handle.batched_opacities = batch.opacities.astype(np.float32)

    def _remove(self, handle) -> None:
        self._shown.pop(id(handle), None)
        handle.remove()
