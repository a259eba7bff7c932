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
A real headless browser for the view's tests: Debian's chromium through chromedriver.

One browser serves a test module (:func:`start_browser`); :func:`screenshot` returns the
page as an RGB array and keeps the PNG in ``test_artifacts/view/`` (git-ignored) for people
to look at; :func:`on_page` maps base-frame points to the page's pixels through the view's own
projection (``project``) and a page camera, so a test checks that the robot is drawn where it
must be, not only that something is.
Without chromium the tests skip with a note, except in CI (``CI`` set), where they fail:
``make setup`` installs it there.
"""

import io
import os
from pathlib import Path

import numpy as np
from PIL import Image
import pytest
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.common.by import By
from tendon_robot_sim.view import headless
from tendon_robot_sim.view.camera import PANEL_WIDTH, project
import waiting

ARTIFACTS = Path(__file__).resolve().parents[2] / 'test_artifacts' / 'view'
BACKGROUND = 235    # a pixel with every channel above this is the page's white background


def start_browser(flags: tuple[str, ...] = ()):
    """Start the headless chromium (more ``flags``); skip without it (fail in CI)."""
    if headless.browser_paths() is None:
        message = ('chromium and chromedriver are needed for the browser tests (make setup '
                   'installs them as root; else apt-get install chromium chromium-driver)')
        if os.environ.get('CI'):
            pytest.fail(message)
        pytest.skip(message)
    return headless.start_browser(flags=flags)


def open_page(browser, page, timeout: float = 120.0):
    """Load ``page`` (a ViewPage) in ``browser``'s current tab; wait until it is connected."""
    before = set(page.server.get_clients())
    browser.get(page.address)     # with its token, as the view prints it
    clients = waiting.wait_for(lambda: set(page.server.get_clients()) - before,
                               'the page to connect to the view', timeout)
    client = page.server.get_clients()[min(clients)]
    # the camera reports the page's size once the canvas exists
    waiting.wait_for(lambda: client.camera.image_width > 0, 'the page to report its camera',
                     timeout)
    close_notifications(browser, timeout)
    return client


def page_text(browser) -> str:
    """Return the text the page shows now (its panels, notices and labels)."""
    return browser.find_element(By.TAG_NAME, 'body').text


def wait_for_text(browser, text: str, what: str) -> str:
    """
    Wait until the page shows ``text``; return all the page shows then.

    viser sends its panels after the page connects: read at once, a panel may not be there.
    """
    def shown():
        now = page_text(browser)
        return text in now and now
    return waiting.wait_for(shown, what)


def click(browser, element) -> None:
    """Scroll ``element`` to the middle of its panel and click it, as a user would."""
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", element)
    element.click()


def close_notifications(browser, timeout: float = 120.0) -> None:
    """
    Close viser's notices (software WebGL): they cover a corner of the scene.

    In the page's script, not by WebDriver clicks: on a loaded machine chromedriver's click
    on a notice that is closing itself waited for minutes. A script the renderer did not run
    within chromedriver's 30 s (software WebGL at load 12) is run again until ``timeout`` s.
    """
    def closed() -> bool:
        try:
            browser.execute_script(
                "document.querySelectorAll('.mantine-Notification-closeButton')"
                '.forEach(button => button.click());')
        except TimeoutException:
            return False
        return True
    waiting.wait_for(closed, "viser's notices closed", timeout)


def screenshot(browser, name: str, timeout: float = 120.0) -> np.ndarray:
    """
    Return the page as (height, width, 3) uint8 and keep it as test_artifacts/view/NAME.png.

    A screenshot the renderer did not answer in time is asked for again until ``timeout`` s.
    """
    png = waiting.wait_for(lambda: headless.screenshot_png(browser),
                           'a screenshot from the renderer', timeout)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f'{name}.png').write_bytes(png)
    return np.asarray(Image.open(io.BytesIO(png)).convert('RGB'))


def on_page(points: np.ndarray, camera, width: float) -> np.ndarray:
    """
    Return the pixels (n, 2) (column, row) of base-frame ``points`` on a page ``width`` px wide.

    ``width``: a screenshot's or the canvas element's, in the page's px (headless chromium's
    devicePixelRatio is 1). The camera reports its canvas's own pixels, which viser's adaptive
    resolution scales down (to 0.875x, 0.75x) when the browser draws slowly, as on a loaded
    machine: projected at the reported size, the robot would be looked for where it is not.
    """
    return project(points, camera) * (width / camera.image_width)


def free(pixels: np.ndarray, image: np.ndarray) -> np.ndarray:
    """Return the page ``pixels`` inside ``image``'s scene, not under the control panel."""
    height, width = image.shape[:2]
    inside = ((pixels[:, 0] >= 0) & (pixels[:, 0] < width - PANEL_WIDTH)
              & (pixels[:, 1] >= 0) & (pixels[:, 1] < height))
    return pixels[inside]


def drawn(image: np.ndarray) -> np.ndarray:
    """Return a mask of the pixels that are not the white background."""
    return np.any(image < BACKGROUND, axis=2)


def drawn_near(mask: np.ndarray, pixels: np.ndarray, radius: int = 3) -> np.ndarray:
    """Return, per pixel (column, row), whether the mask has a drawn pixel within ``radius``."""
    height, width = mask.shape
    near = []
    for column, row in np.round(pixels).astype(int):
        rows = slice(max(row - radius, 0), min(row + radius + 1, height))
        columns = slice(max(column - radius, 0), min(column + radius + 1, width))
        near.append(bool(mask[rows, columns].any()))
    return np.array(near)
