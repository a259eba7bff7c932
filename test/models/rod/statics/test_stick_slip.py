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
Tendon friction in the path-dependent statics (issue 41), against closed forms.

* The capstan law on a prescribed circular arc: tau = tau_0 e^(-mu theta(s)).
* A robot of one tendon, no gravity, Kirchhoff rod: the moment at s is r tau(s), so
  kappa = r tau / EI, and the sliding tendon's d tau / ds = -mu tau kappa gives in closed form
  tau(s) = tau_0 / (1 + mu r tau_0 s / EI) when pulled; released to tau_1, the tension is the
  smaller of the rising edge tau_1 / (1 - mu r tau_1 s / EI) and what the pull left (stuck
  beyond their crossing). The tip follows by quadrature (scipy), not from the package: the
  pull-release loop's width, the tip tension within the capstan bounds.
* Coefficient 0: every output is the frictionless one to round-off.
"""

import json
import math

import numpy as np
import pytest
from scipy.integrate import quad

from tendon_robot_sim import cli, default_robot_file
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.rod.statics.stick_slip import StickSlipStatics
from tendon_robot_sim.models.rod.tendons.capstan import stick_slip, wrap_angles
from tendon_robot_sim.models.tendon_robot import load_robot, robot_from_dict

DEFAULT = load_robot(default_robot_file()).to_dict()

# the one-tendon robot of the closed forms: a steel wire, 10 mm tendon offset, no gravity
L, OFFSET, E, RADIUS = 0.25, 0.01, 200e9, 0.0005


def with_friction(data: dict, mu: float, **more) -> dict:
    data = {**data, 'tendons': [{**t, 'friction': {'law': 'sliding', 'coefficient': mu, **more}}
                                for t in data['tendons']]}
    return data


def wire(mu: float):
    return robot_from_dict({
        'name': 'wire', 'gravity': [0, 0, 0],
        'base': {'direction': [0, 0, 1], 'normal': [1, 0, 0]},
        'rod': {'length': L, 'radius': RADIUS, 'density': 7800, 'youngs_modulus': E,
                'shear_modulus': E / 2.6},
        'tendons': [{'name': 't0', 'offset': OFFSET, 'angle': 0.0, 'max_tension': 50.0,
                     'friction': {'law': 'sliding', 'coefficient': mu}}]})


# --------------------------------------------------------------------------- description


@pytest.mark.parametrize('friction, message', [
    ({'law': 'sliding', 'coefficient': -0.1},
     'tendons[0].friction.coefficient: must be >= 0, got -0.1'),
    ({'law': 'sliding', 'coefficient': 2.5},
     'tendons[0].friction.coefficient: must be within [0, 2] (Coulomb-capstan nu'),
    ({'law': 'viscous', 'coefficient': 2e3},
     'tendons[0].friction.coefficient: must be within [0, 1000] (viscous beta in s/m'),
    ({'law': 'sliding', 'coefficient': 0.1, 'slip_velocity': 0},
     'tendons[0].friction.slip_velocity: must be > 0, got 0'),
    ({'law': 'viscous', 'coefficient': 4, 'slip_velocity': 1e-3},
     'tendons[0].friction.slip_velocity: only the sliding law'),
    ({'law': 'coulomb', 'coefficient': 0.1},
     "tendons[0].friction.law: must be one of ['sliding', 'viscous']"),
    ({'coefficient': 0.1}, 'tendons[0].friction.law: required key is missing'),
    ({'law': 'sliding', 'coefficient': 0.1, 'mu': 1},
     'tendons[0].friction.mu: unknown key'),
])
def test_a_bad_friction_is_one_line_naming_the_key(friction, message):
    data = {**DEFAULT, 'tendons': [{**DEFAULT['tendons'][0], 'friction': friction},
                                   *DEFAULT['tendons'][1:]]}
    with pytest.raises(RobotDescriptionError) as error:
        robot_from_dict(data)
    assert str(error.value).startswith(message) and '\n' not in str(error.value)


def test_friction_keys_load_with_their_defaults_and_round_trip():
    robot = robot_from_dict(with_friction(DEFAULT, 0.2))
    friction = robot.tendons[0].friction
    assert (friction.law, friction.coefficient, friction.slip_velocity) == ('sliding', 0.2, 1e-3)
    assert robot_from_dict(robot.to_dict()) .tendons == robot.tendons
    assert load_robot(default_robot_file()).tendons[0].friction is None     # default: none


def write(tmp_path, data) -> str:
    import yaml
    path = tmp_path / 'robot.yaml'
    path.write_text(yaml.safe_dump(data))
    return str(path)


@pytest.mark.parametrize('argv', [
    ['simulate', '--integrator', 'explicit', '--duration', '0.01'],
    ['cc-dynamics', '--tensions', 't0=1', '--duration', '0.01'],
])
def test_a_model_without_friction_refuses_it_in_one_line(argv, tmp_path, capsys):
    path = write(tmp_path, with_friction(DEFAULT, 0.1))
    assert cli.main([*argv, '--robot', path]) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'tendons[0].friction: the ' in err, err


def test_simulate_takes_the_friction_at_the_discs(tmp_path, capsys):
    """
    The default robot (discs) with friction runs on the implicit dynamics' discrete model.

    ``auto`` takes the implicit integrator, the explicit one refusing friction; the physics is
    in test/models/rod/dynamics/test_disc_friction.py.
    """
    path = write(tmp_path, with_friction(DEFAULT, 0.1))
    assert cli.main(['simulate', '--robot', path, '--tensions', 't0=2', '--duration', '0.05',
                     '--json']) == 0
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary['sim_time'] == pytest.approx(0.05)
    assert summary['tensions'][0] == 2.0 and summary['tip_position'][2] != 0.0


def test_a_bad_coefficient_exits_2_in_one_line(tmp_path, capsys):
    path = write(tmp_path, with_friction(DEFAULT, 3.0))
    assert cli.main(['statics', '--robot', path, '--tensions', 't0=1']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'tendons[0].friction.coefficient' in err, err


# --------------------------------------------------------------------------- capstan law


def test_the_capstan_law_on_a_circular_arc():
    """A sliding tendon on an arc of curvature kappa: tau(s) = tau_0 e^(-mu kappa s), 1e-8."""
    kappa, mu, tau0 = 7.3, 0.35, 4.0
    # uneven breaks, the arc in a tilted plane: nothing lines up by construction
    s = np.sort(np.concatenate(([0.0], np.random.default_rng(1).uniform(0.0, 0.3, 40), [0.3])))
    d1 = np.array([0.6, 0.0, 0.8])
    d3 = np.array([0.0, 1.0, 0.0])
    offset = 0.012      # the tendon on the inside of the bend: an arc of radius 1/kappa - r
    radius = 1.0 / kappa - offset
    points = (radius * np.outer(d1, 1.0 - np.cos(kappa * s))
              + radius * np.outer(d3, np.sin(kappa * s)))
    theta = wrap_angles(points, d3)
    tensions = stick_slip(np.zeros(s.size - 1), tau0, theta, mu)
    middle = 0.5 * (s[1:] + s[:-1])     # a straight piece carries the tension of its middle
    expected = tau0 * np.exp(-mu * kappa * middle)
    assert np.max(np.abs(tensions / expected - 1.0)) < 1e-8
    # released from there to half the tension: every piece slides back, tension rising
    released = stick_slip(tensions, 0.5 * tau0, theta, mu)
    assert np.allclose(released, 0.5 * tau0 * np.exp(mu * kappa * middle)
                       .clip(max=tensions / (0.5 * tau0)), rtol=1e-12)


def test_inside_the_cone_a_piece_keeps_its_tension():
    theta = np.full(3, 0.2)
    kept = np.array([1.0, 0.99, 0.98])
    assert np.array_equal(stick_slip(kept, 1.01, theta, 0.3), kept)


# --------------------------------------------------------------------------- closed forms


C = OFFSET / wire(0.0).rod.bending_stiffness       # kappa per newton of tendon tension


def tip_of(theta) -> np.ndarray:
    """(x, z) of the tip of the wire whose tendon turns by theta(s) (quadrature)."""
    return np.array([quad(lambda s: math.sin(theta(s)), 0.0, L, epsabs=1e-13, limit=200)[0],
                     quad(lambda s: math.cos(theta(s)), 0.0, L, epsabs=1e-13, limit=200)[0]])


def pulled(tau0: float, mu: float):
    """Turn theta(s) = int kappa of the wire pulled to tau0 from rest (sliding, falling)."""
    return lambda s: math.log1p(mu * C * tau0 * s) / mu


def tension_pulled(tau0: float, mu: float, s: float) -> float:
    return tau0 / (1.0 + mu * C * tau0 * s)


def released(tau1: float, tau_max: float, mu: float):
    """
    Turn theta(s) of the wire released to tau1 after a pull to tau_max.

    Up to s* the tendon slides back on the rising edge, tau1 / (1 - mu C tau1 s); beyond, it
    sticks with what the pull left, tau_max / (1 + mu C tau_max s); the two meet at s*.
    """
    star = (tau_max - tau1) / (2.0 * mu * C * tau1 * tau_max)

    def theta(s):
        if s <= star:
            return -math.log1p(-mu * C * tau1 * s) / mu
        return (-math.log1p(-mu * C * tau1 * star)
                + math.log1p(mu * C * tau_max * s) - math.log1p(mu * C * tau_max * star)) / mu
    return theta


PIECE = 0.005
# The pieces' tension is constant, their middle's: a midpoint rule, O(PIECE^2) in the angle.
# 5 um at 5 mm pieces (19 um at 10 mm) for a tip 190 mm off the axis.
TIP_TOLERANCE = 1e-5


@pytest.fixture(scope='module')
def loops():
    """Pull to 10 N and release to 6 N and to 0 for mu = 0, 0.15, 0.3: tips by state."""
    out = {}
    up = np.linspace(0.0, 10.0, 11)
    for mu in (0.0, 0.15, 0.3):
        statics = StickSlipStatics(wire(mu), 'kirchhoff', piece_length=PIECE)
        out[mu] = [(tension, statics.solve_tensions([tension]))
                   for tension in np.concatenate((up, up[::-1][1:]))]
    return out


@pytest.mark.parametrize('mu', [0.15, 0.3])
def test_pulled_and_released_tips_follow_the_closed_form(loops, mu):
    states = loops[mu]
    top, at_6 = states[10][1], states[14][1]
    assert states[10][0] == 10.0 and states[14][0] == 6.0
    assert np.max(np.abs(top.tip_position[[0, 2]] - tip_of(pulled(10.0, mu)))) < TIP_TOLERANCE
    assert np.max(np.abs(at_6.tip_position[[0, 2]] - tip_of(released(6.0, 10.0, mu)))) \
        < TIP_TOLERANCE
    # the tip tension within the capstan bounds of the tendon's turn, on the pulled edge
    turn = pulled(10.0, mu)(L)
    assert 10.0 * math.exp(-mu * turn) <= top.tip_tensions[0] <= 10.0
    last_middle = L - 0.5 * PIECE
    assert top.tip_tensions[0] == pytest.approx(tension_pulled(10.0, mu, last_middle), rel=1e-3)


def test_the_loop_width_grows_with_mu_and_vanishes_without_friction(loops):
    def width(mu):
        states = loops[mu]
        return max(np.linalg.norm(states[k][1].tip_position - states[20 - k][1].tip_position)
                   for k in range(11))

    def closed_form_width(mu):
        return max(np.linalg.norm(tip_of(released(t, 10.0, mu)) - tip_of(pulled(t, mu)))
                   for t in np.arange(1.0, 10.0))     # the states' tensions (0, 10: one pose)

    assert width(0.0) < 1e-7     # the Newton tolerance's 1e-8 m, from other starting points
    assert width(0.15) > 0.01 and width(0.3) > width(0.15) + 0.005
    for mu in (0.15, 0.3):
        assert abs(width(mu) - closed_form_width(mu)) < 2 * TIP_TOLERANCE


# --------------------------------------------------------------------------- no friction


@pytest.mark.parametrize('model', ['discrete', 'cosserat'])
def test_coefficient_0_is_frictionless_to_round_off(model):
    robot = robot_from_dict(with_friction(DEFAULT, 0.0))
    bare = load_robot(default_robot_file())
    statics = StickSlipStatics(robot, model)
    assert statics.pieces[0] > 1        # cut into pieces all the same
    reference = StaticsSolver(bare, model)
    # round-off: the same kernels and grid; Newton's last iterate from another start: < 1e-10 m
    for tensions in ([3.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.5, 0.0], [0.0, 0.0, 4.0, 1.0]):
        ours, theirs = statics.solve_tensions(tensions), reference.solve_tensions(tensions)
        assert np.max(np.abs(ours.centerline - theirs.centerline)) < 1e-10
        assert np.array_equal(ours.tip_tensions, theirs.tensions)
        assert np.allclose(ours.tendon_displacements, theirs.tendon_displacements,
                           rtol=0.0, atol=1e-10)
    # displacements: solved by another loop, to a length error of LENGTH_TOLERANCE (1 um)
    q = [0.006, 0.0, -0.006, 0.0]
    ours, theirs = statics.solve_displacements(q), reference.solve_displacements(q)
    assert np.max(np.abs(ours.tip_position - theirs.tip_position)) < 2e-6
    assert np.allclose(ours.tensions, theirs.tensions, rtol=1e-3, atol=1e-3)


def test_coefficient_0_fails_where_the_frictionless_sequence_fails_and_how():
    """
    ``kirchhoff``, 2 mm of t0 with the other tendons held: no state, with or without friction.

    The rod neither stretches nor shears, so the held antagonist keeps it from bending: the
    frictionless solver finds no equilibrium (ConvergenceError). With coefficient 0 the
    one-tendon-at-a-time sweep stopped on scipy's ValueError instead (an internal error of
    ``statics --displacements-csv``): a bracket end it had found meeting the length (|error|
    ~1e-11 m) changed sign when Brent evaluated it again, the solves' noise.
    """
    from tendon_robot_sim.models.cosserat import ConvergenceError
    for data in (DEFAULT, with_friction(DEFAULT, 0.0)):
        statics = StickSlipStatics(robot_from_dict(data), 'kirchhoff')
        statics.solve_displacements({'t0': 0.0})
        with pytest.raises(ConvergenceError):
            statics.solve_displacements({'t0': 0.002})


def test_displacements_reach_the_state_tensions_reach():
    robot = robot_from_dict(with_friction(DEFAULT, 0.2))
    by_length = StickSlipStatics(robot, 'discrete')
    by_tension = StickSlipStatics(robot, 'discrete')
    for q in (0.002, 0.004, 0.006, 0.004):
        state = by_length.solve_displacements([q, 0.0, -q, 0.0])
        again = by_tension.solve_tensions(state.tensions)
        assert np.max(np.abs(state.tip_position - again.tip_position)) < 1e-8
        assert np.allclose(again.tendon_displacements[0], q, atol=1e-6)   # LENGTH_TOLERANCE


def test_a_pull_release_sequence_from_the_command_line(tmp_path, capsys):
    path = write(tmp_path, with_friction(DEFAULT, 0.2))
    sequence = tmp_path / 'pull_release.csv'
    tensions = [0, 1, 2, 3, 2, 1, 0]
    sequence.write_text('t,t0\n' + ''.join(f'{k},{t}\n' for k, t in enumerate(tensions)))
    out = tmp_path / 'loop.csv'
    assert cli.main(['statics', '--robot', path, '--model', 'discrete', '--tensions-csv',
                     str(sequence), '--trajectory-out', str(out)]) == 0
    rows = np.genfromtxt(out, delimiter=',', names=True)
    assert list(rows['tension_t0']) == tensions
    assert np.all(rows['tip_tension_t0'][1:4] < rows['tension_t0'][1:4])    # pulled
    assert np.all(rows['tip_tension_t0'][4:6] > rows['tension_t0'][4:6])    # released
    assert abs(rows['z'][2] - rows['z'][4]) > 1e-3        # the same 2 N, another pose


def test_the_quasi_static_simulator_model_remembers_the_path(tmp_path):
    """What the simulator node builds for mode quasi_static: the description's friction."""
    from tendon_robot_sim.models.registry import create_model
    path = write(tmp_path, with_friction(DEFAULT, 0.2))
    _, mode, model = create_model(path, 'quasi_static')
    assert mode == 'quasi_static' and 'friction' in model.summary
    tips = {}
    for tension in (0.0, 2.0, 4.0, 2.0):
        model.apply('effort', [tension, 0.0, 0.0, 0.0])
        tips.setdefault(tension, []).append(model.state().tip.position)
    assert np.linalg.norm(tips[2.0][0] - tips[2.0][1]) > 1e-3     # same input, other pose
    model.reset()       # at rest: nothing stuck, so a pull from rest is the first pull again
    model.apply('effort', [2.0, 0.0, 0.0, 0.0])
    assert np.linalg.norm(model.state().tip.position - tips[2.0][0]) < 1e-7


def test_a_refused_setpoint_leaves_no_trace_on_the_path(tmp_path):
    """
    The quasi-static model refuses 12 mm of t0 (21 N of a 20 N tendon) and keeps its state.

    6 mm again after the refusal is 6 mm again after 6 mm: the same tip and anchor tensions.
    The solver had stored the refused state, so that setpoint started from 21 N and landed
    1.6 mm away, its anchor at 10.85 N instead of 10.08 N (released from the refused pull).
    The motor tensions may differ: with inextensible tendons and the first piece sticking,
    any motor tension inside its capstan cone gives the same lengths.
    """
    from tendon_robot_sim.models.registry import create_model
    from tendon_robot_sim.models.sim_model import InputError
    path = write(tmp_path, with_friction(DEFAULT, 0.2))
    refused, plain = (create_model(path, 'quasi_static')[2] for _ in range(2))    # discrete
    for model in (refused, plain):
        model.apply('position', [0.006, 0.0, 0.0, 0.0])
    with pytest.raises(InputError, match=r'^position\[t0\]: the equilibrium needs'):
        refused.apply('position', [0.012, 0.0, 0.0, 0.0])
    for model in (refused, plain):
        model.apply('position', [0.006, 0.0, 0.0, 0.0])
    ours, theirs = refused.state(), plain.state()
    # the displacement solves meet the lengths to 1 um (LENGTH_TOLERANCE): the tip as well
    assert np.linalg.norm(ours.tip.position - theirs.tip.position) < 2e-6
    np.testing.assert_allclose(ours.tip_effort, theirs.tip_effort, rtol=1e-4)


# --------------------------------------------------------------------------- against a world

PRESS = np.array([0.0, 0.5, 1.0, 1.5, 1.75, 1.5, 1.0, 0.5, 0.0])   # t3 [N]


def pressed(robot, model: str, solver_class=StickSlipStatics) -> list:
    """Return the states of ``robot`` pulled by t3 onto world_post.yaml's obstacles, released."""
    from tendon_robot_sim import share_dir
    from tendon_robot_sim.models.contact.world import load_world
    world = load_world(share_dir() / 'config' / 'world_post.yaml')
    solver = solver_class(robot, model, world=world)
    return [solver.solve_tensions({'t3': float(t)}) for t in PRESS]


def test_pressed_onto_obstacles_the_frictionless_path_lies_between_pull_and_release():
    """
    Tendon friction and contact together: t3 pulls the tip along +y onto the post.

    Pulled, the tension along t3 falls below the motor's (the tip tension below it), released
    it stays above, so at each tension the frictionless robot's tip lies between the pull's
    and the release's. Nothing sticks at rest: the release ends where the pull began. The
    contacts are reported as without friction. (The discrete model, the node's: the last
    test here.)
    """
    ours = pressed(robot_from_dict(with_friction(DEFAULT, 0.2)), 'cosserat')
    bare = pressed(load_robot(default_robot_file()), 'cosserat', StaticsSolver)
    peak = int(np.argmax(PRESS))
    assert {c.obstacle for c in ours[peak].contacts} == {'post', 'plate'}
    for k in range(1, peak):
        up, down, free = ours[k], ours[-1 - k], bare[k]
        assert PRESS[k] == PRESS[-1 - k]
        assert up.tip_tensions[3] < PRESS[k] < down.tip_tensions[3]
        assert up.tip_position[1] < free.tip_position[1] < down.tip_position[1]
    assert np.max(np.abs(ours[-1].tip_position - ours[0].tip_position)) < 1e-9


def test_coefficient_0_against_a_world_is_the_frictionless_contact_path():
    ours = pressed(robot_from_dict(with_friction(DEFAULT, 0.0)), 'cosserat')
    bare = pressed(load_robot(default_robot_file()), 'cosserat', StaticsSolver)
    for a, b in zip(ours, bare):
        # Newton's last iterate from another start, within a tenth of its tip tolerance
        assert np.max(np.abs(a.centerline - b.centerline)) < 1e-8
        assert [c.obstacle for c in a.contacts] == [c.obstacle for c in b.contacts]


def test_the_quasi_static_simulator_model_takes_friction_and_a_world(tmp_path):
    """Once refused ('contact is not modelled with friction yet'): the node's model builds."""
    from tendon_robot_sim import share_dir
    from tendon_robot_sim.models.contact.world import load_world
    from tendon_robot_sim.models.registry import create_model, ModelOptions
    path = write(tmp_path, with_friction(DEFAULT, 0.2))
    world = load_world(share_dir() / 'config' / 'world_post.yaml')
    _, _, model = create_model(path, 'quasi_static', ModelOptions(world=world))
    assert 'discrete' in model.summary and 'friction' in model.summary
    model.apply('effort', [0.0, 0.0, 0.0, 1.75])
    assert {c.obstacle for c in model.state().contacts} == {'post', 'plate'}
    assert model.state().tip_effort[3] < 1.75     # the capstan's loss on the pull


def test_bending_friction_against_a_world_keeps_its_memory_on_the_plate():
    """The rod's bending friction with obstacles: a press and release leave the tip displaced."""
    data = load_robot(default_robot_file()).to_dict()
    data['rod'] = {**data['rod'], 'bending_friction': {'moment': 2e-3, 'stiffness_ratio': 1.5}}
    states = pressed(robot_from_dict(data), 'cosserat')
    assert {c.obstacle for c in states[0].contacts} == {'plate'} == {
        c.obstacle for c in states[-1].contacts}
    # the bays that slipped towards +y on the pull stay bent there (millimetres, not round-off)
    assert states[-1].tip_position[1] - states[0].tip_position[1] > 1e-3
