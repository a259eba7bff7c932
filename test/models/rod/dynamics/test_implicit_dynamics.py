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
Check the implicit dynamics against what we trust: Till's code, the numpy twin, the others.

Till's own program, the numpy/scipy twin, the explicit model, the statics, and energy.

Till's tendon-robot example (ContinuumRobotExamples, 02_Dynamics/03_Tendon_Robot) is compared
with the trajectory his program computes (../data/till_tendon_robot_tip.csv, made as
../data/README.md says); the explicit (PyElastica-checked) model and the shooting statics are the
package's own, each tested elsewhere against independent references.
"""

from pathlib import Path

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.cosserat import stiffness_matrices
from tendon_robot_sim.models.rod.dynamics.implicit import (DEFAULT_STEPS, ImplicitSimulator,
                                                           StepFailed, TensionLimitExceeded)
from tendon_robot_sim.models.rod.dynamics.implicit_reference import ImplicitReference
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.sim_model import InputError
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict
from vibration import two_modes

DATA = Path(__file__).parents[1] / 'data'
CONFIG = share_dir() / 'config'
TILL = load_robot(CONFIG / 'till_tendon_robot.yaml')
NITINOL = load_robot(CONFIG / 'nitinol_robot.yaml')
STEEL = load_robot(CONFIG / 'steel_rod_robot.yaml')


def till_inputs(dt: float, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """Return the times of the steps' ends [s] and Till's motor displacement there [m]."""
    ramp = np.loadtxt(CONFIG / 'till_tendon_robot_displacements.csv', delimiter=',', skiprows=1)
    times = dt * np.arange(1, round(duration / dt) + 1)
    return times, np.interp(times, ramp[:, 0], ramp[:, 1])[:, None]


# ------------------------------------------------------------------ Till's example


def test_till_example_within_3_mm_rms_of_his_space_converged_trajectory():
    """
    The whole 25 s of Till's example at his dt (50 ms) and alpha (0, BDF2).

    The reference is Richardson-extrapolated from his code at N = 200 and 400 (which differ by
    1.45 mm RMS); we measured 0.04 mm RMS (0.11 mm at worst) with the default resolution.
    """
    reference = np.loadtxt(DATA / 'till_tendon_robot_tip.csv', delimiter=',', skiprows=1)
    runs = reference[:, 4:7] - reference[:, 7:10]
    assert np.sqrt(np.mean(np.sum(runs ** 2, axis=1))) == pytest.approx(1.45e-3, rel=0.01)
    sim = ImplicitSimulator(TILL, dt=0.05, alpha=0.0)
    sim.set_displacements([0.0])
    sim.place_at_rest()
    start = sim.state().tip_position
    _, displacements = till_inputs(0.05, 24.95)
    record = sim.follow(displacements, 'displacement')
    tips = np.vstack((start, record[:, 0:3]))
    assert tips.shape == (reference.shape[0], 3)
    errors = np.linalg.norm(tips - reference[:, 1:4], axis=1)
    rms = float(np.sqrt(np.mean(errors ** 2)))
    assert rms < 3e-3                      # the target
    assert rms < 0.2e-3                    # what we measure (0.04 mm), with margin
    # a large motion (the tip swings over 0.6 m): a small RMS is not a rod at rest
    assert np.ptp(tips[:, 0]) > 0.5
    # the tension follows the motor; a slack tendon would read 0
    tensions, shown = sim.record_tendons(record, displacements)
    assert 7.0 < tensions.max() < 8.0 and np.all(tensions >= 0.0)
    np.testing.assert_allclose(shown, displacements, atol=0.0)


# ------------------------------------------------------------------ the numpy twin


def helical_steel():
    """Return the steel robot's t0 and t1, helical (half a turn), and a tip load."""
    data = STEEL.to_dict()
    data['tendons'] = data['tendons'][:2]
    data['tendons'][1].update(routing='helical', turns=0.5)
    data['tip_load'] = {'force': [0.0, 0.05, 0.1], 'moment': [0.0, 0.0, 0.002]}
    return robot_from_dict(data)


@pytest.mark.parametrize('case', ['till displacement', 'nitinol tension', 'helical tip load',
                                  'converging'])
def test_kernels_agree_with_the_numpy_twin(case):
    """
    Compare a few steps of the numba kernels with the plain numpy/scipy formulation.

    Till's robot (displacement input, compliance, motor distance, Kelvin-Voigt damping, drag),
    the nitinol robot with its discs as point masses (continuous routing, a tension step,
    mass-proportional damping), the steel robot with a helical tendon and a tip wrench, and
    the steel robot with tapered tendons converging on the tip (config/steel_rod_converging.yaml:
    the routing's curvature terms r_s, r_ss in the distributed load), two of them pulled.
    The kernels' RK4 grid and the twin's are different, each converged to well below the
    tolerance.
    """
    if case.startswith('till'):
        robot, dt, inputs, start = TILL, 0.05, np.array([[0.004]]), [0.0]
        modes, field = ['displacement'], 'displacement'
    elif case == 'converging':
        robot = load_robot(CONFIG / 'steel_rod_converging.yaml')
        dt, inputs, start = 0.01, np.array([[4.0, 2.0, 0.0, 0.0]] * 2), [0.0] * 4
        modes, field = ['tension'] * 4, 'tension'
    elif case.startswith('helical'):
        robot, dt, inputs, start = helical_steel(), 0.01, np.array([[0.0, 3.0]]), [0.0] * 2
        modes, field = ['tension'] * 2, 'tension'
    else:
        robot, dt, inputs, start = NITINOL, 0.01, np.array([[0.5, 0, 0], [0.5, 0, 0]]), [0] * 3
        modes, field = ['tension'] * 3, 'tension'
    sim = ImplicitSimulator(robot, dt=dt, model='cosserat', steps=40)
    if field == 'displacement':
        sim.set_displacements(start)
        sim.place_at_rest()
    record = sim.follow(inputs, field)
    twin = ImplicitReference(robot, dt, inputs=modes)
    twin.start(start)
    tips = np.array([twin.step(values) for values in inputs])
    moved = np.linalg.norm(record[-1, 0:3] - sim.statics.solve_tensions(
        [0.0] * len(robot.tendons)).tip_position)
    assert moved > 1e-4                    # the steps move the tip
    np.testing.assert_allclose(record[:, 0:3], tips, atol=2e-7)


def test_kirchhoff_and_cosserat_rods_move_alike_when_slender():
    """
    The Kirchhoff model (inextensible, unshearable) against the Cosserat one on the steel rod.

    A 1 mm rod 0.5 m long shears and stretches by parts per million: the same swing.
    """
    tensions = np.zeros((50, 4))
    tensions[:, 0] = 2.0
    tips = [ImplicitSimulator(STEEL, dt=0.01, model=model).follow(tensions, 'tension')[:, 0:3]
            for model in ('kirchhoff', 'cosserat')]
    assert np.ptp(tips[0][:, 2]) > 0.01                       # it swings
    np.testing.assert_allclose(tips[0], tips[1], atol=2e-5)


# ------------------------------------------------------------------ limits we already trust


def test_slow_ramp_ends_at_the_statics():
    """
    Steel robot, displacement of t0 ramped to 5 mm over 2 s, held 1 s: the statics' answer.

    Slow next to the first mode (5.6 Hz); the default damping (ratio 0.1) and BDF2 take the
    rest away. Within 0.05 mm of the shooting statics of the same displacement.
    """
    robot = STEEL
    sim = ImplicitSimulator(robot, dt=0.01)
    sim.set_displacements([0.0] * 4)
    sim.place_at_rest()
    times = 0.01 * np.arange(1, 301)
    q = np.zeros((times.size, 4))
    q[:, 0] = 0.005 * np.minimum(times / 2.0, 1.0)
    q[:, 2] = -q[:, 0]                               # the antagonist pays out (goes slack)
    record = sim.follow(q, 'displacement')
    static = StaticsSolver(robot, 'cosserat').solve_displacements(q[-1])
    assert np.linalg.norm(record[-1, 0:3] - static.tip_position) < 0.05e-3
    assert np.linalg.norm(record[-1, 0:3] - record[0, 0:3]) > 0.02     # it moved
    tensions = record[:, 15:19]
    assert np.all(tensions >= 0.0) and tensions[-1, 2] == 0.0           # slack: no tension
    np.testing.assert_allclose(tensions[-1], static.tensions, atol=2e-3 * static.tensions.max())


def _energy(sim, robot):
    """Kinetic + elastic energy [J] of the rod (no gravity), trapezoidal rule along s."""
    profile = sim.profile()
    rod = robot.rod
    Kse, Kbt = stiffness_matrices(rod)
    rho_j = rod.density * np.array([rod.second_moment, rod.second_moment, rod.polar_moment])
    density = (0.5 * rod.linear_density * np.sum(profile.velocities ** 2, axis=1)
               + 0.5 * np.sum(rho_j * profile.angular_velocities ** 2, axis=1)
               + 0.5 * np.sum(Kse * (profile.strains - [0.0, 0.0, 1.0]) ** 2, axis=1)
               + 0.5 * np.sum(Kbt * profile.curvatures ** 2, axis=1))
    return float(np.trapezoid(density, profile.arc_lengths))


def test_trapezoidal_rule_without_damping_keeps_the_energy():
    """
    With alpha = -0.5 and no damping the free vibration keeps its energy within 1 % over 10 s.

    The steel robot without gravity, released from a 2 N pull. Counted from 0.1 s: in the step
    that releases it the trapezoidal rule still averages the old load in (it acts for half a
    step), so the release itself is not energy-neutral; the free motion after it is.
    """
    data = STEEL.with_changes(damping={'rate': 0.0}).to_dict()
    data['gravity'] = [0.0, 0.0, 0.0]
    robot = robot_from_dict(data)
    sim = ImplicitSimulator(robot, dt=0.02, alpha=-0.5, steps=40)
    sim.set_tensions({'t0': 2.0})
    sim.place_at_rest()
    stored = _energy(sim, robot)
    sim.set_tensions({'t0': 0.0})
    sim.advance(0.1)
    energies = []
    for _ in range(50):
        sim.advance(0.2)
        energies.append(_energy(sim, robot))
    energies = np.array(energies)
    assert sim.time == pytest.approx(10.1)
    assert 0.3 * stored < energies[0] < stored
    assert np.max(np.abs(energies / energies[0] - 1.0)) < 0.01
    # the same with BDF2 loses most of it (numerical damping): the test can tell
    damped = ImplicitSimulator(robot, dt=0.02, alpha=0.0, steps=40)
    damped.set_tensions({'t0': 2.0})
    damped.place_at_rest()
    damped.set_tensions({'t0': 0.0})
    damped.advance(10.1)
    assert _energy(damped, robot) < 0.9 * energies[0]


def test_default_robot_agrees_with_the_explicit_model():
    """
    Silicone robot (discs, discrete model): two frequencies within 1 %, settled tip 0.2 mm.

    Released from 0.3 N on t0 (damping ratio 0.2), BDF2 at dt = 1 ms against the explicit
    PyElastica-checked model at its default step; then both pulled by 2 N and 1 N until they
    rest.
    """
    from tendon_robot_sim.models.rod.dynamics.explicit import TendonSimulator
    robot = load_robot(default_robot_file()).with_changes(damping={'ratio': 0.2})
    sample = 0.002
    implicit = ImplicitSimulator(robot, dt=0.001)
    implicit.set_tensions({'t0': 0.3})
    implicit.place_at_rest()
    implicit.set_tensions([0.0] * 4)
    record = implicit.follow(np.zeros((1500, 4)), 'tension')
    t = 0.001 * np.arange(1, 1501)
    ours, misfit = two_modes(t[1::2], record[1::2, 2])
    assert misfit < 0.03                                         # two modes are all of it
    explicit = TendonSimulator(robot)
    explicit.set_tensions({'t0': 0.3})
    explicit.run_until_steady(20.0, speed_tolerance=1e-4)
    explicit.set_tensions([0.0] * 4)
    z = np.array([explicit.advance(sample).tip_position[2] for _ in range(750)])
    theirs, misfit = two_modes(sample * np.arange(1, 751), z)
    assert misfit < 0.03
    np.testing.assert_allclose(ours, theirs, rtol=0.01)
    tensions = [2.0, 1.0, 0.0, 0.0]
    implicit.set_tensions(tensions)
    settled = implicit.run_until_steady(10.0, speed_tolerance=1e-5)
    explicit.set_tensions(tensions)
    expected = explicit.run_until_steady(10.0, speed_tolerance=1e-5)
    assert implicit.is_steady(1e-5) and explicit.is_steady(1e-5)
    assert np.linalg.norm(settled.tip_position - expected.tip_position) < 0.2e-3


def test_a_tension_step_on_the_nitinol_robot_runs_at_2_ms():
    """
    Step 2 N from rest at dt = 2 ms, as at dt = 0.5 ms.

    The rod's motion turns within the first steps, where the predicted start of a step fails
    (once this did not converge at dt = 2 ms). Its tip at 1 s agrees with dt = 0.5 ms within
    1 mm: BDF2's time error on the still-ringing step response (0.74 mm measured; 10 um once
    it has settled at 5 s).
    """
    tips = []
    for dt in (0.002, 0.0005):
        sim = ImplicitSimulator(NITINOL, dt=dt)
        sim.set_tensions({'t0': 2.0})
        tips.append(sim.advance(1.0).tip_position)
    assert np.linalg.norm(tips[0] - tips[1]) < 1e-3


def step_response(robot, tension: float, dt: float, duration: float) -> np.ndarray:
    """Return the tip (n, 3) [m] every 2 ms of a step to ``tension`` N in t0 at t = 0."""
    sim = ImplicitSimulator(robot, dt=dt)
    record = sim.follow(np.tile([tension, 0.0, 0.0], (round(duration / dt), 1)), 'tension')
    every = round(0.002 / dt)
    return record[every - 1::every, 0:3]


@pytest.mark.parametrize('tension', [6.0, 8.0])
def test_large_tension_steps_on_the_nitinol_robot_run_at_2_ms(tension):
    """
    Step 6 or 8 N (max_tension 10 N) from rest at dt = 2 ms, as at dt = 1 and 0.5 ms.

    The rod whips round: its tip travels 0.27 or 0.32 m within 0.1 s. Once every dt from 2 ms
    down to 0.25 ms failed at the second step (a failed try left the discrete model's vertebra
    guesses of a wild iterate to the next; no continuation in a constant input could help).
    Over the first 0.1 s the tip at 2 ms stays within 15 % of that travel of the tip at 0.5 ms
    (measured 6 % and 9 %): BDF2's time error on a whip whose tip moves at several m/s, where a
    step input excites modes 2 ms does not resolve; the error shrinks with dt (1 ms: less than
    0.6 of it, measured 0.41), which a solver landing on another solution of the step
    equations would not. Then the run settles at the shooting statics' equilibrium (measured
    3 um at 8 s).
    """
    tips = {dt: step_response(NITINOL, tension, dt, 0.1) for dt in (0.002, 0.001, 0.0005)}
    fine = tips[0.0005]
    rest = StaticsSolver(NITINOL, 'discrete').solve_tensions([0.0, 0.0, 0.0]).tip_position
    travel = np.linalg.norm(fine - rest, axis=1).max()
    assert travel > 0.25
    error = {dt: np.linalg.norm(tips[dt] - fine, axis=1).max() for dt in (0.002, 0.001)}
    assert error[0.002] < 0.15 * travel
    assert error[0.001] < 0.6 * error[0.002]
    settled = step_response(NITINOL, tension, 0.002, 8.0)[-1]
    # on the implicit model's own grid (its spatial error, 0.1 mm, is not the point here)
    statics = StaticsSolver(NITINOL, 'discrete', step=NITINOL.rod.length / DEFAULT_STEPS)
    assert np.linalg.norm(settled - statics.solve_tensions([tension, 0.0, 0.0]).tip_position
                          ) < 2e-5


def test_one_newton_on_t0_and_t1_follows_the_converged_motion_at_the_default_dt():
    """
    1 N on t0 and t1 from rest at the default dt (2 ms), against dt = 0.25 ms, for 0.5 s.

    The tip swings 80 mm aside and 45 mm up about its equilibrium (z = +4.6 mm). Once the
    2 ms run swung down to z = -89 mm instead: within a step's Newton iteration a vertebra's
    guess turned by half a turn, which the bays' rotation error did not see, and from there
    the steps solved an equation with tendons pulled towards the opposite holes (at 1 and
    4 ms, or with other shooting nodes, the iteration happened not to go there). The
    reference takes 8x smaller steps, with their own shooting nodes (7 intervals, not 3):
    the converged motion of the same equations. The tolerance, 8 mm, is twice BDF2's phase
    error at 2 ms on this swing (measured 4.1 mm at worst); the wrong equation was 50 mm off
    by 0.05 s. The error shrinks with dt (1 ms: less than 0.6 of it, measured 0.44), which
    a run on another equation would not; at rest (8 s) the 2 ms run is 3 um from the scipy
    statics reference's equilibrium (scripted, not here: 4000 steps).
    """
    tips = {}
    for dt in (0.002, 0.001, 0.00025):
        sim = ImplicitSimulator(NITINOL, dt=dt)
        record = sim.follow(np.tile([1.0, 1.0, 0.0], (round(0.5 / dt), 1)), 'tension')
        every = round(0.002 / dt)
        tips[dt] = record[every - 1::every, 0:3]
    fine = tips[0.00025]
    assert np.ptp(fine[:, 1]) > 0.07 and fine[:, 2].max() > 0.02     # a real swing, upwards
    error = {dt: np.linalg.norm(tips[dt] - fine, axis=1).max() for dt in (0.002, 0.001)}
    assert error[0.002] < 8e-3
    assert error[0.001] < 0.6 * error[0.002]


# ------------------------------------------------------------------ bad input


def test_a_step_that_does_not_converge_says_with_which_dt_it_did():
    """
    20 N in t0 and t1 of the default robot at once (their limit) at dt = 50 ms.

    The first step fails, by homotopy too; the message names the dt with which that step
    converged when tried again, and a run at that dt gets past it (here: runs to the end).
    """
    robot = load_robot(default_robot_file())
    sim = ImplicitSimulator(robot, dt=0.05)
    sim.set_tensions({'t0': 20.0, 't1': 20.0})
    with pytest.raises(StepFailed, match=r'^the implicit step from t = 0 s did not converge with '
                                         r'dt = 0.05 s; tried again from t = 0 s, this step '
                                         r'converged with dt = ([0-9.e-]+) s; try dt = \1 s$'
                       ) as failed:
        sim.advance(0.2)
    assert failed.value.step_dt < 0.05
    assert failed.value.failure.endswith('did not converge with dt = 0.05 s')
    with pytest.raises(StepFailed, match='call reset'):
        sim.advance(0.05)
    sim.reset()                                      # and it runs again
    sim.advance(0.05)
    advised = ImplicitSimulator(robot, dt=failed.value.step_dt)
    advised.set_tensions({'t0': 20.0, 't1': 20.0})
    assert advised.advance(0.2).time == pytest.approx(0.2)


@pytest.mark.parametrize('pull', [0.02, 0.05])
def test_an_out_of_reach_start_names_the_tendon_over_its_limit(pull):
    """
    t1 pulled in 20 or 50 mm while t0 and t2 hold their length: their equilibrium is not found.

    Pulling t1 stretches the held tendons as it bends the rod: the statics (independently of
    the search) puts t0 above its 10 N at 1 mm of t1 already; the refusal names it and its
    limit, as a step of a run does (TensionLimitExceeded), instead of "not found".
    """
    assert StaticsSolver(NITINOL, 'discrete').solve_displacements(
        [0.0, 0.001, 0.0]).tensions[0] > 10.0
    sim = ImplicitSimulator(NITINOL)
    with pytest.raises(InputError, match=r"^displacements\['t0'\]: pulling the tendons there from "
                                         r"0 needs more than max_tension = 10 N of tendon 't0' "
                                         r'\(1[0-9.]+ N at [0-9.]+% of the way; the equilibrium '
                                         r'of all of it was not found\); refused$'):
        sim.set_displacements([0.0, pull, 0.0])
    assert sim.modes == ['tension'] * 3              # nothing changed


def test_a_displacement_above_max_tension_is_refused_naming_the_tendon():
    """The nitinol robot with 3 N tendons: pulling t1 by 20 mm curls it with about 4.6 N."""
    data = NITINOL.to_dict()
    for tendon in data['tendons']:
        tendon['max_tension'] = 3.0
    sim = ImplicitSimulator(robot_from_dict(data), dt=0.002)
    with pytest.raises(InputError, match=r"^displacements\['t1'\]: the equilibrium needs 4.[0-9]+ "
                                         r'N, above max_tension = 3 N; refused$'):
        sim.set_displacements({'t1': 0.02})
    assert sim.modes == ['tension'] * 3              # nothing changed
    sim.set_displacements({'t1': 0.005})             # within reach: taken
    assert sim.modes == ['tension', 'displacement', 'tension']
    # a ramp without the static check is refused at the step that would need it
    with pytest.raises(TensionLimitExceeded, match=r"tendon 't1'; refused \(the state stays"):
        for q in np.linspace(0.0, 0.02, 101)[1:]:
            sim.set_displacements({'t1': float(q)}, check=False)
            sim.advance(0.002)
    assert 0.0 < sim.time < 0.2 and np.all(sim.tensions <= 3.0)
    assert sim.state().tendon_displacements[1] < 0.02


@pytest.mark.parametrize('kwargs, message', [
    ({'dt': 0.0}, r'^dt: must be a finite number > 0 s, got 0.0$'),
    ({'dt': float('nan')}, r'^dt: must be a finite number > 0 s'),
    ({'alpha': 0.5}, r'^alpha: must be in \[-0.5, 0.0\]'),
    ({'steps': 0}, r'^steps: must be an integer >= 1, got 0$'),
    ({'model': 'discrete'}, r'^vertebrae: the discrete statics needs vertebra discs'),
    ({'displacement_ramp': -0.02},
     r'^displacement_ramp: must be a finite number >= 0 s, got -0.02$'),
    ({'displacement_ramp': float('inf')}, r'^displacement_ramp: must be a finite number'),
])
def test_bad_arguments_name_themselves(kwargs, message):
    with pytest.raises(InputError, match=message):
        ImplicitSimulator(STEEL, **kwargs)


@pytest.mark.parametrize('call, message', [
    (lambda s: s.set_tensions([1.0, float('nan'), 0.0, 0.0]), r'^tensions\[1\]: must be a finite'),
    (lambda s: s.set_tensions({'t9': 1.0}), r"^tensions: unknown tendon 't9'"),
    (lambda s: s.set_tensions({'t0': -1.0}), r"^tensions\['t0'\]: must be >= 0 N"),
    (lambda s: s.set_tensions({'t0': 21.0}), r"^tensions\['t0'\]: must be <= max_tension 20 N"),
    (lambda s: s.set_displacements([0.0, 0.0]), r'^displacements: expected 4 values'),
    (lambda s: s.advance(-1.0), r'^duration: must be a finite number >= 0 s'),
    (lambda s: s.set_tip_load([0.0, float('inf'), 0.0]), r'^tip force: must be 3 finite'),
])
def test_bad_inputs_change_nothing(call, message):
    sim = ImplicitSimulator(STEEL, dt=0.01)
    with pytest.raises(InputError, match=message):
        call(sim)
    assert sim.modes == ['tension'] * 4 and sim.time == 0.0


def test_a_displacement_ramp_is_the_same_however_the_run_is_cut_into_advances():
    """
    A node advances in ticks as long as the machine lets it: the ramp was one tick long.

    The steel robot's 4 mm of t0 from rest under 1 N: ramped over one advance, a tick of one
    step (a loaded node catching up) needed more than max_tension and was refused, a tick of
    ten steps was not. With ``displacement_ramp`` the ramp lasts that much simulated time
    from the command, whatever the advances: 20 ms as one advance, as ten of 2 ms, or as
    3 + 7 steps, end in one state (the same steps; a tolerance of the solver's, 1e-12 m). A
    setpoint stream repeats the command between advances: the same command again does not
    start the ramp again (it stretched the rest of the way over another 20 ms).
    """
    ends = []
    for cuts in ((10,), (1,) * 10, (3, 7), (4, 'again', 6)):
        sim = ImplicitSimulator(STEEL, displacement_ramp=0.02)
        sim.set_tensions({'t0': 1.0})
        sim.place_at_rest()
        sim.set_displacements({'t0': 0.004})
        for steps in cuts:
            if steps == 'again':
                sim.set_displacements({'t0': 0.004})
            else:
                sim.advance(steps * sim.dt)
        state = sim.state()
        assert state.tendon_displacements[0] == pytest.approx(0.004, abs=1e-12)
        ends.append(state.tip_position)
    for end in ends[1:]:
        np.testing.assert_allclose(end, ends[0], atol=1e-12)
