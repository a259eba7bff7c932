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
External loads on the links of the rolling-joint snake (D'Antuono et al. 2023, "external loads").

A :class:`LinkWrench` is a force [N] and a moment [N m] acting on one link at a point fixed in
that link, by default the link's frame origin: the vertex of its distal rolling surface, which
for the last link is the tip (the end effector, where ``tip/pose`` is reported). Its components
are given either in the world (= base) frame, fixed directions like a payload's weight, or in
the link's own frame (x along the link towards the tip), turning with the link like a tool's
reaction. The moment is about the point of application.

In the Newton-Euler balance of link n the load enters beside gravity: the link's force
m (a_C - g) becomes m (a_C - g) - F and its moment about the centre of mass
I wd + w x I w becomes I wd + w x I w - M - (p - p_C) x F (:func:`apply`). The numba kernels
take the same loads as three arrays (:func:`pack`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from tendon_robot_sim.models.snake.kinematics import cross
from tendon_robot_sim.models.snake.robot import RollingJointSnake

FRAMES = ('world', 'link')


class LoadError(ValueError):
    """A load that is not one: ``field`` (link, frame, force, moment, point) and ``problem``."""

    def __init__(self, field: str, problem: str):
        super().__init__(f'{field}: {problem}')
        self.field, self.problem = field, problem


@dataclass(frozen=True)
class LinkWrench:
    """A force and a moment on one link (see the module docstring for the frames)."""

    link: int                   # 1..N; N is the last link, whose frame origin is the tip
    force: np.ndarray           # (3,) N
    moment: np.ndarray          # (3,) N m, about the point of application
    frame: str = 'world'        # 'world' or 'link': the frame of force and moment
    point: np.ndarray = field(default_factory=lambda: np.zeros(3))   # (3,) m, link frame

    @classmethod
    def at_tip(cls, snake: RollingJointSnake, force, moment, frame: str = 'world'):
        """Put the wrench at the tip: the origin of the last link's frame."""
        return cls(snake.n_joints, np.asarray(force, dtype=float),
                   np.asarray(moment, dtype=float), frame)


def check(snake: RollingJointSnake, loads: Iterable[LinkWrench]) -> tuple[LinkWrench, ...]:
    """
    Return the loads as a tuple after checking each one.

    A force above what the cables can pull together (C x max_tension) or a moment above that
    force at the rolling radius R cannot be held in any pose: refused as absurd.

    Raises
    ------
    LoadError
        Naming the field (``link``, ``frame``, ``force``, ``moment``, ``point``) and the problem.

    """
    loads = tuple(loads)
    force_limit = len(snake.cables) * snake.max_tension
    moment_limit = force_limit * snake.link.radius_of_curvature
    for load in loads:
        if not (isinstance(load.link, (int, np.integer)) and 1 <= load.link <= snake.n_joints):
            raise LoadError('link', f'must be a link number 1 to {snake.n_joints} (the tip), '
                                    f'got {load.link!r}')
        if load.frame not in FRAMES:
            raise LoadError('frame', f'must be one of {list(FRAMES)}, got {load.frame!r}')
        for name, limit, unit in (('force', force_limit, 'N'), ('moment', moment_limit, 'N m'),
                                  ('point', None, 'm')):
            value = np.asarray(getattr(load, name), dtype=float)
            if value.shape != (3,) or not np.all(np.isfinite(value)):
                raise LoadError(name, f'must be 3 finite numbers, got {value.tolist()}')
            if limit is not None and np.linalg.norm(value) > limit:
                raise LoadError(
                    name, f'{np.linalg.norm(value):.4g} {unit} is more than the '
                    f'{len(snake.cables)} cables can hold together ({limit:.4g} {unit}: '
                    f'{len(snake.cables)} x max_tension' + (' x R' if name == 'moment' else '')
                    + ')')
    return loads


def pack(loads: Iterable[LinkWrench]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """
    Return the loads as kernel arguments.

    links : (L,) int, 0-based link index; in_link : (L,) bool, components in the link frame;
    vectors : (L, 3, 3) float, rows force, moment, point.
    """
    loads = tuple(loads)
    links = np.array([w.link - 1 for w in loads], dtype=np.int64)
    in_link = np.array([w.frame == 'link' for w in loads], dtype=np.bool_)
    vectors = np.zeros((len(loads), 3, 3))
    for i, w in enumerate(loads):
        vectors[i] = (w.force, w.moment, w.point)
    return links, in_link, vectors


def world_wrench(load: LinkWrench, rotation: np.ndarray, origin: np.ndarray):
    """
    Force (K, 3), moment (K, 3) and point (K, 3) of a load in the world frame.

    rotation (K, 3, 3) and origin (K, 3) are the pose of the loaded link.
    """
    point = origin + np.einsum('kij,j->ki', rotation, load.point)
    if load.frame == 'link':
        return (np.einsum('kij,j->ki', rotation, load.force),
                np.einsum('kij,j->ki', rotation, load.moment), point)
    K = rotation.shape[0]
    return (np.broadcast_to(load.force, (K, 3)), np.broadcast_to(load.moment, (K, 3)), point)


def apply(force: np.ndarray, moment: np.ndarray, state, loads: Iterable[LinkWrench]) -> None:
    """
    Subtract the loads from the links' force and moment about the centre of mass, in place.

    force, moment : (K, N, 3), what the joints must supply to each link (m (a_C - g) and
    I wd + w x I w); state : a :class:`~tendon_robot_sim.models.snake.kinematics.ChainState`.
    """
    for load in loads:
        n = load.link - 1
        F, M, p = world_wrench(load, state.rotations[:, n + 1], state.origins[:, n + 1])
        force[:, n] -= F
        moment[:, n] -= M + cross(p - state.centers[:, n], F)
