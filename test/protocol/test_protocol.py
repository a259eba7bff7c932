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

"""Serial protocols: framing, checksums, sentence tables, unit conversion (no ROS, no ports)."""

import math

from hypothesis import example, given, settings, strategies as st
import pytest

from tendon_robot_sim.protocol import laser, motor
from tendon_robot_sim.protocol.framing import (checksum, ChecksumError, encode_frame, FieldError,
                                               FrameDecoder, FramingError, MAX_FRAME_LENGTH,
                                               parse_frame, ProtocolError, UnknownSentenceError)

MOTOR = motor.motor_device('tdcr-motor-v1')
LASER = laser.sensor_device('tdcr-laser-v1')


def test_checksum_is_the_xor_of_the_body_as_in_nmea():
    # A published NMEA sentence and its checksum (GPS receiver manuals, GPGLL example).
    assert checksum(b'GPGLL,5300.97914,N,00259.98174,E,125926,A') == 0x28
    xor = ord('A') ^ ord('C') ^ ord('K') ^ ord(',') ^ ord('7')
    assert encode_frame(['ACK', '7']) == b'$ACK,7*%02X\r\n' % xor


def test_wire_units_are_integer_micrometres_and_millinewtons():
    frame = MOTOR.encode(motor.SetTensions(17, (1.5, 0.0, 0.0123, 20.0)))
    assert frame.startswith(b'$TENA,17,1500,0,12,20000*')
    frame = MOTOR.encode(motor.SetDisplacements(3, (-0.0012345, 0.02, 0.0, 1e-7)))
    assert frame.startswith(b'$POSA,3,-1234,20000,0,0*')   # rounded to the micrometre
    status = MOTOR.decode(parse_frame(encode_frame(['MST', '2', 'P', '-1500', '250', '3250',
                                                    '0005'])))
    assert status == motor.ChannelStatus(2, motor.DISPLACEMENT, -1.5e-3, 2.5e-4, 3.25,
                                         motor.FAULT_TENSION_LIMIT | motor.FAULT_STALL)
    assert motor.fault_names(status.faults) == ['tension limit', 'stall']
    sample = LASER.decode(parse_frame(encode_frame(['LTP', '65535', '250000', '-3', '0', '97',
                                                    'V'])))
    assert sample.count == 65535 and sample.valid and sample.quality == pytest.approx(0.97)
    assert sample.position.tolist() == pytest.approx([0.25, -3e-6, 0.0])


def test_frame_errors_are_typed():
    good = encode_frame(['ACK', '12'])
    with pytest.raises(ChecksumError, match='checksum'):
        parse_frame(good.replace(b'12', b'13'))
    with pytest.raises(FramingError, match='hexadecimal'):
        parse_frame(b'$ACK,12\r\n')
    with pytest.raises(FramingError, match='line feed'):
        parse_frame(good[:-1])
    with pytest.raises(UnknownSentenceError, match="'XYZ'"):
        MOTOR.decode(('XYZ', '1'))
    with pytest.raises(FieldError, match=r'MST.mode: must be one of'):
        MOTOR.decode(('MST', '0', 'Q', '0', '0', '0', '0000'))
    with pytest.raises(FieldError, match=r'TENA: expected 1 fields and 1 to 16 tensions'):
        MOTOR.decode(('TENA', '5'))
    with pytest.raises(FieldError, match=r'LTP.quality: must be within \[0, 100\] %'):
        LASER.decode(('LTP', '0', '0', '0', '0', '101', 'V'))
    assert issubclass(ChecksumError, FramingError) and issubclass(FieldError, ProtocolError)


@pytest.mark.parametrize('value, problem', [
    (math.nan, 'must be finite'), (math.inf, 'must be finite'),
    (-0.5, r'must be within \[0, 1000\] N, got -0.5 N'), (1000.001, 'must be within'),
    ('3', "must be a number in N, got '3'"), (None, 'must be a number')])
def test_values_that_cannot_go_on_the_wire_raise_before_encoding(value, problem):
    with pytest.raises(FieldError, match=rf'TENA.tensions\[1\]: {problem}'):
        MOTOR.encode(motor.SetTensions(0, (1.0, value)))


def test_decoder_keeps_a_partial_frame_and_drops_garbage():
    decoder = FrameDecoder()
    frame = MOTOR.encode(motor.Ack(42))
    assert decoder.feed(b'\x00\xffjunk' + frame[:5]) == []
    assert decoder.pending == 5
    assert decoder.feed(frame[5:] + frame) == [('ACK', '42'), ('ACK', '42')]
    counts = decoder.counters
    assert (counts.frames, counts.bytes_dropped, counts.bytes_accepted) == (2, 6, 2 * len(frame))


def test_decoder_reports_a_truncated_frame_and_keeps_the_next_one():
    decoder = FrameDecoder()
    frame = MOTOR.encode(motor.Ack(1))
    items = decoder.feed(frame[:6] + frame)        # the line feed of the first one was lost
    assert isinstance(items[0], FramingError) and items[1] == ('ACK', '1')
    assert decoder.counters.framing_errors == 1 and decoder.counters.bytes_dropped == 6


def test_decoder_gives_up_on_a_line_longer_than_the_limit():
    decoder = FrameDecoder()
    items = decoder.feed(b'$' + b'A' * MAX_FRAME_LENGTH)
    assert len(items) == 1 and isinstance(items[0], FramingError)
    assert decoder.pending == 0 and decoder.counters.bytes_dropped == MAX_FRAME_LENGTH + 1


# ----------------------------------------------------------------- properties

SEQ = st.integers(0, motor.SEQ_MAX)
TENSION = st.integers(0, 1_000_000).map(lambda mn: mn / 1e3)         # N, wire-exact
DISPLACEMENT = st.integers(-2 ** 31, 2 ** 31 - 1).map(lambda um: um / 1e6)   # m
CHANNEL = st.integers(0, motor.MAX_CHANNELS - 1)
MOTOR_MESSAGES = st.one_of(
    st.builds(motor.SetTension, SEQ, CHANNEL, TENSION),
    st.builds(motor.SetTensions, SEQ, st.lists(TENSION, min_size=1, max_size=16).map(tuple)),
    st.builds(motor.SetDisplacement, SEQ, CHANNEL, DISPLACEMENT),
    st.builds(motor.SetDisplacements, SEQ,
              st.lists(DISPLACEMENT, min_size=1, max_size=16).map(tuple)),
    st.builds(motor.Ack, SEQ),
    st.builds(motor.Nak, st.none() | SEQ, st.sampled_from(motor.NAK_REASONS)),
    st.builds(motor.ChannelStatus, CHANNEL, st.sampled_from([motor.TENSION, motor.DISPLACEMENT]),
              DISPLACEMENT, DISPLACEMENT, TENSION, st.integers(0, 0xFFFF)),
)
LASER_MESSAGES = st.builds(
    laser.TipMeasurement, st.integers(0, laser.COUNT_MAX), DISPLACEMENT, DISPLACEMENT,
    DISPLACEMENT, st.integers(0, 100).map(lambda q: q / 100), st.booleans())


@given(st.one_of(MOTOR_MESSAGES.map(lambda m: (MOTOR, m)),
                 LASER_MESSAGES.map(lambda m: (LASER, m))))
def test_round_trip_of_every_valid_message(case):
    table, message = case
    frame = table.encode(message)
    assert len(frame) <= MAX_FRAME_LENGTH and frame.endswith(b'\r\n')
    items = FrameDecoder().feed(frame)
    assert len(items) == 1
    assert table.decode(items[0]) == message


@given(st.lists(MOTOR_MESSAGES, min_size=1, max_size=8), st.data())
def test_any_split_of_a_stream_gives_the_same_messages(messages, data):
    stream = b''.join(MOTOR.encode(m) for m in messages)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=10)))
    decoder = FrameDecoder()
    items = []
    for start, end in zip([0] + cuts, cuts + [len(stream)]):
        items += decoder.feed(stream[start:end])
    assert [MOTOR.decode(i) for i in items] == messages
    assert decoder.counters.bytes_dropped == 0 and decoder.pending == 0


@settings(max_examples=300)
@given(st.lists(st.one_of(st.binary(max_size=40),
                          MOTOR_MESSAGES.map(MOTOR.encode),
                          st.sampled_from([b'$', b'\n', b'*', b'\r\n', b',']))))
@example([b'$A*00\n', b'$' + b'x' * 300, b'\n$\n'])
def test_any_bytes_give_frames_or_counted_errors_never_an_exception(chunks):
    decoder = FrameDecoder()
    fed = 0
    items = []
    for chunk in chunks:
        items += decoder.feed(chunk)
        fed += len(chunk)
    counts = decoder.counters
    good = [i for i in items if not isinstance(i, ProtocolError)]
    bad = [i for i in items if isinstance(i, ProtocolError)]
    assert len(good) == counts.frames
    assert len(bad) == counts.checksum_errors + counts.framing_errors
    # Every byte is in a good frame, dropped, or waiting for the rest of its frame.
    assert counts.bytes_accepted + counts.bytes_dropped + decoder.pending == fed
    assert decoder.pending <= MAX_FRAME_LENGTH
    for fields in good:
        try:
            MOTOR.decode(fields)
        except ProtocolError:
            pass   # a frame whose content is not a motor message: a counted parse error
