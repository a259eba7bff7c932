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

"""The Dynamixel bus file: what it may say, and one-line errors naming what it must not."""

import pytest
from tendon_robot_sim import share_dir
from tendon_robot_sim.protocol.devices import load_dynamixel_bus
from tendon_robot_sim.protocol.dynamixel import control_table as dxl

CHANNEL = '{id: 1, pulley_radius: 0.015, direction: 1, current_limit: 0.5}'


def test_the_package_file_is_current_control_with_four_channels():
    channels, settings = load_dynamixel_bus(share_dir() / 'config' / 'dynamixel.yaml')
    assert [c.servo_id for c in channels] == [1, 2, 3, 4]
    assert settings == dxl.BusSettings('current', 0.02, bus_watchdog=1.0, latency_timer=0.016)
    assert settings.operating_mode == dxl.CURRENT_MODE
    assert settings.bus_watchdog_units == 50
    assert dict(channels[0].control_table) == {'drive_mode': 0, 'return_delay_time': 0}


def test_control_table_items_of_the_file_and_of_a_channel(tmp_path):
    """A channel's own control_table overrides the file's; Drive Mode is always written."""
    path = tmp_path / 'bus.yaml'
    path.write_text('bus_watchdog: 0\ncontrol_table: {profile_velocity: 100, '
                    'position_p_gain: 900}\nchannels:\n'
                    '  - {id: 1, pulley_radius: 0.015, control_table: {profile_velocity: 20, '
                    'drive_mode: 4}}\n  - {id: 2, pulley_radius: 0.015}\n')
    channels, settings = load_dynamixel_bus(path)
    assert settings.bus_watchdog_units == 0
    assert dict(channels[0].control_table) == {'drive_mode': 4, 'position_p_gain': 900,
                                               'profile_velocity': 20}
    assert dict(channels[1].control_table) == {'drive_mode': 0, 'position_p_gain': 900,
                                               'profile_velocity': 100}
    assert channels[1].current_limit is None   # the model's own largest


def test_current_based_position_with_its_travel_limit(tmp_path):
    path = tmp_path / 'bus.yaml'
    path.write_text(f'tension_mode: current_based_position\ntravel_limit: 0.03\n'
                    f'channels: [{CHANNEL}]\n')
    _, settings = load_dynamixel_bus(path)
    assert settings.operating_mode == dxl.CURRENT_BASED_POSITION_MODE
    assert settings.travel_limit == 0.03
    assert settings.min_firmware == 0
    path.write_text(f'min_firmware: 38\nchannels: [{CHANNEL}]\n')
    assert load_dynamixel_bus(path)[1].min_firmware == 38


@pytest.mark.parametrize('text, message', [
    ('tension_mode: torque\nchannels: [CH]',
     "tension_mode: must be one of ['current', 'current_based_position'], got 'torque'"),
    ('travel_limit: -0.01\nchannels: [CH]', 'travel_limit: must be > 0 m, got -0.01'),
    ('travel_limit: .nan\nchannels: [CH]', 'travel_limit: must be > 0 m, got nan'),
    ('travel_limit: yes\nchannels: [CH]', 'travel_limit: must be > 0 m, got True'),
    ('min_firmware: 300\nchannels: [CH]', 'min_firmware: must be an integer in [0, 255], got 300'),
    ('min_firmware: 38.5\nchannels: [CH]', 'min_firmware: must be an integer in [0, 255]'),
    ('speed: 3\nchannels: [CH]', "unknown keys ['speed']"),
    ('channels: []', 'channels: must be a non-empty list'),
    ('channels: [{id: 300, pulley_radius: 0.01}]', 'channels[0].id: must be an integer in'),
    ('channels: [{id: 1, pulley_radius: 0}]', 'channels[0].pulley_radius: must be > 0 m'),
    ('channels: [{id: 1}]', 'channels[0].pulley_radius: missing'),
    ('- 1\n- 2', 'must be a mapping with channels'),
    ('bus_watchdog: 3\nchannels: [CH]',
     'bus_watchdog: must be 0 (off) or 0.02 .. 2.54 s, got 3'),
    ('bus_watchdog: -1\nchannels: [CH]', 'bus_watchdog: must be 0 (off) or 0.02'),
    ('latency_timer: 0\nchannels: [CH]', 'latency_timer: must be 0.001 .. 0.255 s, got 0'),
    ('latency_timer: 16\nchannels: [CH]', 'latency_timer: must be 0.001 .. 0.255 s, got 16'),
    ('latency_timer: .nan\nchannels: [CH]', 'latency_timer: must be 0.001 .. 0.255 s, got nan'),
    ('latency_timer: yes\nchannels: [CH]', 'latency_timer: must be 0.001 .. 0.255 s, got True'),
    ('control_table: {operating_mode: 1}\nchannels: [CH]',
     'control_table.operating_mode: set by tension_mode, not here'),
    ('control_table: {bus_watchdog: 1}\nchannels: [CH]',
     'control_table.bus_watchdog: set by bus_watchdog, not here'),
    ('control_table: {led: 1}\nchannels: [CH]',
     'control_table.led: not an item the bus file sets; settable:'),
    ('control_table: {drive_mode: 1}\nchannels: [CH]',
     'control_table.drive_mode: only bit 2 (4, time-based profile) may be set, got 1'),
    ('control_table: {drive_mode: 8}\nchannels: [CH]', 'Torque On by Goal Update (8)'),
    ('control_table: {return_delay_time: 255}\nchannels: [CH]',
     'control_table.return_delay_time: must be an integer in [0, 254], got 255'),
    ('control_table: [1]\nchannels: [CH]', 'control_table: must be a mapping'),
    ('channels: [{id: 1, pulley_radius: 0.01, control_table: {profile_velocity: -1}}]',
     'channels[0].control_table.profile_velocity: must be an integer in [0, 32767], got -1'),
    ('channels: [{id: 1, pulley_radius: 0.01, current_limit: 0}]',
     'channels[0].current_limit: must be > 0 A, got 0'),
])
def test_a_bad_bus_file_is_refused_naming_the_field(tmp_path, text, message):
    path = tmp_path / 'bus.yaml'
    path.write_text(text.replace('CH', CHANNEL))
    with pytest.raises(dxl.ChannelError) as error:
        load_dynamixel_bus(path)
    assert message in str(error.value) and '\n' not in str(error.value)
