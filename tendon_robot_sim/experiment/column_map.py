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
A column map: which column of a measured table is what (``import --columns MAP.yaml``).

Another lab's CSV needs only another map; nothing of one lab's format is built in. The
map (YAML, read with the robot descriptions' loader: one-line errors naming the key)::

    time: {column: timestamp, unit: s}          # s, ms, us or ns; strictly increasing
    label: {column: pattern_label}              # optional: the motion each row belongs to
    inputs:
      kind: displacement                        # displacement (pulled in) or tension
      unit: mm                                  # m, cm, mm, um; N, mN, kN; rad, deg
      sign: 1                                   # -1: the table counts paying out positive
      drum_radius: 0.005                        # m; only for unit rad or deg (a motor angle)
      columns:                                  # every tendon of the robot: its own column
        s1_t0: servo_4_mm
        s1_t1: {column: servo_3_mm, sign: -1}   # a column may set its own unit and sign
    tip: {columns: [tip_x, tip_y, tip_z], unit: mm}
    frame:                                      # the measurement frame in the base frame:
      rotation: [[1, 0, 0], [0, 1, 0], [0, 0, 1]]   # p_base = R p_measured + t; or rpy,
      translation: [0.0, 0.0, 0.0]              # rpy_deg (fixed axes x, y, z, REP 103) or
      unit: mm                                  # quaternion [x, y, z, w]; unit of t
    marker: {translation: [0, 0, 8], unit: mm}  # optional: the point measured, tip frame
    markers:                                    # optional: more measured points
      mid: {columns: [mid_x, mid_y, mid_z], unit: mm}
    source: ...                                 # optional text: where the data come from
    licence: ...                                # optional text: under which licence

Units convert to SI (m, N, s). ``source`` and ``licence`` are kept for the reader only.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import re
from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from tendon_robot_sim.models.description import (describe_value, DescriptionMapping,
                                                 read_yaml, RobotDescriptionError)

LENGTH_UNITS = {'m': 1.0, 'cm': 1e-2, 'mm': 1e-3, 'um': 1e-6}
TENSION_UNITS = {'N': 1.0, 'mN': 1e-3, 'kN': 1e3}
ANGLE_UNITS = {'rad': 1.0, 'deg': math.pi / 180.0}
TIME_UNITS = {'s': 1.0, 'ms': 1e-3, 'us': 1e-6, 'ns': 1e-9}
INPUT_KINDS = ('displacement', 'tension')
# A rotation matrix given in the map is orthonormal within this (rounded entries pass).
ROTATION_TOLERANCE = 1e-3
# A marker name becomes a topic name: a ROS name token.
MARKER_NAME = re.compile(r'^[A-Za-z][A-Za-z0-9_]*$')


class ColumnMapError(ValueError):
    """A column map that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class InputColumn:
    """The column of one tendon's input and its conversion to SI (m or N, robot sign)."""

    tendon: str
    column: str
    factor: float      # SI value = factor * table value (unit, drum radius and sign)


@dataclass(frozen=True)
class ColumnMap:
    """What each column of a measured table is, and how to convert it."""

    path: Path
    time_column: str
    time_factor: float                  # s per table unit
    label_column: str | None
    kind: str                           # 'displacement' (m) or 'tension' (N)
    inputs: tuple[InputColumn, ...]     # in the order of the map
    tip_columns: tuple[str, str, str]
    tip_factor: float                   # m per table unit
    rotation: np.ndarray                # (3, 3) measurement frame -> base frame
    translation: np.ndarray             # (3,) m, of the measurement frame in the base frame
    marker_offset: np.ndarray | None    # (3,) m, tip frame; None: not given
    markers: tuple[tuple[str, tuple[str, str, str], float], ...]   # (name, columns, m/unit)
    source: str = ''
    licence: str = ''
    marker_factor: float = 1.0          # m per unit of marker.translation

    def to_base(self, points: np.ndarray, factor: float) -> np.ndarray:
        """Return measured points (k, 3) in table units as base-frame points [m]."""
        return (points * factor) @ self.rotation.T + self.translation

    def input_columns_for(self, tendon_names) -> list[InputColumn]:
        """Return the input columns in the robot's tendon order; ColumnMapError if one is off."""
        by_tendon = {column.tendon: column for column in self.inputs}
        for column in self.inputs:
            if column.tendon not in tendon_names:
                raise ColumnMapError(
                    f'{self.path}: inputs.columns.{column.tendon}: the robot has no tendon '
                    f'{column.tendon!r} (its tendons: {", ".join(tendon_names)})')
        missing = [name for name in tendon_names if name not in by_tendon]
        if missing:
            raise ColumnMapError(
                f'{self.path}: inputs.columns: no column for tendon {missing[0]!r}; every '
                f'tendon of the robot needs its input ({", ".join(tendon_names)})')
        return [by_tendon[name] for name in tendon_names]


def load_column_map(path: str | Path) -> ColumnMap:
    """Read and check a column map; :class:`ColumnMapError` names the file and the key."""
    path = Path(path)
    try:
        return _column_map(path, read_yaml(path))
    except RobotDescriptionError as error:
        text = str(error)
        raise ColumnMapError(text if text.startswith(str(path)) else f'{path}: {text}') \
            from None


def _column_map(path: Path, data: Any) -> ColumnMap:
    if not isinstance(data, dict):
        raise RobotDescriptionError(f'{path}: a column map must be a mapping (time, inputs, '
                                    f'tip, ...), got {describe_value(data)}')
    top = DescriptionMapping(data, '', required=('time', 'inputs', 'tip'),
                             optional=('label', 'frame', 'marker', 'markers', 'source',
                                       'licence'))
    time = _section(top, 'time', ('column',), ('unit',))
    time_column = time.string('column')
    time_factor = _unit(time, TIME_UNITS, 's')
    time.finish()
    label_column = None
    if 'label' in top:
        label = _section(top, 'label', ('column',), ())
        label_column = label.string('column')
        label.finish()
    kind, inputs = _inputs(_section(top, 'inputs', ('kind', 'columns'),
                                    ('unit', 'sign', 'drum_radius')))
    tip = _section(top, 'tip', ('columns',), ('unit',))
    tip_columns = _three_columns(tip)
    tip_factor = _unit(tip, LENGTH_UNITS, 'm')
    tip.finish()
    rotation, translation = _frame(top)
    marker_offset = None
    unit = 1.0
    if 'marker' in top:
        marker = _section(top, 'marker', ('translation',), ('unit',))
        unit = _unit(marker, LENGTH_UNITS, 'm')
        marker_offset = marker.vector('translation', (0.0, 0.0, 0.0)) * unit
        marker.finish()
    markers = _markers(top)
    texts = [top.get(key, '') for key in ('source', 'licence')]
    for key, text in zip(('source', 'licence'), texts):
        if not isinstance(text, str):
            raise RobotDescriptionError(f'{key}: must be text, got {type(text).__name__}')
    top.finish()
    _one_value_a_column([('time.column', time_column)]
                        + [(f'inputs.columns.{c.tendon}', c.column) for c in inputs]
                        + _axes('tip.columns', tip_columns)
                        + [item for name, columns, _ in markers
                           for item in _axes(f'markers.{name}.columns', columns)])
    return ColumnMap(path=path, time_column=time_column, time_factor=time_factor,
                     label_column=label_column, kind=kind, inputs=inputs,
                     tip_columns=tip_columns, tip_factor=tip_factor, rotation=rotation,
                     translation=translation, marker_offset=marker_offset, markers=markers,
                     source=texts[0], licence=texts[1], marker_factor=unit)


def _section(top: DescriptionMapping, name: str, required, optional) -> DescriptionMapping:
    return DescriptionMapping(top.get(name), name, required=required, optional=optional)


def _unit(m: DescriptionMapping, units: dict[str, float], default: str) -> float:
    return units[_unit_name(m, units, default)]


def _unit_name(m: DescriptionMapping, units: dict[str, float], default: str) -> str:
    unit = m.get('unit', default)
    if unit not in units:
        raise RobotDescriptionError(f'{m._path("unit")}: unknown unit {unit!r}; known: '
                                    f'{", ".join(units)}')
    return unit


def _sign(m: DescriptionMapping, default: float) -> float:
    sign = m.get('sign', default)
    if isinstance(sign, bool) or sign not in (1, -1):
        raise RobotDescriptionError(f'{m._path("sign")}: must be 1 or -1, got {sign!r}')
    return float(sign)


def _inputs(m: DescriptionMapping) -> tuple[str, tuple[InputColumn, ...]]:
    kind = m.choice('kind', INPUT_KINDS, default='displacement')
    units = LENGTH_UNITS | ANGLE_UNITS if kind == 'displacement' else TENSION_UNITS
    unit = _unit_name(m, units, 'm' if kind == 'displacement' else 'N')
    sign = _sign(m, 1)
    drum = m.number('drum_radius', positive=True) if 'drum_radius' in m else None
    columns = m.get('columns')
    if not isinstance(columns, dict) or not columns:
        raise RobotDescriptionError('inputs.columns: must be a mapping {tendon name: column}, '
                                    f'got {type(columns).__name__}')
    result = []
    angles = False     # an input column in rad or deg, which the drum makes a displacement
    tendon_of = {}     # column -> the tendon it was given to first
    for tendon, spec in columns.items():
        key = f'inputs.columns.{tendon}'
        if not isinstance(spec, (str, dict)):
            quoted = f" (quote a name that YAML reads as a number: '{spec}')" \
                if isinstance(spec, (int, float)) and not isinstance(spec, bool) else ''
            raise RobotDescriptionError(f'{key}: must be a column name or {{column, unit, '
                                        f'sign}}, got {describe_value(spec)}{quoted}')
        entry = DescriptionMapping({'column': spec} if isinstance(spec, str) else spec, key,
                                   required=('column',), optional=('unit', 'sign'))
        column = entry.string('column')
        if column in tendon_of:     # two tendons on one motor: a copied line not edited
            raise RobotDescriptionError(
                f'{key}: column {column!r} is also the column of tendon {tendon_of[column]!r}; '
                'each tendon needs its own column')
        tendon_of[column] = str(tendon)
        own_unit = _unit_name(entry, units, unit)
        factor = units[own_unit] * _sign(entry, sign)
        entry.finish()
        if own_unit in ANGLE_UNITS:
            if drum is None:
                raise RobotDescriptionError(
                    f'{key}: a motor angle ({own_unit}) needs inputs.drum_radius (m) to '
                    'become a displacement')
            factor *= drum
        result.append(InputColumn(str(tendon), column, factor))
        angles = angles or own_unit in ANGLE_UNITS
    if drum is not None and not angles:     # a unit meant as deg, or a key left from a copy
        raise RobotDescriptionError('inputs.drum_radius: only for a motor angle (rad, deg); '
                                    'no input column is one')
    m.finish()
    return kind, tuple(result)


def _three_columns(m: DescriptionMapping) -> tuple[str, str, str]:
    columns = m.get('columns')
    if (not isinstance(columns, list) or len(columns) != 3
            or not all(isinstance(c, str) and c for c in columns)):
        raise RobotDescriptionError(f'{m._path("columns")}: must be 3 column names (x, y, z), '
                                    f'got {columns!r}'[:200])
    return tuple(columns)


def _axes(key: str, columns: tuple[str, str, str]) -> list[tuple[str, str]]:
    return [(f'{key}[{axis}]', column) for axis, column in enumerate(columns)]


def _one_value_a_column(uses: list[tuple[str, str]]) -> None:
    """
    Refuse a column that two numbers of a row are read from: an entry copied, not edited.

    ``uses``: (key, column) of the time, every input and every coordinate, in the map's
    order. Taken, the tip's y was its x (or a tendon's input), with nothing to show it.
    """
    first = {}
    for key, column in uses:
        if column in first:
            raise RobotDescriptionError(f'{key}: column {column!r} is also {first[column]}; '
                                        'each value needs its own column')
        first[column] = key


def _frame(top: DescriptionMapping) -> tuple[np.ndarray, np.ndarray]:
    if 'frame' not in top:
        return np.eye(3), np.zeros(3)
    frame = _section(top, 'frame', (), ('rotation', 'rpy', 'rpy_deg', 'quaternion',
                                        'translation', 'unit'))
    given = [key for key in ('rotation', 'rpy', 'rpy_deg', 'quaternion') if key in frame]
    if len(given) > 1:
        raise RobotDescriptionError(f'frame: give one of rotation, rpy, rpy_deg, quaternion; '
                                    f'got {", ".join(given)}')
    rotation = np.eye(3)
    if given == ['rotation']:
        rows = frame.get('rotation')
        if not isinstance(rows, list) or len(rows) != 3:
            raise RobotDescriptionError('frame.rotation: must be 3 rows of 3 numbers')
        rotation = np.array([DescriptionMapping({'row': row}, f'frame.rotation[{i}]')
                             .vector('row', (0.0, 0.0, 0.0)) for i, row in enumerate(rows)])
        if (np.abs(rotation @ rotation.T - np.eye(3)).max() > ROTATION_TOLERANCE
                or np.linalg.det(rotation) < 0.0):
            raise RobotDescriptionError('frame.rotation: not a rotation matrix (orthonormal, '
                                        'determinant +1)')
        u, _, vt = np.linalg.svd(rotation)     # the nearest rotation to rounded entries
        rotation = u @ vt
    elif given:
        values = (frame.number_list(given[0], size=4) if given[0] == 'quaternion'
                  else frame.number_list(given[0], size=3))
        if given[0] == 'quaternion':
            if not np.any(values):
                raise RobotDescriptionError('frame.quaternion: must be non-zero [x, y, z, w]')
            rotation = Rotation.from_quat(values).as_matrix()
        else:     # fixed axes x, y, z (REP 103)
            rotation = Rotation.from_euler('xyz', values, degrees=given[0] == 'rpy_deg') \
                .as_matrix()
    unit = _unit(frame, LENGTH_UNITS, 'm')
    translation = frame.vector('translation', (0.0, 0.0, 0.0)) * unit
    frame.finish()
    return rotation, translation


def _markers(top: DescriptionMapping) -> tuple:
    data = top.get('markers', {})
    if not isinstance(data, dict):
        raise RobotDescriptionError('markers: must be a mapping {name: {columns, unit}}')
    markers = []
    for name, spec in data.items():
        if not isinstance(name, str) or not MARKER_NAME.match(name):
            raise RobotDescriptionError(f'markers.{name}: a marker name is letters, digits '
                                        'and _, starting with a letter (it names a topic)')
        m = DescriptionMapping(spec, f'markers.{name}', required=('columns',),
                               optional=('unit',))
        markers.append((name, _three_columns(m), _unit(m, LENGTH_UNITS, 'm')))
        m.finish()
    return tuple(markers)
