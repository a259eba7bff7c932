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
What the simulator node needs from a model of a robot, whatever its kind.

A :class:`SimModel` takes named inputs from one or two fields of a
``sensor_msgs/JointState`` setpoint (:class:`Inputs`), is advanced in time
(``timed`` models: :meth:`SimModel.advance`) or solves on every :meth:`SimModel.apply`
(static models), and reports a :class:`ModelState`: joint arrays per input, the tip
pose, numbered frames, marker primitives and, for a model that takes a world, the contacts
with its obstacles, everything in the robot's base frame (SI units, quaternions
[qx, qy, qz, qw]). :mod:`tendon_robot_sim.models.registry`
maps (robot kind, mode) to the model that serves it. This module imports no ROS.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from tendon_robot_sim import counted

Color = tuple[float, float, float, float]   # r, g, b, a in [0, 1]
# Colours of the inputs' lines in RViz (tendons, cables), cycled by index: matplotlib tab10.
INPUT_COLORS = ((0.12, 0.47, 0.71, 1.0), (1.0, 0.50, 0.05, 1.0), (0.17, 0.63, 0.17, 1.0),
                (0.84, 0.15, 0.16, 1.0), (0.58, 0.40, 0.74, 1.0), (0.55, 0.34, 0.29, 1.0))


class InputError(ValueError):
    """Bad user input; the message names the field and the problem."""


class EquilibriumNotFound(InputError):
    """
    Valid inputs whose static equilibrium, where a run starts at rest, was not found.

    No result rather than bad input (a command exits 1, as a statics solve that does not
    converge); an :class:`InputError` to the callers that refuse the inputs it came with.
    """


class SimulationDiverged(RuntimeError):
    """NaN or runaway detected; the message says what, where and when."""


@dataclass(frozen=True)
class Inputs:
    """
    What a setpoint carries for a model.

    ``fields`` maps the JointState fields the model takes, in order of preference (a
    setpoint uses the first one that is not empty), to the quantity and unit, e.g.
    ``{'effort': 'tension [N]'}``. ``noun`` names the inputs in errors (``tendons``);
    ``hint`` says what to do with a setpoint that carries only other fields.
    """

    names: tuple[str, ...]
    fields: Mapping[str, str]
    noun: str
    hint: str = ''

    def check(self, names: Sequence[str], sizes: Mapping[str, int]) -> str:
        """
        Return the field setpoints of this form drive the inputs with.

        ``names``: the names a setpoint gives; ``sizes``: its fields (``position``,
        ``velocity``, ``effort``) with how many values each holds. Only the form, not the
        values: the simulator node checks every setpoint with it before the model sees the
        values, ``replay --simulate`` every recorded form before a bag plays. A setpoint may
        name some of the inputs: the others hold. One that holds no values is the model's to
        refuse (any model does): its form says nothing of the robot.

        Raises
        ------
        InputError
            More names than inputs, a name that is not an input, only fields the model
            does not take, or, without names, not one value per input; the message starts
            with the field.

        """
        if len(names) > len(self.names):   # before looking at them: a huge message is cheap
            raise InputError(f'name: has {len(names)} entries; the robot has '
                             f'{len(self.names)} {self.noun} ({", ".join(self.names)})')
        unknown = [name for name in names if name not in self.names]
        if unknown:
            raise InputError(f'name: {", ".join(unknown)} not among the robot\'s {self.noun} '
                             f'({", ".join(self.names)})')
        taken = [name for name in self.fields if sizes.get(name)]
        given = [name for name, size in sizes.items() if size]
        if given and not taken:
            takes = ' or '.join(f'{name} ({what})' for name, what in self.fields.items())
            raise InputError(f'{"/".join(given)}: the robot takes {takes}'
                             + (f': {self.hint}' if self.hint else ''))
        field = (taken or list(self.fields))[0]
        if taken and not names and sizes[field] != len(self.names):
            raise InputError(f'{field}: has {counted(sizes[field], "value")} without names; the '
                             f'robot has {len(self.names)} {self.noun}: one each, or name them')
        return field


@dataclass(frozen=True)
class Pose:
    """A frame in the base frame: position (3,) [m], orientation (4,) [qx, qy, qz, qw]."""

    position: np.ndarray
    orientation: np.ndarray


@dataclass(frozen=True)
class Polyline:
    """A line through ``points`` (3, n) [m], ``width`` [m] wide."""

    ns: str
    points: np.ndarray
    width: float
    color: Color


@dataclass(frozen=True)
class Cylinder:
    """A cylinder whose axis is the z axis of ``pose``; ``diameter``, ``height`` [m]."""

    ns: str
    pose: Pose
    diameter: float
    height: float
    color: Color


@dataclass(frozen=True)
class LineList:
    """
    Separate segments: ``points`` (3, 2 k) [m] as start, end pairs.

    ``colors`` one per segment, ``width`` [m].
    """

    ns: str
    points: np.ndarray
    colors: Sequence[Color]
    width: float

    @classmethod
    def of_paths(cls, ns: str, paths: Sequence[np.ndarray], width: float) -> 'LineList':
        """
        Build the segments between consecutive points of each path (3, j).

        Path i is coloured ``INPUT_COLORS[i]`` (cycled): one line per tendon or cable.
        """
        starts = [path[:, :-1] for path in paths]
        points = np.empty((3, 2 * sum(s.shape[1] for s in starts)))
        points[:, 0::2] = np.concatenate(starts, axis=1)
        points[:, 1::2] = np.concatenate([path[:, 1:] for path in paths], axis=1)
        colors = [INPUT_COLORS[i % len(INPUT_COLORS)] for i, s in enumerate(starts)
                  for _ in range(s.shape[1])]
        return cls(ns, points, colors, width)


Marker = Polyline | Cylinder | LineList


@dataclass(frozen=True)
class ModelState:
    """
    A snapshot of the model, base frame, SI units.

    ``position`` and ``effort`` have one entry per input name (``effort`` may be empty
    when the model has no force at its inputs); ``frames`` are the numbered bodies along
    the robot (vertebrae, links), ``time`` the simulated time [s] (0 for static models).
    ``contacts``: with a world, the contact patches
    (:class:`~tendon_robot_sim.models.contact.report.ContactPoint`: obstacle, arc length, point,
    normal, force on the robot [N], penetration), base (world) frame; None without a world.
    """

    time: float
    position: np.ndarray
    effort: np.ndarray
    tip: Pose
    frames: tuple[Pose, ...] = ()
    markers: tuple[Marker, ...] = field(default=())
    # per input: the force where it ends (a tendon's tension at its anchor) when it differs
    # from ``effort`` (tendon friction); None otherwise
    tip_effort: np.ndarray | None = None
    contacts: tuple | None = None


class SimModel(ABC):
    """
    The interface; see the module docstring. Subclasses set the attributes.

    Attributes
    ----------
    inputs : Inputs
    base_frame : str
        Frame id of the base: every pose is relative to it.
    timed : bool
        True: :meth:`advance` moves simulated time on; False: :meth:`apply` solves.
    dt : float or None
        Time step [s] of a timed model.
    rest : str
        Where :meth:`reset` returns, for people ('the zero-tension equilibrium').
    summary : str
        One line on the model for the start-up log.
    reports_tip_effort : bool
        True: every :meth:`state` has a ``tip_effort`` (tendon friction); False: never.
    state_check : str
        What :meth:`state_problem` checks, for people and as the name of its status
        ('self contact'); '' when the model checks nothing.
    state_valid : str
        What a state :meth:`state_problem` finds nothing wrong with is, for people.

    """

    inputs: Inputs
    base_frame: str = 'base_link'
    timed: bool = False
    dt: float | None = None
    rest: str = ''
    summary: str = ''
    reports_tip_effort: bool = False
    state_check: str = ''
    state_valid: str = ''

    @abstractmethod
    def apply(self, field: str, values: Mapping[str, float] | Sequence[float]) -> None:
        """
        Take the values of JointState ``field``.

        A mapping {name: value} changes the named inputs, a list gives every input in order. A
        static model solves here.

        Raises
        ------
        InputError
            Naming the field and the problem; the model is unchanged.

        """

    def advance(self, duration: float) -> None:
        """
        Advance a timed model by ``duration`` [s] (whole steps of ``dt``).

        Raises
        ------
        SimulationDiverged
            The state is invalid until :meth:`reset`.

        """
        raise NotImplementedError(f'{type(self).__name__} is not timed')

    @abstractmethod
    def state(self) -> ModelState:
        """Return the current state; its arrays may be the model's own: read them only."""

    @abstractmethod
    def reset(self) -> None:
        """Back to rest, with the description's inputs and external load."""

    def fit_budget(self, load: float) -> str:
        """
        Fit a timed model's steps to a real-time budget; return why it is coarser than asked.

        ``load``: the steps the wall clock needs over those the budget affords (above 1: the
        model falls behind). A model with an error control may take coarser steps than its
        tolerance asks while ``load`` > 1; the message says so ('' when it does not).
        """
        return ''

    def state_problem(self) -> str | None:
        """
        Say why the current state is not one the robot can take, or None.

        A model whose state may leave what it models (a constant-curvature section coiled
        through itself) says so here; the state is still the model's and it runs on. None
        for every state of a model without a :attr:`state_check`.
        """
        return None

    def set_tip_wrench(self, force: np.ndarray, moment: np.ndarray) -> None:
        """
        Set the external force [N] and moment [N m] at the tip, base frame, until :meth:`reset`.

        A static model solves the current inputs under it.

        Raises
        ------
        InputError
            The model takes no tip wrench, or cannot carry this one.

        """
        raise InputError('wrench: this model takes no external tip wrench')


def named_values(values: Mapping[str, float] | Sequence[float], previous: np.ndarray,
                 names: Sequence[str], field: str, quantity: str, noun: str) -> np.ndarray:
    """
    Return ``previous`` (one value per input ``names``) with ``values`` applied.

    A mapping changes only the inputs it names, an unnamed list must give every one.

    Raises
    ------
    InputError
        An unknown name, a list of the wrong length, or a non-finite value; the message
        names ``field`` (``effort``, ``position``), the ``quantity`` and the ``noun`` (one
        input: 'tendon', 'motor').

    """
    names = list(names)
    result = np.array(previous, dtype=float)
    if isinstance(values, Mapping):
        for name, value in values.items():
            if name not in names:
                raise InputError(f'name: unknown {noun} {name!r}; known: {names}')
            result[names.index(name)] = value
    elif len(values) != len(names):
        raise InputError(f'{field}: has {counted(len(values), "value")} without names; give one '
                         f'per {noun} {names} or name them')
    else:
        result[:] = values
    bad = [n for n, v in zip(names, result) if not np.isfinite(v)]
    if bad:
        raise InputError(f'{field}: non-finite {quantity} for {bad}')
    return result
