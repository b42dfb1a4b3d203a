"""The launch files and YAML files, checked without importing launch (not installable here):
every executable and parameter file they name exists, and every parameter a YAML sets is one
the node declares."""
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
    return set(re.findall(r"'([\w\-]+) = robot_dynamics_ros\.[\w.]+:main'", text))


def launch_calls(path):
    """(executable, package, [string literals]) of every Node(...) in a launch file."""
    tree = ast.parse(open(path).read(), path)
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, 'id', None) == 'Node':
            kw = {k.arg: k.value for k in node.keywords}
            lits = [n.value for n in ast.walk(node) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)]
            out.append((kw['executable'].value, kw['package'].value, kw.get('name'), lits))
    return tree, out


def test_there_are_launch_files():
    assert any(p.endswith('feedforward.launch.py') for p in LAUNCH)


def test_launch_files_name_existing_executables_and_files():
    scripts = entry_points()
    for path in LAUNCH:
        tree, nodes = launch_calls(path)
        assert nodes, f'{path} starts no Node'
        assert any(isinstance(n, ast.FunctionDef) and n.name == 'generate_launch_description'
                   for n in tree.body)
        for exe, pkg, _, _ in nodes:
            assert pkg == 'robot_dynamics_ros'
            assert exe in scripts, f'{path}: executable {exe} is not a console script'
        # every config file named in the launch file is shipped
        literals = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant)
                    and isinstance(n.value, str)]
        for lit in literals:
            if lit.endswith(('.yaml', '.urdf')):
                sub = 'config' if lit.endswith('.yaml') else os.path.join('robot_dynamics_ros', 'urdf')
                assert os.path.isfile(os.path.join(PACKAGE, sub, lit)), f'{path}: {lit} missing'


def test_feedforward_yaml_sets_only_declared_parameters():
    from robot_dynamics_ros.feedforward_node import DYNAMIC_PREFIXES, NODE_NAME, PARAMETERS
    with open(os.path.join(PACKAGE, 'config', 'feedforward.yaml')) as f:
        doc = yaml.safe_load(f)
    params = doc[NODE_NAME]['ros__parameters']

    def flatten(d, prefix=''):
        for k, v in d.items():
            if isinstance(v, dict):
                yield from flatten(v, f'{prefix}{k}.')
            else:
                yield f'{prefix}{k}', v
    names = dict(flatten(params))
    assert names, 'feedforward.yaml sets no parameter'
    for name, value in names.items():
        assert name in PARAMETERS or name.startswith(DYNAMIC_PREFIXES), \
            f'feedforward.yaml sets {name}, which the node does not declare'
        if name in PARAMETERS:
            kind = PARAMETERS[name][0]
            expected = {str: str, float: float, bool: bool, 'float[]': list, 'str[]': list}[kind]
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
