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
The entry point of the ``tendon-robot-sim`` script (setup.py), before the commands load.

A script's background job (``command &``) starts with SIGINT ignored. ``cli.main`` takes it
back, but only once its modules have loaded (0.3 s, longer under load): a ``kill -INT`` in
that time was lost, and ``record`` or ``emulate`` ran on until the next signal. Taken back
here, it interrupts the loading: exit 130 and no traceback, from the package's own hook
(``tendon_robot_sim.exit_quietly_on_interrupt``).
"""

import signal
import threading


def main() -> int:
    """Take Ctrl-C back if the process started with it ignored; run the command line."""
    if (signal.getsignal(signal.SIGINT) is signal.SIG_IGN
            and threading.current_thread() is threading.main_thread()):
        signal.signal(signal.SIGINT, signal.default_int_handler)
    from tendon_robot_sim import cli   # only now: loading the commands is what takes time
    return cli.main()
