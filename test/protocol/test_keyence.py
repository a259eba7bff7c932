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

"""LK-G style laser controller: the manual's value format, and the poller against the emulator."""

import time

import numpy as np
import pytest
from tendon_robot_sim import default_robot_file, share_dir
from tendon_robot_sim.emulator.devices import DeviceThread
from tendon_robot_sim.emulator.endpoints import PtyEndpoint
from tendon_robot_sim.emulator.keyence import KeyenceController
from tendon_robot_sim.emulator.plant import Plant
from tendon_robot_sim.models.tendon_robot import load_robot
from tendon_robot_sim.protocol import keyence
from tendon_robot_sim.protocol.mounting import sensor_mount
from waiting import wait_for


# The LK-G user manual's measurement value format examples (display -> output).
MANUAL = [(1.2345, 4, '+01.2345'), (-0.0120, 4, '-00.0120'), (1234.56, 2, '+1234.56'),
          (-1.2, 1, '-00001.2')]


@pytest.mark.parametrize('mm, decimals, text', MANUAL)
def test_values_are_written_and_read_as_in_the_manual(mm, decimals, text):
    assert keyence.format_value(mm, decimals) == text
    assert keyence.parse_value(text) == pytest.approx(mm)


def test_out_of_range_errors_and_malformed_responses():
    assert keyence.parse_measurement(b'M0,+FFFFFFF,-00.0120') == (None, pytest.approx(-0.012))
    assert keyence.parse_measurement(b'M0,-FFFFFFF,+01.2345')[0] is None
    with pytest.raises(keyence.KeyenceError, match='controller error 00 .command error. for M1'):
        keyence.parse_measurement(b'ER,M1,00')
    for bad in (b'M0,+01.2345', b'M0,+1.2345,+01.2345', b'M0,+0x.2345,+01.2345', b'\xff'):
        with pytest.raises(keyence.KeyenceError):
            keyence.parse_measurement(bad)
    with pytest.raises(ValueError, match='keyence_axes'):
        keyence.Heads(axes=(1, 1))


@pytest.fixture(scope='module')
def plant():
    return Plant(load_robot(default_robot_file()))


def test_the_poller_reads_the_tip_and_counts_out_of_range_and_silence(plant, tmp_path):
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    heads = keyence.Heads(axes=(1, 2), signs=(1, -1), offsets=(0.001, 0.0))
    controller = KeyenceController(plant, mount, heads)
    assert controller.receive(b'N0\r') == [b'ER,N0,00\r']
    thread = DeviceThread(controller, PtyEndpoint(str(tmp_path / 'lkg')), 100.0).start()
    sensor = keyence.KeyenceSensor(thread.endpoint.path, heads, rate=50.0,
                                   backoff=(0.05, 0.2)).start()
    try:
        samples = wait_for(sensor.measurements, what='samples')
        tip = mount.to_sensor(plant.tip_position)
        sample = samples[-1][0]
        assert sample.valid
        # Two heads, micrometre resolution (3 decimals of mm); the third axis is not measured.
        np.testing.assert_allclose(sample.position[1:], tip[1:], atol=1e-6)
        controller.blind(1)
        wait_for(lambda: any(not s.valid for s, _ in sensor.measurements()), what='invalid')
        assert sensor.statistics()[1].invalid >= 1
        controller.blind(1, False)
        thread.disconnect(0.5)
        wait_for(lambda: not sensor.connected or sensor.statistics()[1].lost,
                 what='the loss to show')
        wait_for(lambda: sensor.connected and sensor.measurements(),
                 what='the sensor to come back')
    finally:
        sensor.stop()
        thread.stop()


def test_the_alarm_value_is_an_invalid_sample_not_a_link_error(plant, tmp_path):
    """
    LK-G user manual, "Measurement value format" (page 5-6): ``-------`` -> ``XXXXXXXX``.

    An alarm (no target) is an invalid sample of that head, like ``+FFFFFFF``; the link is
    not to blame (no parse error), and the other head's value still reads.
    """
    assert keyence.parse_value('XXXXXXXX') is None
    assert keyence.parse_measurement(b'M0,XXXXXXXX,+01.2345') == (None, pytest.approx(1.2345))
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    controller = KeyenceController(plant, mount)
    controller.alarm(0)
    assert controller.receive(b'M0\r')[0].startswith(b'M0,XXXXXXXX,')
    last_invalid = invalid_until_cleared(controller, tmp_path, lambda: controller.alarm(0, False))
    assert last_invalid == 'head 1 alarm, no target (XXXXXXXX)'


def invalid_until_cleared(controller, tmp_path, clear) -> str:
    """
    Poll ``controller``: every sample invalid, and the link not to blame; then ``clear()``.

    Returns what the sensor said of the last invalid sample, once a valid one came again.
    """
    thread = DeviceThread(controller, PtyEndpoint(str(tmp_path / 'lkg')), 100.0).start()
    sensor = keyence.KeyenceSensor(thread.endpoint.path, keyence.Heads(), rate=50.0).start()
    try:
        wait_for(lambda: sensor.statistics()[1].invalid >= 3, what='invalid samples')
        link, samples = sensor.statistics()
        assert link.parse_errors == 0 and link.last_error == ''
        assert samples.invalid == samples.samples
        clear()
        wait_for(lambda: any(s.valid for s, _ in sensor.measurements()), what='valid again')
        return samples.last_invalid
    finally:
        sensor.stop()
        thread.stop()


def test_readings_of_100_mm_and_more_keep_their_value(plant, tmp_path):
    """
    LK-G user manual, "Measurement value format" (page 5-6): seven characters.

    The decimal point is where the display setting puts it. Within the LK-G500's +-250 mm
    every reading fits with 3 decimals (+123.456); with 4 only those below 100 mm would.
    """
    assert keyence.decimals_for(250.0) == 3 and keyence.decimals_for(10.0) == 4
    assert keyence.format_value(-249.9994, 3) == '-249.999'
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    tip = mount.to_sensor(plant.tip_position)
    # Heads whose zero lies 123.456 mm and 200 mm beside the tip.
    heads = keyence.Heads(axes=(1, 2), offsets=(tip[1] - 0.123456, tip[2] + 0.2))
    controller = KeyenceController(plant, mount, heads)
    reply = controller.receive(b'M0\r')[0]
    assert reply == b'M0,+123.456,-200.000\r', reply
    thread = DeviceThread(controller, PtyEndpoint(str(tmp_path / 'lkg')), 100.0).start()
    sensor = keyence.KeyenceSensor(thread.endpoint.path, heads, rate=50.0).start()
    try:
        sample = wait_for(sensor.measurements, what='samples')[-1][0]
        assert sample.valid
        np.testing.assert_allclose(sample.position[1:], tip[1:], atol=1e-6)
    finally:
        sensor.stop()
        thread.stop()


def test_a_refused_measurement_is_an_invalid_sample_naming_the_controllers_error(
        plant, tmp_path):
    """
    LK-G user manual, "Outline of the command format" (page 5-5): ``ER,M0,<code>``.

    The controller answered, and measured nothing: an invalid sample whose reason is its
    error (what the blind sensor's diagnostics then name), not a fault of the link. It was
    a parse error, so the blind sensor said "nothing received" while the controller spoke.
    """
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    controller = KeyenceController(plant, mount)
    controller.refuse()
    assert controller.receive(b'M0\r') == [b'ER,M0,01\r']
    assert controller.receive(b'N0\r') == [b'ER,N0,00\r']   # M0 garbled: 00 still
    last_invalid = invalid_until_cleared(controller, tmp_path, lambda: controller.refuse(None))
    assert last_invalid == 'controller error 01 (status error) for M0'


@pytest.mark.parametrize('mm, decimals, text', MANUAL)
def test_the_emulator_answers_m1_with_out1_alone_as_the_manual_writes_it(
        plant, mm, decimals, text):
    """
    LK-G user manual, "Outline of the command format" (page 5-5) and its value format (5-6).

    ``M1`` asks for OUT1's measured value: the answer is headed by the command received
    (``M1,<value 1>``, in the manual's format), in either case, and a command the
    controller cannot execute is answered ``ER,M1,<code>``. The poller sends it to find its
    place again after a lost answer: ``M0``'s answer is never headed ``M1``.
    """
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    tip = mount.to_sensor(plant.tip_position)
    heads = keyence.Heads(axes=(1, 2), offsets=(tip[1] - mm * 1e-3, tip[2]))
    controller = KeyenceController(plant, mount, heads, measuring_range=9999.0,
                                   decimals=decimals)
    assert controller.receive(b'M1\r') == [f'M1,{text}\r'.encode()]
    assert keyence.command_answered(controller.receive(b'm1\r')[0][:-1]) == b'M1'
    assert controller.receive(b'M0\r')[0].startswith(f'M0,{text},'.encode())
    controller.blind(0)
    assert controller.receive(b'M1\r') == [f'M1,{text[0]}FFFFFFF\r'.encode()]   # its sign
    controller.alarm(0)
    assert controller.receive(b'M1\r') == [b'M1,XXXXXXXX\r']
    controller.refuse()
    assert controller.receive(b'M1\r') == [b'ER,M1,01\r']
    assert [keyence.command_answered(line[:-1]) for line in controller.receive(
        b'M0\rM1\rN0\r')] == [b'M0', b'M1', b'N0']


class NumberedController(KeyenceController):
    """Head 1 reads the number of the measurement [mm], head 2 zero; ``taken`` says when."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.taken = []   # time.monotonic() of each measurement
        self.noise = False

    def receive(self, data: bytes) -> list[bytes]:
        """With ``noise`` set, a line of noise comes first after the next ``M0``."""
        replies = super().receive(data)
        if self.noise and b'M0' in data.upper():
            self.noise = False
            return [b'\xff\r'] + replies
        return replies

    def _values(self) -> list[str]:
        self.taken.append(time.monotonic())
        return [keyence.format_value(len(self.taken) - 1.0, 0), keyence.format_value(0.0, 0)]


def test_a_late_answer_is_never_taken_for_the_next_requests(plant, tmp_path):
    """
    LK-G user manual, "Outline of the command format" (page 5-5): one answer per command.

    The controller answers each request, in order, however late. The poller flushed its
    input and sent the next ``M0`` after a timeout, and the late answer, arriving while it
    waited for the new one, was taken for it: a tip measured 0.2 s (4 timeouts) before,
    stamped as new, in the tip feedback loop. Now it is dropped; its sample stays lost.
    """
    taken, ages, link, counts = late_answers_taken(plant, tmp_path, 0.05, 0.5, [0.2] * 5)
    assert not taken, (f'late answers {taken} taken for later requests: ages '
                       f'{max(ages):.3f} s, the timeout 0.05 s')
    assert counts.lost >= 5 and 'timed out: dropped' in link.last_error


def test_an_answer_later_than_the_late_limit_is_never_taken_either(plant, tmp_path):
    """
    An answer later than the timeout and ``late_limit`` together is dropped too.

    The poller waited ``late_limit`` for the answer a timed-out request owed, then sent
    ``M0`` again, and took the late answer, when it came, for the new request's: each of
    these, 0.3 s to 0.42 s late with a 0.05 s timeout and a 0.01 s limit, passed as a new
    tip. Now it asks ``M1``, whose answer no ``M0`` answer can pass for, and drops all that
    comes before that answer; fresh samples follow.
    """
    delays = [0.3, 0.33, 0.36, 0.39, 0.42]
    taken, ages, link, counts = late_answers_taken(plant, tmp_path, 0.05, 0.01, delays)
    assert not taken, (f'late answers {taken} taken for later requests: ages '
                       f'{max(ages):.3f} s, the timeout 0.05 s')
    assert counts.lost >= 5 and 'timed out: dropped' in link.last_error


def test_an_answer_after_a_line_not_headed_m0_is_never_taken_for_the_next_request(
        plant, tmp_path):
    """
    A line that is not headed ``M0`` (line noise) does not answer ``M0``: its answer may follow.

    The poller took the noise for the answer (a parse error) and sent the next ``M0`` one
    period (0.02 s) later; the answer, 0.045 s late (within the timeout), was then taken
    for the next request's. Now the poller finds its place with ``M1`` first.
    """
    taken, ages, link, counts = late_answers_taken(plant, tmp_path, 0.05, 0.5, [0.045] * 5,
                                                   noise=True)
    assert not taken, (f'late answers {taken} taken for later requests: ages '
                       f'{max(ages):.3f} s, the timeout 0.05 s')
    assert link.parse_errors >= 5


def late_answers_taken(plant, tmp_path, timeout, late_limit, delays, noise=False):
    """
    Poll the numbered controller; hold back one answer ``delay`` [s] for each of ``delays``.

    With ``noise``, a line of noise comes at once in the late answer's place.

    After each, wait for a sample measured after the late answer (the poller recovered).
    Returns the late answers' numbers taken as samples, the samples' ages (receive time
    less measurement time [s]), and the link and sample counters.
    """
    mount = sensor_mount(share_dir() / 'urdf' / 'tendon_robot.urdf', 'base_link')
    controller = NumberedController(plant, mount)
    thread = DeviceThread(controller, PtyEndpoint(str(tmp_path / 'lkg')), 100.0).start()
    sensor = keyence.KeyenceSensor(thread.endpoint.path, keyence.Heads(), rate=50.0,
                                   timeout=timeout, late_limit=late_limit).start()
    samples = []

    def numbers():
        samples.extend(sensor.measurements())
        return [round(sample.position[1] * 1e3) for sample, _ in samples]

    try:
        wait_for(numbers, what='samples')
        late = []   # the numbers of the measurements answered late
        for delay in delays:   # a late answer can land between a timeout and the flush
            sent = len(controller.late_sent)
            controller.answer_late(delay)
            controller.noise = noise
            wait_for(lambda: len(controller.late_sent) > sent, what='the late answer')
            late.append(round(keyence.parse_value(
                controller.late_sent[-1][:-1].split(b',')[1].decode())))
            after = len(controller.taken)
            wait_for(lambda: max(numbers()) >= after, what='a sample measured after it')
        link, counts = sensor.statistics()
    finally:
        sensor.stop()
        thread.stop()
    ages = [stamp - controller.taken[round(sample.position[1] * 1e3)]
            for sample, stamp in samples]
    return [number for number in numbers() if number in late], ages, link, counts


@pytest.mark.parametrize('text', ['+nan    ', '+inf    ', '+1e+0005', '+1_234.5', '+1.2345 ',
                                  '+0001.2.', '-.......', '+    1.2'])
def test_a_value_is_digits_and_one_decimal_point_or_it_is_garbled(text):
    """
    LK-G user manual, "Measurement value format" (page 5-6): seven characters, right-aligned.

    Digits and at most one decimal point. Python's float() read '+nan    ' as NaN and
    '+inf    ' as infinity, both "valid" samples, and '+1e+0005' as 100 m: a garbled line
    is the link's fault (a parse error), never a tip.
    """
    with pytest.raises(keyence.KeyenceError, match='not a sign and 7 characters'):
        keyence.parse_value(text)
    with pytest.raises(keyence.KeyenceError):
        keyence.parse_measurement(f'M0,{text},+01.2345'.encode())


@pytest.mark.parametrize('kwargs, message', [
    ({'url': ''}, 'sensor_port: must not be empty'),
    ({'url': 'foo://bar'}, "sensor_port: cannot use port 'foo://bar': invalid URL, protocol "
                           "'foo' not known"),
    ({'baudrate': 250000}, 'sensor_baudrate: the LK-G talks at 9600, 19200, 38400, 57600 or '
                           '115200 baud, got 250000'),
])
def test_a_port_or_baud_rate_the_controller_cannot_use_is_refused_before_opening(kwargs,
                                                                                 message):
    """
    LK-G RS-232C: 9600 to 115200 baud, 8 data bits, no parity, 1 stop bit, CR.

    A rate the controller cannot be set to, or a port name pyserial cannot use, waited out
    the open timeout and then blamed the device (or, with a wrong rate, left a sensor that
    never answered); the streaming sensor refused a bad port at once.
    """
    settings = {'url': '/dev/null', 'heads': keyence.Heads(), **kwargs}
    with pytest.raises(ValueError) as error:
        keyence.KeyenceSensor(**settings)
    assert str(error.value) == message
