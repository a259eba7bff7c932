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
A headless chromium for the view's tests and benchmark, driven by ``selenium``.

Debian's ``chromium`` and ``chromedriver`` (``make setup`` installs them as root). The
flags make it run without a GPU, a display or a network: software WebGL (SwiftShader),
no background traffic, a fresh profile. The page's 2D canvases (the plots) are drawn in the
page's own process, not rasterized by the software GPU process: on a loaded 2-core machine
(load 10) the GPU process fell behind and the page answered a script after minutes
instead of within 0.1 s.
"""

from __future__ import annotations

from pathlib import Path
import shutil
import tempfile

WINDOW = (1000, 700)
FLAGS = ('--headless=new', '--no-sandbox', '--use-angle=swiftshader',
         '--enable-unsafe-swiftshader', '--disable-background-networking',
         '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic',
         '--disable-dev-shm-usage', '--disable-accelerated-2d-canvas',
         '--disable-gpu-rasterization',
         f'--window-size={WINDOW[0]},{WINDOW[1]}')


def browser_paths() -> tuple[str, str] | None:
    """Return the paths of chromium and chromedriver, or None when one is missing."""
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    driver = shutil.which('chromedriver')
    return (chromium, driver) if chromium and driver else None


def start_browser(profile: Path | None = None, flags: tuple[str, ...] = ()):
    """
    Start a headless chromium with a fresh profile (in ``profile``, else a temporary folder).

    ``flags`` are more command-line flags (``--host-resolver-rules``: a name resolved here).

    Raises
    ------
    RuntimeError
        chromium or chromedriver is not installed.

    """
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    paths = browser_paths()
    if paths is None:
        raise RuntimeError('chromium and chromedriver are not installed (apt-get install '
                           'chromium chromium-driver)')
    options = webdriver.ChromeOptions()
    options.binary_location = paths[0]
    profile = profile or Path(tempfile.mkdtemp(prefix='tendon_robot_sim_chromium_'))
    for flag in FLAGS + tuple(flags) + (f'--user-data-dir={profile}',):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(paths[1]))


def screenshot_png(browser) -> bytes | None:
    """
    Return the page as PNG bytes, or None when the renderer did not answer in time.

    chromedriver gives the renderer 10 s for a screenshot, a limit of its own; at load 19 a
    frame took longer. None is "not yet": callers ask again until their own deadline.
    """
    from selenium.common.exceptions import TimeoutException

    try:
        return browser.get_screenshot_as_png()
    except TimeoutException:
        return None
