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
The Jacobian's probes by interval of the multiple shooting against whole-rod integrations.

``statics._kernels.solve`` rebuilds the implicit dynamics' Jacobian by integrating, for each
probed unknown, only the interval it starts (``_residual``'s ``part``), from the state the last
whole integration kept at the interval's first node. Each probe's residual must be the one a
whole integration of the probed unknowns gives: the interval's rows changed, every other row
as it was. With tendon friction the probe integrates from that node to the tip (the tensions,
and at the discs each tendon's last hole, run across the nodes): every later row changes too.
"""

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.statics import _kernels as kernels
from tendon_robot_sim.models.tendon_robot import load_robot, TendonFriction

CONFIG = Path(__file__).resolve().parents[4] / 'config'
# A probe of 1e-4 (scaled units) moves its interval's rows by about that much; a mistake in
# the state an interval starts from moves them as much, while the discrete model's vertebra
# fixed points (1e-11 of a bay) and round-off stay far below this
AGREE = 1e-9
# With friction at the discs the fixed points' 1e-11 also moves each hole's turn angle and the
# tension through it: up to 2e-9 between two whole integrations of the same unknowns
# (from other bay guesses), still far below a probe's 1e-4
AGREE_DISC_FRICTION = 1e-8


def moving(robot_file: str, friction: TendonFriction | None = None) -> ImplicitSimulator:
    """Return the robot swinging under two tendons, 0.1 s after rest (three intervals)."""
    robot = load_robot(CONFIG / robot_file)
    if friction is not None:
        robot = dataclasses.replace(robot, tendons=tuple(
            dataclasses.replace(t, friction=friction) for t in robot.tendons))
    sim = ImplicitSimulator(robot)
    sim.set_tensions({'t0': 2.0, 't1': 0.5})
    sim.advance(0.1)
    assert sim._plan.nodes.size >= 2      # the nitinol and steel robots have three intervals
    return sim


def residual(sim: ImplicitSimulator, x: np.ndarray, F: np.ndarray, part: int) -> bool:
    unknowns = sim._unknowns_for(sim._modes)
    return kernels._residual(
        sim._plan, sim._modes, sim._commands[0], sim._commands[1],
        np.concatenate(sim._tip_load), x, F, sim._traj.copy(), np.zeros(sim.n_tendons),
        np.zeros(sim.n_tendons), sim._bays[id(sim._plan)], unknowns.work, part)


# Till's sliding law at 5 mm/s (the discs' holes on the nitinol robot, continuous routing on the
# steel one), and his viscous law
FRICTION = [None, TendonFriction('sliding', 0.1, 0.005), TendonFriction('viscous', 4.0)]


@pytest.mark.parametrize('friction', FRICTION, ids=['frictionless', 'sliding', 'viscous'])
@pytest.mark.parametrize('robot_file', ['nitinol_robot.yaml', 'steel_rod_robot.yaml'])
def test_a_probe_of_one_interval_gives_the_whole_integrations_residual(robot_file, friction):
    sim = moving(robot_file, friction)
    x = sim._unknowns_for(sim._modes).x.copy()
    k0 = x.size - kernels.NODE_SIZE * sim._plan.nodes.size
    assert k0 == 6                           # tensions given: the base's unknowns, the nodes'
    base = np.zeros_like(x)
    # per interval: a force or moment unknown at its start, and a node's position and velocity
    columns = [(0, 2), (0, 4)] + [
        (j + 1, k0 + kernels.NODE_SIZE * j + i) for j in range(sim._plan.nodes.size)
        for i in (1, 4, 7, 10, 13, 16)]
    agree = AGREE if friction is None or sim.model != 'discrete' else AGREE_DISC_FRICTION
    moved = {}       # per interval, the largest change of a later interval's residuals
    for part, column in columns:
        probe = x.copy()
        probe[column] += 1e-4
        whole = np.zeros_like(x)
        assert residual(sim, probe, whole, -1)
        assert residual(sim, x, base, -1)        # keeps x's states at the nodes
        interval = base.copy()
        assert residual(sim, probe, interval, part)
        assert np.abs(whole - base).max() > 1e-6, (part, column)     # the probe moved it
        np.testing.assert_allclose(interval, whole, rtol=0.0, atol=agree,
                                   err_msg=f'interval {part}, unknown {column}')
        if part < sim._plan.nodes.size:
            later = np.r_[0:6, k0 + kernels.NODE_SIZE * (part + 1):x.size]
            moved[part] = max(moved.get(part, 0.0), np.abs(whole - base)[later].max())
    if friction is not None:
        # friction carries a probe past its interval's end node (through the tensions): the
        # later nodes' defects and the tip's move, where without friction they do not, so a
        # probe that stopped at its node would fail above
        assert all(change > 100 * agree for change in moved.values()), moved
