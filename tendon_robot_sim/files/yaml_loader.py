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
The one YAML loader of the package: robot descriptions, bus files, parameter files, views.

Every YAML file the package reads goes through :func:`read_yaml` (text through
:func:`yaml_value`), so every file is read by the same rules:

* a key given twice in one mapping is refused, naming the key and both lines
  (``rod.youngs_modulus is given twice, on lines 12 and 15``): YAML forbids it, and PyYAML
  kept the last value without a word (a Young's modulus written twice moved the tip
  from -0.0722 to -0.0131 m);
* ``16.6e6`` is a number, as in YAML 1.2 and as rcl reads parameter files (PyYAML's YAML 1.1
  made it a string);
* hostile files are bounded: at most :data:`MAX_FILE_BYTES`, nesting at most
  :data:`MAX_DEPTH` deep, and no aliases (an alias bomb expands exponentially).

Errors are :class:`YamlFileError`, one line naming the file and the problem; a reader
wraps it in its own error (naming its option or parameter). Imports nothing else of the
package, so every layer can use it.
"""

from __future__ import annotations

import os
from pathlib import Path
import re
import stat
from typing import Any

import yaml

MAX_FILE_BYTES = 1_000_000
MAX_DEPTH = 20             # nesting of mappings and lists (a robot description needs 4)
# What a pipe held (``--robot <(sed ... robot.yaml)``), by the pipe's device and inode: it
# can be read once, and a command reads its robot file more than once (its kind, the model)
_PIPES: dict[tuple[int, int], bytes] = {}


class YamlFileError(ValueError):
    """A YAML file or text that cannot be read; the message names the file and the problem."""


class DuplicateKeyError(YamlFileError):
    """A mapping gives one key twice; the message names the key and both lines."""


class StrictLoader(yaml.SafeLoader):
    """
    SafeLoader that refuses duplicate keys and aliases, bounds nesting, reads ``1e9`` as a float.

    Duplicates are found in the composed document, before anything is constructed, with
    the path of the key (``rod.youngs_modulus``, ``channels[2].servo_id``).
    """

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, 'aliases (*name) are not allowed in this file',
                self.peek_event().start_mark)
        self._depth = getattr(self, '_depth', 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f'nested deeper than {MAX_DEPTH} levels',
                    self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            self._check_unique(node, '')
        return node

    def _check_unique(self, node, path: str) -> None:
        if isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._check_unique(item, f'{path}[{index}]')
            return
        if not isinstance(node, yaml.MappingNode):
            return
        seen = {}
        for key_node, value_node in node.value:
            key = self._key(key_node)
            name = f'{path}.{key_node.value}' if path else str(key_node.value)
            if key is not None:
                line = key_node.start_mark.line + 1
                if key in seen:
                    raise DuplicateKeyError(f'key {name} is given twice, on lines {seen[key]} '
                                            f'and {line}')
                seen[key] = line
            self._check_unique(value_node, name)

    def _key(self, node):
        """Return a scalar key as the mapping would hold it; None for others (merge keys)."""
        if not isinstance(node, yaml.ScalarNode) or node.tag == 'tag:yaml.org,2002:merge':
            return None
        try:
            key = self.construct_object(node)
            hash(key)
        except (yaml.YAMLError, TypeError, ValueError):
            return (node.tag, node.value)
        return key


StrictLoader.add_implicit_resolver(
    'tag:yaml.org,2002:float',
    re.compile(r'^[-+]?(?:\d+\.?\d*|\.\d+)[eE][-+]?\d+$'),
    list('-+0123456789.'))


def yaml_value(text: str, source: str = 'YAML text') -> Any:
    """
    Parse YAML ``text`` with :class:`StrictLoader`; YamlFileError names ``source``.

    ``1e9`` is a number, as YAML 1.2 and rcl read it.
    """
    try:
        return yaml.load(text, Loader=StrictLoader)
    except DuplicateKeyError as error:
        raise DuplicateKeyError(f'{source}: not valid YAML: {error}') from None
    except yaml.YAMLError as error:
        raise YamlFileError(f'{source}: not valid YAML: {_one_line(error)}') from None
    except (RecursionError, MemoryError, ValueError, OverflowError) as error:
        raise YamlFileError(f'{source}: cannot parse: {type(error).__name__}: '
                            f'{_one_line(error)}') from None


def read_yaml(path: str | Path) -> Any:
    """Parse the YAML file at ``path`` (UTF-8, at most MAX_FILE_BYTES); errors name the file."""
    return yaml_value(read_yaml_text(path), str(Path(path)))


def read_yaml_text(path: str | Path) -> str:
    """Return the text of the YAML file at ``path`` as :func:`read_yaml` reads it, unparsed."""
    path = Path(path)
    try:
        known = os.stat(path)
        data = _PIPES.get((known.st_dev, known.st_ino)) if stat.S_ISFIFO(known.st_mode) else None
        if data is None:
            with open(path, 'rb') as file:
                data = file.read(MAX_FILE_BYTES + 1)
                found = os.fstat(file.fileno())
            if stat.S_ISFIFO(found.st_mode):
                _PIPES[found.st_dev, found.st_ino] = data
    except OSError as error:
        raise YamlFileError(f'{path}: cannot read: {error.strerror}') from None
    if len(data) > MAX_FILE_BYTES:
        raise YamlFileError(f'{path}: larger than {MAX_FILE_BYTES} bytes')
    try:
        return data.decode('utf-8')
    except UnicodeDecodeError as error:
        raise YamlFileError(f'{path}: not UTF-8 text (byte {error.start})') from None


def _one_line(error: Exception) -> str:
    return ' '.join(str(error).split())[:500]
