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
The controls of the view page: sliders, tip target, hardware buttons, playback.

Every control is shared by all tabs (viser keeps one state per server): a second tab shows
the same values and moves the same sliders, so two tabs never command different things. A
control sends only on a user's action in a page (``event.client`` set); values the view
itself shows (a state arriving, another tab's move mirrored) never send anything, and a
page that closes sends nothing. The callbacks are coroutines: viser runs them in its
event-loop thread, the one thread that may change the page (:class:`~tendon_robot_sim.view.
page.ViewPage`).
"""

from __future__ import annotations

import math
import time
from typing import Callable

import numpy as np

from tendon_robot_sim.view.inputs import Command

# Longest a dragged tip target waits before it is sent again [s] (and once at release).
TARGET_PERIOD = 0.05
SPEEDS = ('0.25', '0.5', '1', '2', '4', '10')


def notify(event, title: str, body: str) -> None:
    """Show a notification in the page of the client behind ``event`` (if any)."""
    if event.client is not None:
        event.client.add_notification(title, body, color='red', auto_close_seconds=6.0)


class CommandPanel:
    """
    One slider per input of ``command``; a user's move calls ``send(name, value)``.

    The value is checked (:meth:`Command.checked`) first: a value past a bound (a client
    that sends one) is refused with a notification and nothing is sent; so is every value
    while ``held()`` says why nothing may be sent (the stack runs another robot).
    """

    def __init__(self, gui, command: Command, send: Callable[[str, float], None],
                 held: Callable[[], str | None] = lambda: None):
        self.command = command
        self.send, self.held = send, held
        self.sent = 0
        self.folder = gui.add_folder(f'Command: {command.quantity} [{command.shown_unit}]',
                                     order=1.0)
        scale = command.scale       # the sliders show degrees for angles; sent in SI
        with self.folder:
            self.sliders = {}
            for i, name in enumerate(command.names):
                low, high = float(command.low[i]) * scale, float(command.high[i]) * scale
                slider = gui.add_slider(
                    command.label(name), min=low, max=high, step=command.step(name),
                    initial_value=min(max(0.0, low), high),
                    hint=f'{command.quantity} of {name}, {low:g} .. {high:g} '
                         f'{command.shown_unit}')
                slider.on_update(self._mover(name))
                self.sliders[name] = slider
            self.lowest = gui.add_button('All to their lowest', hint='send every input its '
                                         'lower bound')
            self.lowest.on_click(self._all_lowest)
            self.live = gui.add_markdown('')

    def _mover(self, name: str):
        async def moved(event) -> None:
            if event.client is None:
                return   # shown by the view, not moved by a user
            self._send(event, name, event.target.value / self.command.scale)
        return moved

    def _send(self, event, name: str, value: float) -> None:
        try:
            value = self.command.checked(name, value)
        except ValueError as error:
            notify(event, 'Not sent', str(error))
            return
        held = self.held()
        if held is not None:
            notify(event, 'Not sent', held)
            return
        self.sent += 1
        self.send(name, value)

    async def _all_lowest(self, event) -> None:
        for name, low in zip(self.command.names, self.command.low):
            self.sliders[name].value = float(low) * self.command.scale
            self._send(event, name, float(low))

    def show(self, values: dict[str, float]) -> None:
        """Move sliders to ``values`` (a command seen on the graph) without sending."""
        for name, value in values.items():
            slider = self.sliders.get(name)
            if slider is not None and np.isfinite(value):
                shown = value * self.command.scale
                slider.value = float(min(max(shown, slider.min), slider.max))

    def show_live(self, names, values, label: str) -> None:
        """Show the state of each input (``tendon/state``, ``label``) under the sliders."""
        cells = ' | '.join(f'{n}' for n in names)
        row = ' | '.join(f'{v:.4g}' for v in values)
        self.live.content = (f'now ({label}, tendon/state)\n\n| {cells} |\n'
                             f'|{"---|" * len(names)}\n| {row} |')


class TargetPanel:
    """
    The tip target: a gizmo in the scene and a position field; ``send(point)`` on a user's move.

    ``check(point)`` returns an error text for a target that must not be sent (non-finite,
    outside the workspace), else None.
    """

    def __init__(self, gui, scene, size: float, send: Callable[[np.ndarray], None],
                 check: Callable[[np.ndarray], str | None]):
        self.send, self.check = send, check
        self.sent = 0
        self._last_sent = 0.0
        self.gizmo = scene.add_transform_controls(
            '/tip_target_gizmo', scale=size, disable_rotations=True, depth_test=False,
            visible=False)
        self.gizmo.on_update(self._dragged)
        self.touched = False    # a user took the gizmo: it stops following the tip
        self.dragging = False   # between a drag's start and its end (its last target)
        self.folder = gui.add_folder('Tip target (tip/target)', order=2.0)
        with self.folder:
            self.field = gui.add_vector3('target [m]', (0.0, 0.0, 0.0), step=0.0001,
                                         hint='tip position in the base frame')
            self.field.on_update(self._typed)
            self.send_button = gui.add_button('Send target', hint='publish the position '
                                              'above on tip/target: the tension controller '
                                              'moves the tip there')
            self.send_button.on_click(self._clicked)
            self.at_tip = gui.add_button('Target at the tip', hint='put the target (not '
                                         'sent) where the tip is now')
        self.tip = None

    def place(self, point: np.ndarray, field: bool = True) -> None:
        """Put the gizmo (and the ``field``) at ``point`` without sending."""
        self.gizmo.position = tuple(float(v) for v in point)
        if not self.gizmo.visible:
            self.gizmo.visible = True
        shown = tuple(round(float(v), 4) for v in point)
        if field and tuple(self.field.value) != shown:
            self.field.value = shown

    async def _typed(self, event) -> None:
        if event.client is not None:
            self.touched = True     # a user's value: the field stops following the tip

    async def _dragged(self, event) -> None:
        if event.client is None:
            return
        self.touched = True     # from the grab ('start') on, the gizmo is the user's
        self.dragging = event.phase != 'end'
        if event.phase == 'start':
            return
        point = np.array(event.target.position, dtype=float)
        self.field.value = tuple(round(float(v), 4) for v in point)
        now = time.monotonic()
        if event.phase == 'end' or now - self._last_sent >= TARGET_PERIOD:
            self._last_sent = now
            self._send(event, point)

    async def _clicked(self, event) -> None:
        self.touched = True
        point = np.array(self.field.value, dtype=float)
        self.gizmo.position = tuple(float(v) for v in point)
        self.gizmo.visible = True
        self._send(event, point)

    def _send(self, event, point: np.ndarray) -> None:
        problem = self.check(point)
        if problem is not None:
            notify(event, 'Target not sent', problem)
            return
        self.sent += 1
        self.send(point)


class HardwarePanel:
    """The hardware bridge: Stop and Resume (``~/stop``, ``~/resume``) and their answers."""

    def __init__(self, gui, bridge: str, call: Callable[[str], None]):
        self.folder = gui.add_folder(f'Hardware bridge {bridge}', order=0.5)
        with self.folder:
            self.stop = gui.add_button('Stop', color='red', hint=f'{bridge}/stop: every tendon '
                                       'to the pretension; setpoints ignored until Resume')
            self.resume = gui.add_button('Resume', color='green', hint=f'{bridge}/resume: '
                                         'follow setpoints again')
            self.answer = gui.add_markdown('')

        async def stop(event) -> None:
            call('stop')

        async def resume(event) -> None:
            call('resume')
        self.stop.on_click(stop)
        self.resume.on_click(resume)

    def show_answer(self, service: str, text: str) -> None:
        self.answer.content = f'`{service}`: {text}'


class PlaybackPanel:
    """A bag's time slider, play/pause and speed; ``seek(t)`` when a user moves the slider."""

    def __init__(self, gui, duration: float, seek: Callable[[float], None],
                 play: Callable[[bool], None], speed: Callable[[float], None]):
        self.folder = gui.add_folder('Playback', order=0.5)
        with self.folder:
            # the end rounded up to the slider's step, so that the last message is in reach
            end = max(math.ceil(duration * 100.0) / 100.0, 0.01)
            self.time = gui.add_slider('time [s]', min=0.0, max=end, step=0.01,
                                       initial_value=0.0)
            self.play = gui.add_button('Play', hint='play or pause the bag')
            self.speed = gui.add_dropdown('speed', SPEEDS, initial_value='1')
            self.status = gui.add_markdown('paused at the start')

        async def moved(event) -> None:
            if event.client is not None:   # a user's move, not the clock's
                seek(event.target.value)

        async def clicked(event) -> None:
            play(self.play.label == 'Play')

        async def chosen(event) -> None:
            speed(float(event.target.value))
        self.time.on_update(moved)
        self.play.on_click(clicked)
        self.speed.on_update(chosen)

    def show(self, t: float, playing: bool, status: str) -> None:
        self.time.value = round(float(t), 2)
        self.play.label = 'Pause' if playing else 'Play'
        self.status.content = status
