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


"""Processes started as from a terminal, whatever started the test run."""

import signal


def as_from_a_terminal() -> None:
    """
    ``preexec_fn`` of a child that a test stops by closing its terminal (SIGHUP).

    A run under ``nohup`` ignores SIGHUP, and the ignore is inherited through exec: the child
    would keep ignoring it, by design (``nohup`` asked it to outlive the terminal). A child
    started from a terminal has the default action; give it that.
    """
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
