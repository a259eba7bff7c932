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
Nothing is published: recorded commands cannot reach a robot from here. Only the times of
the bag's messages are kept; the messages are read from the bag in blocks around the time
shown (a bounded number in memory) and deserialized (``rosbags``) when shown; each
``backbone/markers`` message is taken as the whole scene at its time, as the simulator
publishes it, so a seek shows the scene at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from collections import OrderedDict
import math
from pathlib import Path
import threading
import time

from rosbags.typesys import get_typestore
from tendon_robot_sim import progress_bar
from tendon_robot_sim.experiment.bag import (bag_topics, BagError, check_messages,
                                             DEFAULT_STORE, mistyped, read_raw)
from tendon_robot_sim.view.page import ViewPage

# The relative topics the page shows (under the bag's namespace) and the types the stack
# publishes them as (ros/topics.py; named here, the view being free of ROS).
SHOWN = {'backbone/markers': 'visualization_msgs/msg/MarkerArray',
         'tip/pose': 'geometry_msgs/msg/PoseStamped',
         'tip/measured': 'geometry_msgs/msg/PointStamped',
         'tip/target': 'geometry_msgs/msg/PointStamped',
         'tendon/state': 'sensor_msgs/msg/JointState'}
END_TOLERANCE = 1e-9   # s
# Messages are read from the bag in blocks of BLOCK of one topic, and BLOCKS_KEPT blocks per
# topic are kept: memory stays bounded however long the bag, while playing forward reads it
# once per BLOCK messages.
BLOCK = 256
BLOCKS_KEPT = 2


class Timeline:
    """
    The shown topics of a bag, per relative topic name in time order.

    ``namespace`` picks the stack when the bag holds several (its topics
    ``/<namespace>/backbone/markers`` ...); '' the topics at the root. Only the times of the
    messages are kept; the messages themselves are read from the bag when shown.
    ``skipped``: why a shown topic of another type than the stack's is not shown.

    Raises
    ------
    BagError
        The bag cannot be read, or holds none of the topics the page shows of their types,
        or no message of them.

    """

    def __init__(self, path: str | Path, namespace: str = '', progress: bool = True):
        self.path = Path(path)
        prefix = '/' + '/'.join(p for p in namespace.strip('/').split('/') if p)
        prefix = prefix.rstrip('/') + '/'
        recorded = bag_topics(self.path)
        expected = {prefix + name: msgtype for name, msgtype in SHOWN.items()}
        self.skipped = mistyped(recorded, expected)
        self.topics = {prefix + name: name for name in SHOWN
                       if prefix + name in recorded and prefix + name not in self.skipped}
        if not self.topics:
            raise BagError(self._nothing_shown(recorded, expected, namespace))
        self.stamps = {name: array('q') for name in self.topics.values()}   # [ns]
        for message in progress_bar(read_raw(self.path, self.topics), progress,
                                    desc=f'reading {self.path.name}', unit=' messages',
                                    leave=False):
            self.stamps[self.topics[message.topic]].append(message.stamp_ns)
        check_messages(self.path, {topic: len(self.stamps[name])
                                   for topic, name in self.topics.items()}, 'play')
        start = min(stamps[0] for stamps in self.stamps.values() if stamps)
        self.times = {name: array('d', ((s - start) * 1e-9 for s in stamps))
                      for name, stamps in self.stamps.items()}    # [s] since the first
        self.duration = max((times[-1] for times in self.times.values() if times), default=0.0)
        self._names = {name: topic for topic, name in self.topics.items()}
        self._blocks = {name: OrderedDict() for name in self.topics.values()}
        self._blocks_lock = threading.Lock()   # the command's first frame, then the playback's
        self._typestore = get_typestore(DEFAULT_STORE)

    def _nothing_shown(self, recorded, expected, namespace: str) -> str:
        if self.skipped:
            return f'{self.path}: nothing to show: ' + '; '.join(
                f'{topic} {why}' for topic, why in self.skipped.items())
        return (f'{self.path}: none of {", ".join(expected)} in the bag; it holds '
                f'{", ".join(sorted(recorded)) or "nothing"}'
                + ('' if namespace else ' (--namespace picks a stack)'))

    def index(self, name: str, t: float) -> int:
        """Return how many messages of ``name`` are due at time ``t`` [s]."""
        return bisect_right(self.times[name], t + END_TOLERANCE)

    def latest(self, name: str, t: float, or_first: bool = False):
        """
        Return the newest message of ``name`` at or before ``t`` [s], deserialized, or None.

        ``or_first``: before the first message of ``name``, that first one (the robot as the
        bag first shows it: the scene was empty until Play when the markers came after the
        bag's first message).
        """
        if name not in self.times or not self.times[name]:
            return None
        i = self.index(name, t)
        return self.message(name, i - 1) if i else (self.message(name, 0) if or_first else None)

    def message(self, name: str, i: int):
        """Return message ``i`` of ``name``, deserialized."""
        try:
            return self._typestore.deserialize_cdr(self._data(name, i), SHOWN[name])
        except Exception as error:   # rosbags raises many kinds on bad bytes
            raise BagError(f'{self.path}: message {i} of {name} at {self.times[name][i]:.3f} s '
                           f'does not deserialize as {SHOWN[name]} ({error})') from None

    def stored(self) -> int:
        """Return how many messages are held in memory (BLOCK x BLOCKS_KEPT per topic at most)."""
        return sum(len(block) for blocks in self._blocks.values() for block in blocks.values())

    def _data(self, name: str, i: int) -> bytes:
        blocks, number = self._blocks[name], i // BLOCK
        with self._blocks_lock:
            if number in blocks:
                blocks.move_to_end(number)
            else:
                blocks[number] = self._read_block(name, number)
                if len(blocks) > BLOCKS_KEPT:
                    blocks.popitem(last=False)     # the one shown longest ago
            return blocks[number][i - number * BLOCK]

    def _read_block(self, name: str, number: int) -> list[bytes]:
        stamps, first = self.stamps[name], number * BLOCK
        last = min(first + BLOCK, len(stamps)) - 1
        # the stamps from the first's on: messages of its stamp before it come back too
        skip = first - bisect_left(stamps, stamps[first])
        read = [m.data for m in read_raw(self.path, [self._names[name]], stamps[first],
                                         stamps[last] + 1)][skip:skip + last - first + 1]
        if len(read) != last - first + 1:
            raise BagError(f'{self.path}: {self._names[name]} holds {len(read)} messages from '
                           f'{self.times[name][first]:.3f} s to {self.times[name][last]:.3f} s, '
                           f'{last - first + 1} when it was opened: the bag changed')
        return read


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

    The page's playback panel moves the clock; :meth:`stop` ends the thread. A message
    that cannot be shown (bad bytes, a bag changed while it is viewed) ends it too: ``error``
    holds the :class:`BagError`, for the command to say in one line.
    """

    def __init__(self, page: ViewPage, timeline: Timeline, rate: float = 50.0,
                 refresh_rate: float = 5.0):
        self.page, self.timeline = page, timeline
        self.clock = PlaybackClock(timeline.duration)
        self.period, self.refresh_period = 1.0 / rate, 1.0 / refresh_rate
        self.lock = threading.Lock()
        self.shown_t = None      # bag time shown last
        self._fed = {}           # name -> messages fed to the page's history
        self._tips = {}          # tip topic name -> its messages due at the tips the page has
        self.error: BagError | None = None
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
        try:
            self._frames()
        except BagError as error:   # not a traceback in a thread the command waits beside
            self.error = error

    def _frames(self) -> None:
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
                self.page.refresh(t, t)   # a bag's page: its clock is the bag's

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
        if self.shown_t is not None and t < self.shown_t:
            page.rewind()      # seeked back: the plots' later samples are not of the past
        markers = timeline.latest('backbone/markers', t, or_first=True)
        if markers is not None:
            page.show_markers(markers.markers, snapshot=True)
        self._feed_states(t)
        self._show_tips(t)
        page.render()
        self.shown_t = t

    def _show_tips(self, t: float) -> None:
        """
        Give the page the tip, the measured tip and the target of bag time ``t`` [s].

        The tip as the bag first shows it until its first ``tip/pose``; measured tips and
        targets only from when they came (a seek back to before them: none). Each message is
        read once while it stays the latest, not once per state plotted beside it.
        """
        for name in ('tip/pose', 'tip/measured', 'tip/target'):
            if not self.timeline.times.get(name):
                continue
            i = self.timeline.index(name, t)
            if self._tips.get(name) == i:
                continue
            self._tips[name] = i
            if name == 'tip/pose':
                pose = self.timeline.message(name, max(i - 1, 0)).pose
                self.page.show_tip(_xyz(pose.position), _wxyz(pose.orientation))
                continue
            point = _xyz(self.timeline.message(name, i - 1).point) if i else None
            (self.page.show_measured if name == 'tip/measured' else self.page.show_target)(point)

    def _feed_states(self, t: float) -> None:
        """Give the plot the states of (t - window, t], only those not given before."""
        name = 'tendon/state'
        if name not in self.timeline.times:
            return
        window = self.page.state_history.window
        first = self.timeline.index(name, t - window)
        if self.shown_t is None or t < self.shown_t:
            self._fed[name] = first       # started, or seeked back: refill the window
        start = max(first, self._fed.get(name, first))
        end = self.timeline.index(name, t)
        for i in range(start, end):
            # the tip error of each state is from the tips of its time, not of the time shown
            self._show_tips(self.timeline.times[name][i])
            message = self.timeline.message(name, i)
            self.page.show_state(self.timeline.times[name][i], message.name,
                                 message.position, message.effort)
        self._fed[name] = max(end, start)

    def stop(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5.0)


def _xyz(v) -> tuple[float, float, float]:
    return float(v.x), float(v.y), float(v.z)


def _wxyz(q) -> tuple[float, float, float, float]:
    return float(q.w), float(q.x), float(q.y), float(q.z)
