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
The ROS environment variables, checked before anything starts: one line naming the bad one.

rcl and the middleware read them only when a context or a node is made, and answer a bad
value each in its own way: ``ROS_DOMAIN_ID=abc`` an RCLError (an internal error of a command),
``ROS_DOMAIN_ID=300`` lines of coloured Fast DDS text that never name the variable,
``RMW_IMPLEMENTATION=rmw_nosuch_cpp`` exit 102, a static peer that does not resolve an error
when the node is made, a bad ``RCUTILS_*`` switch broken logging; a mistyped discovery range
only a warning, while DDS goes to another range than the one asked for. Every command and
node that starts rclpy calls :func:`check_ros_environment` first (``test/ros/test_environment.py``
walks them). The allowed values are those of the ROS 2 documentation and of rcl itself
(docs/ros_interface.md, "Environment").

No rclpy here: the check runs before rclpy starts, and the commands import it without ROS.
"""

import ipaddress
import os
from pathlib import Path
import re
import socket
import sys
import time

#: Highest ROS_DOMAIN_ID: DDS maps a domain to UDP ports 7400 + 250 * domain + ..., and above
#: 232 they no longer fit in 16 bits (Fast DDS: "Calculated port number is too high").
MAX_DOMAIN_ID = 232
#: What ROS_AUTOMATIC_DISCOVERY_RANGE may be (rcl's discovery_options.c; empty: LOCALHOST).
DISCOVERY_RANGES = ('LOCALHOST', 'SUBNET', 'OFF', 'SYSTEM_DEFAULT')
#: rcutils' logging switches: 0 or 1 (rcutils logging.c refuses anything else and logs nothing).
LOGGING_SWITCHES = ('RCUTILS_COLORIZED_OUTPUT', 'RCUTILS_LOGGING_USE_STDOUT',
                    'RCUTILS_LOGGING_BUFFERED_STREAM')
# A decimal whole number as people write it: rcl reads '010' as octal 8, '0x10' as 16,
# '12abc' as 12 and '-1' as "the default" (0).
_DECIMAL = re.compile(r'0|[1-9][0-9]*')


class RosEnvironmentError(ValueError):
    """A ROS environment variable with a value ROS cannot use; the text is one line."""


def check_ros_environment(environ=None) -> None:
    """
    Raise :class:`RosEnvironmentError` naming the first ROS variable of ``environ`` that is bad.

    ``environ`` defaults to ``os.environ``. Unset and empty variables are ROS's defaults.
    """
    environ = os.environ if environ is None else environ
    domain = environ.get('ROS_DOMAIN_ID', '')
    if domain and not (_DECIMAL.fullmatch(domain) and int(domain) <= MAX_DOMAIN_ID):
        raise _bad('ROS_DOMAIN_ID', domain, f'a whole number from 0 to {MAX_DOMAIN_ID} '
                   '(unset: 0)')
    reach = environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE', '')
    if reach and reach not in DISCOVERY_RANGES:
        raise _bad('ROS_AUTOMATIC_DISCOVERY_RANGE', reach,
                   f'one of {", ".join(DISCOVERY_RANGES)} (unset: LOCALHOST)')
    if reach in ('', 'LOCALHOST', 'SUBNET'):      # the ranges that use the static peers
        _check_static_peers(environ.get('ROS_STATIC_PEERS', ''))
    check_middleware(environ)
    for name in LOGGING_SWITCHES:
        value = environ.get(name, '')
        if value not in ('', '0', '1'):
            raise _bad(name, value, '0 or 1 (unset: automatic)')


def check_middleware(environ=None) -> None:
    """
    Raise :class:`RosEnvironmentError` if RMW_IMPLEMENTATION names no installed middleware.

    rcl checks it as its library loads, at ``import rclpy``, and ends the process there
    (exit 102): this check must come before rclpy is imported.
    """
    environ = os.environ if environ is None else environ
    rmw = environ.get('RMW_IMPLEMENTATION', '')
    installed = installed_rmw_implementations(environ)
    if rmw and installed and rmw not in installed:
        raise _bad('RMW_IMPLEMENTATION', rmw, f'an installed one: {", ".join(installed)} '
                   '(unset: the default)')


def fatal_line(name: str, error: Exception) -> str:
    """Return the one line of a node that cannot start, as rcutils would log it (FATAL)."""
    # printed without rcutils: its logging may be what is broken (RCUTILS_COLORIZED_OUTPUT=x)
    return f'[FATAL] [{time.time():.9f}] [{name}]: cannot start: {error}'


def installed_rmw_implementations(environ=None) -> list[str]:
    """
    Names of the ROS middleware implementations installed, from the ament index.

    Each registers itself under ``rmw_typesupport`` (as rmw_implementation's own lookup
    finds them) in a prefix of ``AMENT_PREFIX_PATH`` (a sourced distribution) or of this
    Python (the wheels); ``rmw_implementation``, the loader, registers there too. Empty: no
    index found, nothing can be said.
    """
    environ = os.environ if environ is None else environ
    prefixes = [p for p in environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    found = set()
    for prefix in [*prefixes, sys.prefix]:
        index = Path(prefix) / 'share' / 'ament_index' / 'resource_index' / 'rmw_typesupport'
        if index.is_dir():
            found.update(entry.name for entry in index.iterdir())
    return sorted(found - {'rmw_implementation'})


def _check_static_peers(peers: str) -> None:
    """Every peer is an IPv4 address or a host name that has one (Fast DDS takes the first)."""
    for peer in filter(None, peers.split(';')):     # empty items are skipped, as rcl does
        try:
            version = ipaddress.ip_address(peer).version
        except ValueError:
            version = None              # a host name
        if version == 4:
            continue
        if version is not None or peer != peer.strip() or not _resolves(peer):
            raise _bad('ROS_STATIC_PEERS', peers, 'IPv4 addresses or host names that have '
                       f'one, separated by ";" ({peer!r} is neither)')


def _resolves(host: str) -> bool:
    """Return True if ``host`` has an IPv4 address (a name service lookup)."""
    try:
        return bool(socket.getaddrinfo(host, None, socket.AF_INET))
    except (OSError, UnicodeError):     # unknown, or not a name at all ('a..b')
        return False


def _bad(name: str, value: str, allowed: str) -> RosEnvironmentError:
    return RosEnvironmentError(f'environment variable {name}={value!r}: must be {allowed}')
