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
Emulated devices: the tendon motor driver and the laser tip sensor.

Each device speaks the same protocol module as the bridge
(:mod:`tendon_robot_sim.protocol.motor`, :mod:`~tendon_robot_sim.protocol.laser`)
and is moved by one shared :class:`~tendon_robot_sim.emulator.plant.Plant`:
commanded tensions bend the model robot, the motor driver reports the tendon
displacements that result, and the laser sensor reports where the tip went.

The devices are plain state machines (``receive`` bytes, ``step`` in time, both
returning frames to send); :class:`DeviceThread` runs one on an endpoint, and
:class:`FaultInjector` spoils its output on purpose for tests.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
import logging
import math
import threading
import time
from typing import Any

import numpy as np

from tendon_robot_sim.emulator.endpoints import Endpoint
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.protocol import laser, motor
from tendon_robot_sim.protocol.framing import ChecksumError, ProtocolError
from tendon_robot_sim.protocol.mounting import SensorMount

logger = logging.getLogger(__name__)

#: Tension error below which a motor counts as settled [N] (a tenth of the wire's 1 mN).
SETTLED = 1e-4
#: Entries kept in the logs of what a device received and sent (for tests and summaries).
LOG_LENGTH = 10000


class MotorDriverDevice:
    """
    One motor per tendon, each in tension or displacement mode.

    Tension mode: the motor servoes the tendon tension to the setpoint.
    Displacement mode: it servoes the tendon displacement; the tension that
    holds it comes from the plant (``tensions_for``) and is clamped to
    ``[0, max_tension]`` (a tendon cannot push; one paid out further than the
    rod needs goes slack, and its displacement is then the spool's). Either way
    the measured tension follows its target with a first-order lag of
    ``time_constant``. A target the plant cannot reach stalls the motor
    (``FAULT_STALL``) at its last state.

    A command whose sequence number equals the last applied one is acknowledged
    but not applied again (see :mod:`tendon_robot_sim.protocol.drivers`).

    Attributes
    ----------
    received : deque
        The last :data:`LOG_LENGTH` commands decoded from the host, in order (for tests).
    applied : deque
        The last commands that changed a setpoint, in order.
    rejected : deque
        ``(reason, fields or message)`` of the last frames that were NAK'ed.
    counts : dict
        How many commands were received, applied and rejected in all.

    """

    def __init__(self, plant: Plant, device: str = motor.TdcrMotorV1.name,
                 time_constant: float = 0.05, travel: tuple[float, float] = (-0.05, 0.05)):
        self.plant = plant
        self.protocol = motor.motor_device(device)
        self.decoder = self.protocol.decoder()
        self.channels = plant.n_tendons
        self.max_tensions = plant.max_tensions
        self.time_constant = time_constant
        self.travel = travel
        self.modes = [motor.TENSION] * self.channels
        self.targets = np.zeros(self.channels)        # N or m, per mode
        self.tensions = np.zeros(self.channels)       # N, measured
        self.displacements = plant.displacements.copy()   # m
        self.velocities = np.zeros(self.channels)     # m/s
        self.faults = np.zeros(self.channels, dtype=int)
        self.injected_faults = np.zeros(self.channels, dtype=int)
        self.last_seq: int | None = None
        self.received: deque[Any] = deque(maxlen=LOG_LENGTH)
        self.applied: deque[Any] = deque(maxlen=LOG_LENGTH)
        self.rejected: deque[tuple[str, Any]] = deque(maxlen=LOG_LENGTH)
        self.counts = {'received': 0, 'applied': 0, 'rejected': 0}
        self._time: float | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ host -> device

    def receive(self, data: bytes) -> list[bytes]:
        """Handle bytes from the host; returns the ACK/NAK frames to send."""
        replies = []
        for item in self.decoder.feed(data):
            if isinstance(item, ProtocolError):
                # A frame we could not read: its sequence number is unknown.
                reason = (motor.NAK_CHECKSUM if isinstance(item, ChecksumError)
                          else motor.NAK_FORMAT)
                self._reject(str(item), None)
                replies.append(self.protocol.encode(motor.Nak(None, reason)))
                continue
            try:
                message = self.protocol.decode(item)
            except ProtocolError as error:
                self._reject(str(error), item)
                replies.append(self.protocol.encode(motor.Nak(None, motor.NAK_FORMAT)))
                continue
            replies.append(self.protocol.encode(self._command(message)))
        return replies

    def _command(self, message: Any) -> motor.Ack | motor.Nak:
        if not isinstance(message, motor.COMMANDS):
            self._reject('not a command', message)
            return motor.Nak(getattr(message, 'seq', None), motor.NAK_FORMAT)
        with self._lock:
            self.received.append(message)
            self.counts['received'] += 1
            problem = self._check(message)
            if problem is not None:
                self._reject(problem, message)
                return motor.Nak(message.seq, problem)
            if message.seq != self.last_seq:
                self._apply(message)
                self.last_seq = message.seq
                self.applied.append(message)
                self.counts['applied'] += 1
        return motor.Ack(message.seq)

    def _reject(self, reason: str, what: Any) -> None:
        self.rejected.append((reason, what))
        self.counts['rejected'] += 1

    def _check(self, message: Any) -> str | None:
        channels, values, mode = _targets(message, self.channels)
        if channels is None or any(c >= self.channels for c in channels):
            return motor.NAK_CHANNEL
        if mode == motor.TENSION:
            limits = self.max_tensions[channels]
            return motor.NAK_RANGE if np.any(values > limits) else None
        low, high = self.travel
        return motor.NAK_RANGE if np.any((values < low) | (values > high)) else None

    def _apply(self, message: Any) -> None:
        channels, values, mode = _targets(message, self.channels)
        for channel, value in zip(channels, values):
            self.modes[channel] = mode
            self.targets[channel] = value

    # ------------------------------------------------------------------ time

    def step(self, now: float) -> list[bytes]:
        """Advance the motors to ``now`` [s]; returns one status frame per channel."""
        return [self.protocol.encode(s) for s in self.advance(now)]

    def advance(self, now: float) -> list[motor.ChannelStatus]:
        """Advance the motors to ``now`` [s]; returns the status of every channel."""
        with self._lock:
            dt = 0.0 if self._time is None else max(0.0, now - self._time)
            self._time = now
            target, stalled = self._target_tensions()
            clipped = np.clip(target, 0.0, self.max_tensions)
            self.faults = np.where(target > self.max_tensions, motor.FAULT_TENSION_LIMIT, 0)
            self.faults |= np.where(stalled, motor.FAULT_STALL, 0) | self.injected_faults
            alpha = 1.0 - math.exp(-dt / self.time_constant) if self.time_constant > 0 else 1.0
            tensions = self.tensions + alpha * (clipped - self.tensions)
            # Snap when closer than a tenth of the wire resolution: the lag would otherwise
            # never end, and every step would cost a solve.
            tensions = np.where(np.abs(clipped - tensions) < SETTLED, clipped, tensions)
            if not self.plant.apply(tensions):
                tensions = self.tensions
                self.faults |= motor.FAULT_STALL
            self.tensions = tensions
            displacements = self.plant.displacements
            # A slack tendon does not follow the rod: its spool sits where it was sent.
            slack = self._in_displacement() & (tensions == 0.0)
            displacements = np.where(slack, np.minimum(self.targets, displacements),
                                     displacements)
            if dt > 0.0:
                self.velocities = (displacements - self.displacements) / dt
            self.displacements = displacements
            statuses = [motor.ChannelStatus(
                channel=i, mode=self.modes[i], displacement=float(self.displacements[i]),
                velocity=float(self.velocities[i]), tension=float(self.tensions[i]),
                faults=int(self.faults[i])) for i in range(self.channels)]
        return statuses

    def _target_tensions(self) -> tuple[np.ndarray, np.ndarray]:
        """Tension each motor servoes to [N], and which channels cannot reach their target."""
        in_displacement = self._in_displacement()
        if not in_displacement.any():
            return self.targets.copy(), np.zeros(self.channels, dtype=bool)
        # Channels in tension mode keep their current displacement as the target, so
        # one displacement solve gives the tensions of the others; the lag makes the
        # mixed case converge over a few steps.
        wanted = np.where(in_displacement, self.targets, self.displacements)
        solved = self.plant.tensions_for(wanted)
        if solved is None:
            return self.tensions.copy(), in_displacement
        return np.where(in_displacement, solved, self.targets), np.zeros(self.channels, dtype=bool)

    def _in_displacement(self) -> np.ndarray:
        return np.array([m == motor.DISPLACEMENT for m in self.modes])

    def set_targets(self, modes: list[str], targets: np.ndarray) -> None:
        """Servo every channel to ``targets`` (N or m per ``modes``), as a command would."""
        with self._lock:
            self.modes = list(modes)
            self.targets = np.asarray(targets, dtype=float).copy()

    def inject_fault(self, channel: int, flags: int) -> None:
        """Raise fault ``flags`` on ``channel`` from the next status on (0 clears)."""
        with self._lock:
            self.injected_faults[channel] = flags


def _targets(message: Any, channels: int) -> tuple[list[int] | None, np.ndarray, str]:
    """(channels, values, mode) of a command; channels None if the count is wrong."""
    if isinstance(message, motor.SetTension):
        return [message.channel], np.array([message.tension]), motor.TENSION
    if isinstance(message, motor.SetDisplacement):
        return [message.channel], np.array([message.displacement]), motor.DISPLACEMENT
    if isinstance(message, motor.SetTensions):
        values, mode = np.array(message.tensions), motor.TENSION
    else:
        values, mode = np.array(message.displacements), motor.DISPLACEMENT
    return (list(range(channels)) if len(values) == channels else None), values, mode


class LaserSensorDevice:
    """
    A laser tracker that reports the plant's tip in its own frame.

    Parameters
    ----------
    plant : Plant
        Where the tip is (base frame).
    mount : SensorMount
        Pose of the sensor frame in the base frame.
    noise : float
        Standard deviation of the Gaussian noise added to each coordinate [m].
    dropout : float
        Probability that a sample is flagged "no target" (valid = N).
    quality : float
        Signal quality reported with valid samples, 0..1.
    seed : int
        Seed of the noise and dropout generator (reproducible runs).

    """

    def __init__(self, plant: Plant, mount: SensorMount, device: str = laser.TdcrLaserV1.name,
                 noise: float = 0.0, dropout: float = 0.0, quality: float = 0.95,
                 seed: int = 0):
        self.plant = plant
        self.mount = mount
        self.protocol = laser.sensor_device(device)
        self.noise = noise
        self.dropout = dropout
        self.quality = quality
        self.rng = np.random.default_rng(seed)
        self.count = 0
        self.sent: deque[laser.TipMeasurement] = deque(maxlen=LOG_LENGTH)
        self.samples = 0
        self.bytes_ignored = 0

    def receive(self, data: bytes) -> list[bytes]:
        """Count and ignore input: the sensor takes no commands."""
        self.bytes_ignored += len(data)
        return []

    def step(self, now: float) -> list[bytes]:
        """Measure the plant's tip: one frame."""
        tip = self.mount.to_sensor(self.plant.tip_position)
        tip = tip + self.rng.normal(0.0, self.noise, 3) if self.noise > 0.0 else tip
        valid = not self.rng.random() < self.dropout
        sample = laser.TipMeasurement(self.count, *(float(v) for v in tip),
                                      quality=self.quality if valid else 0.0, valid=valid)
        self.count = (self.count + 1) % (laser.COUNT_MAX + 1)
        self.sent.append(sample)
        self.samples += 1
        return [self.protocol.encode(sample)]


@dataclass
class Faults:
    """
    Per-frame probabilities of damage to what a device sends (seeded).

    ``drop_byte`` removes one byte between ``$`` and ``*`` and ``corrupt_checksum``
    changes the checksum: both make exactly one bad-checksum frame. ``garbage``
    inserts 1-16 bytes of line noise (no ``$`` or line feed) before the frame.
    ``split`` writes the frame in two pieces ``split_delay`` apart.
    """

    drop_byte: float = 0.0
    corrupt_checksum: float = 0.0
    garbage: float = 0.0
    split: float = 0.0
    split_delay: float = 0.002   # s
    seed: int = 0


@dataclass
class FaultCounts:
    """What a :class:`FaultInjector` did."""

    frames: int = 0
    dropped_bytes: int = 0
    corrupted_checksums: int = 0
    garbage_bytes: int = 0
    splits: int = 0
    overflow_bytes: int = 0     # not written: the host was not reading


class FaultInjector:
    """Write frames to an endpoint, damaging some of them as ``faults`` says."""

    _NOISE = bytes(b for b in range(256) if b not in b'$\n')

    def __init__(self, endpoint: Endpoint, faults: Faults | None = None):
        self.endpoint = endpoint
        self.faults = faults or Faults()
        self.counts = FaultCounts()
        self.rng = np.random.default_rng(self.faults.seed)

    def write(self, frame: bytes) -> None:
        faults, rng, counts = self.faults, self.rng, self.counts
        counts.frames += 1
        # The damage below knows the NMEA-style frames; binary frames pass with no faults set.
        if rng.random() < faults.drop_byte:
            i = int(rng.integers(1, frame.rindex(b'*')))
            frame = frame[:i] + frame[i + 1:]
            counts.dropped_bytes += 1
        elif rng.random() < faults.corrupt_checksum:
            star = frame.rindex(b'*')
            wrong = int(frame[star + 1:star + 3], 16) ^ int(rng.integers(1, 256))
            frame = frame[:star + 1] + b'%02X' % wrong + frame[star + 3:]
            counts.corrupted_checksums += 1
        if rng.random() < faults.garbage:
            noise = bytes(rng.choice(list(self._NOISE), size=int(rng.integers(1, 17))))
            frame = noise + frame
            counts.garbage_bytes += len(noise)
        if rng.random() < faults.split:
            cut = int(rng.integers(1, len(frame)))
            counts.overflow_bytes += self.endpoint.write(frame[:cut])
            time.sleep(faults.split_delay)
            frame = frame[cut:]
            counts.splits += 1
        counts.overflow_bytes += self.endpoint.write(frame)


class DeviceThread:
    """Run one device on one endpoint: answer the host, report at ``rate``."""

    def __init__(self, device: Any, endpoint: Endpoint, rate: float,
                 faults: Faults | None = None, name: str = 'device'):
        if rate <= 0.0:
            raise ValueError(f'{name} rate: must be > 0 Hz, got {rate}')
        self.device = device
        self.endpoint = endpoint
        self.period = 1.0 / rate
        self.output = FaultInjector(endpoint, faults)
        self.name = name
        self._stop = threading.Event()
        self._down_time: float | None = None   # set by disconnect(), read by the thread
        self._corrupt_input = 0                  # set by corrupt_next_input()
        self._flip_next_byte = False             # a counted frame's '$' ended the last read
        self._noise_until = -math.inf            # set by noise_burst()
        self._noisy_replies = False
        self._serving = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f'emulated-{name}', daemon=True)
        self.disconnects = 0

    def start(self) -> 'DeviceThread':
        """Start answering; returns once the device answers at its endpoint's path."""
        self._thread.start()
        while not self._serving.wait(0.1) and self._thread.is_alive():
            pass
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            # The thread closes its endpoint as it ends: closing it from here while the
            # thread still writes (a loaded machine can hold it past any timeout) would
            # write to a closed descriptor, or to whatever file reused its number.
            self._thread.join()
        else:
            self.endpoint.close()

    def disconnect(self, down_time: float = 0.0) -> None:
        """
        Break the link (from any thread) for ``down_time`` [s], as if unplugged.

        The device keeps its state (setpoints, last sequence number) meanwhile.
        """
        self._down_time = down_time

    def corrupt_next_input(self, count: int) -> None:
        """
        Damage the next ``count`` frames from the host, as line noise would.

        The first byte after each frame's ``$`` flips, so the device sees a bad checksum.
        Frames count one by one however the reads cut them: a loaded machine hands the
        device two frames in one read (a command and its re-send), or a frame in two.
        """
        self._corrupt_input = count

    def noise_burst(self, duration: float, replies: bool = False) -> None:
        """
        Spoil every frame from the host for the next ``duration`` [s], as line noise would.

        Each frame read gets a bad checksum (so the device NAKs it at once); with
        ``replies`` the frames the device sends meanwhile are spoilt too.
        """
        self._noisy_replies = replies
        self._noise_until = time.monotonic() + duration

    def _run(self) -> None:
        try:
            # Reachable only from here on: a host that finds the port is answered.
            self.endpoint.publish()
            self._serving.set()
            self._serve()
        finally:
            self.endpoint.close()

    def _serve(self) -> None:
        next_step = time.monotonic()
        while not self._stop.is_set():
            if self._down_time is not None:
                down_time, self._down_time = self._down_time, None
                self.endpoint.hang_up()
                self.disconnects += 1
                self._stop.wait(down_time)
                self.endpoint.come_back()
                logger.info('%s: disconnected for %.2f s; back at %s', self.name, down_time,
                            self.endpoint.path)
            data = self.endpoint.read(max(0.0, next_step - time.monotonic()))
            if self._corrupt_input > 0 or self._flip_next_byte:
                data = self._corrupt(data)
            noisy = time.monotonic() < self._noise_until
            if noisy:
                data = _spoil(data)
            # The answers go out before the device steps: a device answers within its own
            # time, not after its mechanics (a plant solve a loaded machine can stretch past
            # the host's timeout).
            self._send(self.device.receive(data) if data else [], noisy)
            now = time.monotonic()
            if now >= next_step:
                self._send(self.device.step(now), noisy)
                # Keep the rate without bursts after a stall.
                next_step = max(next_step + self.period, now)

    def _corrupt(self, data: bytes) -> bytes:
        """Return ``data`` with the frames still owed to :meth:`corrupt_next_input` spoilt."""
        spoilt = bytearray(data)
        for i, byte in enumerate(spoilt):
            if self._flip_next_byte:
                spoilt[i] ^= 1
                self._flip_next_byte = False
            elif byte == ord('$') and self._corrupt_input > 0:
                self._corrupt_input -= 1
                self._flip_next_byte = True
        return bytes(spoilt)

    def _send(self, frames: list[bytes], noisy: bool) -> None:
        for frame in frames:
            self.output.write(_spoil(frame) if noisy and self._noisy_replies else frame)


def _spoil(data: bytes) -> bytes:
    """Flip the lowest bit of the byte after every ``$``: each frame fails its checksum."""
    spoilt = bytearray(data)
    for i in range(len(spoilt) - 1):
        if spoilt[i] == ord('$'):
            spoilt[i + 1] ^= 1
    return bytes(spoilt)
