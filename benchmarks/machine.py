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

"""What the benchmark figures were measured on: printed with every result."""

from importlib import metadata
import os
import platform


def machine_info(*packages: str) -> dict:
    """CPU, load and the versions of Python and of ``packages`` (distribution names)."""
    info = {
        'machine': platform.machine(),
        'processor': platform.processor() or _cpu_model(),
        'cpus': os.cpu_count(),
        # the figures depend on what else runs: say how busy the machine was
        'load_average_1min': os.getloadavg()[0],
        'python': platform.python_version(),
    }
    info.update({name: metadata.version(name) for name in packages})
    return info


def _cpu_model() -> str:
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown'
