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
The scripted part of ``tendon-robot-sim demo``: command tensions, watch the robot.

:class:`DemoDriver` runs on simulated time (``use_sim_time``), publishes
``tendon/command/tension`` or ``tip/target`` and keeps the latest ``tip/pose`` and
``backbone/markers``; :func:`run_phases` holds each :class:`Phase` for a span of
simulated time and snapshots the robot at its end. :class:`HardwareDemoDriver` is its
wall-clock peer for the hardware stack: it keeps the measured tip and tendon state.
"""

from __future__ import annotations

from dataclasses import dataclass
import math
import time
from typing import Callable, Sequence

import numpy as np
import rclpy
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from scipy.spatial.transform import Rotation
from std_msgs.msg import Header

from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import point_msg

# m: a tip-target phase ends early once the tip is this close (after the usual hold).
TARGET_TOLERANCE = 1e-3
# A tip that stayed within SETTLED_SPREAD m of its mean position over the last SETTLE_WINDOW
# s of simulated time has settled (a rod still swinging after a release once read -83.8 mm
# for a rest of -68.3 mm). A window, not a speed: a swing stands still at its turning points.
SETTLED_SPREAD = 1e-3
SETTLE_WINDOW = 0.5
# s of simulated time a tension phase waits at most, past its planned end by /clock, for what
# lags the clock on a loaded machine (the controller's setpoints, the tip poses): a node that
# stopped sending must not hold the demo forever
LAG_LIMIT = 10.0


@dataclass(frozen=True)
class Phase:
    """
    Hold these commanded tensions [N] (every tendon named) for a while.

    With a ``target`` (m, base frame) the phase sends that tip target instead of
    tensions: the tension controller then moves the tip there (tip-position mode).
    """

    label: str
    tensions: dict[str, float]
    target: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Snapshot:
    """The robot at the end of a phase, base frame, SI units."""

    phase: Phase
    time: float                   # s, simulated time (since the simulator started)
    tip_position: np.ndarray      # (3,) m
    centerline: np.ndarray        # (3, n_nodes) m
    disc_centers: np.ndarray      # (3, k) m
    disc_normals: np.ndarray      # (3, k) unit, disc axes (d3 of each vertebra)
    disc_radius: float            # m
    tendon_segments: np.ndarray   # (s, 2, 3) m, start and end of each tendon segment
    tendon_colors: np.ndarray     # (s, 3) RGB of each segment
    tip_spread: float = 0.0       # m, of the tip over the last SETTLE_WINDOW s (tip_spread())

    @property
    def settled(self) -> bool:
        return self.tip_spread <= SETTLED_SPREAD


def demo_phases(tendon_names: Sequence[str], tension: float,
                target: Sequence[float] | None = None) -> list[Phase]:
    """
    Rest, then for each tendon in turn: pull it with ``tension`` N, release all.

    With a ``target`` (m, base frame), a last phase moves the tip to it.
    """
    zero = dict.fromkeys(tendon_names, 0.0)
    phases = [Phase('rest', dict(zero))]
    for name in tendon_names:
        phases.append(Phase(f'{name} {tension:g} N', {**zero, name: tension}))
        phases.append(Phase(f'{name} released', dict(zero)))
    if target is not None:
        phases.append(Phase('tip target', {}, tuple(float(v) for v in target)))
    return phases


class DemoDriver(Node):
    """
    Publishes tension commands; keeps the latest tip pose and markers.

    ``tips``: (t [s of simulated time, the pose's stamp], tip [m]) over the last
    SETTLE_WINDOW s; ``control_ticks``: how many ``tendon/setpoint`` messages the controller
    has sent, one per period of its own: a controller that a loaded machine holds up sends
    fewer per simulated second, and a tip target needs its periods, not simulated seconds.
    """

    def __init__(self, **kwargs):
        super().__init__('demo_driver', parameter_overrides=[
            Parameter('use_sim_time', value=True)], **kwargs)
        self.command_pub = self.create_publisher(
            topics.TENDON_COMMAND.msg_type, topics.TENDON_COMMAND.name, topics.TENDON_COMMAND.qos)
        self.target_pub = self.create_publisher(
            topics.TIP_TARGET.msg_type, topics.TIP_TARGET.name, topics.TIP_TARGET.qos)
        self.tip_pose = None
        self.tips: list[tuple[float, np.ndarray]] = []   # (sim time, tip), SETTLE_WINDOW s
        self.markers = None
        self.state = None
        self.control_ticks = 0
        self.create_subscription(topics.TIP_POSE.msg_type, topics.TIP_POSE.name,
                                 self._on_tip_pose, topics.TIP_POSE.subscription_qos)
        self.create_subscription(topics.BACKBONE_MARKERS.msg_type, topics.BACKBONE_MARKERS.name,
                                 self._on_markers, topics.BACKBONE_MARKERS.subscription_qos)
        self.create_subscription(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                 self._on_state, topics.TENDON_STATE.subscription_qos)
        self.create_subscription(topics.TENDON_SETPOINT.msg_type, topics.TENDON_SETPOINT.name,
                                 self._on_setpoint, topics.TENDON_SETPOINT.subscription_qos)

    def _on_tip_pose(self, msg) -> None:
        # by the stamp, not the arrival: a loaded machine delivers poses late and in bursts,
        # and a tip at rest seen in bursts never covered a settling window
        self.tip_pose = msg
        p = msg.pose.position
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        self.tips = [(t, q) for t, q in self.tips if stamp - t <= SETTLE_WINDOW] + [
            (stamp, np.array([p.x, p.y, p.z]))]

    def _on_setpoint(self, msg) -> None:
        self.control_ticks += 1

    def control_rate(self, executor: Executor, timeout: float,
                     alive: Callable[[], None]) -> float:
        """
        Return the tension controller's ``rate`` [Hz], asked of the node itself.

        Raises TimeoutError if it does not answer within ``timeout`` wall seconds.
        """
        client = AsyncParameterClient(self, 'tension_controller')
        ready = wait_until(executor, client.services_are_ready, timeout, alive)
        future = client.get_parameters(['rate']) if ready else None
        if future is None or not wait_until(executor, future.done, timeout, alive):
            raise TimeoutError(f'the tension controller did not give its rate within '
                               f'{timeout:g} s')
        return future.result().values[0].double_value

    def tip_spread(self) -> float:
        """
        Return how far the tip strayed from its mean over the last SETTLE_WINDOW s [m].

        inf until the samples span that window.
        """
        return spread([(t, *q) for t, q in self.tips])

    def tip_time(self) -> float:
        """Return the stamp of the latest tip pose [s of simulated time]; -inf before one."""
        return self.tips[-1][0] if self.tips else -math.inf

    def _on_state(self, msg) -> None:
        self.state = msg

    def _on_markers(self, msg) -> None:
        self.markers = msg

    def now(self) -> float:
        """Return the simulated time [s] (0 until the first /clock message)."""
        return self.get_clock().now().nanoseconds * 1e-9

    def command(self, tensions: dict[str, float]) -> None:
        self.command_pub.publish(topics.TENDON_COMMAND.msg_type(
            name=list(tensions), effort=[float(v) for v in tensions.values()]))

    def send(self, phase: Phase) -> None:
        """Send the phase's tip target, or else its tensions."""
        if phase.target is None:
            self.command(phase.tensions)
        else:
            # empty frame_id: the base frame
            self.target_pub.publish(topics.TIP_TARGET.msg_type(
                header=Header(stamp=self.get_clock().now().to_msg()),
                point=point_msg(np.array(phase.target))))

    def applied(self, tensions: dict[str, float]) -> bool:
        """Whether the simulator's latest ``tendon/state`` carries ``tensions`` [N]."""
        if self.state is None:
            return False
        effort = dict(zip(self.state.name, self.state.effort))
        return all(name in effort and abs(effort[name] - value) <= 1e-9
                   for name, value in tensions.items())

    def tip_distance(self, target: Sequence[float]) -> float:
        """Distance of the latest tip pose from ``target`` [m]."""
        p = self.tip_pose.pose.position
        return float(np.linalg.norm(np.array([p.x, p.y, p.z]) - np.asarray(target)))

    def snapshot(self, phase: Phase) -> Snapshot:
        """Return the latest tip pose and markers as arrays."""
        by_ns = {}
        for marker in self.markers.markers:
            by_ns.setdefault(marker.ns, []).append(marker)
        centerline = _points(by_ns['backbone'][0].points)
        discs = by_ns.get('vertebrae', [])
        centers = np.array([[d.pose.position.x, d.pose.position.y, d.pose.position.z]
                            for d in discs]).reshape(-1, 3).T
        quaternions = [[d.pose.orientation.x, d.pose.orientation.y, d.pose.orientation.z,
                        d.pose.orientation.w] for d in discs]
        normals = (Rotation.from_quat(quaternions).as_matrix()[:, :, 2].T if discs
                   else np.zeros((3, 0)))
        tendons = by_ns['tendons'][0]
        segments = _points(tendons.points).T.reshape(-1, 2, 3)
        colors = np.array([[c.r, c.g, c.b] for c in tendons.colors[::2]]).reshape(-1, 3)
        p = self.tip_pose.pose.position
        return Snapshot(phase=phase, time=self.now(), tip_position=np.array([p.x, p.y, p.z]),
                        centerline=centerline, disc_centers=centers, disc_normals=normals,
                        disc_radius=discs[0].scale.x / 2.0 if discs else 0.0,
                        tendon_segments=segments, tendon_colors=colors,
                        tip_spread=self.tip_spread())


class HardwareDemoDriver(Node):
    """
    Publishes tension commands; records ``tip/measured`` and ``tendon/state`` with their time.

    ``tips``: (t [s since the driver started, when the sample was measured], x, y, z [m, base
    frame]) per sample; ``tensions``: (t, tension per tendon [N]) per ``tendon/state``. The
    times are the messages' stamps (the bridge's clock, the driver's own without simulated
    time), not when they came: a loaded machine delivered them late and in bursts, and a tip at
    rest, seen in bursts, never covered a settling window.
    """

    def __init__(self, **kwargs):
        super().__init__('demo_driver', **kwargs)
        self.command_pub = self.create_publisher(
            topics.TENDON_COMMAND.msg_type, topics.TENDON_COMMAND.name, topics.TENDON_COMMAND.qos)
        self.start = self._seconds(self.get_clock().now().to_msg())
        self.tips: list[tuple[float, float, float, float]] = []
        self.tensions: list[tuple[float, ...]] = []
        self._tip_stamp = -math.inf      # of the latest tip, as the message has it [s]
        self.create_subscription(topics.TIP_MEASURED.msg_type, topics.TIP_MEASURED.name,
                                 self._on_tip, topics.TIP_MEASURED.subscription_qos)
        self.create_subscription(topics.TENDON_STATE.msg_type, topics.TENDON_STATE.name,
                                 self._on_state, topics.TENDON_STATE.subscription_qos)

    @staticmethod
    def _seconds(stamp) -> float:
        return stamp.sec + stamp.nanosec * 1e-9

    def now(self) -> float:
        """Return the time since the driver started [s], on the clock of the stamps."""
        return self._seconds(self.get_clock().now().to_msg()) - self.start

    def _on_tip(self, msg) -> None:
        self._tip_stamp = self._seconds(msg.header.stamp)
        self.tips.append((self._tip_stamp - self.start, msg.point.x, msg.point.y, msg.point.z))

    def tip_time(self) -> float:
        """
        Return the stamp of the latest measured tip [s, the stamp's own clock]; -inf before one.

        As :func:`wait_recorded` reads a stamp: ``tips`` times, less ``start``, could come
        back from a float sum a nanosecond later than the message, which no bag would hold.
        """
        return self._tip_stamp

    def tip_spread(self) -> float:
        """
        How far the measured tip strayed from its mean [m] (:func:`spread`).

        Over the SETTLE_WINDOW s of measurements up to the latest one: a stream that a loaded
        machine holds up for a moment says nothing about whether the tip moves.
        """
        recent = []
        for sample in reversed(self.tips):
            if self.tips[-1][0] - sample[0] > SETTLE_WINDOW:
                break
            recent.append(sample)
        return spread(recent[::-1])

    def _on_state(self, msg) -> None:
        self.tensions.append((self._seconds(msg.header.stamp) - self.start, *msg.effort))

    def command(self, tensions: dict[str, float]) -> None:
        self.command_pub.publish(topics.TENDON_COMMAND.msg_type(
            name=list(tensions), effort=[float(v) for v in tensions.values()]))


def spread(samples: Sequence[Sequence[float]]) -> float:
    """
    Return how far the tips (t [s], x, y, z [m]) strayed from their mean [m].

    inf unless the samples span nearly SETTLE_WINDOW s: a tip seen for a moment is not at rest.
    """
    if not samples or samples[-1][0] - samples[0][0] < 0.9 * SETTLE_WINDOW:
        return float('inf')
    tips = np.array([sample[1:] for sample in samples])
    return float(np.linalg.norm(tips - tips.mean(axis=0), axis=1).max())


def _points(points) -> np.ndarray:
    return np.array([[p.x, p.y, p.z] for p in points]).reshape(-1, 3).T


def shut_down(executor: Executor, nodes: Sequence[Node], launcher) -> None:
    """Stop spinning, close the bags, destroy ``nodes``, end rclpy, then stop the stack."""
    from tendon_robot_sim.ros.recorder import BagRecorder

    executor.shutdown()
    for node in nodes:
        if isinstance(node, BagRecorder):
            node.close()
        node.destroy_node()
    rclpy.try_shutdown()
    launcher.stop()         # a hardware bridge leaves the robot in its safe state


def wait_recorded(executor: Executor, recorder, topic, stamp: float, timeout: float,
                  alive: Callable[[], None]) -> bool:
    """
    Spin until ``recorder`` has recorded a ``topic`` message stamped at ``stamp`` [s] or later.

    False after ``timeout`` wall seconds. The recorder and a driver in one executor take the
    same message in two callbacks: what the driver has seen (and a table shows) can still wait
    in the recorder's queue when the run ends, and a bag closed then lacks it.
    """
    def recorded() -> bool:
        msg = recorder.last(topic)
        return msg is not None and (msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
                                    >= stamp)
    return wait_until(executor, recorded, timeout, alive)


def wait_until(executor: Executor, condition: Callable[[], bool], timeout: float,
               alive: Callable[[], None]) -> bool:
    """
    Spin until ``condition()`` or ``timeout`` wall seconds (False then).

    ``alive()`` is called in between and raises if the stack has died.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        alive()
        executor.spin_once(timeout_sec=0.05)
    return True


def phase_budget(phase: Phase, hold: float, target_hold: float, settle: float) -> float:
    """Return the simulated time [s] :func:`run_phases` allows ``phase`` at most, once held."""
    return hold + settle if phase.target is None else max(hold, target_hold)


def run_phases(executor: Executor, driver: DemoDriver, phases: Sequence[Phase], hold: float,
               alive: Callable[[], None], progress: Callable[[float, str, float], None],
               wall_timeout: float, control_rate: float, target_hold: float = 0.0,
               settle: float = 0.0) -> list[Snapshot]:
    """
    Command each phase and hold it for ``hold`` simulated seconds.

    A tension phase is then held on until the tip has settled (SETTLED_SPREAD), for at most
    ``settle`` simulated seconds more; its snapshot says how far the tip still moved.

    The hold of a tension phase counts from the first ``tendon/state`` that carries its
    tensions (the controller ramps them, and on a loaded machine the simulation can run
    ahead of the controller), or, when none does, from ``hold`` s of the controller's periods
    after the command (``hold`` times ``control_rate`` setpoints); it ends with the first tip
    pose stamped at its end (poses can come late behind /clock). Either waits at most
    LAG_LIMIT simulated seconds past its planned end. A tip-target phase is
    held for at least ``hold`` simulated seconds and at most ``target_hold`` s of the
    controller's periods (``target_hold`` times its ``control_rate`` [Hz]
    ``tendon/setpoint`` messages; as many simulated seconds on a machine that keeps up),
    until the tip is within ``TARGET_TOLERANCE`` of the target.

    ``progress(seconds, label, budget)`` is called with the simulated time advanced since
    the last call, and ``budget`` the change of the run's expected total [s]: that total
    starts at ``phase_budget`` of every phase, grows by the time a phase waits for its
    tensions and shrinks by the settling a phase did not need (and the rest of a target
    phase that ended early), so the bar ends at the simulated time the run took. Raises
    TimeoutError when the simulation stops advancing for ``wall_timeout`` wall seconds.
    """
    snapshots = []
    for phase in phases:
        driver.send(phase)
        start = last = driver.now()
        end = start + (hold if phase.target is None else max(hold, target_hold))
        waiting = phase.target is None   # for the tensions to arrive
        ticks = driver.control_ticks

        def held() -> bool:
            if phase.target is None:
                # by the poses' stamps: on a loaded machine /clock runs ahead of the poses
                # still queued, and a hold ended by the clock read the tip from before the pull
                return driver.tip_time() >= end or driver.now() >= end + LAG_LIMIT
            return driver.now() >= start + hold and (
                driver.tip_distance(phase.target) < TARGET_TOLERANCE
                or driver.control_ticks - ticks >= target_hold * control_rate)

        def advance(what: str) -> float:
            """Spin until simulated time moves on; the new time [s]."""
            before = time.monotonic()
            if not wait_until(executor, lambda: driver.now() > last, wall_timeout, alive):
                raise TimeoutError(
                    f'phase {phase.label!r}: simulated time stood still at {last:.3f} s for '
                    f'{time.monotonic() - before:.0f} s{what}')
            return driver.now()
        # a timer on sim time would be simpler, but a stalled /clock must not hang the demo
        while waiting or not held():
            # the controller's own periods, not simulated seconds: at three times real time
            # on a loaded machine it fell behind /clock, and the steps ran without tensions
            if waiting and (driver.applied(phase.tensions)
                            or driver.control_ticks - ticks >= hold * control_rate
                            or driver.now() >= end + LAG_LIMIT):
                waiting = False
                end += driver.now() - start   # the hold starts now
                start = last = driver.now()
                continue
            now = advance('')
            # the budget did not foresee the wait, nor a step beyond the end
            beyond = now - last if waiting else max(now - end, 0.0) - max(last - end, 0.0)
            progress(now - last, phase.label, beyond)
            last = now
        if last < end:      # a tip-target phase that ended early: its rest is not needed
            progress(0.0, phase.label, last - end)
        limit = last + (settle if phase.target is None else 0.0)
        while driver.tip_spread() > SETTLED_SPREAD and last < limit:
            now = advance(' while the tip settled')
            progress(now - last, phase.label, max(now - limit, 0.0))
            last = now
        if last < limit:    # settled early
            progress(0.0, phase.label, last - limit)
        snapshots.append(driver.snapshot(phase))
    return snapshots
