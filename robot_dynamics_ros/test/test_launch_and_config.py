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
The launch files and YAML files, checked without importing launch (not installable here).

Every executable and parameter file they name exists, and every parameter a YAML sets is one the
node declares.
"""
import ast
import glob
import os
import re

import yaml

from ros_harness import PACKAGE

LAUNCH = sorted(glob.glob(os.path.join(PACKAGE, 'launch', '*.launch.py')))


def entry_points():
    with open(os.path.join(PACKAGE, 'setup.py')) as f:
        text = f.read()
    return set(re.findall(r"'([\w\-]+) = robot_dynamics_ros\.[\w.]+:\w+'", text))


def launch_calls(path):
    """Return (executable, package, [string literals]) of every Node(...) in a launch file."""
    tree = ast.parse(open(path).read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'Node':
            kw = {k.arg: k.value for k in node.keywords}
            lits = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)]
            out.append((kw['executable'].value, kw['package'].value, kw.get('name'), lits))
    return tree, out


EXTERNAL = {'robot_state_publisher': 'robot_state_publisher'}   # package -> executable


def test_there_are_launch_files():
    names = {os.path.basename(p) for p in LAUNCH}
    assert {'feedforward.launch.py', 'simulation.launch.py'} <= names


def test_launch_files_name_existing_executables_and_files():
    scripts = entry_points()
    for path in LAUNCH:
        tree, nodes = launch_calls(path)
        assert nodes, f'{path} starts no Node'
        assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
                   for n in tree.body)
        for exe, pkg, _, _ in nodes:
            if pkg == 'robot_dynamics_ros':
                assert exe in scripts, f'{path}: executable {exe} is not a console script'
            else:
                assert EXTERNAL.get(pkg) == exe, f'{path}: unexpected node {pkg}/{exe}'
        # every config file named in the launch file is shipped
        literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)]
        for lit in literals:
            if lit.endswith(('.yaml', '.urdf')):
                sub = ('config' if lit.endswith('.yaml')
                       else os.path.join('robot_dynamics_ros', 'urdf'))
                assert os.path.isfile(os.path.join(PACKAGE, sub, lit)), f'{path}: {lit} missing'


def node_parameters():
    from robot_dynamics_ros.nodes import feedforward_node, simulator_node  # noqa: I100
    return {feedforward_node.NODE_NAME: (feedforward_node.PARAMETERS,
                                         feedforward_node.DYNAMIC_PREFIXES),
            simulator_node.NODE_NAME: (simulator_node.PARAMETERS, ())}


def flatten(d, prefix=''):
    for k, v in d.items():
        if isinstance(v, dict):
            yield from flatten(v, f'{prefix}{k}.')
        else:
            yield f'{prefix}{k}', v


def test_yaml_files_set_only_declared_parameters():
    known = node_parameters()
    for yaml_name in ('feedforward.yaml', 'simulation.yaml'):
        with open(os.path.join(PACKAGE, 'config', yaml_name)) as f:
            doc = yaml.safe_load(f)
        assert doc, yaml_name
        for key, section in doc.items():
            node_name = key.split('/')[-1]          # '/**/name' and 'name' both name a node
            if node_name == '**':                   # '/**': every node the file is given to
                node_name = {'feedforward.yaml': 'inverse_dynamics_controller'}[yaml_name]
            assert node_name in known, f'{yaml_name}: no node named {node_name}'
            params, dynamic = known[node_name]
            names = dict(flatten(section['ros__parameters']))
            assert names, f'{yaml_name}: {node_name} sets no parameter'
            for name, value in names.items():
                assert name in params or name.startswith(dynamic), \
                    f'{yaml_name} sets {node_name}.{name}, which the node does not declare'
                if name in params:
                    kind = params[name][0]
                    expected = {str: str, float: float, bool: bool, 'float[]': list,
                                'str[]': list}[kind]
                    assert isinstance(value, expected), f'{name}: {value!r} is not {kind}'


def test_ros2_control_examples_are_forward_command_controllers_on_effort():
    paths = glob.glob(os.path.join(PACKAGE, 'config', 'ros2_controllers_*.yaml'))
    assert paths
    for path in paths:
        doc = yaml.safe_load(open(path))
        cm = doc['controller_manager']['ros__parameters']
        assert cm['effort_controller']['type'] == \
            'forward_command_controller/ForwardCommandController'
        ec = doc['effort_controller']['ros__parameters']
        assert ec['interface_name'] == 'effort' and ec['joints']


def test_setup_installs_launch_config_and_index_marker():
    text = open(os.path.join(PACKAGE, 'setup.py')).read()
    for needle in ("'share/ament_index/resource_index/packages'", "'/launch'", "'/config'",
                   "['package.xml']"):
        assert needle in text
    assert os.path.isfile(os.path.join(PACKAGE, 'resource', 'robot_dynamics_ros'))
