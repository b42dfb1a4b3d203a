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
The launch files' nodes and the YAML files, checked without the launch system.

Every executable and parameter file the launch files name exists, and every parameter a YAML sets
is one the node declares.
"""
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


EXTERNAL = {'robot_state_publisher': 'robot_state_publisher'}   # package -> executable


def test_there_are_launch_files():
    names = {os.path.basename(p) for p in LAUNCH}
    assert {'feedforward.launch.py', 'simulation.launch.py'} <= names


def test_launch_files_name_existing_executables_and_files():
    """What the launch files start (nodes.launch_setup's NodeSpecs) exists, with its files."""
    from robot_dynamics_ros.nodes import launch_setup
    scripts = entry_points()
    nodes = (launch_setup.feedforward_nodes()
             + launch_setup.simulation_nodes(with_state_publisher='true'))
    assert len(nodes) == 4
    for node in nodes:
        if node.package == 'robot_dynamics_ros':
            assert node.executable in scripts, f'executable {node.executable} is not a script'
        else:
            assert EXTERNAL.get(node.package) == node.executable, node
        for source in node.parameters:
            assert isinstance(source, dict) or os.path.isfile(source), f'{node.name}: {source}'
    # every file a default argument names is installed with the package
    for name, default, _ in (launch_setup.feedforward_arguments()
                             + launch_setup.simulation_arguments()):
        if default.endswith(('.yaml', '.urdf')):
            assert os.path.isfile(default), f'{name}:={default} is missing'


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
