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
``tendon-robot-sim demo --world FILE --pull TENDON``: the robot pressed against its obstacles.

Starts the ``sim`` stack headless with the world (the quasi-static cosserat statics, which
has contact) and the tension controller ramping at ``RAMP_RATE`` N/s (each equilibrium
warm-started from the last, as a robot pressed slowly), pulls ``--pull`` to ``--tension`` N,
prints the contacts the simulator publishes (``contact/markers`` and ``contact/wrench``) and
leaves a picture of the browser view (headless chromium) with the obstacles and the contact
forces. Output folder (``--out``, default ``demo_output/contact``)::

    contact.png    the browser view: robot, obstacles, contact forces (magenta arrows)
    contacts.csv   obstacle, contact point [m], force on the robot [N]
    stack.log      output of the stack's nodes
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import numpy as np
from tendon_robot_sim.commands import command_error, CommandError
from tendon_robot_sim.files.outputs import make_folder, open_growing, open_output, write_output
from tendon_robot_sim.launcher import LaunchError, StackLauncher
from tendon_robot_sim.models.contact.world import load_world, WorldError

RAMP_RATE = 1.0          # N/s: the controller's rate limit, 0.02 N between two solves at 50 Hz
STARTUP_TIMEOUT = 120.0  # s wall: the stack up, the world in the view
PRESS_TIMEOUT = 120.0    # s wall: the tension reached and its contacts published
PICTURE_TIMEOUT = 120.0  # s wall: the page loaded and the arrows drawn in it


def run_contact(args, robot, robot_file: Path) -> int:
    """Run the contact demo of ``args`` (world, pull, tension, out) on the tendon ``robot``."""
    try:
        world = load_world(args.world)
    except WorldError as error:
        raise command_error(error) from None
    if args.pull not in robot.tendon_names:
        raise CommandError(f'--pull: {args.pull!r} is not a tendon of {robot.name} '
                           f'({robot.tendon_names})')
    try:    # the stack checked (the world too) before anything is written to --out
        launcher = StackLauncher(
            'sim', {'robot': str(Path(robot_file).resolve()),
                    'world': str(Path(args.world).resolve()), 'mode': 'quasi_static',
                    'rviz': 'false'},
            [f'tension_controller:rate_limit:={RAMP_RATE}'])
    except LaunchError as error:
        raise command_error(error) from None
    out = args.out
    make_folder(out)
    os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    log_path = out / 'stack.log'
    with open_growing(log_path) as log:
        launcher.log_into(log)
        contacts, png = _press(launcher, robot_file, {args.pull: args.tension}, log_path)
    write_output(out / 'contact.png', png)
    with open_output(out / 'contacts.csv', newline='') as f:
        writer = csv.writer(f)
        writer.writerow(['obstacle', 'x_m', 'y_m', 'z_m', 'fx_n', 'fy_n', 'fz_n'])
        for c in contacts:
            writer.writerow([c.obstacle, *np.round(c.point, 6), *np.round(c.force, 6)])
    print(f'world {args.world}: {len(world.obstacles)} obstacles {world.names}; '
          f'{args.pull} at {args.tension:g} N')
    for c in contacts:
        print(f'contact with {c.obstacle} at {np.round(c.point * 1e3, 1).tolist()} mm: force '
              f'{np.round(c.force * 1e3, 1).tolist()} mN ({np.linalg.norm(c.force) * 1e3:.1f} '
              'mN)')
    if not contacts:
        print('no contact at these inputs')
    print(f'picture: {out / "contact.png"} (the browser view); contacts: '
          f'{out / "contacts.csv"}')
    return 0


def _press(launcher: StackLauncher, robot_file: Path, tensions: dict, log_path: Path):
    """Run the stack, press, and return (the contacts, a PNG of the view)."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter
    from rclpy.signals import SignalHandlerOptions

    from tendon_robot_sim.nodes.view_node import ViewNode
    from tendon_robot_sim.ros.contact_watch import ContactWatcher
    from tendon_robot_sim.ros.demo import shut_down, wait_until
    from tendon_robot_sim.view.headless import screenshot_png, start_browser

    def alive() -> None:
        for node in launcher.exited():
            raise CommandError(f'node {node.entry.name} exited with code '
                               f'{node.process.returncode}; see {log_path}')

    def wait(condition, what: str, timeout: float) -> None:
        if not wait_until(executor, condition, timeout, alive):
            raise CommandError(f'no {what} within {timeout:g} s; see {log_path}')

    # Ctrl-C is the command's (cli.main: exit 130, after the clean-up below)
    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    executor = SingleThreadedExecutor()
    nodes, browser = [], None
    try:
        launcher.start()
        watcher = ContactWatcher()
        view = ViewNode(parameter_overrides=[
            Parameter('robot_file', value=str(robot_file)), Parameter('port', value=0),
            Parameter('drive', value='none')])
        nodes += [watcher, view]
        for node in nodes:
            executor.add_node(node)
        wait(lambda: watcher.state is not None and watcher.command_pub.get_subscription_count()
             and view.page.layers['world'].items, 'stack, world in the view', STARTUP_TIMEOUT)
        watcher.command(tensions)
        wait(lambda: watcher.applied(tensions) and watcher.contacts is not None
             and (watcher.contacts_stamp in (None, watcher.state.header.stamp)),
             f'equilibrium with {tensions} N and its contacts', PRESS_TIMEOUT)
        contacts = watcher.contacts
        browser = start_browser()
        browser.get(view.page.address)
        page = view.page
        wait(lambda: page.server.get_clients() and all(
            c.camera.image_width > 0 and c.client_id in page.framing.aims
            for c in page.server.get_clients().values()), 'page framing the robot',
            PICTURE_TIMEOUT)
        # the page draws asynchronously: take pictures until the arrows' magenta shows
        shot = {}

        def drawn() -> bool:
            page.render()
            # viser's notice of software WebGL covers a corner of the scene
            browser.execute_script('document.querySelectorAll('
                                   "'.mantine-Notification-closeButton').forEach(b => b.click());")
            shot['png'] = screenshot_png(browser)
            return shot['png'] is not None and (not contacts or _magenta_pixels(shot['png']) > 0)
        wait(drawn, 'arrows drawn in the page', PICTURE_TIMEOUT)
        return contacts, shot['png']
    finally:
        if browser is not None:
            browser.quit()
        shut_down(executor, nodes, launcher)


def _magenta_pixels(png: bytes) -> int:
    """Count the pixels of a PNG in the contact arrows' lit magenta."""
    import io

    from PIL import Image

    image = np.asarray(Image.open(io.BytesIO(png)).convert('RGB')).astype(int)
    r, g, b = image[:, :, 0], image[:, :, 1], image[:, :, 2]
    return int(((np.minimum(r, b) > 90) & (g < 0.6 * np.minimum(r, b))).sum())
