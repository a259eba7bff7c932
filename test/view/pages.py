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

"""A page of the view with every control it has, and a record of what each control did."""

import dataclasses

from tendon_robot_sim import default_robot_file
from tendon_robot_sim.models.registry import input_limits
from tendon_robot_sim.view.inputs import command_of
from tendon_robot_sim.view.page import ViewPage


class Recorder:
    """The page's warn: every refusal, unthrottled (the throttle is tested on its own)."""

    def __init__(self):
        self.said: list[tuple[str, str]] = []

    def __call__(self, kind: str, text: str) -> None:
        self.said.append((kind, text))

    def since(self, start: int) -> list[tuple[str, str]]:
        return self.said[start:]


@dataclasses.dataclass
class Page:
    """A page with every control the view has, and what its controls did."""

    page: ViewPage
    said: Recorder
    sent: list
    targets: list
    calls: list
    played: list


def make_page(**kwargs) -> Page:
    """
    Serve a page of the default robot on a free port: sliders, tip target, Stop/Resume, playback.

    ``kwargs`` go to :class:`ViewPage` (``host``, ``hardware``, ``remote_control``).
    """
    _, limits = input_limits(default_robot_file())
    said, sent, targets, calls, played = Recorder(), [], [], [], []
    page = ViewPage('hostile', warn=said, port=0, command=command_of('tension', limits),
                    send_command=lambda name, value: sent.append((name, value)),
                    send_target=targets.append, check_target=lambda point: None, **kwargs)
    page.add_hardware('/hardware_bridge', calls.append)
    page.add_playback(1.0, lambda t: played.append(('seek', t)),
                      lambda play: played.append(('play', play)),
                      lambda speed: played.append(('speed', speed)))
    return Page(page, said, sent, targets, calls, played)
