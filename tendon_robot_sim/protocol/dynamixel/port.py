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
The port of a Dynamixel bus: the SDK's port and packets.

The port is locked for one process and timed on the adapter; the packets are stuffed as
the Protocol 2.0 page says, both ways.
"""

from __future__ import annotations

import select

import dynamixel_sdk as sdk
from dynamixel_sdk import protocol2_packet_handler as packet

from tendon_robot_sim.protocol.dynamixel import control_table as dxl
from tendon_robot_sim.protocol.dynamixel.setup import BusError
from tendon_robot_sim.protocol.dynamixel.stuffing import stuff, unstuff
from tendon_robot_sim.protocol.link import open_serial


class _Port(sdk.PortHandler):
    """
    The SDK's port, for this process alone, its answer timeout built on ``latency`` [ms].

    Opened locked (:func:`~tendon_robot_sim.protocol.link.open_serial`); the timeout is not
    the SDK's constant 16 ms. Waiting for an answer's bytes 1 ms at a time: the SDK's read
    loop spun a core meanwhile.
    """

    def __init__(self, url: str, latency: float):
        super().__init__(url)
        self.latency = latency

    def setupPort(self, cflag_baud):  # noqa: N802 (the SDK's name)
        """Open the port as the SDK does (8N1, no timeout), locked for this process alone."""
        if self.is_open:
            self.closePort()
        self.ser = open_serial(self.port_name, baudrate=self.baudrate, timeout=0)
        self.is_open = True
        self.ser.reset_input_buffer()
        self.tx_time_per_byte = (1000.0 / self.baudrate) * 10.0
        return True

    def readPort(self, length):  # noqa: N802 (the SDK's name)
        """Read up to ``length`` bytes, waiting up to 1 ms for the first."""
        select.select([self.ser.fileno()], [], [], 0.0 if self.ser.in_waiting else 0.001)
        return super().readPort(length)

    def setPacketTimeout(self, packet_length):  # noqa: N802 (the SDK's name)
        """Start waiting for ``packet_length`` bytes: transfer time, twice the latency, 2 ms."""
        self.packet_start_time = self.getCurrentTime()
        self.packet_timeout = self.tx_time_per_byte * packet_length + 2.0 * self.latency + 2.0


class _Packets(packet.Protocol2PacketHandler):
    """
    The SDK's Protocol 2.0 packets, stuffed both ways as the Protocol 2.0 page says.

    dynamixel-sdk 4.1.0 (Python): ``txPacket`` drops the stuffed copy ``addStuffing``
    returns, so an instruction's FF FF FD went out unstuffed and a servo took the FD after
    an FF FF FD FD for stuffing; ``removeStuffing`` shifts the status in place and then reads
    bytes it moved, so after one stuffed FF FF FD it dropped the FD of every FF FD FD, while
    the SDK's reads still cut their blocks at full length (shifted values).
    """

    def addStuffing(self, txpacket):  # noqa: N802 (the SDK's name)
        """Stuff ``txpacket`` (a list, header to CRC) in place, its length too; return it."""
        length = txpacket[packet.PKT_LENGTH_L] | txpacket[packet.PKT_LENGTH_H] << 8
        start = packet.PKT_INSTRUCTION
        body = stuff(bytes(txpacket[start:start + length - 2]))
        txpacket[start:] = [*body, 0, 0]   # the CRC's place: txPacket writes it
        txpacket[packet.PKT_LENGTH_L:packet.PKT_LENGTH_H + 1] = \
            (len(body) + 2).to_bytes(2, 'little')
        return txpacket

    def removeStuffing(self, rxpacket):  # noqa: N802 (the SDK's name)
        """Return the status ``rxpacket`` (header to CRC) unstuffed, its length too."""
        length = rxpacket[packet.PKT_LENGTH_L] | rxpacket[packet.PKT_LENGTH_H] << 8
        start = packet.PKT_INSTRUCTION
        body = unstuff(bytes(rxpacket[start:start + length - 2]))
        return [*rxpacket[:packet.PKT_LENGTH_L], *(len(body) + 2).to_bytes(2, 'little'),
                *body, *rxpacket[start + length - 2:start + length]]


def open_port(url: str, baudrate: int, latency_timer: float = dxl.SDK_LATENCY_TIMER):
    """
    Open the SDK's port on ``url`` at ``baudrate``; BusError names a port that does not open.

    ``latency_timer`` [s]: the USB adapter's latency the port allows for in each answer.
    """
    port = _Port(url, 1000.0 * latency_timer)
    try:
        if port.openPort() and port.setBaudRate(baudrate):
            return port
    except (OSError, ValueError) as error:   # SerialException: an OSError
        raise BusError(f'cannot open {url}: {error}') from None
    raise BusError(f'cannot open {url} at {baudrate} baud')


def packet_handler():
    """Return the SDK's Protocol 2.0 packet handler, stuffing both ways (:class:`_Packets`)."""
    return _Packets()
