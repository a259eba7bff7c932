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
A picture of the browser view as a newcomer first sees it: docs/view.png (make docs-images).

Starts ``tendon-robot-sim launch sim --arg view:=true`` (RViz off, the view on a free port),
opens the printed address in the headless chromium the view's tests use, waits until the page
has drawn the robot and the robot is at rest (the drawn pixels of the scene change by less
than 0.5 % between two looks a second apart), then writes the page as a PNG and stops the
stack. Needs chromium and chromedriver (make setup installs them).

    python scripts/view_screenshot.py OUT.png [--robot config/pcr_6rus.yaml]
"""

from __future__ import annotations

import argparse
import io
import os
from pathlib import Path
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 300.0        # s the stack, the page and the robot's rest may take on a loaded machine
BACKGROUND = 235       # a pixel with every channel above this is the page's white background


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('out', type=Path, help='the PNG to write')
    parser.add_argument('--robot', default=None, help='robot description (default robot)')
    args = parser.parse_args(argv)
    from PIL import Image
    from tendon_robot_sim.view import headless
    from tendon_robot_sim.view.camera import PANEL_WIDTH

    command = [sys.executable, '-m', 'tendon_robot_sim.cli', 'launch', 'sim',
               '--arg', 'view:=true', '--arg', 'rviz:=false', '--param', 'view:port:=0']
    if args.robot:
        command += ['--arg', f'robot:={args.robot}']
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE='LOCALHOST')
    env.setdefault('ROS_DOMAIN_ID', str(os.getpid() % 100 + 1))
    stack = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
    address = []
    lines = []

    def read() -> None:
        for line in stack.stdout:
            lines.append(line)
            found = re.search(r'view of \S+ on (http://\S+)', line)
            if found and not address:
                address.append(found.group(1))
    threading.Thread(target=read, daemon=True).start()
    browser = None
    try:
        deadline = time.monotonic() + TIMEOUT
        while not address:
            if stack.poll() is not None or time.monotonic() > deadline:
                raise SystemExit('the view did not start:\n' + ''.join(lines[-20:]))
            time.sleep(0.2)
        browser = headless.start_browser()
        browser.get(address[0])
        previous = None
        while True:
            if time.monotonic() > deadline:
                raise SystemExit(f'the page did not settle within {TIMEOUT:g} s')
            browser.execute_script("document.querySelectorAll('.mantine-Notification-close"
                                   "Button').forEach(button => button.click());")
            png = headless.screenshot_png(browser)
            if png is None:
                continue     # the renderer did not answer in time: ask again
            image = np.asarray(Image.open(io.BytesIO(png)).convert('RGB'))
            scene = np.any(image[:, :image.shape[1] - PANEL_WIDTH] < BACKGROUND, axis=2)
            if previous is not None and scene.sum() > 0.01 * scene.size and \
                    np.mean(scene != previous) < 0.005:
                break
            previous = scene
            time.sleep(1.0)
        args.out.write_bytes(png)
        print(f'wrote {args.out}')
        return 0
    finally:
        if browser is not None:
            browser.quit()
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGINT)
            try:
                stack.wait(timeout=30.0)
            except subprocess.TimeoutExpired:
                os.killpg(stack.pid, signal.SIGKILL)
                stack.wait()


if __name__ == '__main__':
    sys.exit(main())
