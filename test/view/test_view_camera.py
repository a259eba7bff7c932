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
The camera of each page, without a browser: framed on every kind's markers, followed, let go.

A page is played by :class:`Page`: a camera that reports what a browser's would (viser's
fields, OpenCV axes), and that applies the view's moves only when the test says so, as a
slow page on a loaded machine does.
"""

import asyncio
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np
import pytest
from tendon_robot_sim import share_dir
from tendon_robot_sim.models.registry import create_model, input_limits
from tendon_robot_sim.ros.messages import markers_msg, time_msg
from tendon_robot_sim.view.camera import (FIELD_OF_VIEW, Framing, in_view, PANEL_WIDTH,
                                          project, UP)
from tendon_robot_sim.view.markers import MarkerScene
from tendon_robot_sim.view.page import ViewPage

CONFIG = share_dir() / 'config'
SIZE = (1000, 650)    # px: the test browser's page


@dataclass
class Page:
    """A page's camera as the page reports it (viser's CameraHandle fields)."""

    position: np.ndarray
    look_at: np.ndarray
    image_width: int = 0
    image_height: int = 0
    fov: float = FIELD_OF_VIEW

    @property
    def wxyz(self) -> np.ndarray:
        """Orientation of the camera frame (z forward, x right, y down) in the world."""
        z = self.look_at - self.position
        z /= np.linalg.norm(z)
        x = np.cross(z, UP)
        x /= np.linalg.norm(x)
        rotation = np.stack([x, np.cross(z, x), z], axis=1)
        w = 0.5 * np.sqrt(max(1.0 + np.trace(rotation), 1e-12))
        return np.array([w, (rotation[2, 1] - rotation[1, 2]) / (4 * w),
                         (rotation[0, 2] - rotation[2, 0]) / (4 * w),
                         (rotation[1, 0] - rotation[0, 1]) / (4 * w)])

    def go(self, move) -> None:
        self.position, self.look_at = (np.array(v, dtype=float) for v in move)


def outline(model) -> np.ndarray:
    scene = MarkerScene()
    scene.apply(markers_msg(model.state().markers, 'base_link', time_msg(0.0)).markers)
    return scene.points()


def fills(points, page) -> float:
    """Return the share of the free view (left of the panel) that the robot spans."""
    pixels = project(points, page)
    span = pixels.max(axis=0) - pixels.min(axis=0)
    return max(span[0] / (page.image_width - PANEL_WIDTH), span[1] / page.image_height)


def moved(kind_file: str):
    """Return the model of ``kind_file`` at rest and the same after its inputs moved."""
    _, _, model = create_model(CONFIG / kind_file)
    rest = outline(model)
    _, limits = input_limits(CONFIG / kind_file)
    # the first input to 60 % of its range, the others at their lowest (the PCR: one motor
    # to 45 deg, the others at 0)
    values = np.clip(np.zeros(len(limits.names)), limits.low, limits.high)
    values[0] = limits.low[0] + 0.6 * (limits.high[0] - limits.low[0])
    if limits.unit == 'rad':
        values[0] = np.radians(45.0)
    model.apply(limits.field, values)
    if model.timed:
        model.advance(2.0)
    return rest, outline(model)


KINDS = ('robot.yaml', 'pcr_6rus.yaml', 'rolling_joint_snake.yaml',
         'bionic_handling_assistant.yaml')


@pytest.mark.parametrize('kind_file', KINDS)
def test_a_slow_page_is_framed_once_it_knows_its_size_and_follows_the_robot(kind_file):
    rest, bent = moved(kind_file)
    framing = Framing()
    # the page connects before the robot's outline and its own size are known
    page = Page(np.array([3.0, 3.0, 3.0]), np.zeros(3))
    assert framing.decide(1, page, np.zeros((0, 3))) is None
    assert framing.decide(1, page, rest) is None          # no size yet: nothing to fit
    page.image_width, page.image_height = SIZE
    move = framing.decide(1, page, rest)
    assert move is not None
    # the page is slow: it reports its old camera for a while; that is no user's move
    for _ in range(3):
        assert framing.decide(1, page, rest) is None
    page.go(move)
    assert framing.decide(1, page, rest) is None          # there: held, nothing to do
    assert in_view(rest, page) and fills(rest, page) > 0.6
    # the robot moves: once out of the view, the camera backs off to hold both
    again = framing.decide(1, page, bent)
    if in_view(bent, page):
        assert again is None
    else:
        page.go(again)
        assert framing.decide(1, page, bent) is None
        assert in_view(bent, page) and in_view(rest, page)
        assert fills(np.concatenate([rest, bent]), page) > 0.6


def test_a_page_resized_or_opened_later_is_framed_for_its_own_size():
    rest, _ = moved('robot.yaml')
    framing = Framing()
    wide = Page(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE)
    wide.go(framing.decide(1, wide, rest))
    narrow = Page(np.array([3.0, 3.0, 3.0]), np.zeros(3), 600, 800)   # a second tab
    narrow.go(framing.decide(2, narrow, rest))
    assert in_view(rest, wide) and in_view(rest, narrow)
    assert framing.decide(1, wide, rest) is None
    wide.image_width = 700            # the window shrinks: the robot leaves the free part
    assert not in_view(rest, wide)
    wide.go(framing.decide(1, wide, rest))
    assert framing.decide(1, wide, rest) is None and in_view(rest, wide)


def test_a_camera_the_user_moved_is_theirs_until_frame_the_robot():
    rest, bent = moved('bionic_handling_assistant.yaml')
    framing = Framing()
    page = Page(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE)
    page.go(framing.decide(1, page, rest))
    assert framing.decide(1, page, rest) is None
    page.position = page.position * 1.5         # the user zooms out
    assert framing.decide(1, page, rest) is None
    page.position = page.position / 4.0         # and in, until the robot is cut off
    assert not in_view(rest, page)
    assert framing.decide(1, page, bent) is None and not framing.follows(1)
    framing.reset(1)                            # Frame the robot
    page.go(framing.decide(1, page, bent))
    assert in_view(bent, page) and framing.follows(1)


def test_only_the_pages_report_says_that_it_got_where_the_view_put_it():
    """
    Take a page's camera as where the view put it only once the page reports it there.

    viser's camera holds a move as soon as the view sends it, before the page applies it.
    A look between reports (the 5 Hz refresh) that took that for the page's camera, then
    the page's report from between its new position and its new look-at, made a user's move
    of it: the camera was let go and the robot left the view (a browser test, under load).
    """
    rest, bent = moved('robot.yaml')
    framing = Framing()
    page = Page(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE)
    before = page.position.copy(), page.look_at.copy()
    move = framing.decide(1, page, rest)
    page.go(move)                   # viser's camera: the move as sent, not yet applied
    assert framing.decide(1, page, rest, reported=False) is None
    # the page applies the position (viser shifts the look-at along), reports, then the look-at
    page.position, page.look_at = move[0], before[1] + (move[0] - before[0])
    assert framing.decide(1, page, rest) is None and framing.follows(1)
    page.go(move)
    assert framing.decide(1, page, rest) is None and framing.follows(1)
    # there: a look between reports frames again when the robot leaves the view
    if not in_view(bent, page):
        page.go(framing.decide(1, page, bent, reported=False))
        assert framing.decide(1, page, bent) is None and in_view(bent, page)   # reported
    # and a report elsewhere after the page got there is a user's move
    page.position = page.position * 1.5
    assert framing.decide(1, page, bent) is None and not framing.follows(1)


@dataclass
class HeldCamera(Page):
    """viser 1.1's camera of a page: holds a move the moment the view sends it."""

    up_direction: np.ndarray = field(default_factory=UP.copy)
    callbacks: list = field(default_factory=list)

    def on_update(self, callback) -> None:
        self.callbacks.append(callback)

    def report(self) -> None:
        """Report the camera, as the page does: viser runs the camera callbacks (coroutines)."""
        for callback in self.callbacks:
            asyncio.run(callback(self))


def test_a_new_page_is_framed_from_its_first_report_and_followed_until_a_user_moves_it():
    """
    Frame a page from its first report, in which viser 1.1 runs connect, then camera callbacks.

    The view framed in the connect callback; the camera callback then read viser's camera,
    which held that move already, as the page's report of it, and the page's next report,
    from before it applied the move, as a user's move: the camera was let go at once (the
    snake's first view cut off, the live browser tests unframed, whenever a page reported
    twice before applying the move).
    """
    _, _, model = create_model(CONFIG / 'rolling_joint_snake.yaml')
    page = ViewPage('snake', port=0, warn=lambda kind, text: None)
    try:
        page.show_markers(markers_msg(model.state().markers, 'base_link', time_msg(0.0)).markers)
        page.render()
        camera = HeldCamera(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE)
        client = SimpleNamespace(client_id=1, camera=camera)
        first = camera.position.copy(), camera.look_at.copy()
        asyncio.run(page._on_connect(client))    # the page's first report: connect ...
        camera.report()                          # ... then the camera callbacks
        aim = page.framing.aims[1]
        assert not aim.reached
        camera.position, camera.look_at = first  # a report from before the page moved
        camera.report()
        assert page.framing.follows(1)
        camera.go((aim.position, aim.look_at))   # the page got there and says so
        camera.report()
        assert aim.reached and page.framing.follows(1)
        assert in_view(page.markers.points(), camera)
        camera.position = camera.position * 1.5  # a user zooms out
        camera.report()
        assert not page.framing.follows(1)
    finally:
        page.close()


def test_a_stack_restarted_with_a_smaller_robot_is_framed_afresh():
    """
    A page that follows frames the robot of a restarted stack alone, not with the one before.

    The camera only backs off while it follows: after the parallel robot (1.06 m across) the
    default rod (0.26 m) stayed framed as the parallel robot was, a small figure in the middle.
    The oracle is a page that saw only the rod.
    """
    def markers(name: str):
        _, _, model = create_model(CONFIG / name)
        return markers_msg(model.state().markers, 'base_link', time_msg(0.0)).markers

    page = ViewPage('restarted', port=0, warn=lambda kind, text: None)
    try:
        page.show_markers(markers('pcr_6rus.yaml'), new_robot=True)
        page.render()
        camera = HeldCamera(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE)
        client = SimpleNamespace(client_id=1, camera=camera)
        asyncio.run(page._on_connect(client))
        camera.report()
        camera.report()                         # the page got there
        assert page.framing.aims[1].reached
        big = np.linalg.norm(camera.position - camera.look_at)
        page.show_markers(markers('robot.yaml'), new_robot=True)
        page.render()
        camera.report()                         # the page's next report: framed afresh
        alone = Framing().decide(1, Page(np.array([3.0, 3.0, 3.0]), np.zeros(3), *SIZE),
                                 page.markers.points())
        assert np.allclose(camera.position, alone[0], atol=1e-9)   # same arithmetic
        assert np.linalg.norm(camera.position - camera.look_at) < 0.5 * big
    finally:
        page.close()
