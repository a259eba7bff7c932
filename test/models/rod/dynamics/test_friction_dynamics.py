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
Tendon friction in the implicit dynamics, against Till's programs and a nested solve.

Till's two friction examples (ContinuumRobotExamples, 02_Dynamics/03_Tendon_Robot,
Cpp_simple_friction and Cpp_sliding_friction) are compared with the trajectories his programs
compute (../data/till_friction_*_tip.csv, Richardson-extrapolated from N = 200 and 400; see
../data/README.md). Each example's run is made once per module and shared by its tests.
"""

import dataclasses

import numpy as np
import pytest

from tendon_robot_sim import share_dir
from tendon_robot_sim.models._cosserat_kernels import _rhs_tendons, Dyn, DYN_BBT, DYN_C0, \
    DYN_SIZE, LINEAR, Z_SIZE
from tendon_robot_sim.models.rod.dynamics.implicit import ImplicitSimulator
from tendon_robot_sim.models.rod.dynamics.tendon_friction import (friction_table,
                                                                  sliding_rates_nested)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.tendons._friction_kernels import (FR_COEF, FR_LAW,
                                                                   FR_SLIDING, FR_TURNING,
                                                                   FW_SIZE, saturation)
from tendon_robot_sim.models.sim_model import InputError
from tendon_robot_sim.models.tendon_robot import (load_robot, robot_from_dict, TendonFriction,
                                                  without_friction)
from test_implicit_dynamics import DATA, NITINOL, till_inputs

CONFIG = share_dir() / 'config'
SIMPLE = load_robot(CONFIG / 'till_friction_simple.yaml')
SLIDING = load_robot(CONFIG / 'till_friction_sliding.yaml')
ALPHA = {'simple': 0.0, 'sliding': -0.4}     # Till's BDF-alpha in each example


def run_till(robot, alpha: float, duration: float = 24.95):
    """Run Till's motor ramp at his dt from rest; return the simulator, tips (n + 1, 3), record."""
    sim = ImplicitSimulator(robot, dt=0.05, alpha=alpha)
    sim.set_displacements([0.0])
    sim.place_at_rest()
    start = sim.state().tip_position
    _, displacements = till_inputs(0.05, duration)
    record = sim.follow(displacements, 'displacement')
    return sim, np.vstack((start, record[:, 0:3])), record


@pytest.fixture(scope='module', params=['simple', 'sliding'])
def till_run(request):
    """Till's example of one law over his 25 s: (law, tips, record, tip tensions)."""
    law = request.param
    robot = SIMPLE if law == 'simple' else SLIDING
    sim, tips, record = run_till(robot, ALPHA[law])
    return law, tips, record, sim


# ------------------------------------------------------------------ Till's examples


def test_till_friction_examples_within_3_mm_rms_of_his_converged_trajectories(till_run):
    """
    The whole 25 s of each example at his dt (50 ms) and alpha.

    His runs at N = 200 and 400 differ by 1.60 mm (simple) and 1.56 mm RMS (sliding); we
    measured 0.033 mm and 0.020 mm RMS from the extrapolation with the default resolution.
    """
    law, tips, _, _ = till_run
    reference = np.loadtxt(DATA / f'till_friction_{law}_tip.csv', delimiter=',', skiprows=1)
    runs = reference[:, 4:7] - reference[:, 7:10]
    assert np.sqrt(np.mean(np.sum(runs ** 2, axis=1))) == pytest.approx(
        {'simple': 1.60e-3, 'sliding': 1.56e-3}[law], rel=0.01)
    assert tips.shape == (reference.shape[0], 3)
    errors = np.linalg.norm(tips - reference[:, 1:4], axis=1)
    rms = float(np.sqrt(np.mean(errors ** 2)))
    assert rms < 3e-3                      # the target
    assert rms < 0.2e-3                    # what we measure (0.03 mm), with margin
    assert np.ptp(tips[:, 0]) > 0.3        # a large motion, not a rod at rest


def test_friction_changes_tills_examples_as_much_as_his_programs_say(till_run):
    """
    Friction's effect: the same robot with friction coefficient 0 against his reference.

    The issue gives 256 mm (simple) and 51 mm (sliding) at the peak between each reference and
    the same constants without friction; a coefficient of 0 must lose that whole effect, so
    a law that acted wrongly, or not at all, could not pass the RMS test above.
    """
    law, tips, _, _ = till_run
    robot = SIMPLE if law == 'simple' else SLIDING
    free = with_friction(robot, coefficient=0.0)
    _, free_tips, _ = run_till(free, ALPHA[law])
    effect = np.linalg.norm(free_tips - tips, axis=1).max()
    assert effect == pytest.approx({'simple': 0.256, 'sliding': 0.051}[law], rel=0.1)


def test_sliding_tension_changes_along_the_rod_only_while_the_tendon_slides():
    """
    The sliding law's tension at the anchor equals the motor's at rest, not while sliding.

    At rest in the static equilibrium (sat(0) = 0) the two are one; while the motor reels in
    (s_t < 0) Till's tau_s = -nu sat(s_t) s_s |f_n| is positive: the anchor's tension rises
    above the motor's, by more than 5 % here. (A Coulomb friction opposing the tendon's slide
    would lower it, the capstan effect: Till's law, reproduced here as his program has it,
    has the opposite sign; docs/tendon_robot.md says so.)
    """
    sim = ImplicitSimulator(SLIDING, dt=0.05, alpha=ALPHA['sliding'])
    sim.set_displacements([0.0])
    sim.place_at_rest()
    assert sim.tip_tensions() == pytest.approx(sim.tensions, rel=1e-12)
    times, displacements = till_inputs(0.05, 3.95)
    sim.follow(displacements[:74], 'displacement')            # at rest until 3.70 s
    ratios = []
    for value in displacements[74:]:                            # the pull, 3.70 .. 3.95 s
        sim.follow(value[None], 'displacement')
        ratios.append(sim.tip_tensions()[0] / sim.tensions[0])
    assert min(ratios) > 1.0 and max(ratios) > 1.05


def test_viscous_law_keeps_one_tension_along_the_rod(till_run):
    """Till's simple law loads the backbone but leaves the tension as the motor's."""
    law, _, _, sim = till_run
    if law == 'simple':
        assert np.array_equal(sim.tip_tensions(), sim.tensions)


def with_friction(robot, **changes):
    """Return ``robot`` with the first tendon's friction changed (dataclasses.replace)."""
    tendons = list(robot.tendons)
    tendons[0] = dataclasses.replace(tendons[0], friction=dataclasses.replace(
        tendons[0].friction, **changes))
    return dataclasses.replace(robot, tendons=tuple(tendons))


# ------------------------------------------------------------------ where the sliding turns


def nitinol_sliding(slip_velocity: float | None, duration: float, semi_implicit: bool = False):
    """
    Run the nitinol robot (model cosserat) with sliding nu = 0.1 on every tendon, t0 ramped.

    ``slip_velocity`` None: without friction. t0 is ramped to 2 N over 0.1 s and held
    (benchmarks/bench_friction_dynamics.py), dt 2 ms; ``semi_implicit``: every step takes the
    sliding direction from the step before (the countdown of the fallback set beyond the
    run). Returns the simulator and the record.
    """
    robot = NITINOL if slip_velocity is None else dataclasses.replace(NITINOL, tendons=tuple(
        dataclasses.replace(t, friction=TendonFriction('sliding', 0.1, slip_velocity))
        for t in NITINOL.tendons))
    sim = ImplicitSimulator(robot, dt=0.002, model='cosserat')
    if semi_implicit:
        sim._plan.dyn.friction[FR_TURNING] = 1e9
    n = round(duration / 0.002)
    tensions = np.zeros((n, 3))
    tensions[:, 0] = np.minimum(2.0, 2.0 * 0.002 * np.arange(1, n + 1) / 0.1)
    return sim, sim.follow(tensions, 'tension')


def test_steps_converge_where_the_tendon_turns_at_tills_slip_velocity():
    """
    At Till's slip velocity (1 mm/s) the run goes on where the tendon's sliding turns.

    The swinging rod turns back at t = 0.18 s; there the step's own equations (the direction
    sat(s_t) switching over 1.3 um of tendon length) did not converge at any dt. Those steps
    are now taken semi-implicitly (stats[3]), the others as before.
    """
    sim, record = nitinol_sliding(1e-3, 0.4)
    assert sim.time == pytest.approx(0.4)
    assert 0 < sim.stats[3] < record.shape[0]
    assert np.ptp(record[:, 2]) > 0.05                  # a swinging rod


def test_semi_implicit_sliding_direction_agrees_with_the_implicit_one():
    """
    Every step semi-implicit against every step implicit, at 10 mm/s where both converge.

    The direction taken from the step before errs by O(dt) in the friction load; friction's
    effect on the tip here is over 10 mm (against the frictionless run), the two runs must
    agree to 1.5 mm (we measure 1.0 mm at the peak). Guards the semi-implicit fallback's
    equations: a wrong sign or a stale direction would differ by the whole effect.
    """
    implicit, tips = nitinol_sliding(1e-2, 1.0)
    assert implicit.stats[3] == 0
    semi, semi_tips = nitinol_sliding(1e-2, 1.0, semi_implicit=True)
    assert semi.stats[3] == tips.shape[0]
    _, free_tips = nitinol_sliding(None, 1.0)
    effect = np.linalg.norm(tips[:, 0:3] - free_tips[:, 0:3], axis=1).max()
    gap = np.linalg.norm(tips[:, 0:3] - semi_tips[:, 0:3], axis=1).max()
    assert effect > 0.01 and gap < 1.5e-3


# ------------------------------------------------------------------ coefficient 0


@pytest.mark.parametrize('law', ['viscous', 'sliding'])
def test_coefficient_0_equals_the_frictionless_dynamics_to_round_off(law):
    """
    With coefficient 0 the friction path (tension states, unstretched lengths) is today's.

    Till's frictionless robot with each law at coefficient 0, over the pull of his ramp and a
    second of swinging, mixed with a tension-driven second tendon that has no friction.
    """
    data = load_robot(CONFIG / 'till_tendon_robot.yaml').to_dict()
    data['tendons'].append(dict(data['tendons'][0], name='t1', angle=np.pi / 2))
    bare = robot_from_dict(data)
    tendons = list(bare.tendons)
    tendons[0] = dataclasses.replace(tendons[0], friction=TendonFriction(law, 0.0, 1e-3))
    rough = dataclasses.replace(bare, tendons=tuple(tendons))
    runs = []
    for robot in (bare, rough):
        sim = ImplicitSimulator(robot, dt=0.05)
        sim.set_displacements({'t0': 0.0})
        sim.set_tensions({'t1': 0.5})
        sim.place_at_rest()
        _, displacements = till_inputs(0.05, 5.0)
        record = sim.follow(np.column_stack((displacements, np.full(len(displacements), 0.5))),
                            ['displacement', 'tension'])
        runs.append(record)
    # round-off: 1e-12 m on a 0.7 m rod moving 0.3 m, and the tensions likewise
    np.testing.assert_allclose(runs[1], runs[0], rtol=0.0, atol=1e-10)
    assert np.ptp(runs[0][:, 0]) > 0.05


# ------------------------------------------------------------------ the coupling


@pytest.mark.parametrize('tendons', [1, 3])
def test_closed_form_coupling_agrees_with_a_nested_solve(tendons):
    """
    The right-hand side with sliding friction against Till's nested solve of v_s and u_s.

    One sliding tendon is solved in closed form, several by FRICTION_SWEEPS Gauss-Seidel
    sweeps; here with nu = 1 (ten times Till's), a bent and twisted rod and tensions of
    10 to 30 N, so the coupling is strong. The nested solve is
    ``tendon_friction.sliding_rates_nested`` (scipy fsolve on Till's balance).
    """
    data = NITINOL.to_dict()
    data.pop('vertebrae')
    data['gravity'] = [0.0, 0.0, 0.0]
    data['tendons'] = data['tendons'][:tendons]
    for tendon in data['tendons']:
        tendon['friction'] = {'law': 'sliding', 'coefficient': 1.0, 'slip_velocity': 1e-3}
    robot = robot_from_dict(data)
    plan = StaticsSolver(without_friction(robot), 'cosserat').kernel_plan()
    nt = len(robot.tendons)
    rng = np.random.default_rng(41)
    y = np.zeros(24 + 2 * nt)
    y[3:12] = np.eye(3).ravel()
    y[12:15] = (1e-4, -2e-4, 1.0 + 3e-4)
    y[15:18] = (4.0, -2.5, 0.8)                       # curvatures [1/m]
    y[18:18 + nt] = 0.05                              # unstretched length so far [m]
    y[24 + nt:] = np.linspace(10.0, 30.0, nt)         # tensions [N]
    friction = friction_table(robot)
    coef = np.zeros(DYN_SIZE)
    coef[DYN_C0] = 30.0
    coef[DYN_BBT:DYN_BBT + 3] = 1e-4
    zh = np.zeros((1, Z_SIZE + nt))
    zh[0, Z_SIZE:] = rng.uniform(-2.6, -2.4, nt)      # s_t = c0 s + s_h: tendons sliding
    dyn = Dyn(on=True, coef=coef, Zh=zh, Z=np.zeros((1, Z_SIZE + nt)), friction=friction,
              fw=np.zeros((nt + 1, FW_SIZE)))
    rt = plan.rt[0]
    act = np.ones(nt, dtype=np.bool_)
    tau = y[24 + nt:].copy()
    K, M = np.zeros((6, 6)), np.zeros((4, 3, 3))

    def rates(nu):
        dyn.friction[FR_COEF] = nu
        dy = np.zeros_like(y)
        _rhs_tendons(False, LINEAR, plan.mat, y, rt, act, tau, dy, K, M, dyn, 0, plan.contact,
                     True)
        return dy
    dy = rates(1.0)
    x0 = rates(0.0)[12:18]
    # K and the frictionless right-hand side b of Eq. (16) in numpy; first, that they are the
    # kernel's (its solution without friction)
    Kn, b = eq16(plan, y, rt, tau, coef)
    np.testing.assert_allclose(np.linalg.solve(Kn, b), x0, rtol=1e-10, atol=1e-12)
    s = (friction[4] + y[18:18 + nt]) / (1.0 + friction[3] * tau)   # from the motor
    s_t = coef[DYN_C0] * s + zh[0, Z_SIZE:]
    assert np.all(s_t < -0.1)                         # every tendon slides
    sliding = []
    for t in range(nt):
        r = rt[t, 0:3]
        u, v = y[15:18], y[12:15]
        pb = np.cross(u, r) + rt[t, 3:6] + v
        w = np.cross(u, pb + rt[t, 3:6]) + rt[t, 6:9]
        s_s = np.linalg.norm(pb) / (1.0 + friction[3, t] * y[24 + nt + t])
        k = 1.0 * saturation(s_t[t], 1e-3) * s_s
        sliding.append((r, pb, w, y[24 + nt + t], k))
    x, tau_s = sliding_rates_nested(Kn, b, sliding)
    assert np.abs(tau_s).min() > 1.0                  # N/m: the friction is strong here
    assert np.abs(x - x0).max() > 1e-3 * np.abs(x0).max()   # and it moves the strains
    np.testing.assert_allclose(dy[12:18], x, rtol=1e-9, atol=1e-9 * np.abs(x).max())
    np.testing.assert_allclose(dy[24 + nt:], tau_s, rtol=1e-9)
    assert friction[FR_LAW, 0] == FR_SLIDING


def eq16(plan, y, rt, tau, coef):
    """R&W Eq. (16) of the state y in numpy: K and the right-hand side, no gravity, at rest."""
    Kse, Kbt = plan.mat[0:3], plan.mat[3:6]
    v, u = y[12:15], y[15:18]
    c0, Bbt = coef[DYN_C0], coef[DYN_BBT:DYN_BBT + 3]
    nb = Kse * (v - (0.0, 0.0, 1.0))
    mb = Kbt * u + Bbt * c0 * u
    K = np.zeros((6, 6))
    K[0:3, 0:3] = np.diag(Kse)
    K[3:6, 3:6] = np.diag(Kbt + c0 * Bbt)
    a, b = np.zeros(3), np.zeros(3)
    nt = tau.size
    for t in range(nt):
        r = rt[t, 0:3]
        hat = np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])
        pb = np.cross(u, r) + rt[t, 3:6] + v
        n = np.linalg.norm(pb)
        A = y[24 + nt + t] * (np.eye(3) - np.outer(pb, pb) / n ** 2) / n
        G = -A @ hat
        K[0:3, 0:3] += A
        K[0:3, 3:6] += G
        K[3:6, 0:3] += G.T
        K[3:6, 3:6] += hat @ G
        ai = A @ (np.cross(u, pb + rt[t, 3:6]) + rt[t, 6:9])
        a += ai
        b += np.cross(r, ai)
    rhs = np.concatenate((-np.cross(u, nb) - a, -np.cross(u, mb) - np.cross(v, nb) - b))
    return K, rhs


# ------------------------------------------------------------------ what is refused


def test_friction_with_the_kirchhoff_rod_is_one_line_naming_the_key():
    """
    Models cosserat and discrete (discs: test_disc_friction.py) take friction; kirchhoff not.

    One line, naming tendons[i] and the models that do.
    """
    data = NITINOL.to_dict()
    data['tendons'][1]['friction'] = {'law': 'sliding', 'coefficient': 0.1}
    robot = robot_from_dict(data)
    with pytest.raises(InputError) as error:
        ImplicitSimulator(robot, model='kirchhoff')
    message = str(error.value)
    assert message.startswith('tendons[1].friction: ') and '\n' not in message
    assert 'models cosserat and discrete, not kirchhoff' in message
    with pytest.raises(InputError, match=r'^tendons\[0\]\.friction: .*not kirchhoff'):
        ImplicitSimulator(SLIDING, model='kirchhoff')
    assert ImplicitSimulator(robot).model == 'discrete'       # the discs
    ImplicitSimulator(robot, model='cosserat')      # continuous routing of the same tendons
