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
The view in a real browser (headless chromium): what a user sees and what the page sends.

One module-wide stack (a quasi-static simulator, the tension controller and the view node,
real rclpy nodes over DDS, and a probe that serves a hardware bridge's ~/stop and ~/resume)
and one browser. The screenshots are checked where the robot
must be: the backbone of the latest markers is projected through the page's own camera and
its pixels must be drawn. They stay in test_artifacts/view/ for people to look at.
"""

import itertools
import re
from types import SimpleNamespace

from browser import (click, drawn, drawn_near, free, on_page, open_page, page_text,
                     screenshot, start_browser, wait_for_text)
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Point, PointStamped
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from recorded import write_bag
import ros_helpers
from ros_helpers import MAX_TENSION, Probe, spinning, spinning_alone
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from std_msgs.msg import Header
from std_srvs.srv import Trigger
from tendon_robot_sim import share_dir
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.tension_controller_node import TensionControllerNode
from tendon_robot_sim.nodes.view_node import ViewNode
from tendon_robot_sim.ros import topics
from tendon_robot_sim.view.camera import in_view, PANEL_WIDTH
from tendon_robot_sim.view.markers import Lines
from tendon_robot_sim.view.page import plotted_of, ViewPage
from tendon_robot_sim.view.playback import BagPlayback, Timeline

# What a browser does is slow on a loaded 2-core machine (a page load took 40 s at load 12).
BROWSER_TIMEOUT = 120.0   # s
DRAWN = 0.9    # share of the backbone's projected points that must be drawn (edges of discs
#                and the tip frame may hide a few)


def wait_for(condition, what: str, timeout: float = BROWSER_TIMEOUT):
    return ros_helpers.wait_for(condition, what, timeout)


@pytest.fixture(scope='module')
def browser():
    driver = start_browser()
    yield driver
    driver.quit()


@pytest.fixture(scope='module')
def live(robot_file):
    rclpy.init()
    robot = Parameter('robot_file', value=str(robot_file))
    simulator = SimulatorNode(parameter_overrides=[robot, Parameter('mode', value='quasi_static')])
    controller = TensionControllerNode(parameter_overrides=[robot])
    view = ViewNode(parameter_overrides=[robot, Parameter('port', value=0)])
    probe = Probe()
    targets = []
    probe.create_subscription(PointStamped, topics.TIP_TARGET.name, targets.append,
                              topics.TIP_TARGET.qos)
    # the services of a hardware bridge (its own tests cover what they do): calls recorded
    calls = []

    def service(name):
        def answer(request, response):
            calls.append(name)
            response.success, response.message = True, f'{name} done'
            return response
        return probe.create_service(Trigger, f'hardware_bridge/{name}', answer)
    services = [service('stop'), service('resume')]
    diagnostics = probe.create_publisher(DiagnosticArray, topics.DIAGNOSTICS.name,
                                         topics.DIAGNOSTICS.qos)
    # what the view's guard refuses (said on the log, throttled): a real page, nothing
    refused, warn = [], view.page.guard.warn
    view.page.guard.warn = lambda kind, text: (refused.append((kind, text)), warn(kind, text))
    with spinning(simulator, controller, view, probe):
        yield SimpleNamespace(view=view, page=view.page, probe=probe, targets=targets,
                              calls=calls, services=services, diagnostics=diagnostics,
                              refused=refused)


def backbone(page) -> np.ndarray:
    """Return the points (n, 3) of the line markers the page draws now (backbone first)."""
    with page.lock:
        lines = sorted(page.markers.lines().items(), key=lambda item: item[0][0] != 'backbone')
        item: Lines = lines[0][1]
        return np.concatenate([item.points[:, 0], item.points[-1:, 1]]).astype(float)


def shows_backbone(browser, page, client, name: str):
    """Return (image, backbone pixels) once the page draws the current backbone; else None."""
    points = backbone(page)
    image = screenshot(browser, name)
    pixels = free(on_page(points, client.camera, image.shape[1]), image)
    if len(pixels) >= 0.8 * len(points) and \
            drawn_near(drawn(image), pixels).mean() >= DRAWN:
        return image, pixels
    return None


def framed(browser, page, client, name: str):
    """Return (image, backbone pixels) once the robot is drawn filling the free view; else None."""
    shown = shows_backbone(browser, page, client, name)
    if shown is None:
        return None
    (height, width), pixels = shown[0].shape[:2], shown[1]
    span = pixels.max(axis=0) - pixels.min(axis=0)
    return shown if max(span[0] / (width - PANEL_WIDTH), span[1] / height) > 0.5 else None


def camera_state(page, client) -> str:
    """Say where the page reports its camera and where the view put it (for a failure)."""
    camera, aim = client.camera, page.framing.aims.get(client.client_id)
    return (f'page camera at {camera.position.round(4).tolist()} looking at '
            f'{camera.look_at.round(4).tolist()}, {camera.image_width}x{camera.image_height} px, '
            f'fov {camera.fov:.3f}; view aim '
            f'{None if aim is None else (aim.position.round(4).tolist(), aim.reached)}, '
            f'released {client.client_id in page.framing.released}')


def thumb(browser, label: str):
    """Return the slider thumb in the row labelled ``label``."""
    row = browser.find_element(
        By.XPATH, f"//label[text()='{label}']/ancestor::div[.//*[@role='slider']][1]")
    return row.find_element(By.CSS_SELECTOR, '[role=slider]')


def commands_of(probe, name: str) -> list:
    return [msg for _, msg in probe.received[topics.TENDON_COMMAND.name]
            if list(msg.name) == [name]]


def test_the_page_shows_the_robot_filling_the_view(live, browser):
    wait_for(lambda: live.page.frames_drawn > 0, 'the first markers drawn')
    client = open_page(browser, live.page)
    # framed: the backbone is drawn where the camera sees it, spanning most of the free view
    try:
        image, pixels = wait_for(lambda: framed(browser, live.page, client, 'live_start'),
                                 'the backbone drawn where the camera sees it, filling the view')
    except AssertionError as error:
        raise AssertionError(f'{error}; {camera_state(live.page, client)}') from None
    # and what is drawn is the robot: the free view is mostly background
    assert drawn(image)[:, :image.shape[1] - PANEL_WIDTH].mean() < 0.5
    text = wait_for_text(browser, 'Stack /', 'the stack panel drawn')
    assert '/tendon/command/tension' in text
    # a ground grid under the robot, cells of a round size near a tenth of it, its scale said
    grid, size = live.page.grid, live.page._size
    assert grid is not None and grid.position[2] < backbone(live.page)[:, 2].min()
    assert grid.section_size == pytest.approx(5 * grid.cell_size)
    assert 0.04 < grid.cell_size / size < 0.25
    said = re.search(r'Ground grid: ([0-9.]+) (mm|cm|m) cells, darker lines every '
                     r'([0-9.]+) (mm|cm|m)', text)
    assert said, text
    unit = {'mm': 1e-3, 'cm': 1e-2, 'm': 1.0}
    assert float(said[1]) * unit[said[2]] == pytest.approx(grid.cell_size)
    assert float(said[3]) * unit[said[4]] == pytest.approx(grid.section_size)


def test_a_slider_commands_a_tension_and_the_robot_moves(live, browser):
    client = next(iter(live.page.server.get_clients().values()))
    before_image, before = wait_for(
        lambda: shows_backbone(browser, live.page, client, 'live_before_slider'),
        'the backbone drawn')
    slider = live.page.commands.sliders['t1']
    track = browser.find_element(
        By.XPATH, "//label[text()='t1 [N]']/ancestor::div[.//*[@role='slider']][1]"
        "//*[contains(@class, 'mantine-Slider-track')]")
    ActionChains(browser).move_to_element_with_offset(
        track, -track.size['width'] // 10, 0).click().perform()
    moved = wait_for(lambda: commands_of(live.probe, 't1'), 'a command for t1')[-1]
    assert 0.0 < moved.effort[0] < MAX_TENSION
    assert moved.effort[0] == pytest.approx(slider.value, abs=1e-9)
    # End: the slider's end is the description's max_tension, never beyond
    thumb(browser, 't1 [N]').send_keys(Keys.END)
    last = wait_for(lambda: [m for m in commands_of(live.probe, 't1')
                             if m.effort[0] == pytest.approx(MAX_TENSION)], 'max tension')[-1]
    assert list(last.effort) == [pytest.approx(MAX_TENSION)]
    assert max(m.effort[0] for m in commands_of(live.probe, 't1')) <= MAX_TENSION
    # the robot bends: the new backbone is drawn where the camera sees it, its tip elsewhere

    def bent():
        shown = shows_backbone(browser, live.page, client, 'live_after_slider')
        return shown if shown and np.abs(shown[1][-1] - before[-1]).max() > 10 else None
    image, after = wait_for(bent, 'the bent backbone drawn')
    assert np.count_nonzero(drawn(image) != drawn(before_image)) > 200
    # the tip-target field follows the robot's tip (it kept the straight rod's first tip)
    wait_for(lambda: np.allclose(field_values(browser), live.page.tip_position, atol=2e-4),
             "the target field at the bent robot's tip")
    # the plot's y axis in the page holds the 20 N (it kept 0 to 100 of the empty plot)
    low, high = wait_for(lambda: plot_range(browser, live.page.state_plot), 'the plot drawn')
    assert low <= 0.0 and MAX_TENSION <= high < 2.0 * MAX_TENSION


def field_values(browser) -> list[float]:
    """Return the numbers the page shows in the tip-target field."""
    row = browser.find_element(
        By.XPATH, "//label[text()='target [m]']/ancestor::div[.//input][1]")
    return [float(field.get_attribute('value') or 'nan') for field in
            row.find_elements(By.CSS_SELECTOR, 'input.mantine-NumberInput-input')]


def plot_range(browser, plot):
    """Return the y range uPlot draws ``plot`` with in the page (viser's test point), or None."""
    found = browser.execute_script(
        'const plots = (window.__viserTestpoints || {}).uplots || {};'
        'return Object.values(plots).map(p => [p.chart.series.length, p.chart.scales.y.min,'
        ' p.chart.scales.y.max]);')
    ranges = [(low, high) for n, low, high in found or [] if n == len(plot.data)
              and low is not None]
    return ranges[0] if ranges else None


def fill(field, value: float) -> None:
    """Type ``value`` into a number field as a user would: erase what is there, then type."""
    click(field.parent, field)
    field.send_keys(Keys.END)
    # backspaces, not select-all: typing '-' over a selected negative number flips its sign
    field.send_keys(Keys.BACKSPACE * (len(field.get_attribute('value')) + 2))
    field.send_keys(f'{value:.4f}')


def test_the_tip_target_gizmo_dragged_along_an_arrow_publishes_a_target(live, browser):
    """A mouse drag on one of the gizmo's arrows, as a user makes it: the target moves along it."""
    client = next(iter(live.page.server.get_clients().values()))
    gizmo = live.page.targets.gizmo

    def ready() -> bool:
        # the gizmo sits on the tip and the camera where the view put it: the arrows are
        # where the projection says
        aim = live.page.framing.aims.get(client.client_id)
        return gizmo.visible and aim is not None and aim.reached \
            and not live.page.targets.touched
    wait_for(ready, 'the gizmo shown and the camera in place')
    start, size = np.array(gizmo.position), float(gizmo.scale)
    camera = client.camera
    canvas = browser.find_element(By.TAG_NAME, 'canvas')
    width = canvas.rect['width']
    # an arrow whose head is in the free view and not end-on to the camera; grabbed near
    # its head (the shaft is a few pixels wide), pulled 20 px along it
    for axis in range(3):
        unit = np.eye(3)[axis]
        grab, further = on_page(np.array([start + 0.85 * size * unit,
                                          start + 1.15 * size * unit]), camera, width)
        if np.linalg.norm(further - grab) > 10.0 and \
                20.0 < grab[0] < width - PANEL_WIDTH - 20.0 and \
                20.0 < grab[1] < canvas.rect['height'] - 20.0:
            break
    else:
        raise AssertionError(f'no arrow of the gizmo at {start} is in the view')
    along = (further - grab) / np.linalg.norm(further - grab)
    metres_per_pixel = 0.3 * size / np.linalg.norm(further - grab)
    before, sent_before = len(live.targets), live.page.targets.sent
    drag = ActionChains(browser).move_to_element_with_offset(
        canvas, int(grab[0] - 0.5 * canvas.rect['width']),
        int(grab[1] - 0.5 * canvas.rect['height'])).click_and_hold()
    for _ in range(4):
        drag.move_by_offset(*np.round(5.0 * along).astype(int).tolist())
    drag.release().perform()

    def drag_ended() -> bool:
        # the page takes targets while the drag goes on: the test wants the one at its end
        # (a loaded machine delivered one from the first 5 px before the mouse was released)
        page = live.page.targets
        return page.touched and not page.dragging and \
            len(live.targets) - before == page.sent - sent_before > 0
    wait_for(drag_ended, 'the drag ended and every target it sent received')
    sent = live.targets[-1]
    moved = np.array([sent.point.x, sent.point.y, sent.point.z]) - start
    screenshot(browser, 'live_gizmo_dragged')
    # along the arrow only (it constrains the drag), about as far as the mouse went: the
    # robot follows the first targets, so the camera may move under the mouse
    assert np.delete(moved, axis) == pytest.approx([0.0, 0.0], abs=1e-6)
    assert 0.5 * 20.0 * metres_per_pixel < moved[axis] < 2.0 * 20.0 * metres_per_pixel
    assert live.page.targets.touched    # the gizmo is the user's: it no longer follows the tip


def test_the_tip_target_is_set_in_the_page(live, browser):
    tip = live.page.tip_position
    goal = tip + np.array([0.0, 0.01, 0.01])
    row = browser.find_element(
        By.XPATH, "//label[text()='target [m]']/ancestor::div[.//input][1]")
    fields = row.find_elements(By.CSS_SELECTOR, 'input.mantine-NumberInput-input')
    assert len(fields) == 3
    for field, value in zip(fields, goal):
        fill(field, value)
    wait_for(lambda: np.allclose(live.page.targets.field.value, goal, atol=1e-4),
             'the page to take the target')
    before = len(live.targets)
    click(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Send target']"))
    sent = wait_for(lambda: live.targets[before:], 'a tip target')[-1]
    assert [sent.point.x, sent.point.y, sent.point.z] == pytest.approx(goal.tolist(), abs=1e-4)
    assert sent.header.frame_id == live.view.frame_id == 'base_link'
    screenshot(browser, 'live_tip_target')


def test_the_measured_tip_is_drawn_and_the_tip_error_plotted(live, browser):
    client = next(iter(live.page.server.get_clients().values()))
    target = live.page.target_position     # the target the test before sent
    measured = live.page.tip_position + np.array([0.0, 0.0, 0.004])
    before = screenshot(browser, 'live_before_measured')
    sensor = live.probe.create_publisher(PointStamped, topics.TIP_MEASURED.name,
                                         topics.TIP_MEASURED.qos)

    def drawn_there():
        sensor.publish(PointStamped(header=Header(frame_id='base_link'), point=Point(
            x=float(measured[0]), y=float(measured[1]), z=float(measured[2]))))
        if not live.page.measured.visible:
            return None
        image = screenshot(browser, 'live_tip_measured')
        changed = np.any(np.abs(image.astype(int) - before.astype(int)) > 30, axis=2)
        pixel = on_page(measured[None], client.camera, image.shape[1])
        # the green ball appeared where the camera sees the measured tip (radius ~ 5 px)
        return bool(drawn_near(changed, pixel, radius=4).all())
    wait_for(drawn_there, 'the measured tip drawn where the camera sees it')
    np.testing.assert_allclose(live.page.measured.position, measured, atol=1e-6)
    # the plot: the distance from the measured tip (not the model's) to the target, in mm

    def plotted():
        plot = live.page.error_plot
        return plot is not None and len(plot.data[1]) and plot.data[1][-1]
    wait_for(lambda: plotted() and abs(plotted() - 1e3 * np.linalg.norm(measured - target))
             < 1e-6, 'the tip error of the measured tip plotted')


def test_the_bridge_is_stopped_and_resumed_and_its_state_shown(live, browser):
    body = browser.find_element(By.TAG_NAME, 'body')
    status = DiagnosticStatus(level=DiagnosticStatus.WARN, name='/hardware_bridge: safety',
                              message='stopped by ~/stop: safe state', hardware_id='motors')
    elsewhere = DiagnosticStatus(level=DiagnosticStatus.OK, name='/right/hardware_bridge: '
                                 'safety', message='right arm', hardware_id='motors')

    def shown():
        live.diagnostics.publish(DiagnosticArray(status=[status, elsewhere]))
        return 'WARN /hardware_bridge: safety: stopped by ~/stop' in body.text
    wait_for(shown, "the bridge's diagnostics in the page")
    assert 'right arm' not in body.text     # another namespace's robot is not this page's
    stop = wait_for(lambda: browser.find_elements(By.XPATH, "//button[normalize-space()='Stop']"),
                    'the Stop button')[0]
    click(browser, stop)
    wait_for(lambda: live.calls == ['stop'], 'the call of hardware_bridge/stop')
    wait_for(lambda: 'stop done' in body.text, 'the answer in the page')
    click(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Resume']"))
    wait_for(lambda: live.calls == ['stop', 'resume'], 'the call of hardware_bridge/resume')
    screenshot(browser, 'live_hardware')


def test_a_watching_page_offers_no_stop_or_resume(live, browser, robot_file):
    """
    A view that only watches (``view --watch``) offers no Stop or Resume when a bridge runs.

    It offered both: Resume from a page the user opened to watch set the robot moving again.
    """
    watch = ViewNode(parameter_overrides=[Parameter('robot_file', value=str(robot_file)),
                                          Parameter('drive', value='none'),
                                          Parameter('port', value=0)])
    first = browser.current_window_handle
    with spinning_alone(watch):
        wait_for(lambda: watch.page.guard.hardware, 'the watching view finding the bridge')
        browser.switch_to.new_window('tab')
        try:
            open_page(browser, watch.page)
            wait_for_text(browser, 'watching only', "the watching page's heading")
            buttons = [button.text for button in browser.find_elements(By.TAG_NAME, 'button')]
            assert 'Frame the robot' in buttons
            assert 'Stop' not in buttons and 'Resume' not in buttons
            assert watch.page.hardware is None
        finally:
            browser.close()
            browser.switch_to.window(first)


def test_a_view_of_another_robot_than_the_stacks_says_so_and_sends_nothing(live, browser):
    """
    A view started for the snake beside the rod's stack says so, and its sliders send nothing.

    It showed the snake's cable sliders (0 .. 150 N) for the rod and sent their values, with
    nothing on the page saying that the stack's tendon/state names other inputs.
    """
    snake = share_dir() / 'config' / 'rolling_joint_snake.yaml'
    other = ViewNode(parameter_overrides=[Parameter('robot_file', value=str(snake)),
                                          Parameter('port', value=0)])
    first = browser.current_window_handle
    with spinning_alone(other):
        browser.switch_to.new_window('tab')
        try:
            open_page(browser, other.page)
            text = wait_for_text(browser, 'not the inputs of robot rolling_joint_snake.yaml',
                                 'the page saying the stack runs another robot')
            assert 'tendon/state names t0, t1, t2, t3' in text
            keys = itertools.cycle((Keys.END, Keys.HOME))

            def moved():
                # again until the page answers: a key pressed while viser still builds the
                # panel (a slider drawn anew) was lost
                try:
                    thumb(browser, 'cable1 [N]').send_keys(next(keys))
                    return 'Not sent' in page_text(browser) or commands_of(live.probe, 'cable1')
                except StaleElementReferenceException:
                    return False
            wait_for(moved, 'the move refused, or sent')
            assert commands_of(live.probe, 'cable1') == []
            assert other.page.commands.sent == 0
        finally:
            browser.close()
            browser.switch_to.window(first)


def discs_drawn(page) -> set:
    """Return the ids of the vertebrae (discs) the page draws now."""
    with page.lock:
        return {key[1] for key in page.markers.items if key[0] == 'vertebrae'}


def test_a_stack_that_stops_is_said_stale_until_it_runs_again(live, browser, robot_file):
    """
    The page says when the stack's markers and states stop, and stops saying it once they return.

    It kept drawing the last robot and its "now" values with nothing saying they were old.
    The stack comes back with a robot of 5 discs, not 10: the 5 others leave the scene
    (the simulator sends no DELETEALL; they stayed).
    """
    robot = Parameter('robot_file', value=str(robot_file))
    ten_discs = Parameter('robot_file', value=str(share_dir() / 'config' / 'robot.yaml'))
    simulator = SimulatorNode(namespace='stale', parameter_overrides=[
        ten_discs, Parameter('mode', value='quasi_static')])
    view = ViewNode(namespace='stale', parameter_overrides=[robot, Parameter('port', value=0)])
    first = browser.current_window_handle
    with spinning_alone(view):
        browser.switch_to.new_window('tab')
        try:
            open_page(browser, view.page)
            with spinning_alone(simulator):
                wait_for_text(browser, 'now (tension [N], tendon/state)', 'the live values')
                wait_for(lambda: 'STALE' not in page_text(browser), 'no topic said stale')
                wait_for(lambda: discs_drawn(view.page) == set(range(10)), 'the ten discs drawn')
            text = wait_for_text(browser, 'STALE no backbone/markers for',
                                 'the page saying the markers stopped')
            assert 'STALE no tendon/state for' in text
            again = SimulatorNode(namespace='stale', parameter_overrides=[
                robot, Parameter('mode', value='quasi_static')])
            with spinning_alone(again):
                wait_for(lambda: 'STALE' not in page_text(browser), 'the stack heard again')
                wait_for(lambda: discs_drawn(view.page) == set(range(5)),
                         "only the new robot's five discs drawn")
        finally:
            browser.close()
            browser.switch_to.window(first)


def test_texts_of_the_graph_show_as_written_not_as_the_pages_html(live, browser):
    """
    A status from the graph shows as its text: no element, link or image of its own.

    viser renders a Markdown's raw HTML without sanitizing it; the view escapes what any
    node may publish on /diagnostics before it goes into the heading.
    """
    text = ('<b id="injected">bold</b> [a link](http://attacker.example) <img id="pixel" '
            'src=x> www.attacker.example')
    status = DiagnosticStatus(level=DiagnosticStatus.ERROR, name='/hardware_bridge: injected',
                              message=text, hardware_id='motors')

    def shown():
        live.diagnostics.publish(DiagnosticArray(status=[status]))
        return text in page_text(browser)
    wait_for(shown, 'the status shown as its text')
    assert browser.find_elements(By.ID, 'injected') == []
    assert browser.find_elements(By.ID, 'pixel') == []
    assert browser.find_elements(By.XPATH, "//a[contains(@href, 'attacker.example')]") == []


def test_a_second_tab_shows_the_same_and_closing_sends_nothing(live, browser):
    sent = (live.page.commands.sent, live.page.targets.sent)
    commands = len(live.probe.received[topics.TENDON_COMMAND.name])
    first = browser.current_window_handle
    browser.switch_to.new_window('tab')
    client = open_page(browser, live.page)
    assert live.page.clients() == 2
    # the new tab frames the robot as it is now (bent), for its own camera
    wait_for(lambda: framed(browser, live.page, client, 'live_second_tab'),
             'the second tab framing the bent robot')
    # the second tab shows the first one's slider where it was left (the max tension)
    wait_for(lambda: float(thumb(browser, 't1 [N]').get_attribute('aria-valuenow'))
             == pytest.approx(MAX_TENSION), 'the second tab showing t1 at max_tension')
    screenshot(browser, 'live_second_tab')
    browser.close()
    # a blank tab keeps the session; the first page's tab is closed too (a page navigated
    # away from may linger in the back-forward cache with its connection)
    browser.switch_to.window(first)
    browser.switch_to.new_window('tab')
    blank = browser.current_window_handle
    browser.switch_to.window(first)
    browser.close()
    browser.switch_to.window(blank)
    try:
        wait_for(lambda: live.page.clients() == 0, 'both pages closed')
    except AssertionError as error:
        raise AssertionError(f'{error}; tabs {browser.window_handles}, clients '
                             f'{list(live.page.server.get_clients())}') from None
    assert (live.page.commands.sent, live.page.targets.sent) == sent
    assert len(live.probe.received[topics.TENDON_COMMAND.name]) == commands


def test_nothing_a_real_page_sent_was_refused(live):
    """
    The guard refused none of the frames the pages above sent (docs/viewer.md, Security).

    The page found the probe's hardware bridge: from then on its token was needed, which the
    printed address gave the browser (its cookie).
    """
    assert live.page.guard.hardware
    assert live.refused == []


def test_a_bag_plays_to_its_end_in_the_page(browser, tmp_path, robot_file):
    """
    The bag's robot shows before Play, then plays to the end.

    Its markers begin after its first message, as in a recording started before the stack
    (the scene stayed empty until Play).
    """
    tensions = np.zeros((50, 4))
    tensions[:, 1] = np.linspace(0.0, MAX_TENSION, 50)
    states = write_bag(tmp_path / 'bag', tensions, robot_file, markers_from=5)
    refused = []
    page = ViewPage('bag', port=0, warn=lambda kind, text: refused.append((kind, text)))
    playback = BagPlayback(page, Timeline(tmp_path / 'bag', progress=False))
    try:
        playback.show(0.0)
        client = open_page(browser, page)
        wait_for(lambda: shows_backbone(browser, page, client, 'bag_start'),
                 "the bag's first backbone drawn")
        click(browser, browser.find_element(By.XPATH, "//button[normalize-space()='Play']"))
        wait_for_text(browser, 'at the end', 'the page saying the bag played to its end')
        assert playback.shown_t == pytest.approx(playback.timeline.duration)
        np.testing.assert_allclose(page.tip_position, states[-1].tip.position, atol=1e-9)
        try:
            wait_for(lambda: shows_backbone(browser, page, client, 'bag_end'),
                     'the last backbone of the bag drawn')
        except AssertionError as error:
            raise AssertionError(f'{error}; {camera_state(page, client)}') from None
        assert refused == []
    finally:
        playback.stop()
        page.close()


def box_corners(points: np.ndarray) -> np.ndarray:
    """Return the 8 corners (8, 3) of the axis-aligned box around ``points`` (n, 3)."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1])
                     for z in (lo[2], hi[2])])


def test_the_snakes_first_camera_frames_the_whole_robot_until_a_user_moves_it(browser, tmp_path):
    """
    The snake bag's first view holds the whole robot, and follows it until a user drags.

    The issue's page cut it off until "Frame the robot": the view moved the camera in the
    page's first report and read its own move, which viser holds at once, as the page's;
    the page's next report, from before it applied the move, then read as a user's move.
    Checked by the page's camera pose against the robot's bounding box, not by pixels.
    """
    snake = share_dir() / 'config' / 'rolling_joint_snake.yaml'
    write_bag(tmp_path / 'bag', np.ones((3, 4)), snake, mode='dynamic')
    page = ViewPage('snake', port=0, warn=lambda kind, text: None)
    playback = BagPlayback(page, Timeline(tmp_path / 'bag', progress=False))
    size = browser.get_window_size()
    try:
        playback.show(0.0)
        client = open_page(browser, page)
        with page.lock:
            corners = box_corners(page.markers.points())

        def held() -> bool:
            aim = page.framing.aims.get(client.client_id)
            return aim is not None and aim.reached and page.framing.follows(client.client_id)
        try:
            wait_for(lambda: held() and in_view(corners, client.camera),
                     "the snake's whole box in the first view, the camera the view's")
        except AssertionError as error:
            raise AssertionError(f'{error}; {camera_state(page, client)}') from None
        screenshot(browser, 'snake_start')
        # the window shrinks: the page reports its camera again, which is no user's move;
        # the view frames the snake for the new size
        wide = client.camera.image_width
        browser.set_window_size(size['width'] - 200, size['height'])
        wait_for(lambda: client.camera.image_width < wide and held()
                 and in_view(corners, client.camera), 'the snake framed in the smaller page')
        # a user drags the scene: the camera is theirs until "Frame the robot"
        canvas = browser.find_element(By.TAG_NAME, 'canvas')
        ActionChains(browser).move_to_element_with_offset(canvas, -100, 0).click_and_hold() \
            .move_by_offset(40, 0).move_by_offset(40, 10).release().perform()
        wait_for(lambda: not page.framing.follows(client.client_id), "the user's camera let go")
        click(browser, browser.find_element(By.XPATH,
                                            "//button[normalize-space()='Frame the robot']"))
        wait_for(lambda: held() and in_view(corners, client.camera), 'the snake framed again')
    finally:
        browser.set_window_size(size['width'], size['height'])
        playback.stop()
        page.close()


def test_the_parallel_robots_sliders_read_degrees(browser):
    """
    Its motor sliders read "-0.349066 / 1.570796" (radians) while the CLI says degrees.

    The live values under them and the plot read radians ("motor angle [rad]": 0.7854 under
    a slider at 45 deg); they read degrees too.
    """
    from tendon_robot_sim.models.registry import input_limits
    from tendon_robot_sim.view.inputs import command_of

    _, limits = input_limits(share_dir() / 'config' / 'pcr_6rus.yaml')
    sent = []
    page = ViewPage('pcr', port=0, warn=lambda kind, text: None,
                    command=command_of('setpoint', limits), plotted=plotted_of(limits),
                    send_command=lambda name, value: sent.append((name, value)))
    try:
        open_page(browser, page)
        text = wait_for_text(browser, 'Command: motor angle [deg]', 'the command panel drawn')
        assert 'motor_1 [deg]' in text
        assert '1.570796' not in text and '90' in text.split()     # the slider's end mark
        page.show_state(0.0, limits.names, [np.radians(45.0)] * 6, [])
        page.refresh(0.0)
        text = wait_for_text(browser, 'now (motor angle [deg], tendon/state)', 'the live values')
        assert '45 45 45 45 45 45' in text and '0.7854' not in text
        assert page.state_plot.data[1].tolist() == [pytest.approx(45.0)]
        assert page.state_plot.title == 'motor angle [deg]'
    finally:
        page.close()
