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
The view page: a viser server with the robot's markers, its frames, the controls and a plot.

:class:`ViewPage` holds what the page shows and is fed message by message (from ROS
callbacks, or from a bag's timeline); :meth:`ViewPage.render` sends the scene, at most at
the rate its caller calls it, and :meth:`ViewPage.refresh` the plot and the texts, more
rarely. Everything is in the frame of the markers (the stack's base frame, REP 103: z up);
the camera of a new page frames the robot. Thread-safe: the ``show_*`` methods only store what
they are given (under one lock), and everything that talks to viser runs in viser's own
event-loop thread (:meth:`ViewPage.in_loop`; the page's callbacks are coroutines, which
viser runs there): viser 1.1 pulses an ``asyncio.Event`` from the calling thread, which
races the loop ("deque mutated during iteration") when called from another thread.
Who may load the page and what its messages may say is the :class:`~tendon_robot_sim.view.
guard.Guard`'s; an exception a page's message still raises in a callback becomes a throttled
warning, never a traceback. What the page shows of the stack's ``/diagnostics`` and warnings
is bounded (:class:`StatusBoard`, :data:`STATUSES_SHOWN`, :data:`TEXT_SHOWN`) and shown as
written (:func:`literal`): the graph's texts never become the page's HTML or links.
"""

from __future__ import annotations

from collections import deque, OrderedDict
import concurrent.futures
from dataclasses import dataclass
import math
import re
import socket
import threading
import time
from typing import Callable, Sequence

import numpy as np
from tendon_robot_sim.models.registry import InputLimits
from tendon_robot_sim.view.camera import FIELD_OF_VIEW, Framing, UP
from tendon_robot_sim.view.guard import Guard, start_server, Warn
from tendon_robot_sim.view.inputs import Command, nice_step, shown
from tendon_robot_sim.view.markers import MarkerScene
from tendon_robot_sim.view.panels import CommandPanel, HardwarePanel, PlaybackPanel, TargetPanel
from tendon_robot_sim.view.plots import History, value_range
from tendon_robot_sim.view.scene import SceneRenderer
from tendon_robot_sim.view.silence import Silences
import viser
import viser.uplot

# The marker topics a page draws besides the robot's (backbone/markers), each in a scene of
# its own as RViz keeps a display per topic: the obstacles (world/markers) and the contact
# forces (contact/markers).
LAYERS = ('world', 'contact')

DEFAULT_SIZE = 0.25   # m: the scale of frames before a marker tells the robot's size
LOOP_TIMEOUT = 10.0   # s
# s the view waits for viser's server to wind down: viser joins its loop thread for up to
# 6 s, longer than a launcher gives a node after SIGTERM (a refused or half-open connection
# keeps the loop busy under load); the rest ends with the process.
STOP_WAIT = 2.0
LEVELS = {0: 'OK', 1: 'WARN', 2: 'ERROR', 3: 'STALE'}
WARNINGS_SHOWN = 3    # the stack's latest warnings the page shows
STATUSES_KEPT = 100   # the statuses the view keeps: a flood of new names drops the oldest
STATUSES_SHOWN = 8    # the statuses a page shows (worst first): with the warnings, a screenful
TEXT_SHOWN = 160      # characters of a status's name or message, or of a warning, kept and shown
# px around a plot (top, right, bottom, left): room above for the top tick's label, which
# viser's default (0 on top) cut in half (the "100" of the axis read as clipped)
PLOT_PADDING = (12, 24, 0, 0)
GRID_CELL, GRID_SECTION = (215, 215, 215), (160, 160, 160)    # RGB of the ground grid's lines
SECTION_CELLS = 5     # a darker line every this many cells of the ground grid
SERIES_COLORS = ('#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b',
                 '#e377c2', '#7f7f7f', '#bcbd22')


@dataclass(frozen=True)
class Plotted:
    """
    What the plot shows of ``tendon/state``: the JointState ``field`` and its label.

    ``scale``: shown value per SI value (angles in degrees, as the sliders show them).
    """

    field: str = 'effort'
    label: str = 'tension [N]'
    scale: float = 1.0


def plotted_of(limits: InputLimits) -> Plotted:
    """Return what the plot and the live values show of a robot's inputs, in the sliders' unit."""
    unit, scale = shown(limits.unit)
    return Plotted(limits.field, f'{limits.quantity} [{unit}]', scale)


@dataclass(frozen=True)
class Expected:
    """
    The inputs of the page's robot description, which ``tendon/state`` must name.

    ``robot``: the description's file name (as ``--robot`` takes it); ``advice``: what to do
    when the state names another robot's inputs (the page was started with another
    description than the stack's).
    """

    names: tuple[str, ...]
    robot: str
    advice: str

    def mismatch(self, names: Sequence[str]) -> str | None:
        """Say why ``names`` (of a ``tendon/state``) are not the robot's inputs; None: they are."""
        if not names or set(names) == set(self.names):
            return None
        return (f'tendon/state names {cut(", ".join(names))}, not the inputs of robot '
                f'{self.robot} ({", ".join(self.names)}): {self.advice}')


def length_text(metres: float) -> str:
    """Return a length as people write it: 5 mm, 2 cm, 1 m."""
    for unit, size in (('m', 1.0), ('cm', 0.01)):
        if metres >= size * (1.0 - 1e-9):
            return f'{metres / size:.3g} {unit}'
    return f'{metres * 1e3:.3g} mm'


def cut(text: str, limit: int = TEXT_SHOWN) -> str:
    """Return ``text`` cut to ``limit`` characters (an ellipsis says it was longer)."""
    return text if len(text) <= limit else text[:limit - 1] + '\u2026'


def literal(text: str) -> str:
    """
    Return ``text`` as Markdown that shows it as written, on one line: a code span.

    viser renders a Markdown's raw HTML as it is, and GFM makes links of bare addresses
    (``http://``, ``www.``, e-mail) whatever is escaped; inside a code span neither happens.
    The fence is longer than any run of backticks in the text.
    """
    text = ' '.join(text.split())
    if not text:
        return ''
    fence = '`' * (max(map(len, re.findall('`+', text)), default=0) + 1)
    pad = ' ' if text[0] == '`' or text[-1] == '`' else ''
    return f'{fence}{pad}{text}{pad}{fence}'


class StatusBoard:
    """
    The stack's ``/diagnostics`` statuses, by name, each until not renewed for ``timeout`` s.

    At most ``kept`` (a flood of new names drops the least recently renewed); names and
    messages cut to :data:`TEXT_SHOWN` characters, so what is kept is bounded too.
    """

    def __init__(self, timeout: float, kept: int = STATUSES_KEPT):
        self.timeout, self.kept = timeout, kept
        # name -> (time taken [s], level, message), least recently renewed first
        self._statuses: OrderedDict[str, tuple[float, int, str]] = OrderedDict()

    def take(self, now: float, level: int, name: str, message: str) -> None:
        """Take one status at time ``now`` [s]."""
        name = cut(name)
        self._statuses.pop(name, None)
        self._statuses[name] = (now, level, cut(message))
        while len(self._statuses) > self.kept:
            self._statuses.popitem(last=False)

    def shown(self, now: float, count: int = STATUSES_SHOWN) -> tuple[list, int]:
        """Return the ``count`` worst (level, name, message) at ``now``, then how many more."""
        while self._statuses and next(iter(self._statuses.values()))[0] < now - self.timeout:
            self._statuses.popitem(last=False)
        ordered = sorted(((level, name, message) for name, (_, level, message)
                          in self._statuses.items()), key=lambda s: (-s[0], s[1]))
        return ordered[:count], max(len(ordered) - count, 0)

    def __len__(self) -> int:
        return len(self._statuses)

    def __contains__(self, name: str) -> bool:
        return name in self._statuses


def check_host(host: str) -> None:
    """
    Raise ValueError unless a web page can be served on the address ``host``.

    viser tries port after port on an address it cannot bind and never starts: the address
    is tried here first, on a free port.
    """
    try:
        family = socket.getaddrinfo(host, None)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except (OSError, UnicodeError) as error:
        raise ValueError(f'host: cannot serve on {host!r} ({error.strerror or error})') \
            from None


def in_namespace(name: str, hardware_id: str, namespace: str) -> bool:
    """
    Tell whether a ``/diagnostics`` status comes from a node of ``namespace``.

    A status is named ``<node>: <what>`` with the node's namespace
    (``/left_arm/hardware_bridge: safety``), or names the node in ``hardware_id`` (another
    package's node); the node's namespace must be ``namespace`` exactly.
    """
    node = name.partition(': ')[0]
    if not node.startswith('/'):
        node = hardware_id
    if not node.startswith('/'):
        return False
    return node.rpartition('/')[0] == namespace.rstrip('/')


def node_of_logger(logger: str, namespace: str) -> str | None:
    """
    Return the node that logged as ``logger`` if it is a node of ``namespace``, else None.

    rcl names a node's logger after its namespace and name with dots (``/left_arm``'s
    ``simulator`` logs as ``left_arm.simulator``; at the root, ``simulator``).
    """
    prefix = namespace.strip('/').replace('/', '.')
    if prefix:
        if not logger.startswith(prefix + '.'):
            return None
        logger = logger[len(prefix) + 1:]
    return logger if logger and '.' not in logger else None


class ViewPage:
    """
    The page on ``http://host:port``; ``heading`` (Markdown) says what it shows or drives.

    ``command`` (None: no sliders) and ``send_command(name, value)``; ``send_target(point)``
    with ``check_target(point)`` (None: no tip target); ``plotted`` says which state field
    the plot shows; ``expected``: the inputs ``tendon/state`` must name: while it names
    others, the page says so and sends nothing. ``heeded``: the topics a live stack publishes
    steadily (:meth:`heard`): the page says when one is silent, as what it shows of them is
    old, or no node publishes it (:mod:`~tendon_robot_sim.view.silence`). ``port`` 0 takes a
    free port (:attr:`port` tells which). ``warn(kind, text)`` says, throttled per kind,
    what the page refused; ``hardware`` and ``remote_control`` are the
    :class:`~tendon_robot_sim.view.guard.Guard`'s.
    """

    def __init__(self, heading: str, *, warn: Warn, host: str = '127.0.0.1',
                 port: int = 8080, command: Command | None = None,
                 send_command: Callable[[str, float], None] | None = None,
                 send_target: Callable[[np.ndarray], None] | None = None,
                 check_target: Callable[[np.ndarray], str | None] | None = None,
                 plotted: Plotted = Plotted(), plot_window: float = 10.0,
                 title: str = 'tendon_robot_sim', hardware: bool = False,
                 remote_control: bool = False, expected: Expected | None = None,
                 heeded: Sequence[str] = ()):
        self.lock = threading.RLock()
        check_host(host)
        self.guard = Guard(host, warn, hardware=hardware, remote_control=remote_control)
        self.server = start_server(self.guard, host, port, title)
        self.port = self.server.get_port()
        # viser took the next free port: said by the caller (the node's log, the command's line)
        self.port_taken = (f'port {port} is taken: serving on {self.port}'
                           if port and self.port != port else None)
        self._loop = self.server.get_event_loop()
        self._loop.call_soon_threadsafe(self._loop.set_exception_handler, self._failed)
        self._loop_thread = None      # viser's event-loop thread, once known
        self.markers = MarkerScene()
        self._pending: list[Sequence] = []   # marker arrays received since the last render
        # the other topics' scenes (LAYERS; a DELETEALL of one clears only its own) and what
        # each received since the last render; the camera frames the robot's alone
        self.layers = {layer: MarkerScene() for layer in LAYERS}
        self._layer_pending: dict[str, list[Sequence]] = {layer: [] for layer in LAYERS}
        self.plotted = plotted
        self._dirty = False
        self._sized = False     # the frames are scaled to the robot
        self.frames_drawn = 0
        self.tip_position = self.measured_position = self.target_position = None
        self._tip_wxyz = np.array([1.0, 0.0, 0.0, 0.0])
        self._commands_shown = False   # the sliders start at the first state's values
        self._mirrored: dict[str, float] = {}   # commands seen on the graph, to show
        self._statuses: Sequence[tuple[int, str, str]] = ()
        self._more_statuses = 0
        self._warnings: deque[str] = deque(maxlen=WARNINGS_SHOWN)
        self._answer: tuple[str, str] | None = None
        self._playback_shown: tuple[float, bool, str] | None = None
        self.framing = Framing()   # where each page's camera looks
        self.state_history = History(plot_window)
        self.error_history = History(plot_window)
        self._state_time: float | None = None   # of the newest state: the plot's right edge
        self._state_names: tuple[str, ...] = ()
        self.expected = expected
        self.silences = Silences(heeded, time.monotonic())
        self._names_seen: Sequence[str] = ()   # of the latest tendon/state, whatever its values
        self._state_values = np.zeros(0)
        self.commands: CommandPanel | None = None
        self.targets: TargetPanel | None = None
        self.hardware: HardwarePanel | None = None
        self.playback: PlaybackPanel | None = None
        self.in_loop(self._build, heading, command, send_command, send_target, check_target,
                     plot_window)
        self.server.on_client_connect(self._on_connect)
        self.server.on_client_disconnect(self._on_disconnect)

    def _build(self, heading, command, send_command, send_target, check_target,
               plot_window) -> None:
        server = self.server
        server.gui.configure_theme(control_width='large', show_share_button=False)
        server.scene.set_up_direction('+z')
        # only the field of view: an initial pose would make each new page reset its camera
        # to it when it gets round to it, possibly after the view framed it (viser 1.1's
        # InitialCameraSetter), which would read as a user's move
        server.initial_camera.fov = float(FIELD_OF_VIEW)
        self.renderer = SceneRenderer(server.scene)
        self.layer_renderers = {layer: SceneRenderer(server.scene, f'/{layer}')
                                for layer in LAYERS}
        self.heading = server.gui.add_markdown(heading, order=0.0)
        self.diagnostics = server.gui.add_markdown('', order=0.1)
        # the ground grid, laid under the robot once its size is known (_ground); its scale
        self.grid = None
        self.grid_scale = server.gui.add_markdown('', order=0.15)
        self.base = server.scene.add_frame('/base', axes_length=0.1, axes_radius=0.002)
        self.tip = server.scene.add_frame('/tip', axes_length=0.04, axes_radius=0.0015,
                                          visible=False)
        self.measured = server.scene.add_icosphere('/tip_measured', radius=0.004,
                                                   color=(20, 160, 60), visible=False)
        self.target = server.scene.add_icosphere('/tip_target', radius=0.005,
                                                 color=(220, 30, 30), visible=False)
        self.reset_view = server.gui.add_button('Frame the robot', order=0.2)

        async def frame(event) -> None:
            self.frame_camera(event.client)
        self.reset_view.on_click(frame)
        if command is not None and send_command is not None:
            self.commands = CommandPanel(server.gui, command, send_command, self.mismatch)
        if send_target is not None:
            check = check_target or (lambda point: None)
            self.targets = TargetPanel(server.gui, server.scene, 0.3 * DEFAULT_SIZE,
                                       send_target, lambda point: self.mismatch() or check(point))

            async def at_tip(event) -> None:
                self._target_at_tip()
            self.targets.at_tip.on_click(at_tip)
        self._plot_folder = server.gui.add_folder(f'Last {plot_window:g} s', order=10.0)
        self.state_plot = self.error_plot = None

    def in_loop(self, function: Callable, *args):
        """
        Run ``function(*args)`` in viser's event-loop thread, wait, and return its result.

        None when the server has stopped (its loop closed, or gone for ``LOOP_TIMEOUT``).
        """
        if threading.current_thread() is self._loop_thread:
            return function(*args)
        done = concurrent.futures.Future()

        def run() -> None:
            self._loop_thread = threading.current_thread()
            try:
                done.set_result(function(*args))
            except BaseException as error:   # noqa: B902 (handed to the waiting thread)
                done.set_exception(error)
        try:
            self._loop.call_soon_threadsafe(run)
            return done.result(timeout=LOOP_TIMEOUT)
        except (RuntimeError, concurrent.futures.TimeoutError):   # the page has stopped
            return None

    # ------------------------------------------------------------------ inputs

    def show_markers(self, markers: Sequence, snapshot: bool = False,
                     new_robot: bool = False) -> None:
        """
        Take one ``MarkerArray``'s markers; ``snapshot``: they replace all before.

        ``new_robot``: the first of a stack that (re)started, perhaps with another robot of
        another size (the parallel robot after a small rod): they replace all before, and
        the next render scales the frames, the gizmo and the ground grid to them afresh and
        frames them in the pages whose camera the view holds.
        """
        with self.lock:
            if new_robot:
                self._sized = False
            if snapshot or new_robot:
                self._pending.clear()
                self.markers.items.clear()
            self._pending.append(markers)   # converted when drawn: skipped ones cost nothing
            self._dirty = True

    def show_layer(self, layer: str, markers: Sequence) -> None:
        """Take one ``MarkerArray``'s markers of another topic (a :data:`LAYERS` name)."""
        with self.lock:
            self._layer_pending[layer].append(markers)
            self._dirty = True

    def show_tip(self, position, orientation_wxyz) -> None:
        """Take the model's tip pose (``tip/pose``), base frame; the next render draws it."""
        with self.lock:
            self.tip_position = np.asarray(position, dtype=float)
            self._tip_wxyz = np.asarray(orientation_wxyz, dtype=float)
            self._dirty = True

    def show_measured(self, position) -> None:
        """Take the measured tip (``tip/measured``), base frame; None: none (yet)."""
        with self.lock:
            self.measured_position = _point(position)
            self._dirty = True

    def show_target(self, position) -> None:
        """Take a tip target seen on ``tip/target`` (from this page or anybody); None: none."""
        with self.lock:
            self.target_position = _point(position)
            self._dirty = True

    def rewind(self) -> None:
        """Forget the plotted samples: a bag seeked back refills its window from there."""
        with self.lock:
            self.state_history.samples.clear()
            self.error_history.samples.clear()
            self._state_time = None

    def show_state(self, t: float, names: Sequence[str], position: Sequence[float],
                   effort: Sequence[float], new_stack: bool = False) -> None:
        """
        Take one ``tendon/state`` at time ``t`` [s]; the plot shows the ``plotted`` field.

        ``t`` is the state's own time (its stamp, a bag's time): the plot's axis, which ends
        at the newest state's. A time before the newest (a restarted simulation's stamps,
        a bag seeked back) starts the plot over, the tip error's too. The sliders start at
        the first state's values; ``new_stack``: the first of a stack that (re)started,
        whose robot is not where the one before was commanded to: again.
        """
        values = self.plotted.scale * np.asarray(
            effort if self.plotted.field == 'effort' else position, dtype=float)
        with self.lock:
            if self._state_time is not None and t < self._state_time:
                self.rewind()
            self._state_time = t
            self._names_seen = names
            if new_stack:
                self._commands_shown = False
            if self.commands is not None and not self._commands_shown:
                shown = effort if self.commands.command.field == 'effort' else position
                if len(shown) == len(names):
                    self._commands_shown = True
                    self._mirrored.update(zip(names, map(float, shown)))
            if len(values) == len(names):
                self._state_names = tuple(names)
                self._state_values = values
                self.state_history.add(t, values)
            tip = self.measured_position if self.measured_position is not None \
                else self.tip_position
            if tip is not None and self.target_position is not None:
                self.error_history.add(t, [1e3 * np.linalg.norm(tip - self.target_position)])

    def show_diagnostics(self, statuses: Sequence[tuple[int, str, str]], more: int = 0) -> None:
        """Take (level, name, message) of the statuses to show, and how many more there are."""
        with self.lock:
            self._statuses = tuple(statuses[:STATUSES_SHOWN])
            self._more_statuses = more + max(len(statuses) - STATUSES_SHOWN, 0)

    def show_warning(self, node: str, level: str, text: str) -> None:
        """Take a warning the stack's ``node`` logged (a rejected setpoint: nothing moved)."""
        with self.lock:
            self._warnings.append(f'- **{level}** {literal(cut(node))} '
                                  f'{time.strftime("%H:%M:%S")}: {literal(cut(text))}')

    def show_command(self, values: dict[str, float]) -> None:
        """Take a command seen on the graph: the sliders show it (nothing is sent)."""
        with self.lock:
            self._mirrored.update(values)

    def show_answer(self, service: str, text: str) -> None:
        """Take the answer of the hardware bridge's ``service``."""
        with self.lock:
            self._answer = (service, text)

    def show_playback(self, t: float, playing: bool, status: str) -> None:
        """Take the playback's time [s], whether it plays, and a line about it."""
        with self.lock:
            self._playback_shown = (t, playing, status)

    # ------------------------------------------------------------------ panels

    def heard(self, topic: str, now: float) -> bool:
        """Take a message of ``topic`` at steady time ``now``; :meth:`Silences.heard`."""
        with self.lock:
            return self.silences.heard(topic, now)

    def unpublished(self, why: dict[str, str]) -> None:
        """Take the heeded topics no node publishes, each with a line saying what is missing."""
        with self.lock:
            self.silences.why = dict(why)

    def mismatch(self) -> str | None:
        """Say why the latest ``tendon/state`` is another robot's than the page's; None: not."""
        with self.lock:
            return self.expected.mismatch(self._names_seen) if self.expected else None

    def set_command(self, command: Command, send: Callable[[str, float], None]) -> None:
        """Add the sliders of ``command`` (once its bounds are known)."""
        def add() -> None:
            with self.lock:
                if self.commands is None:
                    self.commands = CommandPanel(self.server.gui, command, send, self.mismatch)
        self.in_loop(add)

    def add_hardware(self, bridge: str, call: Callable[[str], None]) -> None:
        """Add the Stop and Resume buttons of the hardware bridge ``bridge``."""
        def add() -> None:
            with self.lock:
                if self.hardware is None:
                    self.hardware = HardwarePanel(self.server.gui, bridge, call)
        self.in_loop(add)

    def add_playback(self, duration: float, seek, play, speed) -> None:
        def add() -> None:
            with self.lock:
                self.playback = PlaybackPanel(self.server.gui, duration, seek, play, speed)
        self.in_loop(add)

    # ------------------------------------------------------------------ output

    def render(self) -> bool:
        """Send the scene if something changed since the last call; True if it did."""
        return bool(self.in_loop(self._render))

    def _render(self) -> bool:
        with self.lock:
            if not self._dirty:
                return False
            self._dirty = False
            self.markers.apply_all(self._pending)
            self._pending = []
            for layer, pending in self._layer_pending.items():
                self.layers[layer].apply_all(pending)
                self._layer_pending[layer] = []
            with self.server.atomic():
                self.renderer.draw(self.markers)
                for layer, scene in self.layers.items():
                    self.layer_renderers[layer].draw(scene)
                self._draw_frames()
            self.frames_drawn += 1
            if not self._sized and len(self.markers.items):
                self._sized = True
                self._resize()
                self.framing.anew()   # a new robot: the pages that follow frame it alone
            for client in self.server.get_clients().values():
                if client.client_id not in self.framing.aims:
                    self._follow(client, reported=False)   # waiting for the robot's outline
            return True

    def _draw_frames(self) -> None:
        for handle, position in ((self.tip, self.tip_position),
                                 (self.measured, self.measured_position),
                                 (self.target, self.target_position)):
            if position is None:
                if handle.visible:    # a bag seeked back to before its first one
                    handle.visible = False
            elif not np.array_equal(handle.position, position):
                handle.position = position
                if not handle.visible:
                    handle.visible = True
        if not np.array_equal(self.tip.wxyz, self._tip_wxyz):
            self.tip.wxyz = self._tip_wxyz
        if self.targets is not None and not self.targets.touched:
            # until a user takes it or types a target, the gizmo and the field sit on the
            # target, else follow the tip (the field once kept the straight rod's first tip)
            start = next((p for p in (self.target_position, self.measured_position,
                                      self.tip_position) if p is not None), None)
            if start is not None:
                self.targets.place(start)

    def refresh(self, now: float, plot_now: float | None = None) -> None:
        """
        Update the plot, the live values and the texts to time ``now`` [s].

        ``now`` is the steady clock's of :meth:`heard` (the silences); the plot ends at
        ``plot_now``, in the states' time (:meth:`show_state`), None: at the newest state.
        """
        self.in_loop(self._refresh, now, plot_now)

    def _refresh(self, now: float, plot_now: float | None) -> None:
        with self.lock:
            if plot_now is None:
                plot_now = self._state_time if self._state_time is not None else 0.0
            mismatch = self.mismatch()
            first = [f'- **ERROR** {literal(mismatch)}'] if mismatch else []
            first += self.silences.lines(now)
            more = [f'- ... and {self._more_statuses} more statuses'] \
                if self._more_statuses else []
            self.diagnostics.content = '\n'.join(first + [
                f'- **{LEVELS.get(level, level)}** {literal(cut(name))}: {literal(cut(message))}'
                for level, name, message in self._statuses] + more + list(self._warnings))
            if self.commands is not None:
                self.commands.show(self._mirrored)
                self._mirrored = {}
                if self._state_names:
                    self.commands.show_live(self._state_names, self._state_values,
                                            self.plotted.label)
            if self.hardware is not None and self._answer is not None:
                self.hardware.show_answer(*self._answer)
            if self.playback is not None and self._playback_shown is not None:
                self.playback.show(*self._playback_shown)
            if self._state_names:
                self._plot_state(plot_now, self._state_names)
            if self.error_history.samples or self.error_plot is not None:
                self._plot_error(plot_now)    # emptied too: no target (yet) is no tip error
            self._follow_all()

    def _plot_state(self, now: float, names: Sequence[str]) -> None:
        data = self.state_history.arrays(now, len(names))
        if self.state_plot is None or len(self.state_plot.data) != len(data):
            if self.state_plot is not None:
                self.state_plot.remove()
            series = (viser.uplot.Series(label='s'),) + tuple(
                viser.uplot.Series(label=name, stroke=SERIES_COLORS[i % len(SERIES_COLORS)],
                                   width=2)
                for i, name in enumerate(names))
            with self._plot_folder:
                self.state_plot = self.server.gui.add_uplot(
                    data, series, title=self.plotted.label, aspect=2.0,
                    scales=self._scales(data), padding=PLOT_PADDING)
            return
        self.state_plot.data = data
        self._rescale(self.state_plot, data)

    def _plot_error(self, now: float) -> None:
        data = self.error_history.arrays(now, 1)
        if self.error_plot is None:
            series = (viser.uplot.Series(label='s'),
                      viser.uplot.Series(label='tip error', stroke='#d62728', width=2))
            with self._plot_folder:
                self.error_plot = self.server.gui.add_uplot(
                    data, series, title='tip error [mm]', aspect=2.0, scales=self._scales(data),
                    padding=PLOT_PADDING)
            return
        self.error_plot.data = data
        self._rescale(self.error_plot, data)

    def _scales(self, data, y: tuple[float, float] | None = None) -> dict:
        """x: seconds before the plot's end, the whole window; y: :func:`value_range`."""
        window = self.state_history.window
        scales = {'x': viser.uplot.Scale(time=False, auto=False, range=(-window, 0.0))}
        y = y or value_range(data[1:])
        if y is not None:
            scales['y'] = viser.uplot.Scale(auto=False, range=y)
        return scales

    def _rescale(self, plot, data) -> None:
        """Give ``plot`` the y range of its data when the one it has no longer fits."""
        current = plot.scales.get('y', {}).get('range') if plot.scales else None
        wanted = value_range(data[1:], tuple(current) if current else None)
        if wanted is not None and wanted != (tuple(current) if current else None):
            plot.scales = self._scales(data, wanted)

    def frame_camera(self, client) -> None:
        """Frame the robot afresh in ``client``'s page: its camera follows the robot again."""
        with self.lock:
            self.framing.reset(client.client_id)
            self._follow(client, reported=False)

    def _follow(self, client, reported: bool) -> None:
        """
        Move ``client``'s camera where :class:`~tendon_robot_sim.view.camera.Framing` says.

        ``reported``: called because the page reported its camera.
        """
        with self.lock:
            if not self.framing.follows(client.client_id):
                return
            move = self.framing.decide(client.client_id, client.camera, self.markers.points(),
                                       reported)
        if move is None:
            return
        camera = client.camera
        # position first: viser moves look_at along with a new position
        camera.up_direction = UP
        camera.position, camera.look_at = move

    def _follow_all(self) -> None:
        for client in self.server.get_clients().values():
            self._follow(client, reported=False)

    def _resize(self) -> None:
        """Scale the frames and the gizmo to the robot, once its size is known."""
        lo, hi = self.markers.bounds()
        self._size = max(float(np.linalg.norm(hi - lo)), 0.02)
        self.base.axes_length = 0.25 * self._size
        self.base.axes_radius = 0.006 * self._size
        self.tip.axes_length = 0.12 * self._size
        self.tip.axes_radius = 0.004 * self._size
        for sphere in (self.measured, self.target):
            sphere.radius = 0.015 * self._size
        if self.targets is not None:
            self.targets.gizmo.scale = 0.3 * self._size
        self._ground(lo, hi)

    def _ground(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """
        Lay a grid under the robot (base frame, z up) between ``lo`` and ``hi``; say its scale.

        Cells of a round size near a tenth of the robot, a darker line every
        :data:`SECTION_CELLS`; the grid spans twice the robot's extent around it, its lines
        on round coordinates, a little below the robot's lowest point (at the z = 0 plane the
        horizontal rod would lie in it).
        """
        cell = nice_step(self._size / 10.0)
        section = SECTION_CELLS * cell
        centre = 0.5 * (lo + hi)
        half = math.ceil(max(hi[0] - lo[0], hi[1] - lo[1], self._size) / section) * section
        position = (float(round(centre[0] / section) * section),
                    float(round(centre[1] / section) * section),
                    float(lo[2] - 0.05 * self._size))
        self.grid = self.server.scene.add_grid(
            '/ground', width=2.0 * half, height=2.0 * half, plane='xy', cell_size=cell,
            section_size=section, cell_color=GRID_CELL, section_color=GRID_SECTION,
            shadow_opacity=0.0, position=position)
        self.grid_scale.content = (f'Ground grid: {length_text(cell)} cells, darker lines '
                                   f'every {length_text(section)}')

    def _target_at_tip(self) -> None:
        with self.lock:
            tip = self.measured_position if self.measured_position is not None \
                else self.tip_position
            if tip is not None and self.targets is not None:
                self.targets.place(tip)

    async def _on_connect(self, client) -> None:
        """
        Follow ``client``'s reports of its camera; the first one frames the robot.

        No move here: viser 1.1 runs the connect callbacks, then the camera's, for the page's
        first report; a move made here is held by viser's camera at once, so the camera
        callback read that held move as the page's report of it (got there), and the page's
        next report, from before it applied the move, as a user's move: the view let the
        camera go without anybody touching it (the snake cut off, the live tests unframed).
        """
        async def moved(camera) -> None:
            self._follow(client, reported=True)   # the page moved (or resized) its camera
        client.camera.on_update(moved)

    async def _on_disconnect(self, client) -> None:
        with self.lock:
            self.framing.forget(client.client_id)

    def _failed(self, loop, context: dict) -> None:
        """Say an exception of viser's event loop (a page's message) as a throttled warning."""
        error = context.get('exception')
        self.guard.warn('view: page message failed', "a page's message failed: " + (
            f'{type(error).__name__}: {error}' if error is not None else context['message']))

    @property
    def address(self) -> str:
        """Return the page's address with its token, to print (never to log: /rosout is kept)."""
        host = self.guard.host
        if host in ('0.0.0.0', '::'):
            host = socket.gethostname()   # served on every interface: the name others use
        host = f'[{host}]' if ':' in host else host
        return f'http://{host}:{self.port}/?token={self.guard.token}'

    def clients(self) -> int:
        """Return how many pages are open."""
        return len(self.server.get_clients())

    def close(self) -> None:
        """Stop serving: pages lose the connection; returns within :data:`STOP_WAIT`."""
        stopping = threading.Thread(target=self.server.stop, name='view stop', daemon=True)
        stopping.start()
        stopping.join(STOP_WAIT)


def _point(position) -> np.ndarray | None:
    return None if position is None else np.asarray(position, dtype=float)
