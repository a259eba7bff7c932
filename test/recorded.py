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

"""A real rosbag2 bag of a simulated robot: what the simulator publishes, as it publishes it."""

from pathlib import Path

from geometry_msgs.msg import Point
import numpy as np
from rclpy.serialization import serialize_message
from std_msgs.msg import Header
from tendon_robot_sim import default_robot_file
from tendon_robot_sim.experiment.bag import BagWriter, OfferedQos
from tendon_robot_sim.models.registry import create_model
from tendon_robot_sim.ros import topics
from tendon_robot_sim.ros.messages import joint_state_msg, markers_msg, time_msg, tip_pose_msg

PERIOD = 0.02    # s between two recorded states (the simulator's 50 Hz)
RECORDED = (topics.BACKBONE_MARKERS, topics.TIP_POSE, topics.TENDON_STATE)


def write_bag(path: Path, tensions: np.ndarray, robot=None, markers_from: int = 0,
              mode: str = 'quasi_static', targets: dict | None = None) -> list:
    """
    Write the quasi-static robot's answer to each row of ``tensions`` (N), one per PERIOD.

    Returns the model states, in order. The bag holds backbone/markers, tip/pose and
    tendon/state, serialized by rclpy as the simulator's publishers send them; markers from
    row ``markers_from`` on (a recording that began before the first markers came). ``mode``:
    the simulator's (a kind without statics: ``dynamic``, its state at each input unmoved).
    ``targets``: row -> a point (m, base frame) published on tip/target at that row's time.
    """
    _, _, model = create_model(robot or default_robot_file(), mode)
    states, targets = [], targets or {}
    with BagWriter(path) as bag:
        for topic in RECORDED + ((topics.TIP_TARGET,) if targets else ()):
            bag.add_topic('/' + topic.name, topics.type_name(topic.msg_type), OfferedQos())
        for i, row in enumerate(tensions):
            model.apply('effort', list(row))
            state = model.state()
            states.append(state)
            stamp = time_msg(1.0 + i * PERIOD)
            frame = model.base_frame
            messages = (markers_msg(state.markers, frame, stamp),
                        tip_pose_msg(state.tip, frame, stamp),
                        joint_state_msg(model.inputs.names, state.position,
                                        np.zeros_like(state.position), state.effort, stamp))
            for topic, message in zip(RECORDED, messages):
                if i < markers_from and message is messages[0]:
                    continue
                bag.write('/' + topic.name, int((1.0 + i * PERIOD) * 1e9),
                          serialize_message(message))
            if i in targets:
                x, y, z = map(float, targets[i])
                bag.write('/' + topics.TIP_TARGET.name, int((1.0 + i * PERIOD) * 1e9),
                          serialize_message(topics.TIP_TARGET.msg_type(
                              header=Header(stamp=stamp, frame_id=frame),
                              point=Point(x=x, y=y, z=z))))
    return states
