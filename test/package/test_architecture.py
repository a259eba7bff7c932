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
The layout keeps its rules: imports point one way, robot kinds stay apart, rooms stay small.

Every import statement of the package is read (module level and inside functions alike: a
lazy import is still a dependency), so a new module cannot break the rules unnoticed: no
import circle among the models, no module over MAX_LINES lines, no folder of more than
MAX_MODULES modules. docs/architecture.md explains the layers and the rooms.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / 'tendon_robot_sim'
ROBOT_KINDS = ('rod', 'trunk', 'snake', 'pcr')
# What each area may import from the package ('root' is tendon_robot_sim/__init__.py).
# Areas not listed (commands, cli, script) may import anything.
# 'files' (how every file is read and written) is below every area but the root.
ALLOWED = {
    'root': set(),
    'parallel': set(),
    'files': {'files'},
    'models': {'models', 'parallel', 'files', 'root'},
    'control': {'models', 'control', 'files', 'root'},
    'experiment': {'models', 'experiment', 'parallel', 'files', 'root'},
    'protocol': {'protocol', 'files', 'root'},
    'hardware': {'hardware', 'protocol', 'files', 'root'},
    'emulator': {'emulator', 'protocol', 'models', 'files', 'root'},
    'view': {'view', 'models', 'experiment', 'files', 'root'},
    'ros': {'ros', 'models', 'control', 'experiment', 'protocol', 'parallel', 'files', 'root'},
    'nodes': {'nodes', 'ros', 'models', 'control', 'experiment', 'protocol', 'hardware',
              'parallel', 'files', 'root', 'view'},
    'stack': {'stack', 'rviz_views', 'ros', 'models', 'files', 'root'},
    'rviz_views': {'rviz_views', 'files', 'root'},
    'launcher': {'launcher', 'stack', 'rviz_views', 'ros', 'models', 'parallel', 'files',
                 'root'},
}
# The ROS-free core: none of these may import rclpy or a ROS message package.
ROS_FREE = ('root', 'parallel', 'files', 'models', 'control', 'experiment', 'protocol',
            'hardware', 'emulator', 'view')
ROS_MODULES = ('rclpy', 'rosidl_runtime_py', 'builtin_interfaces', 'std_msgs', 'sensor_msgs',
               'geometry_msgs', 'visualization_msgs', 'diagnostic_msgs', 'tf2_msgs',
               'rosgraph_msgs', 'lifecycle_msgs', 'std_srvs', 'launch', 'launch_ros')
MAX_LINES = 800
# Modules a folder may hold (its __init__.py not counted); a folder that needs more is a
# room that wants sub-rooms by concern
MAX_MODULES = 12
# Folders the module limit covers: the models (where it was set) and the device protocols
ROOMS = ('models', 'protocol')


def modules():
    """Yield (dotted name inside the package, path) of every module of the package."""
    for path in sorted(PACKAGE.rglob('*.py')):
        parts = path.relative_to(PACKAGE).with_suffix('').parts
        if parts[-1] == '__init__':
            parts = parts[:-1]
        yield '.'.join(parts), path


def imports(path: Path) -> set[str]:
    """Return every module a file imports, absolute, wherever the import stands."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f'{path}: relative import of {node.module}'
            found.add(node.module)
            found.update(f'{node.module}.{alias.name}' for alias in node.names)
    return found


def area(name: str) -> str:
    """Return the area of a module: its first package level, 'root' for the package."""
    return name.split('.')[0] if name else 'root'


def kind(name: str) -> str | None:
    """Return the robot kind whose subpackage holds ``name``, or None."""
    parts = name.split('.')
    return parts[1] if len(parts) > 1 and parts[0] == 'models' and parts[1] in ROBOT_KINDS \
        else None


def internal(target: str) -> str | None:
    """Return ``target`` as a name inside the package, or None for another package."""
    if target == 'tendon_robot_sim':
        return ''
    if target.startswith('tendon_robot_sim.'):
        name = target[len('tendon_robot_sim.'):]
        # 'from tendon_robot_sim import share_dir' names a function of the root module
        return name if (PACKAGE / name.split('.')[0]).exists() or \
            (PACKAGE / f'{name.split(".")[0]}.py').exists() else ''
    return None


MODULES = list(modules())


@pytest.mark.parametrize('name, path', MODULES, ids=[name or 'root' for name, _ in MODULES])
def test_imports_point_one_way(name, path):
    allowed = ALLOWED.get(area(name))
    for target in imports(path):
        inside = internal(target)
        if inside is None:
            if area(name) in ROS_FREE:
                assert target.split('.')[0] not in ROS_MODULES, (
                    f'{name} imports {target}: the core stays ROS-free')
            continue
        if allowed is not None:
            assert area(inside) in allowed, (
                f'{name} imports {target}: {area(name)} may import only {sorted(allowed)}')
        if kind(name) is not None and kind(inside) is not None:
            assert kind(inside) == kind(name), (
                f'{name} imports {target}: one robot kind never imports another; move the '
                'shared piece into models/')


@pytest.mark.parametrize('name, path', MODULES, ids=[name or 'root' for name, _ in MODULES])
def test_no_module_is_too_long(name, path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_LINES, f'{path.name}: {lines} lines; split it by idea'


def module_graph(names: set[str], paths) -> dict[str, set[str]]:
    """
    Return {module: the modules of ``names`` it imports} for every (name, path) of ``paths``.

    ``from a.b import c`` depends on ``a.b.c`` when that is a module, else on ``a.b``.
    """
    graph = {}
    for name, path in paths:
        targets = set()
        for target in imports(path):
            inside = internal(target)
            while inside and inside not in names:
                inside = inside.rpartition('.')[0]
            if inside in names and inside != name:
                targets.add(inside)
        graph[name] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """
    Return the import circles of ``graph``: its strongly connected parts of 2 modules or more.

    Each part (Tarjan's algorithm) is given sorted: every module of it imports, through the
    others, every other one.
    """
    index, low, stack, on_stack, parts = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while not part or part[-1] != node:
                part.append(stack.pop())
                on_stack.discard(part[-1])
            if len(part) > 1:
                parts.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(parts)


def test_no_import_circle_among_the_models():
    """A module of models/ never imports, however indirectly, one that imports it back."""
    models = [(name, path) for name, path in MODULES if area(name) == 'models']
    found = circles(module_graph({name for name, _ in models}, models))
    assert not found, 'import circles in models/ (a shared base goes below both, a factory ' \
        'above); each import the others: ' + '; '.join(', '.join(part) for part in found)


def folders():
    """Yield (folder inside the package, its modules) of every folder ROOMS covers."""
    for room in ROOMS:
        for init in sorted((PACKAGE / room).rglob('__init__.py')):
            folder = init.parent
            yield (folder.relative_to(PACKAGE).as_posix(),
                   sorted(p.name for p in folder.glob('*.py') if p.name != '__init__.py'))


FOLDERS = [pytest.param(folder, names, id=folder) for folder, names in folders()]


@pytest.mark.parametrize('folder, names', FOLDERS)
def test_no_folder_holds_too_many_modules(folder, names):
    assert len(names) <= MAX_MODULES, (
        f'{folder}/: {len(names)} modules, at most {MAX_MODULES}: give it sub-rooms by '
        f'concern ({", ".join(names)})')


def test_every_robot_kind_has_its_room():
    for robot_kind in ROBOT_KINDS:
        room = PACKAGE / 'models' / robot_kind
        assert (room / 'robot.py').exists() or robot_kind == 'rod', robot_kind
        assert (room / 'model.py').exists(), f'models/{robot_kind}: no model.py (SimModel)'


def test_the_checker_sees_a_violation(tmp_path):
    """The walker finds lazy imports too (a test that cannot fail protects nothing)."""
    module = tmp_path / 'lazy.py'
    module.write_text('def f():\n    from tendon_robot_sim.models.rod import statics\n')
    assert 'tendon_robot_sim.models.rod' in imports(module)
    assert kind(internal('tendon_robot_sim.models.rod.statics.solver')) == 'rod'


def test_the_checker_sees_a_circle(tmp_path):
    """A lazy import back closes a circle; a chain that only points one way does not."""
    files = {'a': 'from tendon_robot_sim.models import b\n',
             'b': 'def f():\n    from tendon_robot_sim.models.c import g\n',
             'c': 'from tendon_robot_sim.models.a import h\n',
             'd': 'import tendon_robot_sim.models.a\n'}
    paths = []
    for name, text in files.items():
        (tmp_path / f'{name}.py').write_text(text)
        paths.append((f'models.{name}', tmp_path / f'{name}.py'))
    graph = module_graph({name for name, _ in paths}, paths)
    assert graph['models.d'] == {'models.a'}
    assert circles(graph) == [['models.a', 'models.b', 'models.c']]
    del graph['models.c']
    assert circles(graph) == []
