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
The world and the contact forces in a real browser (headless chromium).

A quasi-static simulator with ``config/world_post.yaml``, the view node and a probe, real rclpy
nodes over DDS. The page draws the obstacles of ``world/markers`` (published before the view
started: latched) and the arrows of ``contact/markers``; the screenshots are checked where
they must be: the post's axis and the plate's centre projected through the page's own camera
are drawn, and the arrows' magenta is drawn at the contacts and leaves with them. The
screenshots stay in test_artifacts/view/.
"""

from types import SimpleNamespace

from browser import drawn, drawn_near, free, on_page, open_page, screenshot, start_browser
import numpy as np
import pytest
import rclpy
from rclpy.parameter import Parameter
from ros_helpers import Probe, spinning, wait_for
from sensor_msgs.msg import JointState
from tendon_robot_sim import share_dir
from tendon_robot_sim.nodes.simulator_node import SimulatorNode
from tendon_robot_sim.nodes.view_node import ViewNode

WORLD = share_dir() / 'config' / 'world_post.yaml'
PRESS = [0.25 * i for i in range(1, 8)]    # N on t3, warm steps: around the post, onto the plate
DRAWN = 0.8      # share of an obstacle's projected points that must be drawn


@pytest.fixture(scope='module')
def world():
    rclpy.init()
    simulator = SimulatorNode(parameter_overrides=[
        Parameter('mode', value='quasi_static'), Parameter('world_file', value=str(WORLD)),
        Parameter('publish_rate', value=20.0)])
    probe = Probe()
    # made after the simulator published its world (in its constructor): a late joiner
    view = ViewNode(parameter_overrides=[Parameter('port', value=0),
                                         Parameter('drive', value='none')])
    driver = start_browser()
    try:
        with spinning(simulator, probe, view):
            wait_for(lambda: probe.latest('tip/pose'), 'the simulator to come up')
            yield SimpleNamespace(view=view, page=view.page, probe=probe, browser=driver)
    finally:
        driver.quit()


def apply(world, tension: float) -> None:
    world.probe.setpoint_pub.publish(JointState(name=['t3'], effort=[tension]))
    wait_for(lambda: (lambda s: s is not None and s.effort.tolist()[3] == tension)(
        world.probe.latest('tendon/state')), f'the equilibrium of t3 = {tension} N')


def magenta(image: np.ndarray) -> np.ndarray:
    """Return a mask of the arrows' pixels: red and blue well above green (lit magenta)."""
    r, g, b = (image[:, :, i].astype(int) for i in range(3))
    return (np.minimum(r, b) > 90) & (g < 0.6 * np.minimum(r, b))


def arrows(page) -> dict:
    with page.lock:
        return page.layers['contact'].arrows()


def test_the_page_draws_the_obstacles_and_the_contact_forces(world):
    page, browser = world.page, world.browser
    wait_for(lambda: {ns for ns, _ in page.layers['world'].items} == {'post', 'plate'},
             'the latched obstacles in the view')
    for tension in PRESS:
        apply(world, tension)
    wait_for(lambda: set(arrows(page)) == {'post', 'plate'}, 'arrows at the post and the plate')
    client = open_page(browser, page)
    post_axis = np.array([[0.15, 0.03, z] for z in np.linspace(-0.08, 0.08, 9)])
    plate_centre = np.array([[0.22, 0.0, -0.045]])

    def shown():
        page.render()
        image = screenshot(browser, 'contact_pressed')
        heads = {ns: batch.points[:, 1] for ns, batch in arrows(page).items()}
        if set(heads) != {'post', 'plate'}:
            return None
        width = image.shape[1]
        obstacles = free(on_page(np.concatenate((post_axis, plate_centre)), client.camera,
                                 width), image)
        forces = [drawn_near(magenta(image), on_page(points, client.camera, width), radius=4)
                  for points in heads.values()]
        return len(obstacles) >= 5 and drawn_near(drawn(image), obstacles).mean() >= DRAWN \
            and all(f.all() for f in forces)
    wait_for(shown, 'the post, the plate and both arrows drawn where the camera sees them')

    # back down: the tip stays on the plate, the arrow at the post goes
    post_head = arrows(page)['post'].points[:, 1]
    for tension in reversed([0.0] + PRESS[:-1]):
        apply(world, tension)
    wait_for(lambda: set(arrows(page)) == {'plate'}, 'the arrow at the post gone from the view')

    def gone():
        page.render()
        image = screenshot(browser, 'contact_released')
        return not drawn_near(magenta(image), on_page(post_head, client.camera, image.shape[1]),
                              radius=2).any()
    wait_for(gone, "the post's arrow gone from the page")
