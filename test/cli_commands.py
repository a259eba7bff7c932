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

"""The commands of ``tendon-robot-sim`` as its parser knows them, for tables built from it."""

from tendon_robot_sim import cli


def parsers(parser=None, prefix=()):
    """Yield (command words, parser) of every command and sub-command."""
    parser = parser or cli.build_parser()
    subparsers = [a for a in parser._actions if a.__class__.__name__ == '_SubParsersAction']
    if not subparsers:
        yield prefix, parser
    for action in subparsers:
        for name, sub in action.choices.items():
            yield from parsers(sub, prefix + (name,))


def actions():
    """Yield ('command words', action) of every option and positional of every command."""
    for words, parser in parsers():
        for action in parser._actions:
            yield ' '.join(words), action
