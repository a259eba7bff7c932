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
The model interface of the simulator node and its registry, without ROS.

The physics behind each model is tested in its own module; here: the registry picks
the model the (kind, mode) asks for, inputs reach the right solver, and the generic
state carries the shape of the model's own result.
"""

import numpy as np
import pytest

from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.models.description import RobotDescriptionError, TENDON_ROBOT
from tendon_robot_sim.models.pcr.robot import default_pcr_file
from tendon_robot_sim.models.registry import (create_model, file_kind, load_any_description,
                                              ModelConfigurationError, ModelOptions)
from tendon_robot_sim.models.rod.statics.solver import StaticsSolver
from tendon_robot_sim.models.sim_model import (Cylinder, InputError, LineList, named_values,
                                               Polyline)
from tendon_robot_sim.models.tendon_robot import load_robot


@pytest.fixture(scope='module')
def robot():
    return load_robot(default_robot_file())


def test_the_tendon_robot_defaults_to_dynamics_and_refuses_an_unknown_mode():
    kind, mode, model = create_model(default_robot_file())
    assert (kind, mode, model.timed) == (TENDON_ROBOT, 'dynamic', True)
    assert model.dt > 0.0 and model.inputs.fields == {'effort': 'tension [N]'}
    with pytest.raises(ModelConfigurationError,
                       match=r"mode: must be one of \['dynamic', 'quasi_static'\] or "
                             r"\['cc_dynamic'\] \(constant curvature\) for a tendon-driven "
                             r"continuum robot, got 'kinematic'"):
        create_model(default_robot_file(), 'kinematic')


@pytest.mark.parametrize('mode', ['dynamic', 'quasi_static'])
@pytest.mark.parametrize('obstacle, message', [
    ({'shape': 'plane'}, r"^world_file: obstacles\[0\] \(o\): intersects the robot's base"),
    ({'shape': 'sphere', 'radius': 0.02, 'position': [0.12, 0.0, 0.0]},
     r'^world_file: obstacles\[0\] \(o\): intersects the unloaded straight robot')])
def test_a_world_the_model_refuses_is_a_configuration_error(mode, obstacle, message):
    # what the simulator node reports in one line (a WorldError escaped as a traceback)
    from tendon_robot_sim.models.contact.world import world_from_dict

    world = world_from_dict({'obstacles': [{'name': 'o', **obstacle}]})
    with pytest.raises(ModelConfigurationError, match=message):
        create_model(default_robot_file(), mode, ModelOptions(statics_model='cosserat',
                                                              world=world))


def test_dynamic_model_takes_tensions_and_advances_in_whole_steps(robot):
    _, _, model = create_model(default_robot_file(), 'dynamic', ModelOptions(dt=1e-5))
    model.apply('effort', {'t1': 2.0})
    with pytest.raises(InputError, match='must be <= max_tension'):
        model.apply('effort', {'t0': robot.max_tensions[0] + 1.0})
    model.advance(5e-4)
    state = model.state()
    assert state.time == pytest.approx(5e-4, abs=1e-12)
    assert state.effort.tolist() == [0.0, 2.0, 0.0, 0.0]
    model.reset()
    assert model.state().time == 0.0 and model.state().effort.tolist() == [0.0] * 4


def test_the_node_alpha_reaches_the_implicit_model_and_the_explicit_one_refuses_it():
    """The simulator node's ``alpha`` (ModelOptions): BDF-alpha of the implicit integrator."""
    steel = share_dir() / 'config' / 'steel_rod_robot.yaml'
    _, _, model = create_model(steel, 'dynamic', ModelOptions(alpha=-0.5))
    assert model.sim.alpha == -0.5 and 'BDF-alpha -0.5' in model.summary
    with pytest.raises(ModelConfigurationError, match='^alpha: must be in'):
        create_model(steel, 'dynamic', ModelOptions(alpha=0.5))
    with pytest.raises(ModelConfigurationError,
                       match='^alpha: applies to the implicit integrator only'):
        create_model(default_robot_file(), 'dynamic',
                     ModelOptions(integrator='explicit', alpha=-0.5))


def test_static_model_state_is_the_shape_of_an_independent_solve(robot):
    _, mode, model = create_model(default_robot_file(), 'quasi_static',
                                  ModelOptions(statics_model='discrete'))
    assert mode == 'quasi_static' and not model.timed
    model.apply('effort', {'t2': 2.5})
    expected = StaticsSolver(robot, 'discrete').solve_tensions({'t2': 2.5})
    state = model.state()
    assert np.allclose(state.tip.position, expected.tip_position, rtol=0.0, atol=5e-8)
    assert np.allclose(state.position, expected.tendon_displacements, rtol=0.0, atol=1e-9)
    (backbone,) = [m for m in state.markers if isinstance(m, Polyline)]
    assert backbone.points.shape == expected.centerline.shape
    discs = [m for m in state.markers if isinstance(m, Cylinder)]
    assert len(discs) == len(state.frames) == expected.vertebra_positions.shape[1]
    (tendons,) = [m for m in state.markers if isinstance(m, LineList)]
    segments = sum(p.shape[1] - 1 for p in expected.tendon_paths)
    assert tendons.points.shape == (3, 2 * segments) and len(tendons.colors) == segments
    first = expected.tendon_paths[0]
    # segment 0 runs from the base hole of t0 to its first vertebra hole
    assert np.allclose(tendons.points[:, :2], first[:, :2], rtol=0.0, atol=5e-8)


def test_static_model_refuses_displacements_beyond_max_tension_and_keeps_its_state(robot):
    _, _, model = create_model(default_robot_file(), 'quasi_static')
    before = model.state().tip.position
    with pytest.raises(InputError, match=r'position\[t0\]: the equilibrium needs .* above '
                                         'max_tension'):
        model.apply('position', [0.02, 0.0, 0.0, 0.0])   # t0 needs about 34 N
    assert np.array_equal(model.state().tip.position, before)


def test_static_model_changes_the_named_tendons_and_holds_the_others(robot):
    """As every model of the node: a setpoint naming t0 leaves t1 where the last one put it."""
    _, _, model = create_model(default_robot_file(), 'quasi_static')
    solver = StaticsSolver(robot, 'discrete')
    model.apply('effort', {'t1': 2.0})
    model.apply('effort', {'t0': 1.0})
    both = solver.solve_tensions([1.0, 2.0, 0.0, 0.0])
    assert model.state().effort.tolist() == [1.0, 2.0, 0.0, 0.0]
    assert np.allclose(model.state().tip.position, both.tip_position, rtol=0.0, atol=5e-8)
    # the other tendons hold their lengths when one is set by displacement
    held = dict(zip(robot.tendon_names, both.tendon_displacements))
    model.apply('position', {'t2': 0.001})
    expected = solver.solve_displacements({**held, 't2': 0.001})
    assert np.allclose(model.state().tip.position, expected.tip_position, rtol=0.0, atol=5e-8)
    assert np.allclose(model.state().effort[:2], [1.0, 2.0], rtol=0.0, atol=1e-6)


def test_a_tip_wrench_resolves_the_last_setpoint_until_reset(robot):
    _, _, model = create_model(default_robot_file(), 'quasi_static')
    model.apply('effort', {'t1': 1.0})
    force, moment = np.array([0.02, -0.05, 0.1]), np.zeros(3)
    model.set_tip_wrench(force, moment)
    expected = StaticsSolver(robot, 'discrete').solve_tensions(
        {'t1': 1.0}, tip_force=force, tip_moment=moment)
    assert np.allclose(model.state().tip.position, expected.tip_position, rtol=0.0, atol=5e-8)
    model.reset()
    rest = StaticsSolver(robot, 'discrete').solve_tensions(np.zeros(4))
    assert np.allclose(model.state().tip.position, rest.tip_position, rtol=0.0, atol=5e-8)


def test_named_values_change_the_named_inputs_and_name_the_problem():
    names = ('a', 'b', 'c')

    def apply(values):
        return named_values(values, np.ones(3), names, 'position', 'angle', 'motor')
    assert apply({'b': 2.0}).tolist() == [1.0, 2.0, 1.0]
    assert apply([4.0, 5.0, 6.0]).tolist() == [4.0, 5.0, 6.0]
    for values, problem in (({'d': 1.0}, r"name: unknown motor 'd'; known: \['a', "),
                            ([1.0], 'position: has 1 value without names; give one per motor'),
                            ({'a': np.nan}, r"position: non-finite angle for \['a'\]")):
        with pytest.raises(InputError, match=problem):
            apply(values)


TENDONS = 't0, t1, t2, t3'
MOTORS = ', '.join(f'motor_{i}' for i in range(1, 7))


@pytest.mark.parametrize('path, names, sizes, field, problem', [
    (default_robot_file(), ('t1',), {'effort': 1}, 'effort', ''),   # the other tendons hold
    (default_robot_file(), (), {'velocity': 4, 'position': 4}, 'position', ''),
    (default_robot_file(), (), {}, 'effort', ''),     # no values: the model refuses those
    (default_robot_file(), ('t0', 't4'), {'effort': 2}, 'effort',
     f"name: t4 not among the robot's tendons ({TENDONS})"),
    (default_robot_file(), tuple(f't{i}' for i in range(5)), {'effort': 5}, 'effort',
     f'name: has 5 entries; the robot has 4 tendons ({TENDONS})'),
    (default_robot_file(), (), {'effort': 3}, 'effort',
     'effort: has 3 values without names; the robot has 4 tendons: one each, or name them'),
    (default_robot_file(), ('t0',), {'velocity': 1}, None,
     'velocity: the robot takes effort (tension [N]) or position (displacement [m], '
     'pulled in)'),
    (default_pcr_file(), ('t0', 't1'), {'effort': 2}, 'position',
     f"name: t0, t1 not among the robot's motors ({MOTORS})"),
    (default_pcr_file(), (), {'effort': 6}, None,
     'effort: the robot takes position (motor angle q1 [rad]): the parallel robot '
     'takes motor angles (position, rad)'),
])
def test_a_setpoint_form_fits_the_inputs_unless_its_names_fields_or_count_do_not(
        path, names, sizes, field, problem):
    """What the form of a setpoint shows; the model agrees where it gets the values."""
    _, _, model = create_model(path, 'quasi_static')
    if problem:
        with pytest.raises(InputError) as error:
            model.inputs.check(names, sizes)
        assert str(error.value) == problem
    else:
        assert model.inputs.check(names, sizes) == field
    if field:   # the model, given such values, judges them alike
        values = dict.fromkeys(names, 0.0) if names else [0.0] * sizes.get(field, 0)
        if problem or not sizes:
            with pytest.raises(InputError):
                model.apply(field, values)
        else:
            model.apply(field, values)


def test_kind_of_a_file_and_kinds_without_a_model(tmp_path):
    assert file_kind(default_robot_file()) == TENDON_ROBOT
    assert file_kind(default_pcr_file()) == 'pcr_6rus'
    odd = tmp_path / 'odd.yaml'
    odd.write_text('kind: hexapod\nname: x\n')
    for call in (file_kind, load_any_description, create_model):
        with pytest.raises((RobotDescriptionError, ModelConfigurationError),
                           match=r"odd.yaml: kind: must be one of .* got str 'hexapod'"):
            call(odd)


def test_parallel_robot_takes_motor_angles_and_reports_the_platform_and_rods():
    from tendon_robot_sim.models.pcr.kinetostatics import PcrSolver, platform_rotation
    from tendon_robot_sim.models.pcr.robot import load_pcr_robot
    kind, mode, model = create_model(default_pcr_file())
    assert (kind, mode, model.timed) == ('pcr_6rus', 'quasi_static', False)
    assert model.inputs.fields == {'position': 'motor angle q1 [rad]'}
    q1 = np.radians([10.0, 10.0, 0.0, 5.0, 0.0, 0.0])
    model.apply('position', {'motor_1': q1[0], 'motor_2': q1[1], 'motor_4': q1[3]})
    robot = load_pcr_robot(default_pcr_file())
    expected = PcrSolver(robot).forward(q1)
    state = model.state()
    # both solvers stop within their tolerance (1e-10 scaled): far below 1e-9 m
    assert np.allclose(state.tip.position, expected.position, rtol=0.0, atol=1e-9)
    assert np.allclose(state.position, q1) and state.effort.size == 0
    rods = [m for m in state.markers if isinstance(m, Polyline)]
    assert len(rods) == 6
    joints = expected.position + robot.joint_positions @ platform_rotation(
        expected.orientation).T
    assert np.allclose([r.points[:, -1] for r in rods], joints, rtol=0.0, atol=1e-9)
    (platform,) = [m for m in state.markers if isinstance(m, Cylinder)]
    assert np.allclose(platform.pose.position, expected.position, rtol=0.0, atol=1e-9)
    with pytest.raises(InputError, match=r'motor_angles\[2\]: must be within the motor limits'):
        model.apply('position', {'motor_3': np.radians(95.0)})
    assert np.allclose(model.state().position, q1)
    force = np.array([0.0, 0.0, -5.0])
    model.set_tip_wrench(force, np.zeros(3))
    loaded = PcrSolver(robot).forward(q1, force=force)
    assert np.allclose(model.state().tip.position, loaded.position, rtol=0.0, atol=1e-9)
    assert loaded.position[2] < expected.position[2] - 1e-4, 'the load pushes the platform down'
    model.reset()
    assert np.allclose(model.state().tip.position, PcrSolver(robot).forward(np.zeros(6)).position,
                       rtol=0.0, atol=1e-9)


def test_quasi_static_rod_keeps_its_load_when_a_tip_wrench_has_no_equilibrium(robot):
    # A wrench whose equilibrium is not found is refused; the next setpoint was then solved
    # under that refused wrench, not under the load of the equilibrium still published.
    _, _, model = create_model(default_robot_file(), 'quasi_static',
                               ModelOptions(statics_model='cosserat'))
    force, moment = np.array([0.0, 0.0, -0.2]), np.zeros(3)
    model.set_tip_wrench(force, moment)
    with pytest.raises(InputError, match='cosserat statics .*still publishing the last'):
        model.set_tip_wrench(np.zeros(3), np.array([0.0, 10.0, 0.0]))   # curls it past reach
    model.apply('effort', {'t0': 2.0})
    expected = StaticsSolver(robot, model='cosserat').solve_tensions([2.0, 0.0, 0.0, 0.0],
                                                                     force, moment)
    # both solves stop within the solver's tolerance (1e-7 scaled): far below 1e-6 m
    assert np.allclose(model.state().tip.position, expected.tip_position, rtol=0.0, atol=1e-6)


def test_snake_model_takes_cable_tensions_within_the_limits_and_stops_at_the_joint_limits():
    from tendon_robot_sim.models.snake.dynamics import SnakeDynamics
    from tendon_robot_sim.models.snake.robot import load_snake
    path = share_dir() / 'config' / 'rolling_joint_snake.yaml'
    snake = load_snake(path)
    kind, mode, model = create_model(path)
    assert (kind, mode, model.timed, model.inputs.names) == (
        'rolling_joint_snake', 'dynamic', True, tuple(snake.cable_names))
    for values, problem in (
            ({'cable2': snake.max_tension + 1.0}, r'effort\[cable2\]: must be within \[0, max_'),
            ({'cable1': -1.0}, r'effort\[cable1\]: must be within'),
            ({'rope': 1.0}, "unknown cable 'rope'")):
        with pytest.raises(InputError, match=problem):
            model.apply('effort', values)
    # before any stop: the same trajectory as the dynamics integrated directly
    tensions = np.array([1.0, 9.0, 1.0, 1.0])
    model.apply('effort', list(tensions))
    model.advance(0.05)
    t = np.linspace(0.0, 0.05, 51)
    q, _ = SnakeDynamics(snake).simulate(t, np.tile(tensions, (t.size, 1)), np.zeros(6),
                                         np.zeros(6))
    assert np.all(np.abs(q) < snake.joint_limit), 'premise: no stop within 50 ms'
    assert np.allclose(model.q, q[-1, 0], rtol=0.0, atol=1e-9)
    # slack cables: the snake falls onto its stops and stays within them
    model.apply('effort', [0.0] * 4)
    model.advance(1.0)
    assert np.isclose(model.state().time, 1.05)
    assert np.max(np.abs(model.q)) == pytest.approx(snake.joint_limit, abs=1e-12)
    state = model.state()
    assert len(state.frames) == snake.n_joints
    assert np.array_equal(state.tip.position, state.frames[-1].position)
    model.reset()
    assert np.allclose(model.state().tip.position, [snake.n_joints * snake.link.height, 0, 0],
                       rtol=0.0, atol=1e-12)
    assert model.state().effort.tolist() == [snake.pretension] * 4


def test_snake_model_carries_a_tip_wrench_until_reset():
    from tendon_robot_sim.models.snake.dynamics import SnakeDynamics
    from tendon_robot_sim.models.snake.loads import LinkWrench
    from tendon_robot_sim.models.snake.robot import load_snake
    path = share_dir() / 'config' / 'rolling_joint_snake.yaml'
    snake = load_snake(path)
    _, _, model = create_model(path)
    tensions = np.array([1.0, 9.0, 1.0, 1.0])
    force, moment = np.array([0.0, 0.2, -0.5]), np.array([0.0, 0.01, 0.0])
    model.apply('effort', list(tensions))
    model.set_tip_wrench(force, moment)
    model.advance(0.05)
    t = np.linspace(0.0, 0.05, 51)
    dynamics = SnakeDynamics(snake)
    q, _ = dynamics.simulate(t, np.tile(tensions, (t.size, 1)), np.zeros(6), np.zeros(6),
                             loads=[LinkWrench(6, force, moment)])
    bare, _ = dynamics.simulate(t, np.tile(tensions, (t.size, 1)), np.zeros(6), np.zeros(6))
    assert np.all(np.abs(q) < snake.joint_limit), 'premise: no stop within 50 ms'
    assert np.abs(q[-1, 0] - bare[-1, 0]).max() > 1e-3, 'premise: the wrench moves the snake'
    assert np.allclose(model.q, q[-1, 0], rtol=0.0, atol=1e-9)
    for bad, problem in (((np.array([0.0, 0.0, -1e4]), np.zeros(3)),
                          r'wrench.force: 1e\+04 N is more than the 4 cables'),
                         ((np.zeros(3), np.array([np.nan, 0.0, 0.0])),
                          r'wrench.torque: must be 3 finite numbers')):
        with pytest.raises(InputError, match=problem):
            model.set_tip_wrench(*bad)
    model.reset()       # back to rest without the wrench: as the unloaded dynamics
    model.apply('effort', list(tensions))
    model.advance(0.05)
    assert np.allclose(model.q, bare[-1, 0], rtol=0.0, atol=1e-9)


def test_cc_model_takes_inputs_within_their_range_and_starts_straight():
    bha = share_dir() / 'config' / 'bionic_handling_assistant.yaml'
    kind, mode, model = create_model(bha)
    assert (kind, mode, model.timed) == ('bellows', 'cc_dynamic', True)
    assert model.inputs.fields == {'effort': 'pressure [Pa]'}
    name = model.inputs.names[0]
    high = model.model.input_range[0, 1]
    with pytest.raises(InputError, match=f'effort: {name} = .* Pa is outside'):
        model.apply('effort', {name: high + 1.0})
    with pytest.raises(InputError, match="name: unknown bellows 'p0'"):
        model.apply('effort', {'p0': 1.0})
    state = model.state()
    assert state.effort.tolist() == [0.0] * len(model.inputs.names)
    assert np.allclose(state.position, 0.0) and len(state.frames) == model.model.n_sections
    # straight at rest: the tip lies along the base direction, one arc per section
    length = model.model.rest_lengths.sum()
    assert np.allclose(state.tip.position, model.model.base_position
                       + length * model.model.base_rotation[:, 2], rtol=0.0, atol=1e-12)
    assert [m.ns for m in state.markers] == ['sections'] * model.model.n_sections
