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
The launch files' decisions as plain functions: which nodes, with which parameters and remappings.

``launch/feedforward.launch.py`` and ``launch/simulation.launch.py`` declare the arguments listed
here and turn what ``feedforward_nodes`` and ``simulation_nodes`` return into launch_ros ``Node``
actions, nothing more. So every decision (the params file as the source of truth, ``mode:=`` only
when given, the namespace, which description and how it is expanded, the start pose, the
remappings) is made here, without the launch system, and ``test_launch_setup.py`` checks it by
starting each node with exactly these parameters (``ros_arguments``) and asking it for them.

No rclpy import: a launch file imports this module before any node runs.
"""
import os
import tempfile
from dataclasses import dataclass

import yaml

PACKAGE = 'robot_dynamics_ros'
CONTROLLER = 'inverse_dynamics_controller'      # feedforward_node's node name
SIMULATOR = 'dynamics_simulator'                # simulator_node's node name
COMMAND_TOPIC = 'effort_controller/commands'    # what the controller publishes, relative
TRUE, FALSE = ('true', '1', 'yes'), ('false', '0', 'no')


@dataclass(frozen=True)
class NodeSpec:
    """
    One node to start: what launch_ros's ``Node`` takes.

    ``parameters``: params-file paths (str) and dicts, in order (a later one wins, as in
    launch_ros); ``remappings``: (from, to) pairs.
    """

    package: str
    executable: str
    name: str
    namespace: str = ''
    parameters: tuple = ()
    remappings: tuple = ()

    def parameter_values(self):
        """Return {name: value} of this node's params files and dicts, later ones winning."""
        values = {}
        for source in self.parameters:
            if isinstance(source, dict):
                values.update(source)
            else:
                values.update(_params_file_values(source, self.name, self.namespace))
        return values


def share(*parts):
    """Return a path in this package's share directory (where colcon and dev.sh install it)."""
    from ament_index_python.packages import get_package_share_directory
    return os.path.join(get_package_share_directory(PACKAGE), *parts)


def feedforward_arguments():
    """Return feedforward.launch.py's arguments: [(name, default, description)]."""
    return [
        ('params_file', share('config', 'feedforward.yaml'),
         f'parameters of {CONTROLLER} (the source of truth)'),
        ('mode', '', "gravity | feedforward | computed_torque; empty: the params file's mode"),
        ('command_topic', COMMAND_TOPIC,
         'the topic the efforts go to: your ForwardCommandController\'s /<controller>/commands'),
        ('namespace', '', 'namespace of the node (and of its relative topics)'),
        ('urdf_file', '', 'a URDF or .xacro file to take the description from; empty: the '
                          'robot_description topic (robot_state_publisher)'),
        ('xacro_args', '', 'name:=value pairs for a .xacro urdf_file, separated by spaces'),
    ]


def simulation_arguments():
    """Return simulation.launch.py's arguments: [(name, default, description)]."""
    return [
        ('urdf_file', share('urdf', 'planar_2r.urdf'),
         'the arm: a URDF, or a .xacro file expanded with xacro_args'),
        ('xacro_args', '', 'name:=value pairs for a .xacro urdf_file, separated by spaces'),
        ('mode', '', "override the params file's mode (computed_torque) when given"),
        ('initial_positions', '',
         'start pose, a list in joints order (rad, m), e.g. "[0.5, -0.3]"; empty: the '
         "description's <ros2_control> initial values, else zero clamped to 10% of the "
         'range inside the limits'),
        ('params_file', share('config', 'simulation.yaml'),
         'parameters of both nodes (the source of truth)'),
        ('namespace', '', 'namespace of both nodes (and of their relative topics)'),
        ('with_state_publisher', 'false', 'also start robot_state_publisher (TF for RViz)'),
    ]


def _given(arguments, defaults):
    """Fill the arguments not given with their defaults; refuse names that are not arguments."""
    names = {name for name, _, _ in defaults}
    unknown = sorted(set(arguments) - names)
    if unknown:
        raise ValueError(f'unknown launch argument(s) {", ".join(unknown)}; '
                         f'the arguments are {", ".join(sorted(names))}')
    values = {name: default for name, default, _ in defaults}
    values.update({k: str(v) for k, v in arguments.items()})
    return values


def _mode(value):
    """Return the mode override, only when given (the params file decides otherwise)."""
    return [{'mode': value.strip()}] if value.strip() else []


def _namespace(value):
    return value.strip().strip('/')


def _flag(name, value):
    text = value.strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise ValueError(f'{name}:={value}: expected true or false')


def _positions(value):
    """Parse initial_positions:= ('' = not given) into floats."""
    if not value.strip():
        return None
    try:
        parsed = yaml.safe_load(value)
    except yaml.YAMLError:
        parsed = None
    if isinstance(parsed, (int, float)) and not isinstance(parsed, bool):
        parsed = [parsed]
    if not (isinstance(parsed, list) and parsed and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in parsed)):
        raise ValueError(f'initial_positions:={value}: expected a list of numbers, e.g. '
                         f'"[0.5, -0.3]"')
    return [float(v) for v in parsed]


def feedforward_nodes(**arguments):
    """
    Return the NodeSpecs of feedforward.launch.py for its launch arguments (strings).

    The params file is the source of truth; ``mode`` overrides its mode only when given;
    ``command_topic`` is where the node's efforts go (a remapping); ``namespace`` holds the node
    and its relative topics; ``urdf_file`` (and ``xacro_args``), when given, replace the
    robot_description topic.
    """
    a = _given(arguments, feedforward_arguments())
    return [NodeSpec(
        PACKAGE, 'feedforward_node', CONTROLLER, _namespace(a['namespace']),
        parameters=tuple([a['params_file']] + _mode(a['mode'])
                         + _description(a['urdf_file'], a['xacro_args'])),
        remappings=((COMMAND_TOPIC, a['command_topic']),))]


def _description(urdf_file, xacro_args):
    """Return the description file parameters, only when given (a bad xacro pair fails here)."""
    from ..dynamics import parse_xacro_args
    args = xacro_args.split()
    parse_xacro_args(args)
    if not urdf_file.strip():
        if args:
            raise ValueError('xacro_args:= given without urdf_file:=')
        return []
    return [dict({'urdf_file': urdf_file.strip()}, **({'xacro_args': args} if args else {}))]


def simulation_nodes(**arguments):
    """
    Return the NodeSpecs of simulation.launch.py for its launch arguments (strings).

    simulator_node simulates ``urdf_file`` (a .xacro one expanded with ``xacro_args``), publishes
    it on robot_description, where the controller takes it; the params file configures both
    (``mode`` overrides the controller's only when given, ``initial_positions`` the simulator's
    start pose); with_state_publisher adds robot_state_publisher with the same description, whose
    own robot_description publication is remapped away from the simulator's.
    """
    from ..dynamics import load_description
    a = _given(arguments, simulation_arguments())
    namespace, params = _namespace(a['namespace']), a['params_file']
    [simulator] = _description(a['urdf_file'], a['xacro_args'])
    xacro_args = simulator.get('xacro_args', [])
    start = _positions(a['initial_positions'])
    if start is not None:
        simulator['initial_positions'] = start
    nodes = [
        NodeSpec(PACKAGE, 'simulator_node', SIMULATOR, namespace, (params, simulator)),
        NodeSpec(PACKAGE, 'feedforward_node', CONTROLLER, namespace,
                 tuple([params] + _mode(a['mode']))),
    ]
    if _flag('with_state_publisher', a['with_state_publisher']):
        description = load_description(a['urdf_file'], xacro_args)
        nodes.append(NodeSpec('robot_state_publisher', 'robot_state_publisher',
                              'robot_state_publisher', namespace,
                              ({'robot_description': description},),
                              (('robot_description', 'robot_description_rsp'),)))
    return nodes


def _params_file_values(path, name, namespace):
    """Return the parameters a params file gives node ``name`` in ``namespace`` (rcl's rules)."""
    with open(path, encoding='utf-8') as f:
        document = yaml.safe_load(f) or {}
    full = '/' + '/'.join(p for p in (namespace, name) if p)
    values = {}
    for key, body in document.items():
        if _matches(key, full) and isinstance(body, dict):
            values.update(_flatten(body.get('ros__parameters') or {}))
    return values


def _matches(key, full):
    """Whether a params-file node key (/**, /**/name, /ns/name, name) names node ``full``."""
    key = '/' + key.strip('/')
    if key == '/**':
        return True
    if key.startswith('/**/'):
        return full.endswith('/' + key[4:])
    return key == full


def _flatten(tree, prefix=''):
    out = {}
    for k, v in tree.items():
        if isinstance(v, dict):
            out.update(_flatten(v, f'{prefix}{k}.'))
        else:
            out[f'{prefix}{k}'] = v
    return out


def params_files(spec, folder):
    """
    Return the params files that give ``spec`` its parameters, in order.

    A dict is written to a YAML file in ``folder`` (under ``/**``). Launch files pass these paths
    to launch_ros, and ``ros_arguments`` to a command line, so both give a node the same values:
    launch_ros's own handling of a dict would read each string as YAML (a description, a path).
    """
    paths = []
    for source in spec.parameters:
        path = source
        if isinstance(source, dict):
            fd, path = tempfile.mkstemp(prefix=f'{spec.name}_', suffix='.yaml', dir=folder)
            with os.fdopen(fd, 'w', encoding='utf-8') as f:
                yaml.safe_dump({'/**': {'ros__parameters': source}}, f)
        paths.append(path)
    return paths


def ros_arguments(spec, folder):
    """
    Return the command line after the executable that starts ``spec`` as its launch file does.

    ``--ros-args`` with the node name, namespace, params files (see ``params_files``) and
    remappings.
    """
    args = ['--ros-args', '-r', f'__node:={spec.name}']
    if spec.namespace:
        args += ['-r', f'__ns:=/{spec.namespace}']
    for path in params_files(spec, folder):
        args += ['--params-file', path]
    for old, new in spec.remappings:
        args += ['-r', f'{old}:={new}']
    return args
