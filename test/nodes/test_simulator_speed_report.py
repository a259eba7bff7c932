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
The simulator's line on a simulation slower than asked: when it comes and what it says.

It came every 10 s with "nodes with use_sim_time need publish_clock:=true", a hint unrelated
to being slow, whether or not any node waited for /clock.
"""

import pytest
from tendon_robot_sim.nodes.simulator_node import speed_report


def test_a_simulation_that_keeps_up_says_nothing():
    assert speed_report(0.95, 1.0, None, True) == ''


def test_a_slow_simulation_says_what_to_do_once_and_again_only_when_its_speed_changes():
    line = speed_report(0.4, 1.0, None, False)
    assert line.startswith('simulation runs at 0.4 x real time (target 1): this machine '
                           'cannot keep up; for a steady pace set real_time_factor to 0.32 '
                           'or less')
    assert 'publish_clock' not in line      # nobody waits for /clock
    assert speed_report(0.45, 1.0, 0.4, False) == ''      # about the same: said already
    assert speed_report(0.2, 1.0, 0.4, False).startswith('simulation runs at 0.2 x')


@pytest.mark.parametrize('waited', [True, False])
def test_the_clock_hint_comes_only_when_a_node_waits_for_clock(waited):
    line = speed_report(0.5, 1.0, None, waited)
    assert ('set publish_clock:=true' in line) == waited


def test_a_real_simulator_too_slow_says_so_with_the_clock_hint_only_for_a_clock_listener(
        monkeypatch):
    """
    The default rod at 100 x real time cannot keep up on any machine: the node says so once.

    A node subscribing to /clock (use_sim_time) while the simulator publishes none gets the
    publish_clock hint; the line comes once, not every period.
    """
    import rclpy
    from rclpy.parameter import Parameter
    from rcl_interfaces.msg import Log
    from rosgraph_msgs.msg import Clock
    from ros_helpers import logs_containing, Probe, spinning, wait_for
    from tendon_robot_sim.nodes import simulator_node

    monkeypatch.setattr(simulator_node, 'SPEED_REPORT_PERIOD', 1.0)
    context = rclpy.Context()
    rclpy.init(context=context)
    simulator = simulator_node.SimulatorNode(context=context, parameter_overrides=[
        Parameter('mode', value='dynamic'), Parameter('real_time_factor', value=100.0)])
    probe = Probe(context=context)
    probe.create_subscription(Clock, '/clock', lambda msg: None, 10)   # a use_sim_time node
    with spinning(simulator, probe, context=context):
        said = wait_for(lambda: logs_containing(probe, 'simulator', 'x real time', Log.INFO),
                        'the slow simulation said')
        assert 'this machine cannot keep up' in said[0].msg
        assert 'set publish_clock:=true' in said[0].msg
        wait_for(lambda: simulator.sim_clock > 0.0 and len(probe.logs) > 0, 'time running')
    assert len(logs_containing(probe, 'simulator', 'x real time', Log.INFO)) <= 2
