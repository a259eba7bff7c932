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

"""The view's ROS-free parts: markers of every robot kind, slider bounds, camera, playback."""

import math
from pathlib import Path
import re

from geometry_msgs.msg import Point
import numpy as np
import pytest
from rclpy.serialization import deserialize_message, serialize_message
from recorded import write_bag
from std_msgs.msg import ColorRGBA
from tendon_robot_sim import share_dir
from tendon_robot_sim.experiment.bag import BagError
from tendon_robot_sim.models.description import RobotDescriptionError
from tendon_robot_sim.models.registry import create_model, input_limits
from tendon_robot_sim.ros.cdr import Decoder
from tendon_robot_sim.ros.messages import markers_msg, time_msg
from tendon_robot_sim.ros.topics import find_topic, type_name
from tendon_robot_sim.stack import view_drive
from tendon_robot_sim.view.camera import camera_pose, FIELD_OF_VIEW
from tendon_robot_sim.view.guard import Guard, is_loopback, machine_names
from tendon_robot_sim.view.inputs import command_of, nice_step
from tendon_robot_sim.view.markers import (DELETE, DELETEALL, LINE_LIST, Lines, MarkerScene,
                                           primitive, Solid)
from tendon_robot_sim.view.page import (cut, Expected, in_namespace, literal,
                                        node_of_logger, StatusBoard, STATUSES_KEPT,
                                        STATUSES_SHOWN, TEXT_SHOWN)
from tendon_robot_sim.view.playback import PlaybackClock, SHOWN, Timeline
from tendon_robot_sim.view.plots import History
from visualization_msgs.msg import Marker, MarkerArray

CONFIG = share_dir() / 'config'
KINDS = {'tendon_robot': 'robot.yaml', 'pcr_6rus': 'pcr_6rus.yaml',
         'rolling_joint_snake': 'rolling_joint_snake.yaml',
         'bellows': 'bionic_handling_assistant.yaml'}


@pytest.mark.parametrize('kind', KINDS)
def test_every_kind_is_drawn_from_its_markers_alone(kind):
    """The simulator's markers of each kind become primitives; none is skipped or rejected."""
    _, _, model = create_model(CONFIG / KINDS[kind])
    state = model.state()
    scene = MarkerScene()
    scene.apply(markers_msg(state.markers, 'base_link', time_msg(0.0)).markers)
    assert not scene.skipped and not scene.rejected
    assert len(scene.items) == len(state.markers)
    # every model point is drawn: the lines hold the polylines' points, in the base frame
    drawn = scene.points()
    for shape in state.markers:
        points = getattr(shape, 'points', None)
        if points is not None:
            distance = np.linalg.norm(drawn[:, None, :] - points.T[None], axis=2).min(axis=0)
            assert distance.max() < 1e-6     # m; float32 of a robot under 1 m: ~1e-8


@pytest.mark.parametrize('kind', KINDS)
def test_markers_read_from_their_bytes_draw_as_rclpys_messages(kind):
    """The live view reads the markers' bytes itself (points as arrays): the same drawing."""
    _, _, model = create_model(CONFIG / KINDS[kind])
    data = serialize_message(markers_msg(model.state().markers, 'base_link', time_msg(0.0)))
    scenes = MarkerScene(), MarkerScene()
    scenes[0].apply(deserialize_message(data, MarkerArray).markers)   # as rclpy delivers it
    scenes[1].apply(Decoder(MarkerArray)(data).markers)
    assert scenes[0].items.keys() == scenes[1].items.keys()
    for key, item in scenes[0].items.items():
        for name, value in vars(item).items():
            if isinstance(value, np.ndarray):   # 1e-12: the same numbers through two paths
                np.testing.assert_allclose(getattr(scenes[1].items[key], name), value,
                                           rtol=0, atol=1e-12, err_msg=f'{key} {name}')
            else:
                assert getattr(scenes[1].items[key], name) == value, (key, name)


def _marker(kind, points=(), colors=(), action=Marker.ADD, ns='n', mid=0):
    marker = Marker(type=kind, action=action, ns=ns, id=mid)
    marker.header.frame_id = 'base_link'
    marker.pose.orientation.w = 1.0
    marker.scale.x, marker.scale.y, marker.scale.z = 0.01, 0.02, 0.03
    marker.color = ColorRGBA(r=1.0, g=0.5, b=0.0, a=1.0)
    marker.points = [Point(x=float(x), y=float(y), z=float(z)) for x, y, z in points]
    marker.colors = [ColorRGBA(r=r, g=g, b=b, a=1.0) for r, g, b in colors]
    return marker


def test_line_markers_become_segments_with_their_colours():
    strip = primitive(_marker(Marker.LINE_STRIP, [(0, 0, 0), (1, 0, 0), (1, 1, 0)]))
    assert isinstance(strip, Lines)
    np.testing.assert_array_equal(strip.points, [[[0, 0, 0], [1, 0, 0]], [[1, 0, 0], [1, 1, 0]]])
    assert (strip.colors == [255, 128, 0]).all() and strip.width == pytest.approx(0.01)
    pairs = primitive(_marker(LINE_LIST, [(0, 0, 0), (1, 0, 0), (0, 1, 0), (0, 1, 1), (5, 5, 5)],
                              colors=[(1, 0, 0), (1, 0, 0), (0, 0, 1), (0, 0, 1), (0, 1, 0)]))
    # pairs, the odd last point left out as RViz does; one colour per end
    np.testing.assert_array_equal(pairs.points[1], [[0, 1, 0], [0, 1, 1]])
    assert len(pairs.points) == 2
    np.testing.assert_array_equal(pairs.colors[1], [[0, 0, 255], [0, 0, 255]])


def test_a_cylinder_keeps_its_pose_size_and_axis():
    marker = _marker(Marker.CYLINDER)
    marker.pose.position.x = 0.1
    marker.pose.orientation.x, marker.pose.orientation.w = np.sin(0.25), np.cos(0.25)
    solid = primitive(marker)
    assert isinstance(solid, Solid) and solid.shape == 'cylinder'
    np.testing.assert_allclose(solid.wxyz, [np.cos(0.25), np.sin(0.25), 0, 0])
    np.testing.assert_allclose(solid.scale, [0.01, 0.02, 0.03])
    np.testing.assert_allclose(solid.position, [0.1, 0, 0])


def test_actions_and_bad_markers_are_handled_as_rviz_does():
    scene = MarkerScene()
    line = _marker(Marker.LINE_STRIP, [(0, 0, 0), (1, 0, 0)])
    scene.apply([line, _marker(Marker.SPHERE, ns='s'), _marker(Marker.TEXT_VIEW_FACING, ns='t')])
    assert set(scene.items) == {('n', 0), ('s', 0)} and scene.skipped == {Marker.TEXT_VIEW_FACING}
    bad = _marker(Marker.LINE_STRIP, [(np.nan, 0, 0), (1, 0, 0)])
    scene.apply([bad])
    assert scene.rejected == 1 and scene.items[('n', 0)].points[0, 0, 0] == 0.0   # kept
    unseen = _marker(Marker.SPHERE, ns='c')
    unseen.color.a = np.nan
    scene.apply([unseen])
    assert scene.rejected == 2 and ('c', 0) not in scene.items
    scene.apply([_marker(Marker.SPHERE, ns='s', action=DELETE)])
    assert set(scene.items) == {('n', 0)}
    scene.apply([_marker(Marker.SPHERE, action=DELETEALL)])
    assert not scene.items


def test_the_sliders_stop_at_the_descriptions_limits():
    kind, limits = input_limits(CONFIG / 'robot.yaml')
    command = command_of('tension', limits)
    assert command.field == 'effort'
    np.testing.assert_array_equal(command.high, [20.0] * 4)        # max_tension of the file
    assert command.checked('t1', 20.0) == 20.0
    assert command.checked('t1', 20.0 + 1e-12) == 20.0             # a float step's rounding
    for name, value in (('t1', 20.001), ('t1', -0.1), ('t1', float('nan')), ('t9', 1.0)):
        with pytest.raises(ValueError, match='t1|t9'):
            command.checked(name, value)
    assert command_of('displacement', limits) is None              # until the limits come
    shifted = command_of('displacement', limits, (-0.01, 0.02))
    assert shifted.field == 'position' and shifted.checked('t0', 0.02) == 0.02
    with pytest.raises(ValueError):
        shifted.checked('t0', 0.021)
    _, pcr = input_limits(CONFIG / 'pcr_6rus.yaml')
    angles = command_of('setpoint', pcr)
    assert angles.field == 'position' and angles.unit == 'rad'
    np.testing.assert_allclose([angles.low[0], angles.high[0]], np.radians([-20.0, 90.0]))
    with pytest.raises(ValueError, match='tensions|pressures|motor'):
        command_of('tension', pcr)
    _, bellows = input_limits(CONFIG / 'bionic_handling_assistant.yaml')
    assert bellows.unit == 'Pa' and bellows.high.max() == pytest.approx(1.2e5)
    # the snake's sliders start at its pretension, the tension controller's floor (the file's
    # 1 N, which keeps the cables from going slack): below it they would ask for the clamp
    _, snake = input_limits(CONFIG / 'rolling_joint_snake.yaml')
    np.testing.assert_array_equal(snake.low, [1.0] * 4)
    tensions = command_of('tension', snake)
    assert tensions.checked('cable1', 1.0) == 1.0
    with pytest.raises(ValueError, match='cable1'):
        tensions.checked('cable1', 0.5)
    assert nice_step(0.02) == 0.02 and nice_step(0.037) == 0.05 and nice_step(120.0) == 100.0


def test_a_bad_robot_file_is_refused(tmp_path):
    path = tmp_path / 'bad.yaml'
    path.write_text('kind: no_such_kind\n')
    with pytest.raises(RobotDescriptionError, match='bad.yaml'):
        input_limits(path)


@pytest.mark.parametrize('robot, controller, drive', [
    ('', 'tension', 'tension'), ('', 'displacement', 'displacement'),
    ('rolling_joint_snake.yaml', 'tension', 'tension'),
    ('rolling_joint_snake.yaml', 'displacement', 'setpoint'),
    ('pcr_6rus.yaml', 'tension', 'setpoint'),
    ('bionic_handling_assistant.yaml', 'tension', 'setpoint')])
def test_the_sliders_drive_the_controller_the_stack_runs_for_the_kind(robot, controller, drive):
    values = {'robot': str(CONFIG / robot) if robot else '', 'controller': controller}
    assert view_drive(values) == drive


def test_the_camera_sees_every_point_and_the_robot_fills_the_view():
    points = np.array([[0, 0, 0], [0.25, 0, 0], [0.2, 0.05, -0.03], [0.1, -0.02, 0.01]])
    for aspect, reserved in ((1.6, 0.0), (1400 / 757, 400 / 1400)):
        position, look_at = camera_pose(points, aspect, FIELD_OF_VIEW, reserved)
        forward = (look_at - position) / np.linalg.norm(look_at - position)
        right = np.cross(forward, [0, 0, 1.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        depth = (points - position) @ forward
        scale = depth * np.tan(0.5 * FIELD_OF_VIEW)
        x = (points - position) @ right / scale     # in [-aspect, aspect]
        y = (points - position) @ up / scale        # in [-1, 1]
        # the free part, left of the panel: x in [-aspect, aspect (1 - 2 reserved)]
        middle, half = -aspect * reserved, aspect * (1.0 - reserved)
        across = np.abs(x - middle) / half
        assert np.all(across <= 1.0) and np.all(np.abs(y) <= 1.0)
        # filling: a point is near the margin of the view (1 / FILL = 0.87 of the half-width;
        # a little less beside the panel, where the shift is set at the centre's depth)
        assert max(across.max(), np.abs(y).max()) > 0.75


def test_diagnostics_are_the_stacks_own():
    assert in_namespace('/left_arm/hardware_bridge: safety', '', '/left_arm')
    assert not in_namespace('/left_arm/hardware_bridge: safety', '', '/')
    assert in_namespace('/hardware_bridge: safety', '', '/')
    assert in_namespace('tension_controller: tip feedback', '/tension_controller', '/')
    assert not in_namespace('tension_controller: tip feedback', '/right/tension_controller', '/')
    assert not in_namespace('other: x', 'some device', '/')


def test_a_state_of_another_robots_inputs_is_told_apart():
    """The rod's names in any order are the rod's; the snake's, fewer or more are not."""
    rod = Expected(('t0', 't1', 't2', 't3'), 'robot.yaml', 'start the view with --robot')
    assert rod.mismatch(['t3', 't1', 't0', 't2']) is None
    assert rod.mismatch([]) is None     # a state that names nothing tells nothing
    for names in (['cable1', 'cable2', 'cable3', 'cable4'], ['t0', 't1', 't2'],
                  ['t0', 't1', 't2', 't3', 't4']):
        said = rod.mismatch(names)
        assert said == (f'tendon/state names {", ".join(names)}, not the inputs of robot '
                        'robot.yaml (t0, t1, t2, t3): start the view with --robot')
    assert len(rod.mismatch(['x' * 100] * 50)) < 300     # names of the graph are cut


def test_the_history_keeps_the_last_seconds():
    history = History(2.0)
    for t in np.arange(0.0, 5.0, 0.5):
        history.add(t, [t, 2 * t])
    times, first, second = history.arrays(4.5, 2)
    np.testing.assert_allclose(times, [-2.0, -1.5, -1.0, -0.5, 0.0])
    np.testing.assert_allclose(second, 2 * first)
    history.add(1.0, [0, 0])            # time went back (a bag seeked back): a new start
    assert len(history.samples) == 1


def test_the_playback_clock_plays_pauses_seeks_and_stops_at_the_end():
    clock = PlaybackClock(2.0)
    assert clock.time(10.0) == 0.0
    clock.play(10.0)
    assert clock.time(10.5) == pytest.approx(0.5)
    clock.set_speed(4.0, 10.5)
    assert clock.time(10.75) == pytest.approx(1.5)
    assert clock.time(11.0) == 2.0 and not clock.playing and clock.at_end(11.0)
    clock.play(12.0)                    # from the end: again from the start
    assert clock.time(12.0) == 0.0
    clock.pause(12.1)
    clock.seek(5.0, 13.0)
    assert clock.time(20.0) == 2.0
    # a time or a speed that is none: refused, the clock where it was (issue 37: nan shown)
    for bad in (math.nan, math.inf, -math.inf):
        with pytest.raises(ValueError, match='time'):
            clock.seek(bad, 21.0)
    for bad in (math.nan, math.inf, 0.0, -1.0):
        with pytest.raises(ValueError, match='speed'):
            clock.set_speed(bad, 21.0)
    assert (clock.time(22.0), clock.speed) == (2.0, 4.0)


def test_the_diagnostics_kept_are_few_expire_and_the_worst_are_shown():
    board = StatusBoard(timeout=10.0)
    for i in range(3 * STATUSES_KEPT):
        board.take(float(i) / STATUSES_KEPT, i % 3, f'/node{i}: x', 'm' * 10 * TEXT_SHOWN)
    assert len(board) == STATUSES_KEPT and f'/node{3 * STATUSES_KEPT - 1}: x' in board
    assert '/node0: x' not in board                   # the least recently renewed went first
    shown, more = board.shown(3.0)
    assert len(shown) == STATUSES_SHOWN and more == STATUSES_KEPT - STATUSES_SHOWN
    assert {level for level, _, _ in shown} == {2}   # the worst first
    assert max(len(message) for _, _, message in shown) == TEXT_SHOWN
    board.take(5.0, 0, 'renewed: x', '')
    assert board.shown(13.5) == ([(0, 'renewed: x', '')], 0)   # the others expired
    assert board.shown(15.1) == ([], 0) and len(board) == 0
    long_name = 'n' * 1000
    board.take(0.0, 0, long_name, '')
    assert cut(long_name) in board and len(cut(long_name)) == TEXT_SHOWN


def test_texts_of_the_graph_show_as_written_never_as_html():
    """
    A text of the graph goes into the page as one code span: never HTML, a link or a line.

    viser renders a Markdown's raw HTML unsanitized, and GFM links bare addresses even when
    escaped (the browser test shows the rendering); a code span shows its content as written.
    """
    for text in ('<img src=x onerror=alert(1)>', '<script>alert(1)</script>',
                 '[link](http://attacker.example)', 'http://attacker.example www.a.example a@b.c',
                 '**bold** _em_ # title', 'line\n\n- item', '`code`', 'a ``` b', '`', '&lt;'):
        shown = literal(text)
        fence = re.match('`+', shown).group()
        assert shown.endswith(fence) and '\n' not in shown, shown
        inside = shown[len(fence):-len(fence)]
        assert fence not in inside and '`' * (len(fence) + 1) not in text, shown
        assert inside.strip(' ') == ' '.join(text.split()), shown
    assert literal('') == '' and literal(' \n ') == ''


def test_the_names_the_view_is_served_under():
    assert is_loopback('127.0.0.1') and is_loopback('::1') and is_loopback('localhost')
    assert is_loopback('127.0.1.1')
    assert not is_loopback('0.0.0.0') and not is_loopback('::') and \
        not is_loopback('192.0.2.7') and not is_loopback('no.such.host.invalid')
    assert 'localhost' in machine_names()
    guard = Guard('127.0.0.1', lambda kind, text: None)
    for name in ('127.0.0.1', '::1', '192.0.2.7', 'localhost', *machine_names()):
        assert guard.serves(name), name
    for name in ('attacker.example', 'localhost.attacker.example', '127.0.0.1.nip.io', ''):
        assert not guard.serves(name), name
    assert not guard.token_required
    assert Guard('0.0.0.0', guard.warn).token_required
    assert Guard('127.0.0.1', guard.warn, hardware=True).token_required
    assert len(guard.token) >= 32 and guard.token != Guard('127.0.0.1', guard.warn).token


def test_a_hardware_stacks_view_beyond_loopback_needs_the_explicit_opt_in():
    from tendon_robot_sim.launcher import LaunchError, StackLauncher

    view = {'view': 'true'}
    assert StackLauncher('hardware', view).parameters['view']['hardware'] is True
    assert StackLauncher('sim', view).parameters['view']['hardware'] is False
    for host in ('0.0.0.0', '192.0.2.7'):
        with pytest.raises(LaunchError, match='view:remote_control:=true'):
            StackLauncher('hardware', view, [f'view:host:={host}'])
        StackLauncher('hardware', view, [f'view:host:={host}', 'view:remote_control:=true'])
        StackLauncher('sim', view, [f'view:host:={host}'])      # a simulation: the token only
    StackLauncher('hardware', view, ['view:host:=localhost'])


def test_a_bag_timeline_holds_the_shown_topics_in_time_order(tmp_path):
    tensions = np.zeros((5, 4))
    tensions[:, 1] = np.linspace(0.0, 2.0, 5)
    states = write_bag(tmp_path / 'bag', tensions)
    timeline = Timeline(tmp_path / 'bag', progress=False)
    assert timeline.duration == pytest.approx(4 * 0.02)
    last = timeline.latest('tip/pose', timeline.duration)
    assert [last.pose.position.x, last.pose.position.y, last.pose.position.z] == \
        pytest.approx(states[-1].tip.position.tolist())
    assert timeline.latest('tendon/state', 0.03).effort[1] == pytest.approx(0.5)
    assert timeline.latest('tip/target', 1.0) is None
    assert timeline.latest('tip/target', 1.0, or_first=True) is None    # none in the bag
    # a bag whose markers begin after its first message: its robot shows from the start
    write_bag(tmp_path / 'late', tensions, markers_from=2)
    late = Timeline(tmp_path / 'late', progress=False)
    assert late.latest('backbone/markers', 0.0) is None
    first = late.latest('backbone/markers', 0.0, or_first=True)
    assert len(first.markers) > 0 and late.times['backbone/markers'][0] > 0.0
    with pytest.raises(BagError, match='left_arm'):
        Timeline(tmp_path / 'bag', namespace='left_arm', progress=False)
    with pytest.raises(BagError, match='no such bag'):
        Timeline(Path(tmp_path / 'missing'), progress=False)


@pytest.mark.parametrize('stack, extra', [('sim', {'view'}), ('hardware', {'view', 'model'})])
def test_view_true_adds_the_view_to_a_stack(stack, extra):
    from tendon_robot_sim.launcher import StackLauncher

    def planned(arguments):
        return {node.entry.name for node in StackLauncher(stack, arguments).processes}
    assert planned({'view': 'true'}) - planned({}) == extra
    assert not extra & planned({'view': 'false'})


def test_ci_fails_rather_than_skips_the_browser_tests_without_chromium(monkeypatch):
    import browser
    from tendon_robot_sim.view import headless

    monkeypatch.setattr(headless, 'browser_paths', lambda: None)
    monkeypatch.delenv('CI', raising=False)
    with pytest.raises(pytest.skip.Exception, match='chromium'):
        browser.start_browser()
    monkeypatch.setenv('CI', 'true')
    with pytest.raises(pytest.fail.Exception, match='chromium'):
        browser.start_browser()
    # and CI sets it: .ci/run exports CI before make test
    script = (Path(__file__).resolve().parents[2] / '.ci' / 'run').read_text()
    assert script.index('export CI=') < script.index('make test')


def test_warnings_are_the_stacks_own():
    assert node_of_logger('simulator', '/') == 'simulator'
    assert node_of_logger('left_arm.simulator', '/left_arm') == 'simulator'
    assert node_of_logger('left_arm.simulator', '/') is None
    assert node_of_logger('simulator', '/left_arm') is None
    assert node_of_logger('a.b.simulator', '/a') is None       # a deeper namespace
    assert node_of_logger('a.b.simulator', '/a/b') == 'simulator'


def test_the_figures_docs_viewer_gives_of_the_code_are_the_codes():
    """The rates and periods docs/viewer.md states are the defaults the code declares."""
    from tendon_robot_sim.emulator.dynamixel import ANSWER_LATENCY
    from tendon_robot_sim.nodes import hardware_bridge_node, simulator_node, view_node
    from tendon_robot_sim.view.guard import TOKEN_BYTES
    from tendon_robot_sim.view.panels import TARGET_PERIOD

    text = ' '.join((Path(__file__).resolve().parents[2] / 'docs' / 'viewer.md')
                    .read_text().split())     # one line: the docs wrap anywhere
    view = {param.name: param.default for param in view_node.PARAMS}
    simulator = {param.name: param.default for param in simulator_node.PARAMS}
    for stated in (f'markers at {simulator["publish_rate"]:g} Hz (its `publish_rate`)',
                   f'`scene_rate` times a second ({view["scene_rate"]:g} Hz)',
                   f'caps them at {view["scene_rate"]:g} a second',
                   f'`refresh_rate` ({view["refresh_rate"]:g} Hz)',
                   f'at most every {1e3 * TARGET_PERIOD:g} ms while dragging',
                   f'`latency_timer: {ANSWER_LATENCY:g}`',
                   f'`status_timeout` ({view["status_timeout"]:g} s;',
                   f'keeps at most {STATUSES_KEPT} statuses',
                   f'a page shows the {STATUSES_SHOWN} worst',
                   f'cut to {TEXT_SHOWN} characters',
                   f'`warning_throttle_period`, {view["warning_throttle_period"]:g} s',
                   f'({TOKEN_BYTES} random bytes'):
        assert stated in text
    slowest = next(p.range[0] for p in hardware_bridge_node.PARAMS
                   if p.name == 'diagnostics_rate')
    assert f'is one every {1 / slowest:g} s)' in text and view['status_timeout'] > 1 / slowest
    _, _, model = create_model(CONFIG / 'robot.yaml')
    markers = model.state().markers
    points = sum(m.points.shape[1] for m in markers if hasattr(m, 'points'))
    assert f'default robot ({len(markers)} markers, {points} points;' in text
    # the benchmark's figures: fewer updates than the cap, which the text must not deny
    assert 'only because `scene_rate`' not in text


def test_angle_sliders_show_degrees_and_send_radians():
    """The PCR's sliders read "-0.349066 / 1.570796" while the CLI and docs use degrees."""
    import asyncio
    from types import SimpleNamespace
    from tendon_robot_sim.view.page import ViewPage

    _, limits = input_limits(CONFIG / 'pcr_6rus.yaml')
    sent = []
    page = ViewPage('pcr', port=0, warn=lambda kind, text: None,
                    command=command_of('setpoint', limits),
                    send_command=lambda name, value: sent.append((name, value)))
    try:
        slider = page.commands.sliders['motor_1']
        assert (slider.label, slider.min, slider.max) == ('motor_1 [deg]', pytest.approx(-20.0),
                                                          pytest.approx(90.0))
        assert slider.step == 0.1
        assert page.commands.folder.label == 'Command: motor angle [deg]'
        move = page.commands._mover('motor_1')
        asyncio.run(move(SimpleNamespace(client=object(), target=SimpleNamespace(value=45.0))))
        assert sent == [('motor_1', pytest.approx(math.radians(45.0)))]
        page.commands.show({'motor_2': math.radians(30.0)})     # a command seen: in degrees
        assert page.commands.sliders['motor_2'].value == pytest.approx(30.0)
    finally:
        page.close()


def scale_of(page) -> tuple[float, ...]:
    """Return the sizes [m] the page drew to its robot's scale: grid cell, base and tip axes."""
    return (page.grid.cell_size, page.base.axes_length, page.tip.axes_length,
            page.target.radius)


def test_a_stack_restarted_with_another_robot_rescales_the_scene():
    """
    The first markers of a restarted stack scale the scene to the robot they show.

    The grid and the frames kept the first robot's scale: the 6-RUS parallel robot (1.06 m
    across) after the default rod (0.26 m) got the rod's 2 cm cells. The oracle is a page
    that saw only the second robot; markers of the same stack (the robot moving) keep the
    grid that was laid.
    """
    from tendon_robot_sim.view.page import ViewPage

    def robot(name: str):
        _, _, model = create_model(CONFIG / name)
        return markers_msg(model.state().markers, 'base_link', time_msg(0.0)).markers

    pages = [ViewPage(name, port=0, warn=lambda kind, text: None)
             for name in ('restarted', 'fresh')]
    restarted, fresh = pages
    try:
        restarted.show_markers(robot('robot.yaml'), new_robot=True)
        restarted.render()
        rod, grid = scale_of(restarted), restarted.grid
        restarted.show_markers(robot('robot.yaml'))     # the same stack: nothing rescaled
        restarted.render()
        assert restarted.grid is grid
        restarted.show_markers(robot('pcr_6rus.yaml'), new_robot=True)
        restarted.render()
        fresh.show_markers(robot('pcr_6rus.yaml'), new_robot=True)
        fresh.render()
        # the same markers, the same arithmetic: equal but for rounding
        assert scale_of(restarted) == pytest.approx(scale_of(fresh), rel=1e-9)
        assert scale_of(fresh)[0] > 2 * rod[0]    # the check tells the two robots apart
    finally:
        for page in pages:
            page.close()


@pytest.mark.parametrize('values, current, expected', [
    ([[0.5, 1.0, 19.8]], None, (0.0, 25.0)),          # tensions: from 0, 20 N not clipped
    ([[100.0, 100.0]], None, (90.0, 110.0)),          # a constant: around it
    ([[-0.3, 0.2]], None, (-0.4, 0.3)),
    ([[2.0, 3.0]], (0.0, 5.0), (0.0, 5.0)),           # held: no jump at every sample
    ([[2.0, 6.0]], (0.0, 5.0), (1.0, 7.0)),           # left behind: a new one
    ([[2.0, 2.1]], (0.0, 5.0), (1.98, 2.12)),         # far too wide: a new one
    ([[0.0, 0.0]], None, (0.0, 0.6)),                 # nothing pulled yet: no 0.001 steps
    ([[]], None, None)])
def test_the_plots_y_range_follows_the_data(values, current, expected):
    """The "Last 10 s" plots kept uPlot's 0 to 100 of an empty plot, and 100 N was clipped."""
    from tendon_robot_sim.view.plots import value_range

    found = value_range([np.array(v) for v in values], current)
    assert found == (None if expected is None else pytest.approx(expected))


def test_every_obstacle_shape_and_the_contact_arrows_are_drawn(tmp_path):
    """world/markers of each shape and contact/markers become primitives where they are."""
    import trimesh
    from tendon_robot_sim.models.contact.report import ContactPoint
    from tendon_robot_sim.models.contact.world import world_from_dict
    from tendon_robot_sim.ros.contact_messages import contact_markers_msg, world_markers_msg

    trimesh.creation.icosphere(subdivisions=1, radius=10.0).export(tmp_path / 'ball.stl')
    world = world_from_dict({'obstacles': [
        {'name': 'floor', 'shape': 'plane', 'position': [0, 0, -0.1], 'normal': [0, 0, 1]},
        {'name': 'ball', 'shape': 'sphere', 'radius': 0.02, 'position': [0, 0.1, 0]},
        {'name': 'post', 'shape': 'cylinder', 'radius': 0.01, 'length': 0.2, 'capsule': True,
         'position': [0.1, 0, 0], 'orientation': [0.7071068, 0, 0, 0.7071068]},
        {'name': 'crate', 'shape': 'box', 'size': [0.1, 0.2, 0.05], 'position': [0.2, 0, 0]},
        {'name': 'bone', 'shape': 'mesh', 'file': 'ball.stl', 'scale': 0.001,
         'position': [0, 0, 0.2]}]}, tmp_path)
    scene = MarkerScene()
    scene.apply(world_markers_msg(world, 'base_link', time_msg(0.0)).markers)
    assert not scene.skipped and not scene.rejected
    assert {ns for ns, _ in scene.items} == {'floor', 'ball', 'post', 'crate', 'bone'}
    floor = scene.items[('floor', 0)]
    assert floor.shape == 'cube' and floor.position[2] + floor.scale[2] / 2 == pytest.approx(-0.1)
    # the capsule's end spheres lie on its axis, turned onto -y by the quaternion
    ends = sorted(scene.items[('post', i)].position[1] for i in (1, 2))
    assert ends == pytest.approx([-0.1, 0.1], abs=1e-6)
    assert scene.items[('crate', 0)].scale.tolist() == pytest.approx([0.1, 0.2, 0.05])
    mesh = scene.meshes()[('bone', 0)]
    assert len(mesh.vertices) == 80
    assert np.linalg.norm(mesh.vertices.reshape(-1, 3) - [0, 0, 0.2], axis=1) == \
        pytest.approx(0.01, abs=1e-6)

    def contact(obstacle, point, force):
        return ContactPoint(obstacle, 0.1, np.array(point), np.array(force) / np.linalg.norm(
            force), np.array(force, dtype=float), 0.0)
    contacts = [contact('crate', [0.15, 0, 0], [-0.1, 0, 0]),
                contact('floor', [0.2, 0, -0.1], [0, 0, 0.2])]
    arrows = MarkerScene()
    msg, shown = contact_markers_msg(contacts, set(), 'base_link', time_msg(0.0), 0.5)
    arrows.apply(msg.markers)
    batch = arrows.arrows()
    assert set(batch) == {'crate', 'floor'} and not arrows.skipped
    # 0.5 m per N from the surface point along the force on the robot
    assert np.allclose(batch['floor'].points[0], [[0.2, 0, -0.1], [0.2, 0, 0.0]], atol=1e-12)
    assert np.allclose(batch['crate'].points[0], [[0.15, 0, 0], [0.1, 0, 0]], atol=1e-12)
    # the contact with the crate ends: its arrow is deleted
    msg, shown = contact_markers_msg(contacts[1:], shown, 'base_link', time_msg(0.1), 0.5)
    arrows.apply(msg.markers)
    assert set(arrows.arrows()) == {'floor'} and shown == {('floor', 0)}


def write_typed_bag(path: Path, types: dict, count: int = 3, size: int = 0,
                    bad: int | None = None) -> None:
    """
    Write ``count`` messages 1 ms apart on each topic of ``types``: a String or a JointState.

    Message ``bad`` of each topic is bytes that deserialize as neither.
    """
    from rosbags.typesys import get_typestore
    from tendon_robot_sim.experiment.bag import BagMessages, BagWriter, DEFAULT_STORE, OfferedQos

    messages = BagMessages(get_typestore(DEFAULT_STORE))
    with BagWriter(path) as bag:
        for topic, msgtype in types.items():
            bag.add_topic(topic, msgtype, OfferedQos())
        for i in range(count):
            stamp = 10**9 + i * 10**6
            for topic, msgtype in types.items():
                bag.write(topic, stamp, b'\x00\x01\x00\x00\xff' if i == bad else
                          messages.text('not a scene') if msgtype.endswith('String')
                          else messages.joint_state(stamp, ['t0'], [float(i)] * (size or 1)))


def test_the_types_a_bag_is_shown_by_are_the_stacks():
    """The view names them without ROS; the topic table is where they are defined."""
    assert SHOWN == {name: type_name(find_topic(name).msg_type) for name in SHOWN}


def test_a_bag_shown_topic_of_another_type_is_skipped_or_refused(tmp_path, capsys):
    """QA: a String on /backbone/markers raised AttributeError ('no attribute markers')."""
    from tendon_robot_sim import cli

    write_typed_bag(tmp_path / 'mixed', {'/backbone/markers': 'std_msgs/msg/String',
                                         '/tendon/state': 'sensor_msgs/msg/JointState'})
    timeline = Timeline(tmp_path / 'mixed', progress=False)
    assert timeline.skipped == {'/backbone/markers': 'of type std_msgs/msg/String, expected '
                                'visualization_msgs/msg/MarkerArray'}
    assert timeline.latest('backbone/markers', 1.0, or_first=True) is None
    assert timeline.latest('tendon/state', 1.0).position[0] == pytest.approx(2.0)
    # nothing left to show: refused in one line naming the topic, its type and the expected
    write_typed_bag(tmp_path / 'strings', {'/backbone/markers': 'std_msgs/msg/String',
                                           '/tip/pose': 'std_msgs/msg/String'})
    assert cli.main(['view', '--bag', str(tmp_path / 'strings'), '--port', '0']) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'Traceback' not in err, err
    assert 'nothing to show: /backbone/markers of type std_msgs/msg/String, expected ' \
        'visualization_msgs/msg/MarkerArray; /tip/pose of type std_msgs/msg/String, ' \
        'expected geometry_msgs/msg/PoseStamped' in err


def test_a_bag_timeline_holds_a_bounded_number_of_messages(tmp_path):
    """QA: every shown message was kept: a 129 MB bag made a 254 MB viewer."""
    import tracemalloc
    from tendon_robot_sim.view.playback import BLOCK, BLOCKS_KEPT

    count, size = 3 * BLOCK * BLOCKS_KEPT, 250       # 2 kB of positions per message
    write_typed_bag(tmp_path / 'long', {'/tendon/state': 'sensor_msgs/msg/JointState'},
                    count, size)
    tracemalloc.start()
    try:
        timeline = Timeline(tmp_path / 'long', progress=False)
        # forward, back to the start, and jumps: each message is the one of its time
        for i in [*range(0, count, 7), 0, count - 1, BLOCK + 3, 5]:
            message = timeline.latest('tendon/state', timeline.times['tendon/state'][i])
            assert message.position[0] == pytest.approx(float(i))
            assert timeline.stored() <= BLOCK * BLOCKS_KEPT
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert held < count * size * 8 / 2, held      # the bag's positions are not all held


def test_the_types_a_recording_is_read_by_are_the_stacks():
    """The experiment package names them without ROS; the topic table (or tf2) defines them."""
    from std_msgs.msg import String
    from tendon_robot_sim.experiment.experiment import RECORDED_TYPES
    from tf2_msgs.msg import TFMessage

    outside = {'experiment/label': String, '/tf_static': TFMessage}   # not in the table
    assert RECORDED_TYPES == {
        name: type_name(outside[name] if name in outside else find_topic(name).msg_type)
        for name in RECORDED_TYPES}


def test_a_message_the_playback_cannot_show_ends_it_with_the_reason(tmp_path):
    """Bad bytes far into a bag: the playback's thread ended in a traceback of its own."""
    from tendon_robot_sim.view.page import ViewPage
    from tendon_robot_sim.view.playback import BagPlayback
    from waiting import wait_for

    write_typed_bag(tmp_path / 'bag', {'/tendon/state': 'sensor_msgs/msg/JointState'}, 10, bad=9)
    page = ViewPage('bag', port=0, warn=lambda kind, text: None)
    playback = BagPlayback(page, Timeline(tmp_path / 'bag', progress=False))
    try:
        playback.show(0.0)
        playback._seek(playback.timeline.duration)     # as the page's slider does
        wait_for(lambda: playback.error is not None, 'the playback to stop on the bad message')
        assert re.fullmatch(r'.*/bag: message 9 of tendon/state at 0\.009 s does not '
                            r'deserialize as sensor_msgs/msg/JointState \(.*\)',
                            str(playback.error))
        assert not playback.thread.is_alive()
    finally:
        playback.stop()
        page.close()


def test_view_refuses_a_bag_whose_first_frame_cannot_be_shown(tmp_path, capsys):
    from tendon_robot_sim import cli

    write_typed_bag(tmp_path / 'bag', {'/tendon/state': 'sensor_msgs/msg/JointState'}, 10, bad=0)
    assert cli.main(['view', '--bag', str(tmp_path / 'bag'), '--port', '0']) == 2
    err = capsys.readouterr().err    # after the reading's progress bar
    last = err.strip().splitlines()[-1]
    assert 'Traceback' not in err and last.startswith('tendon-robot-sim view: error: ')
    assert 'message 0 of tendon/state at 0.000 s does not deserialize' in last


def test_a_silent_topic_no_node_publishes_says_what_is_missing():
    """The silence line of a topic without a publisher says so, never "yet" or a question."""
    from tendon_robot_sim.view.silence import Silences, STALE_AFTER

    silences = Silences(['backbone/markers', 'tendon/state'], start=0.0)
    assert silences.lines(STALE_AFTER) == []    # not silent for long enough yet
    silences.heard('tendon/state', 1.0)
    later = 1.0 + 2 * STALE_AFTER
    asked = silences.lines(later)
    assert asked[0].endswith('no `backbone/markers` yet: is the stack running, in this '
                             'namespace?') and asked[1].endswith('(the stack stopped?)')
    silences.why = {'backbone/markers': 'no model node', 'tendon/state': 'no bridge'}
    told = silences.lines(later)
    assert told[0].endswith('no `backbone/markers`: no model node'), told
    assert told[1].endswith('old (no node publishes it any more: the stack stopped)'), told


def test_a_bag_seeked_back_before_its_first_target_shows_no_target(tmp_path):
    """
    QA: the red ball and the tip error stayed after a seek to before the bag's first target.

    A page took a target (and a measured tip) only when the bag had one at the time shown,
    and never let go of it: the ball and the error plot said a target existed where the bag
    had none yet.
    """
    from tendon_robot_sim.view.page import ViewPage
    from tendon_robot_sim.view.playback import BagPlayback

    target = (0.2, 0.01, 0.0)    # m, base frame; from row 10 of 20 (0.2 s into the bag)
    write_bag(tmp_path / 'bag', np.zeros((20, 4)), targets={10: target})
    page = ViewPage('bag', port=0, warn=lambda kind, text: None)
    playback = BagPlayback(page, Timeline(tmp_path / 'bag', progress=False))
    playback.stop()            # shown here, not by the playback's clock
    try:
        end = playback.timeline.duration
        playback.show(end)
        page.refresh(end)
        assert page.target.visible and np.allclose(page.target.position, target)
        assert len(page.error_plot.data[1]) > 0      # the tip error since the target came
        playback.show(0.1)    # before the target
        page.refresh(0.1)
        assert page.target_position is None and not page.target.visible
        assert len(page.error_plot.data[1]) == 0     # no target: no tip error to plot
    finally:
        page.close()


def test_a_bags_tip_error_is_plotted_from_the_tip_of_each_state(tmp_path):
    """
    QA: after a seek, the tip error plot of a bag was flat at the error of the time sought.

    The plot's window was refilled from the states before the time shown, each with the
    distance from the tip of that time, not of the state's: a tip passing its target
    (71 mm to 1.6 mm to 45 mm in 0.8 s) drew a flat line at 45 mm. Expected: the recorded
    model's own tips.
    """
    from tendon_robot_sim.view.page import ViewPage
    from tendon_robot_sim.view.playback import BagPlayback

    tensions = np.zeros((40, 4))
    tensions[:, 0] = np.linspace(0.0, 3.0, 40)    # N on t0: the tip moves some cm
    target = (0.25, 0.0, 0.0)                     # m: the straight rod's tip, from row 0
    states = write_bag(tmp_path / 'bag', tensions, targets={0: target})
    page = ViewPage('bag', port=0, warn=lambda kind, text: None)
    playback = BagPlayback(page, Timeline(tmp_path / 'bag', progress=False))
    playback.stop()            # shown here, not by the playback's clock
    try:
        playback.show(playback.timeline.duration)    # a seek to the end: the window refilled
        errors = [float(v[0]) for _, v in page.error_history.samples]
        expected = [1e3 * np.linalg.norm(np.asarray(s.tip.position) - target) for s in states]
        # 1 um: the bag's float64 tips against the model's; the error spans 1.6 to 71 mm
        np.testing.assert_allclose(errors, expected, atol=1e-3)
    finally:
        page.close()


def test_the_plot_is_in_the_states_time_and_starts_over_when_it_goes_back():
    """
    The plot's time axis is the states' (their stamps), its right edge the newest one.

    QA: it ended at the steady time of the refresh: states stamped in simulated time (or
    bunched by a stall) fell outside the window. A restarted simulation's stamps go back:
    the plot starts over, the tip error too, even without a target to renew it.
    """
    from tendon_robot_sim.view.page import ViewPage

    page = ViewPage('stamps', port=0, warn=lambda kind, text: None, plot_window=2.0)
    try:
        page.show_tip((0.0, 0.0, 0.3), (1.0, 0.0, 0.0, 0.0))
        page.show_target((0.0, 0.0, 0.29))     # 10 mm from the tip
        for k in range(31):                    # 3 s of states, from 100 s on
            page.show_state(100.0 + 0.1 * k, ['t0', 't1'], [], [0.1 * k, 0.0])
        page.refresh(5.0)                      # the steady clock: another time base
        np.testing.assert_allclose(page.state_plot.data[0], np.arange(-2.0, 0.01, 0.1),
                                   atol=1e-9)  # the window in the states' time
        np.testing.assert_allclose(page.state_plot.data[1], np.arange(1.0, 3.01, 0.1))
        np.testing.assert_allclose(page.error_plot.data[1], 10.0)
        page.show_target(None)
        page.show_state(0.0, ['t0', 't1'], [], [0.5, 0.0])    # the simulation restarted
        page.refresh(6.0)
        assert page.state_plot.data[0].tolist() == [0.0]
        assert page.state_plot.data[1].tolist() == [0.5]
        assert len(page.error_plot.data[0]) == 0    # the old stack's tip error is gone
    finally:
        page.close()
