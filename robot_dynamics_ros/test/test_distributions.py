# Copyright 2026 robot_dynamics_ros contributors
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
What the project uses of rclpy exists, with the same arguments, on the distribution under test.

The package has no version check. Compared for this test (inspect.signature of everything public
in rclpy, rclpy.node.Node, the executors and the parameter client; rclpy 7.1.6 of Jazzy against
9.1.2 of Kilted): nothing the project calls differs. Kilted adds what the project does not use:
``rclpy.init`` as a context manager, subscription and timer callbacks that take a MessageInfo or
TimerInfo, ``content_filter_options``, ``rosout_qos_profile`` of ``create_node``,
``try_shutdown(uninstall_handlers=...)``, ``Executor.create_future``. Behaviour a user can see:
with ``ROS_LOCALHOST_ONLY=1``, Jazzy's rcl warns that it is deprecated and then ignores
``ROS_AUTOMATIC_DISCOVERY_RANGE``; Kilted's prints nothing about it.

This test runs on whichever distribution the venv holds (``.ci/run`` runs it on both): every name
imported from rclpy and every ``rclpy.x.y`` the sources spell resolves, every keyword argument the
sources pass to an rclpy call is one it takes, and the private pieces the nodes rely on are there.
"""
import ast
import glob
import importlib
import inspect
import os

import pytest

rclpy = pytest.importorskip('rclpy')
import rclpy.node  # noqa: E402

from ros_harness import PACKAGE  # noqa: E402

SOURCES = sorted(
    glob.glob(os.path.join(PACKAGE, 'robot_dynamics_ros', '**', '*.py'), recursive=True)
    + glob.glob(os.path.join(PACKAGE, 'test', '*.py'))
    + glob.glob(os.path.join(PACKAGE, 'launch', '*.py'))
    + glob.glob(os.path.join(os.path.dirname(PACKAGE), 'bench', '*.py')))


def trees():
    for path in SOURCES:
        with open(path, encoding='utf-8') as f:
            yield os.path.relpath(path, os.path.dirname(PACKAGE)), ast.parse(f.read(), path)


def dotted(node):
    """Return 'a.b.c' of an attribute chain on a name, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return '.'.join([node.id] + parts[::-1])
    return None


def resolve(name):
    """Return the object a dotted name under rclpy names (importing modules on the way)."""
    parts = name.split('.')
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module('.'.join(parts[:i + 1]))
    return obj


def rclpy_names():
    """(file, dotted name) of every rclpy name the sources import or spell out."""
    for path, tree in trees():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and \
                    node.module.split('.')[0] == 'rclpy':
                for alias in node.names:
                    yield path, f'{node.module}.{alias.name}'
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split('.')[0] == 'rclpy':
                        yield path, alias.name
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
                name = dotted(node)
                if name and name.split('.')[0] == 'rclpy':
                    yield path, name


def test_every_rclpy_name_the_sources_use_exists():
    names = set(rclpy_names())
    assert len({n for _, n in names}) >= 20, names      # the scan sees them
    missing = []
    for path, name in sorted(names):
        try:
            resolve(name)
        except (ImportError, AttributeError) as e:
            missing.append(f'{path}: {name} ({e})')
    assert not missing, '\n'.join(missing)


def _accepts(fn, keywords):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return set()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return set()
    return set(keywords) - {p.name for p in params}


NODE_METHODS = {name: getattr(rclpy.node.Node, name) for name in dir(rclpy.node.Node)
                if not name.startswith('__') and callable(getattr(rclpy.node.Node, name))}


def test_every_keyword_passed_to_rclpy_is_one_it_takes():
    """Calls of rclpy.<function> and of Node methods (on nodes and on self of Node subclasses)."""
    checked, wrong = 0, []
    for path, tree in trees():
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            keywords = [k.arg for k in node.keywords if k.arg]
            if not keywords:
                continue
            name = dotted(node.func)
            if name and name.split('.')[0] == 'rclpy':
                fn = resolve(name)
            elif node.func.attr in NODE_METHODS and node.func.attr.startswith(
                    ('create_', 'declare_', 'add_', 'get_', 'destroy_', 'set_', 'count_')):
                fn = NODE_METHODS[node.func.attr]
            else:
                continue
            checked += 1
            unknown = _accepts(fn, keywords)
            if unknown:
                wrong.append(f'{path}:{node.lineno}: {name or node.func.attr}() takes no '
                             f'{sorted(unknown)}')
    assert checked >= 20, checked
    assert not wrong, '\n'.join(wrong)


def test_the_private_pieces_the_nodes_rely_on():
    """parameters.declare reads a node's parameter overrides; run_node and spin catch RCLError."""
    from rclpy._rclpy_pybind11 import InvalidHandle, RCLError
    assert issubclass(RCLError, Exception) and issubclass(InvalidHandle, Exception)
    rclpy.init(args=['--ros-args', '-p', 'x:=3'])
    try:
        node = rclpy.create_node('distribution_check')
        overrides = node._parameter_overrides
        assert overrides['x'].value == 3 and overrides['x'].type_ == rclpy.Parameter.Type.INTEGER
        node.destroy_node()
    finally:
        rclpy.shutdown()
