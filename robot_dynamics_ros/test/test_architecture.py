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
The package's layers, checked on the source: dynamics <- control, simulation <- nodes, tools.

Only ``nodes/`` imports rclpy or ROS messages; only ``nodes/`` and ``tools/`` import ``nodes/``;
``dynamics/`` imports no other layer; ``control/`` and ``simulation/`` import only ``dynamics/``
(and themselves).
"""
import ast
import os

import pytest

from ros_harness import PACKAGE

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

SRC = os.path.join(PACKAGE, 'robot_dynamics_ros')
LAYERS = ('dynamics', 'control', 'simulation', 'nodes', 'tools')
# what each layer may import from the package (besides itself)
ALLOWED = {'dynamics': set(), 'control': {'dynamics'}, 'simulation': {'dynamics'},
           'nodes': {'dynamics', 'control', 'simulation'},
           'tools': {'dynamics', 'control', 'simulation', 'nodes'}}
ROS = ('rclpy', 'rcl_interfaces', 'std_msgs', 'std_srvs', 'sensor_msgs', 'trajectory_msgs',
       'geometry_msgs', 'rosgraph_msgs', 'builtin_interfaces', 'robot_dynamics_msgs',
       'diagnostic_msgs', 'launch', 'launch_ros')


def imports(path, layer):
    """(package layers imported, top-level external modules imported) of one source file."""
    tree = ast.parse(open(path, encoding='utf-8').read(), path)
    layers, external = set(), set()
    depth = len(os.path.relpath(path, SRC).split(os.sep)) - 1      # 1 inside a layer folder
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split('.')
                if parts[0] == 'robot_dynamics_ros':
                    if len(parts) > 1:
                        layers.add(parts[1])
                else:
                    external.add(parts[0])
        elif isinstance(node, ast.ImportFrom):
            mod = (node.module or '').split('.')
            if node.level == 0:
                if mod[0] == 'robot_dynamics_ros':
                    layers.update([mod[1]] if len(mod) > 1 else [a.name for a in node.names])
                else:
                    external.add(mod[0])
            elif node.level > depth:                 # from ..x import: another layer
                layers.update([mod[0]] if mod[0] else [a.name for a in node.names])
    layers.discard(layer)
    return layers & set(LAYERS), external


def sources():
    for layer in LAYERS:
        folder = os.path.join(SRC, layer)
        for name in sorted(os.listdir(folder)):
            if name.endswith('.py'):
                yield layer, os.path.join(folder, name)


def test_every_module_lives_in_a_layer():
    loose = [n for n in os.listdir(SRC) if n.endswith('.py') and n != '__init__.py']
    assert loose == [], f'modules outside the layer folders: {loose}'
    for layer in LAYERS:
        assert os.path.isfile(os.path.join(SRC, layer, '__init__.py')), layer


def test_layers_import_only_downwards_and_only_nodes_import_ros():
    checked = 0
    for layer, path in sources():
        layers, external = imports(path, layer)
        rel = os.path.relpath(path, SRC)
        assert layers <= ALLOWED[layer], f'{rel} imports {sorted(layers - ALLOWED[layer])}'
        if layer != 'nodes':
            ros = sorted(external & set(ROS))
            assert not ros, f'{rel} imports ROS modules {ros}: only nodes/ may'
        checked += 1
    assert checked >= 10


def test_the_checker_sees_relative_and_absolute_imports():
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, 'x.py')
        with open(p, 'w') as f:
            f.write('from ..nodes import common\nfrom .sibling import y\n'
                    'import rclpy\nfrom robot_dynamics_ros.simulation import Simulator\n')
        global SRC
        old, SRC = SRC, d
        try:
            os.makedirs(os.path.join(d, 'control'))
            q = os.path.join(d, 'control', 'x.py')
            os.replace(p, q)
            layers, external = imports(q, 'control')
        finally:
            SRC = old
    assert layers == {'nodes', 'simulation'} and 'rclpy' in external
