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
A recorded bag in the view page: its timeline, a playback clock and the loop that shows it.

``tendon-robot-sim view --bag BAG`` shows what a stack recorded (``record``, the demo,
``ros2 bag record``) without a running stack and without ROS: the markers, tip frames,
states and targets at the time of a slider, played forward at a chosen speed to the end.
Nothing is published: recorded commands cannot reach a robot from here. The bag's stored
messages are kept as bytes and deserialized (``rosbags``) when shown; each
``backbone/markers`` message is taken as the whole scene at its time, as the simulator
publishes it, so a seek shows the scene at once.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
import math
from pathlib import Path
import threading
import time

from rosbags.typesys import get_typestore
from tendon_robot_sim.experiment.bag import (bag_topics, BagError, check_messages,
                                             DEFAULT_STORE, read_raw)
from tendon_robot_sim.view.page import ViewPage
from tqdm import tqdm

# The relative topics the page shows (under the bag's namespace).
SHOWN = ('backbone/markers', 'tip/pose', 'tip/measured', 'tip/target', 'tendon/state')
END_TOLERANCE = 1e-9   # s


@dataclass(frozen=True)
class Stored:
    """One stored message: time since the bag's first message [s], type, CDR bytes."""

    t: float
    msgtype: str
    data: bytes


class Timeline:
    """
    The shown topics of a bag, per relative topic name in time order.

    ``namespace`` picks the stack when the bag holds several (its topics
    ``/<namespace>/backbone/markers`` ...); '' the topics at the root.

    Raises
    ------
    BagError
        The bag cannot be read, or holds none of the topics the page shows or no message
        of them.

    """

    def __init__(self, path: str | Path, namespace: str = '', progress: bool = True):
        self.path = Path(path)
        prefix = '/' + '/'.join(p for p in namespace.strip('/').split('/') if p)
        prefix = prefix.rstrip('/') + '/'
        recorded = bag_topics(self.path)
        self.topics = {prefix + name: name for name in SHOWN if prefix + name in recorded}
        if not self.topics:
            raise BagError(f'{self.path}: none of {", ".join(prefix + n for n in SHOWN)} in '
                           f'the bag; it holds {", ".join(sorted(recorded)) or "nothing"}'
                           + ('' if namespace else ' (--namespace picks a stack)'))
        self.messages: dict[str, list[Stored]] = {name: [] for name in self.topics.values()}
        start = None
        for message in tqdm(read_raw(self.path, self.topics), desc=f'reading {self.path.name}',
                            unit=' messages', disable=not progress, leave=False):
            start = message.stamp_ns if start is None else start
            self.messages[self.topics[message.topic]].append(
                Stored((message.stamp_ns - start) * 1e-9, message.msgtype, message.data))
        check_messages(self.path, {topic: len(self.messages[name])
                                   for topic, name in self.topics.items()}, 'play')
        self.duration = max((m[-1].t for m in self.messages.values() if m), default=0.0)
        self._times = {name: [m.t for m in stored] for name, stored in self.messages.items()}
        self._typestore = get_typestore(DEFAULT_STORE)

    def index(self, name: str, t: float) -> int:
        """Return how many messages of ``name`` are due at time ``t`` [s]."""
        return bisect_right(self._times[name], t + END_TOLERANCE)

    def latest(self, name: str, t: float, or_first: bool = False):
        """
        Return the newest message of ``name`` at or before ``t`` [s], deserialized, or None.

        ``or_first``: before the first message of ``name``, that first one (the robot as the
        bag first shows it: the scene was empty until Play when the markers came after the
        bag's first message).
        """
        if name not in self.messages or not self.messages[name]:
            return None
        i = self.index(name, t)
        return self.message(name, i - 1) if i else (self.message(name, 0) if or_first else None)

    def message(self, name: str, i: int):
        stored = self.messages[name][i]
        try:
            return self._typestore.deserialize_cdr(stored.data, stored.msgtype)
        except Exception as error:   # rosbags raises many kinds on bad bytes
            raise BagError(f'{self.path}: message {i} of {name} at {stored.t:.3f} s does not '
                           f'deserialize as {stored.msgtype} ({error})') from None


class PlaybackClock:
    """Bag time [s] from the wall clock: play, pause, speed, seek; stops at the end."""

    def __init__(self, duration: float):
        self.duration = duration
        self.speed = 1.0
        self.playing = False
        self._t = 0.0          # bag time at the wall instant _since
        self._since = 0.0

    def time(self, now: float) -> float:
        """Return the bag time at wall time ``now`` [s]; reaching the end pauses there."""
        if not self.playing:
            return self._t
        t = self._t + (now - self._since) * self.speed
        if t >= self.duration:
            self.playing, self._t = False, self.duration
            return self.duration
        return t

    def play(self, now: float) -> None:
        if self.at_end(now):
            self._t = 0.0   # play again from the start
        self._t, self._since, self.playing = self.time(now), now, True

    def pause(self, now: float) -> None:
        self._t, self.playing = self.time(now), False

    def seek(self, t: float, now: float) -> None:
        """Go to bag time ``t`` [s], within the bag; ValueError for a time that is not one."""
        if not math.isfinite(t):
            raise ValueError(f'time: {t} s is not a time of the bag')
        self._t, self._since = min(max(float(t), 0.0), self.duration), now

    def set_speed(self, speed: float, now: float) -> None:
        """Play at ``speed`` times real time; ValueError unless a positive number."""
        if not (math.isfinite(speed) and speed > 0.0):
            raise ValueError(f'speed: {speed} is not a positive number')
        self._t, self._since, self.speed = self.time(now), now, float(speed)

    def at_end(self, now: float) -> bool:
        return self.time(now) >= self.duration - END_TOLERANCE


class BagPlayback:
    """
    Shows ``timeline`` in ``page`` at ``rate`` frames per second, in a thread of its own.

    The page's playback panel moves the clock; :meth:`stop` ends the thread.
    """

    def __init__(self, page: ViewPage, timeline: Timeline, rate: float = 50.0,
                 refresh_rate: float = 5.0):
        self.page, self.timeline = page, timeline
        self.clock = PlaybackClock(timeline.duration)
        self.period, self.refresh_period = 1.0 / rate, 1.0 / refresh_rate
        self.lock = threading.Lock()
        self.shown_t = None      # bag time shown last
        self._fed = {}           # name -> messages fed to the page's history
        page.add_playback(timeline.duration, self._seek, self._play, self._speed)
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _seek(self, t: float) -> None:
        with self.lock:
            self.clock.seek(t, time.monotonic())

    def _play(self, play: bool) -> None:
        with self.lock:
            (self.clock.play if play else self.clock.pause)(time.monotonic())

    def _speed(self, speed: float) -> None:
        with self.lock:
            self.clock.set_speed(speed, time.monotonic())

    def _run(self) -> None:
        last_refresh = 0.0
        while not self._stop.wait(self.period):
            now = time.monotonic()
            with self.lock:
                t, playing = self.clock.time(now), self.clock.playing
            if t != self.shown_t:
                self.show(t)
            if now - last_refresh >= self.refresh_period:
                last_refresh = now
                self.page.show_playback(t, playing, self._status(t, playing))
                self.page.refresh(t)

    def _status(self, t: float, playing: bool) -> str:
        if playing:
            return f'playing at {self.clock.speed:g} x: {t:.2f} of {self.timeline.duration:.2f} s'
        if t >= self.timeline.duration - END_TOLERANCE:
            return f'at the end: {self.timeline.duration:.2f} s'
        return f'paused at {t:.2f} of {self.timeline.duration:.2f} s'

    def show(self, t: float) -> None:
        """Show the bag at time ``t`` [s]: scene, tip frames and the plot's history."""
        timeline, page = self.timeline, self.page
        # the robot (its markers and tip) as the bag first shows it until its first message,
        # measurements and targets only from when they came
        markers = timeline.latest('backbone/markers', t, or_first=True)
        if markers is not None:
            page.show_markers(markers.markers, snapshot=True)
        for name, show in (('tip/pose', lambda m: page.show_tip(
                               _xyz(m.pose.position), _wxyz(m.pose.orientation))),
                           ('tip/measured', lambda m: page.show_measured(_xyz(m.point))),
                           ('tip/target', lambda m: page.show_target(_xyz(m.point)))):
            message = timeline.latest(name, t, or_first=name == 'tip/pose')
            if message is not None:
                show(message)
        self._feed_states(t)
        page.render()
        self.shown_t = t

    def _feed_states(self, t: float) -> None:
        """Give the plot the states of (t - window, t], only those not given before."""
        name = 'tendon/state'
        if name not in self.timeline.messages:
            return
        window = self.page.state_history.window
        first = self.timeline.index(name, t - window)
        if self.shown_t is None or t < self.shown_t:
            self._fed[name] = first       # started, or seeked back: refill the window
        start = max(first, self._fed.get(name, first))
        end = self.timeline.index(name, t)
        for i in range(start, end):
            message = self.timeline.message(name, i)
            self.page.show_state(self.timeline.messages[name][i].t, message.name,
                                 message.position, message.effort)
        self._fed[name] = max(end, start)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5.0)


def _xyz(v) -> tuple[float, float, float]:
    return float(v.x), float(v.y), float(v.z)


def _wxyz(q) -> tuple[float, float, float, float]:
    return float(q.w), float(q.x), float(q.y), float(q.z)
