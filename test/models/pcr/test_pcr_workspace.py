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

"""Workspace of the parallel robot: samples, validity, and the Dask path."""

import numpy as np
from numpy.testing import assert_allclose
import pytest

from tendon_robot_sim.models.pcr.clearance import rod_clearance
from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver
from tendon_robot_sim.models.pcr.robot import default_pcr_file, load_pcr_robot
from tendon_robot_sim.models.pcr.workspace import cylinder_samples, workspace

ROBOT = load_pcr_robot(default_pcr_file())


def test_cylinder_samples_fill_the_disc_at_each_height():
    samples = cylinder_samples(0.3, [0.4, 0.5], 200)
    assert samples.shape == (400, 3)
    assert_allclose(np.unique(samples[:, 2]), [0.4, 0.5])
    r = np.hypot(samples[:200, 0], samples[:200, 1])
    assert r.max() < 0.3
    # even spread: a quarter of the points inside half the radius (a quarter of the area)
    assert np.mean(r < 0.15) == pytest.approx(0.25, abs=0.01)


def test_valid_means_converged_and_within_the_motor_limits():
    positions = cylinder_samples(0.45, [0.45], 20)
    result = workspace(ROBOT, positions, workers=1, progress=False)
    assert 0 < result.valid.sum() < 20
    solver = PcrSolver(ROBOT)
    low, high = ROBOT.motor_limits
    for position, valid, q in zip(positions, result.valid, result.motor_angles):
        if valid:
            solver.reset()
            assert_allclose(solver.inverse(position).motor_angles, q, atol=1e-12)
            assert np.all((q >= low) & (q <= high))
    failed = ~result.converged
    assert np.all(np.isnan(result.motor_angles[failed]))
    assert result.summary()['samples'] == 20


def test_workspace_on_a_dask_cluster_gives_the_same_samples():
    distributed = pytest.importorskip('distributed')
    positions = cylinder_samples(0.45, [0.5, 0.6], 8)
    local = workspace(ROBOT, positions, workers=1, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster:
        remote = workspace(ROBOT, positions, scheduler=cluster.scheduler_address,
                           chunk=5, progress=False)
    assert np.array_equal(remote.valid, local.valid)
    assert_allclose(remote.motor_angles, local.motor_angles, atol=1e-12)


def test_reachable_means_valid_at_every_orientation():
    positions = cylinder_samples(0.4, [0.5], 10)
    orientations = np.radians([[0, 0, 0], [0, 0, 40]])
    result = workspace(ROBOT, positions, orientations, workers=1, progress=False)
    assert result.positions.shape == (20, 3)
    assert_allclose(result.orientations[10:], np.tile(orientations[1], (10, 1)))
    level, turned = result.valid[:10], result.valid[10:]
    assert np.array_equal(result.reachable, level & turned)
    assert turned.sum() < level.sum()      # turning the platform costs workspace
    solver = PcrSolver(ROBOT)
    k = int(np.flatnonzero(turned)[0])
    assert_allclose(solver.inverse(positions[k], orientations[1]).motor_angles,
                    result.motor_angles[10 + k], atol=1e-12)


def test_each_sample_keeps_its_rod_clearance_beside_the_papers_validity():
    """Rods 3 and 4 through each other: valid as the paper counts, not clear of each other."""
    positions = np.array([[-0.022, -0.023, 0.362], [0.05, 0.0, 0.45]])
    orientations = np.radians([[17.4, 4.3, -79.7]])
    result = workspace(ROBOT, positions, orientations, workers=1, progress=False)
    assert result.valid.all()
    assert result.rods_clear.tolist() == [False, True]
    solver = PcrSolver(ROBOT)
    for k in range(2):
        solver.reset()
        expected = rod_clearance(ROBOT, solver.inverse(positions[k], orientations[0]))
        assert result.clearances[k] == pytest.approx(expected.gap, abs=1e-12)
    assert result.summary()['valid_rods_clear'] == 1
