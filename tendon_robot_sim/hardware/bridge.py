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
The hardware bridge's logic without ROS: setpoints in, safe commands out.

:class:`BridgeCore` sits between the node (topics, services, timers) and the devices
(:class:`~tendon_robot_sim.protocol.devices.MotorBus`,
:class:`~tendon_robot_sim.protocol.devices.TipSensor`). Every time is
``time.monotonic()`` [s], passed in by the caller, so tests drive it without a clock.

* **Setpoints** are checked whole: every tendon named once, one of tension [N] or
  displacement [m], finite, within the limits (a tension in [0, ``min_tension``) means
  "relaxed" and becomes the pretension), and within what the wire carries. A setpoint
  that fails any check is rejected (:class:`SetpointError`, which says why) and the last
  valid one is kept: hardware never receives an out-of-range command.
* **Ramps**: a command moves at most ``max_tension_rate`` [N/s] or
  ``max_displacement_rate`` [m/s] per second from the previous command, or from what the
  device last reported after a start, ``resume``, a watchdog recovery, a reconnect or a
  change of mode. Only the safe state goes in one step (relaxing is the safe direction), and
  a start beyond an upper limit, at that limit; a tendon paid out beyond the lower
  displacement limit is drawn in from where it is (:meth:`BridgeCore._ramp_start`).
* **Watchdog and stop latch**: no valid setpoint for ``watchdog_timeout`` commands the
  safe state (every tendon at ``min_tension``, tension mode); the watchdog is armed by the
  first valid setpoint after an activation or a resume (until then the safe state is
  commanded as the watchdog would, without its warning); :meth:`BridgeCore.stop`
  latches it until :meth:`BridgeCore.resume`. A device fault (a servo's hardware error,
  a lost or reset servo, a fault flag of the streaming device, readings implausible for
  ``implausible_timeout``) latches it too.
* **Delivery**: the commanded state is sent again, with a new sequence number, whenever
  the driver gave it up, until the device acknowledges it; a command unacknowledged for
  ``delivery_timeout`` makes the motor status an ERROR.
* **A blind tip sensor**: samples that are all invalid (no target, alarm, out of range),
  or none at all, make the sensor status a WARN at once and an ERROR once nothing valid
  came for ``blind_timeout``; it is OK again with the first valid sample.

Log lines come back as :class:`Event` lists, so the node decides how to throttle them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import time
from typing import Sequence

import numpy as np

from tendon_robot_sim import counted
from tendon_robot_sim.hardware.plausibility import Plausibility, tension_problem, tip_problem
from tendon_robot_sim.protocol import motor
from tendon_robot_sim.protocol.devices import MotorBus, TipSensor
from tendon_robot_sim.protocol.drivers import (DELIVERED, GIVEN_UP, MotorStatus, PENDING,
                                               REJECTED)
from tendon_robot_sim.protocol.framing import ProtocolError
from tendon_robot_sim.protocol.link import CONNECTED
from tendon_robot_sim.protocol.mounting import SensorMount

#: Diagnostic levels, as diagnostic_msgs/DiagnosticStatus numbers them.
OK, WARN, ERROR = 0, 1, 2


class SetpointError(ValueError):
    """
    A setpoint that is rejected; ``kind`` names the check it failed.

    'malformed' (names, fields, lengths, finiteness: the message starts with the field at
    fault, as :func:`tendon_robot_sim.ros.throttle.fault_kind` reads it), 'out of range' or
    'unsendable'.
    """

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class Event:
    """A line for the log: ``level`` is 'info', 'warning' or 'error'; warnings carry a kind."""

    level: str
    text: str
    kind: str = ''


@dataclass
class Status:
    """What one diagnostic status says: level (OK, WARN, ERROR), message, key-value pairs."""

    level: int
    message: str
    values: list[tuple[str, object]] = field(default_factory=list)


@dataclass(frozen=True)
class BridgeSettings:
    """The limits and times of the bridge (SI units; see the node's parameters)."""

    names: tuple[str, ...]
    max_tensions: np.ndarray        # N, per tendon
    min_tension: float              # N, pretension and safe state
    min_displacement: float         # m
    max_displacement: float         # m
    watchdog_timeout: float         # s
    command_rate: float             # Hz
    max_tension_rate: float         # N/s
    max_displacement_rate: float    # m/s
    delivery_timeout: float         # s
    stale_timeout: float            # s
    tension_margin: float           # fraction of max_tension
    implausible_timeout: float      # s
    reach: float                    # m: no tip is farther from the base
    blind_timeout: float = 1.0      # s without a valid tip sample: the sensor is an ERROR


class BridgeCore:
    """
    The bridge between setpoints and the devices, from configure to cleanup.

    ``attach`` hands it the started devices (configure), ``release`` leaves them safe and
    closed (cleanup, shutdown, the end of the process); ``activate``, ``deactivate``,
    ``accept`` (a setpoint), ``tick`` (the command timer), ``stop``, ``resume`` and
    ``reboot`` follow the node's transitions, messages and services.
    """

    def __init__(self, settings: BridgeSettings, mount: SensorMount):
        self.settings = s = settings
        self.mount = mount
        self.safe_command = (motor.TENSION, np.full(len(s.names), s.min_tension))
        self.motors: MotorBus | None = None     # open from configure to cleanup
        self.sensor: TipSensor | None = None
        self.active = False
        self.stopped = False
        self.stopped_by = ''            # what latched the stop: ~/stop or a device fault
        self.fault = ''                 # the device fault that latched the stop
        self.watchdog_tripped = False
        # The watchdog is armed by the first valid setpoint after an activation or a resume:
        # until then the bridge holds the safe state anyway, and a warning 0.5 s after
        # every normal start (the controller not yet streaming) told nothing.
        self.armed = False
        self.rejected = 0               # setpoints rejected since the start
        self.resends = 0                # commands sent again after the driver gave them up
        self.plausible = {'motors': Plausibility(s.implausible_timeout),
                          'sensor': Plausibility(s.implausible_timeout)}
        self.setpoint: tuple[str, np.ndarray] | None = None   # newest valid
        self.setpoint_time = time.monotonic()   # the watchdog counts from here
        self.sent: tuple[str, np.ndarray] | None = None
        self._output: tuple[str, np.ndarray] | None = None   # the ramp; None: restart it
        self._ramp_after = -np.inf   # a restarted ramp starts from a status newer than this
        self._tick = time.monotonic()
        self._reconnects = 0
        self._sent_seq: int | None = None
        self._waiting_since: float | None = None   # commands unacknowledged since [s]
        self._last_status_stamp = -np.inf
        self._sensor_since = time.monotonic()   # the sensor's blindness counts from here
        self._last_valid: float | None = None   # receive time of the newest valid sample
        self._invalid_run = 0    # invalid samples since the newest valid one
        self._blind_said = ''    # the blindness already logged: '', 'warn', 'error'

    # ------------------------------------------------------------------ lifecycle

    def attach(self, motors: MotorBus, sensor: TipSensor | None) -> None:
        """Take the started devices (configure): a new session of commands."""
        self.motors, self.sensor = motors, sensor
        self._reconnects = 0
        self.sent = self._sent_seq = self._waiting_since = None
        self._last_status_stamp = -np.inf
        self._sensor_since, self._last_valid = time.monotonic(), None
        self._invalid_run, self._blind_said = 0, ''

    def release(self) -> None:
        """Command the safe state if the motor port is open, then close both; idempotent."""
        motors, self.motors = self.motors, None
        sensor, self.sensor = self.sensor, None
        self.active = False
        if motors is not None:
            motors.stop(final_tensions=self.safe_command[1])
        if sensor is not None:
            sensor.stop()

    def activate(self, now: float) -> None:
        """Follow setpoints, ramped from the device's state; the watchdog counts from ``now``."""
        self.setpoint = None
        self.setpoint_time = now
        self._output = None
        self._ramp_after = now
        self.watchdog_tripped = False
        self.armed = False
        self.active = True
        self.motors.enable(self.safe_command[1])

    def deactivate(self, now: float) -> None:
        """Command the safe state and hold it; setpoints are ignored until activated."""
        self.active = False
        self.setpoint = None
        self._command(self.safe_command)
        self.motors.disable()

    # ------------------------------------------------------------------ setpoints

    def accept(self, names: Sequence[str], effort: Sequence[float],
               position: Sequence[float], now: float) -> None:
        """
        Take a setpoint (tendon names, tensions [N] or displacements [m]) if it is valid.

        Ignored while stopped or inactive. Raises SetpointError (counted) if it is not
        valid: the last valid setpoint stays, and nothing reaches the wire.
        """
        if self.stopped or not self.active:
            return   # ~/stop holds the safe state until ~/resume; deactivate holds it too
        try:
            mode, values = self._parse(names, effort, position)
            values = self._check_range(mode, values)
            try:   # only a setpoint that can go on the wire feeds the watchdog
                self.motors.check_command(mode, values)
            except ProtocolError as error:
                raise SetpointError('unsendable', f'beyond the wire format: {error}') from None
        except SetpointError:
            self.rejected += 1
            raise
        self.setpoint = (mode, values)
        self.setpoint_time = now
        self.armed = True

    def _parse(self, names: Sequence[str], effort: Sequence[float],
               position: Sequence[float]) -> tuple[str, np.ndarray]:
        """(mode, values in tendon order) of a setpoint, or SetpointError."""
        expected = list(self.settings.names)
        if len(names) != len(expected):   # first: a huge message costs nothing
            raise SetpointError('malformed', f'name: must list every tendon {expected} once, '
                                f'got {len(names)} names')
        names = list(names)
        if sorted(names) != sorted(expected):
            raise SetpointError('malformed', f'name: must list every tendon {expected} once, '
                                f'got {names}')
        if (len(effort) > 0) == (len(position) > 0):
            raise SetpointError('malformed', 'exactly one of effort (tension, N) and position '
                                '(displacement, m) must be filled')
        field_name, mode, values = (('effort', motor.TENSION, effort) if len(effort) > 0
                                    else ('position', motor.DISPLACEMENT, position))
        values = np.asarray(values, dtype=float)
        if len(values) != len(names):
            raise SetpointError('malformed', f'{field_name}: has {counted(len(values), "value")} '
                                f'for {counted(len(names), "name")}')
        if not np.all(np.isfinite(values)):
            bad = [name for name, v in zip(names, values) if not np.isfinite(v)]
            raise SetpointError('malformed', f'{field_name}: not finite for {bad}')
        return mode, values[[names.index(name) for name in expected]]

    def _check_range(self, mode: str, values: np.ndarray) -> np.ndarray:
        """Return ``values`` within the limits, or SetpointError naming the tendons outside."""
        s = self.settings
        if mode == motor.TENSION:
            # 0 .. min_tension means "relaxed": the pretension, which is what relaxed is here.
            values = np.where((values >= 0.0) & (values < s.min_tension), s.min_tension,
                              values)
            low, high, unit = np.full(len(values), s.min_tension), s.max_tensions, 'N'
        else:
            low = np.full(len(values), s.min_displacement)
            high = np.full(len(values), s.max_displacement)
            unit = 'm'
        outside = (values < low) | (values > high)
        if outside.any():
            raise SetpointError('out of range', f'{mode} outside the limits: ' + ', '.join(
                f'{n} {v:g} {unit} (limits {lo:g} .. {hi:g} {unit})' for n, v, lo, hi, bad
                in zip(s.names, values, low, high, outside) if bad))
        return values

    # ------------------------------------------------------------------ the command timer

    def tick(self, now: float) -> list[Event]:
        """One period of the command timer: faults, watchdog, ramp, (re)send."""
        dt, self._tick = min(now - self._tick, 2.0 / self.settings.command_rate), now
        events: list[Event] = []
        self._track_link(now)
        self._check_fault(now, events)
        if not self.active:
            if self.sent is not None:
                self._command(self.safe_command, events)   # held until delivered (deactivate)
            return events
        if not self.stopped and not self.armed:
            # no setpoint yet: the safe state, as the watchdog would command it, but quietly
            # (a normal start is no fault); before the watchdog's time nothing new goes out,
            # so a setpoint that comes at once ramps from what the device reports
            if now - self.setpoint_time > self.settings.watchdog_timeout:
                self._command(self.safe_command, events)
            return events
        if self.stopped or now - self.setpoint_time > self.settings.watchdog_timeout:
            if not self.stopped and not self.watchdog_tripped:
                self.watchdog_tripped = True
                self.setpoint = None
                events.append(Event('warning', f'no valid setpoint for '
                                    f'{self.settings.watchdog_timeout:g} s: commanding the '
                                    f'safe state ({self.settings.min_tension:g} N on every '
                                    'tendon)', 'watchdog'))
            self._command(self.safe_command, events)
            return events
        self.watchdog_tripped = False
        if self.setpoint is not None and self.motors.connected:
            # The next step only once the device has this one: the driver writes only its
            # newest command, so the steps of a writer held up (a loaded machine) reached
            # the device as one jump. Held, the step is sent again if the driver gave it up.
            held = (self._output is not None and _same(self._output, self.sent)
                    and self.motors.delivery(self._sent_seq) in (PENDING, GIVEN_UP))
            command = self.sent if held else self._ramp(self.setpoint, dt)
            if command is not None:
                self._command(command, events)
        return events

    def _check_fault(self, now: float, events: list[Event]) -> None:
        """Latch the stop on a device fault (a servo's hardware error, a lost servo ...)."""
        fault = self.motors.fault()
        for device, check in self.plausible.items():
            if not fault and check.sustained(now):
                fault = f'{device}: {check.last} for more than {check.hold:g} s'
        if fault and fault != self.fault:
            self.fault = fault
            self.stopped = True
            self.stopped_by = f'a fault: {fault}'
            self.setpoint = None
            events.append(Event('error', f'motor fault: {fault}; safe state commanded, '
                                'setpoints ignored until ~/resume'))

    def _track_link(self, now: float) -> None:
        """
        Restart the ramp from the device's report after a reconnect.

        Unless the ramp holds the safe state: a bridge the loss stopped sends it first when
        the port is back, and the device's report may still say the tensions of before the
        loss when ~/resume comes (the ramp started there, a jump from the safe state).
        """
        reconnects = self.motors.link.statistics().reconnects
        if reconnects != self._reconnects or not self.motors.connected:
            self._reconnects = reconnects
            if not _same(self._output, self.safe_command):
                self._output = None
            self._ramp_after = now

    def _ramp(self, target: tuple[str, np.ndarray], dt: float) -> tuple[str, np.ndarray] | None:
        """Return the next command on the way to ``target``, or None until the ramp has a start."""
        mode, values = target
        if self._output is None or self._output[0] != mode:
            start = self._ramp_start(mode)
            if start is None:
                return None
            self._output = (mode, start)
        rate = (self.settings.max_tension_rate if mode == motor.TENSION
                else self.settings.max_displacement_rate)
        current = self._output[1]
        step = rate * dt
        self._output = (mode, np.where(np.abs(values - current) <= step, values,
                                       current + np.sign(values - current) * step))
        return self._output

    def _ramp_start(self, mode: str) -> np.ndarray | None:
        """
        Where the device is in ``mode`` (its status), if it said lately; None otherwise.

        Above ``max_tension`` or ``max_displacement`` it starts at the limit: easing a tension
        or paying out is the safe direction and may go in one step, as the safe state does; a
        tension below the pretension starts at it. A displacement below ``min_displacement``
        starts where the device is: a tendon paid out beyond it (the antagonist of a pulled
        tendon, 31 mm at 8 N on the default robot) is drawn in at ``max_displacement_rate``,
        where a start at the limit drew it in 21 mm at once.
        """
        s = self.settings
        status = self.motors.status()
        if status is None or status.oldest <= self._ramp_after or self._implausible(status):
            return None   # never from a reading that cannot be physical
        if mode == motor.TENSION:
            return np.clip(status.tensions, s.min_tension, s.max_tensions)
        return np.minimum(status.displacements, s.max_displacement)

    def _command(self, command: tuple[str, np.ndarray], events: list[Event] | None = None
                 ) -> None:
        """Send ``command`` if it is new, or again if the driver gave the last one up."""
        if _same(command, self.sent):
            delivery = self.motors.delivery(self._sent_seq)
            if delivery in (DELIVERED, PENDING, REJECTED):
                return   # a rejected command is not repeated; diagnostics say why
            self.resends += 1
            if events is not None:
                events.append(Event('warning', f'motors: command not acknowledged '
                                    f'({delivery}); sending it again', 'resend'))
        if command is self.safe_command:
            self._output = (command[0], command[1].copy())   # leaving it ramps from there
        mode, values = command
        if self._sent_seq is None or self.motors.delivery(self._sent_seq) == DELIVERED:
            self._waiting_since = time.monotonic()
        if mode == motor.TENSION:
            self._sent_seq = self.motors.command_tensions(values)
        else:
            self._sent_seq = self.motors.command_displacements(values)
        self.sent = (mode, values.copy())

    # ------------------------------------------------------------------ services

    def stop(self, now: float) -> str:
        """Latch the safe state until :meth:`resume`; return what was done."""
        if not self.stopped:
            self.stopped_by = '~/stop'
        self.stopped = True
        self.setpoint = None
        if self.motors is None:
            return 'no port open (unconfigured): stopped until ~/resume'
        self._command(self.safe_command)
        return f'safe state commanded: {self.settings.min_tension:g} N on every tendon'

    def resume(self, now: float) -> tuple[bool, str]:
        """
        Release the stop latch and the fault; servos a fault took down come back.

        Refused (False, why), the latch kept, while a motor cannot take torque again (a
        servo in hardware error needs ~/reboot first).
        """
        if self.motors is not None:
            refusal = self.motors.resume_refusal()
            if refusal:
                return False, f'not resumed, still stopped: {refusal}'
        was_stopped, self.stopped = self.stopped, False
        self.fault = self.stopped_by = ''
        if self.motors is not None:
            self.motors.clear_fault()   # one that persists is reported and latched again
            self.motors.recover()       # zero and limits re-taken where a servo reset
        self.setpoint = None
        self.setpoint_time = now
        # out of the latch the safe state holds until a setpoint; a bridge that was not
        # stopped keeps its watchdog armed (it may hold a tension: that must relax in time)
        self.armed = self.armed and not was_stopped
        return True, ('resumed: the next setpoint is ramped to' if was_stopped
                      else 'was not stopped')

    def reboot(self, timeout: float) -> tuple[bool, str]:
        """Reboot the motors in hardware error (operator's request); (done, what happened)."""
        if self.motors is None:
            return False, 'no port open (unconfigured): configure first'
        return self.motors.reboot(timeout)

    # ------------------------------------------------------------------ measurements

    def motor_status(self, now: float) -> tuple[MotorStatus | None, list[Event]]:
        """Return a new, plausible motor status to publish (or None), and what to log."""
        status = self.motors.status()
        if status is None or status.stamp <= self._last_status_stamp:
            return None, []
        self._last_status_stamp = status.stamp
        if self.plausible['motors'].update(self._implausible(status), now):
            return status, []
        return None, [Event('warning', f'motors: {self.plausible["motors"].last}; not '
                            'published', 'implausible motors')]

    def tips(self, now: float) -> tuple[list[tuple[np.ndarray, float]], list[Event]]:
        """Return the valid, plausible tips since the last call: (base frame [m], receive time)."""
        tips, events = [], []
        if self.sensor is None:
            return tips, events
        for sample, rx_time in self.sensor.measurements():
            if not sample.valid:
                self._invalid_run += 1
                continue
            self._last_valid, self._invalid_run = rx_time, 0
            tip = self.mount.to_base(sample.position)
            if self.plausible['sensor'].update(tip_problem(tip, self.settings.reach), now):
                tips.append((tip, rx_time))
            else:
                events.append(Event('warning', f'tip sensor: {self.plausible["sensor"].last}; '
                                    'not published', 'implausible sensor'))
        self._say_blindness(now, events)
        return tips, events

    def _blindness(self, now: float) -> tuple[int, str]:
        """(OK, WARN or ERROR, why) of the tip sensor's samples: is it blind, for how long."""
        since = self._sensor_since if self._last_valid is None else self._last_valid
        age = now - since
        if not self._invalid_run and age <= self.settings.stale_timeout:
            return OK, ''
        what = 'nothing received' if not self._invalid_run else (
            f'{self._invalid_run} invalid samples, the last: '
            f'{self.sensor.statistics()[1].last_invalid or "no target"}')
        if age >= self.settings.blind_timeout:
            return ERROR, f'blind: no valid sample for {age:.1f} s ({what})'
        return WARN, f'blind: no valid sample for {age:.1f} s ({what})'

    def _say_blindness(self, now: float, events: list[Event]) -> None:
        """Log when the sensor goes blind, stays blind past blind_timeout, and sees again."""
        level, why = self._blindness(now)
        said = {OK: '', WARN: 'warn', ERROR: 'error'}[level]
        if said == self._blind_said or (level == WARN and self._blind_said == 'error'):
            return
        self._blind_said = said
        if level == ERROR:
            events.append(Event('error', f'tip sensor: {why}; no tip is published'))
        elif level == WARN:
            events.append(Event('warning', f'tip sensor: {why}; no tip is published', 'blind'))
        else:
            events.append(Event('info', 'tip sensor: valid samples again'))

    def _implausible(self, status: MotorStatus) -> str:
        s = self.settings
        return tension_problem(status.tensions, s.max_tensions, s.tension_margin, list(s.names))

    # ------------------------------------------------------------------ diagnostics

    def motor_diagnostics(self, now: float) -> Status:
        """Link health, command delivery, device faults and plausibility of the motors."""
        link, commands = self.motors.statistics()
        status = Status(*self._link_level(link, now), _link_values(link, now))
        delivery = DELIVERED if self._sent_seq is None else self.motors.delivery(self._sent_seq)
        if delivery == REJECTED:
            status.level = ERROR
            status.message = f'the device rejects the command ({commands.last_nak})'
        elif delivery != DELIVERED:
            waiting = now - max(self._waiting_since, commands.last_ack_time or 0.0)
            if waiting > self.settings.delivery_timeout:
                status.level = ERROR
                status.message = f'commands not acknowledged for {waiting:.1f} s'
        status.values += [
            ('acks', commands.acks), ('naks', commands.naks), ('last_nak', commands.last_nak),
            ('retransmits', commands.retransmits), ('ack_timeouts', commands.ack_timeouts),
            ('last_acked_seq', commands.last_acked_seq), ('resends', self.resends)]
        reading = self.motors.status()
        if reading is not None:
            faults = {name: self.motors.fault_names(int(f))
                      for name, f in zip(self.settings.names, reading.faults) if f}
            status.values += [(f'faults {name}', ', '.join(f)) for name, f in faults.items()]
            status.values += [(f'mode {name}', m)
                              for name, m in zip(self.settings.names, reading.modes)]
            if faults and status.level != ERROR:
                status.level, status.message = ERROR, f'motor faults: {faults}'
        status.values += self.motors.diagnostic_values()
        self._plausibility_level('motors', status)
        if self.fault:
            status.level, status.message = ERROR, f'fault, stopped: {self.fault}'
        return status

    def sensor_diagnostics(self, now: float) -> Status:
        """Link health, sample counts, blindness and plausibility of the tip sensor."""
        link, samples = self.sensor.statistics()
        status = Status(*self._link_level(link, now), _link_values(link, now) + [
            ('samples', samples.samples), ('invalid', samples.invalid), ('lost', samples.lost),
            ('overflow', samples.overflow), ('last_invalid', samples.last_invalid),
            ('last_valid_age', '' if self._last_valid is None
             else f'{now - self._last_valid:.3f}')])
        level, why = self._blindness(now)
        if level > status.level:
            status.level, status.message = level, why
        self._plausibility_level('sensor', status)
        return status

    def safety_diagnostics(self, now: float) -> Status:
        """Whether the bridge follows setpoints, and why not."""
        if self.stopped:
            level, message = WARN, (f'stopped by {self.stopped_by or "~/stop"}: safe state '
                                    'until ~/resume')
        elif not self.active:
            level, message = WARN, 'inactive (lifecycle): safe state'
        elif self.watchdog_tripped:
            level, message = WARN, 'watchdog: no setpoint, safe state'
        elif not self.armed:
            level, message = OK, 'safe state until the first setpoint'
        else:
            level, message = OK, 'following setpoints'
        return Status(level, message, [
            ('active', self.active), ('stopped', self.stopped),
            ('stopped_by', self.stopped_by),
            ('watchdog_tripped', self.watchdog_tripped), ('watchdog_armed', self.armed),
            ('setpoint_age', f'{now - self.setpoint_time:.3f}'),
            ('rejected_setpoints', self.rejected),
            ('last_sent', '' if self.sent is None else
             f'{self.sent[0]} {np.round(self.sent[1], 6).tolist()}')])

    def servo_diagnostics(self) -> list[tuple[str, str, Status]]:
        """(name, hardware id, status) per servo that reports its own state (Dynamixel)."""
        out = []
        for servo in self.motors.servo_states():
            name = self.settings.names[servo.channel]
            level, message = OK, 'torque on' if servo.torque else 'torque off'
            if servo.fault or servo.hardware_error:
                level, message = ERROR, servo.fault or ', '.join(
                    self.motors.fault_names(servo.hardware_error))
            elif self.active and not servo.torque:
                level = WARN
            out.append((f'servo {name}', f'{servo.model} ID {servo.servo_id} firmware '
                        f'v{servo.firmware}', Status(level, message, [
                            ('servo_id', servo.servo_id), ('torque', servo.torque),
                            ('hardware_error', ', '.join(
                                self.motors.fault_names(servo.hardware_error))),
                            ('hardware_error_bits', f'0x{servo.hardware_error:02X}'),
                            ('bus_watchdog', servo.bus_watchdog), ('mode', servo.mode),
                            ('fault', servo.fault)])))
        return out

    def _link_level(self, link, now: float) -> tuple[int, str]:
        age = _rx_age(link, now)
        if link.state != CONNECTED:
            return ERROR, f'disconnected ({link.last_error or "not opened yet"})'
        if age > self.settings.stale_timeout:
            return WARN, f'connected, but nothing valid received for {age:.1f} s'
        return OK, 'connected'

    def _plausibility_level(self, device: str, status: Status) -> None:
        """WARN while ``device`` reports implausible readings (ERROR comes with the stop)."""
        check = self.plausible[device]
        status.values.append(('implausible', check.count))
        if check.since is not None and status.level == OK:
            status.level, status.message = WARN, check.last


def start_device(device: MotorBus | TipSensor, timeout: float) -> str:
    """
    Start ``device`` and wait up to ``timeout`` s for it to connect: '' or why it did not.

    The device retries meanwhile (its reconnect back-off), as a bus whose servo missed one
    PING or a port that appears a moment late deserves (ROBOTIS's own ros2_control interface
    retries its start too); the last attempt's error is the answer.
    """
    device.start()
    deadline = time.monotonic() + timeout
    while True:
        # the state is read once more after the deadline: on a loaded machine this thread
        # can wake late, after the port opened in time
        expired = time.monotonic() >= deadline
        link = device.link.statistics()
        if link.state == CONNECTED:
            return ''
        if expired:
            return link.last_error or f'not open after {timeout:g} s'
        time.sleep(0.005)


def _same(a: tuple[str, np.ndarray] | None, b: tuple[str, np.ndarray] | None) -> bool:
    return a is not None and b is not None and a[0] == b[0] and np.array_equal(a[1], b[1])


def _rx_age(link, now: float) -> float:
    """Seconds since the link last received a valid frame (infinite if never)."""
    return float('inf') if link.last_rx_time is None else now - link.last_rx_time


def _link_values(link, now: float) -> list[tuple[str, object]]:
    return [('state', link.state), ('frames_ok', link.frames_ok),
            ('bad_checksum', link.bad_checksum), ('parse_errors', link.parse_errors),
            ('bytes_dropped', link.bytes_dropped), ('bytes_received', link.bytes_received),
            ('frames_sent', link.frames_sent), ('reconnects', link.reconnects),
            ('connect_failures', link.connect_failures),
            ('last_rx_age', f'{_rx_age(link, now):.3f}'), ('last_error', link.last_error)]
