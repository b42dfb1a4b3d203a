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
The docs: they build without a warning, and they say what the code does.

``doc/`` is built with ``sphinx-build -W`` (warnings, broken cross-references and anchors
included, are errors). A running node's parameters, as ``ros2 param describe`` reads them over
its parameter services, are exactly those of the reference page and of ``--help`` (one source:
the node's declarations). The README's node tables are the ones rendered from the nodes, it
stays short, and its links resolve. The tutorial's ``robot-dynamics`` lines run on the UR5. Each
package's version is the same in package.xml, setup.py and the top of its CHANGELOG.rst, and
every module opens with a docstring that says what it is for.
"""
import ast
import glob
import os
import re
import shlex
import subprocess
import sys
import textwrap

import pytest

TEST = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(TEST)                       # robot_dynamics_ros/ (package.xml)
ROOT = os.path.dirname(PACKAGE)
DOC = os.path.join(PACKAGE, 'doc')
README = os.path.join(ROOT, 'README.md')
TUTORIAL = os.path.join(DOC, 'tutorials', 'bring_your_own_arm.md')
README_LINES = 150


def test_the_docs_build_with_warnings_as_errors(tmp_path):
    pytest.importorskip('sphinx')
    pytest.importorskip('myst_parser')
    r = subprocess.run([sys.executable, '-m', 'sphinx', '-W', '--keep-going', '-q', '-b', 'html',
                        DOC, str(tmp_path / 'html')], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stderr[-5000:]
    nodes = (tmp_path / 'html' / 'reference' / 'nodes.html').read_text()
    # the generated reference is in the built page, every parameter of both nodes
    from robot_dynamics_ros.nodes import feedforward_node, simulator_node
    for node in (feedforward_node, simulator_node):
        for name in node.PARAMETERS:
            assert f'<code class="docutils literal notranslate"><span class="pre">{name}</span>' \
                in nodes, name


def _rows(markdown):
    """Return {parameter: (type, default, must be, runtime, description)} of a reference table."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in re.split(r'(?<!\\)\|', line)[1:-1]]
        if len(cells) == 6 and cells[0].startswith('`') and cells[0] != '`name`':
            rows[cells[0].strip('`')] = tuple(c.replace('\\|', '|') for c in cells[1:])
    return rows


@pytest.mark.parametrize('executable', ['feedforward_node', 'simulator_node'])
def test_a_running_node_describes_its_parameters_as_the_reference_and_help_do(
        executable, tmp_path, ros):
    rclpy = ros
    from rcl_interfaces.srv import DescribeParameters, GetParameters, ListParameters
    from rclpy.parameter import parameter_value_to_python
    from ros_harness import NodeProcess, call_service
    from robot_dynamics_ros.control import configuration
    from robot_dynamics_ros.dynamics import example_urdf
    from robot_dynamics_ros.nodes.parameters import _TYPES, shown_default
    from robot_dynamics_ros.tools.reference import node_markdown
    import importlib
    module = importlib.import_module(f'robot_dynamics_ros.nodes.{executable}')
    declared = module.PARAMETERS
    ns = f'/docs_{executable}'
    args = ['-r', f'__ns:={ns}']
    overridden, absent = {}, set()
    if executable == 'simulator_node':          # it needs an arm; the controller waits for one
        # (in lockstep: it then reads the controller's answers too)
        overridden = {'urdf_file': example_urdf(), 'publish_clock': True, 'lockstep': True}
        absent = {('subscribes', 'robot_description'),      # not read with urdf_file
                  ('publishes', 'force_torque_sensor_broadcaster/wrench')}  # ft_sensor.joint
    for name, value in overridden.items():
        args += ['-p', f'{name}:={value}']
    proc = NodeProcess(executable, args, tmp_path / f'{executable}.log')
    peer = rclpy.create_node('docs_reader')
    try:
        target = f'{ns}/{module.NODE_NAME}'
        listed = call_service(peer, peer.create_client(ListParameters,
                                                       f'{target}/list_parameters'),
                              ListParameters.Request(), 60).result.names
        live = [n for n in listed if not n.startswith(('use_sim_time', 'start_type_description'))
                and not n.startswith(getattr(module, 'DYNAMIC_PREFIXES', ('\0',)))]
        assert sorted(live) == sorted(declared), (sorted(live), sorted(declared))
        described = call_service(peer, peer.create_client(
            DescribeParameters, f'{target}/describe_parameters'),
            DescribeParameters.Request(names=list(declared)), 30).descriptors
        values = call_service(peer, peer.create_client(GetParameters,
                                                       f'{target}/get_parameters'),
                              GetParameters.Request(names=list(declared)), 30).values
        live_interfaces = _interfaces(peer, ns, module.NODE_NAME)
    finally:
        peer.destroy_node()
        proc.stop()
    rows = _rows(node_markdown(executable))
    assert sorted(rows) == sorted(declared)
    help_text = subprocess.run([proc.proc.args[0], '--help'], capture_output=True, text=True,
                               timeout=60).stdout
    flat_help = ' '.join(help_text.split())
    for d, value in zip(described, values):
        kind, default, text, read_only = declared[d.name]
        # ros2 param describe
        assert (d.type, d.description, d.read_only) == (_TYPES[kind][0], text, read_only), d
        # and what the node checks a value of one number or word against (its rule)
        rule = configuration.rule(d.name) if executable == 'feedforward_node' else None
        assert d.additional_constraints == (rule.text if rule else ''), d
        live_value = parameter_value_to_python(value)
        if d.name not in overridden:
            assert list(live_value) == list(default) if isinstance(default, list) else \
                live_value == default, (d.name, live_value, default)
        # the reference page
        rtype, rdefault, must, runtime, rtext = rows[d.name]
        assert rtext == text and rdefault == f'`{shown_default(default)}`', (d.name, rows[d.name])
        assert runtime == ('no (read-only)' if read_only else 'yes')
        assert must == (rule.text if rule else ''), (d.name, must)
        # --help
        assert f'{d.name} (' in help_text and text in flat_help, d.name
        assert rule is None or f'[{rule.text}]' in flat_help, d.name
    for _, name, rtype, text in module.INTERFACES:
        assert f'{name} ({rtype}' in flat_help
    # the topics and services the node has are the ones it declares, with their types
    declared_interfaces = {(kind, _resolved(name, ns, module.NODE_NAME), rtype)
                           for kind, name, rtype, _ in module.INTERFACES}
    assert live_interfaces <= declared_interfaces, live_interfaces - declared_interfaces
    missing = {(kind, name) for kind, name, _, _ in module.INTERFACES} - {
        (kind, _relative(name, ns, module.NODE_NAME)) for kind, name, _ in live_interfaces}
    assert missing == absent, missing


STANDARD = ('/rosout', '/parameter_events', 'parameter', 'get_type_description')


def _resolved(name, ns, node):
    """Return a declared topic or service name as the graph shows it for a node in ``ns``."""
    if name.startswith('~/'):
        return f'{ns}/{node}/{name[2:]}'
    return name if name.startswith('/') else f'{ns}/{name}'


def _relative(name, ns, node):
    """Return a graph name as the node declares it (the inverse of ``_resolved``)."""
    for prefix, short in ((f'{ns}/{node}/', '~/'), (f'{ns}/', '')):
        if name.startswith(prefix):
            return short + name[len(prefix):]
    return name


def _interfaces(peer, ns, node, timeout=10.0):
    """
    Return {(kind, name, type)} of a node and its helper nodes (``<node>_loop`` and the like).

    Without the standard ones (rosout, parameter events and services). Waits until discovery has
    shown them all twice alike.
    """
    import time
    graph = (('subscribes', peer.get_subscriber_names_and_types_by_node),
             ('publishes', peer.get_publisher_names_and_types_by_node),
             ('services', peer.get_service_names_and_types_by_node))
    seen, deadline = None, time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = set()
        for name, namespace in peer.get_node_names_and_namespaces():
            if namespace == ns and name.startswith(node):
                found |= {(kind, topic, rtype) for kind, get in graph
                          for topic, types in get(name, namespace) for rtype in types
                          if not any(s in topic for s in STANDARD)}
        found = _actions(found)
        if found and found == seen:
            return found
        seen = found
        time.sleep(0.5)
    return seen


ACTION_PARTS = ('_SendGoal', '_GetResult', '_FeedbackMessage')


def _actions(found):
    """Fold an action's topics and services (``<name>/_action/...``) into its name and type."""
    out = set()
    for kind, name, rtype in found:
        if '/_action/' not in name:
            out.add((kind, name, rtype))
        elif rtype.endswith(ACTION_PARTS):      # the rest (status, cancel) is action_msgs'
            out.add(('actions', name.split('/_action/')[0], rtype.rsplit('_', 1)[0]))
    return out


def test_the_readme_node_tables_are_rendered_from_the_nodes():
    from robot_dynamics_ros.tools.reference import NODES, readme_table
    readme = open(README, encoding='utf-8').read()
    for name in NODES:
        assert readme_table(name) in readme, (
            f'the README table of {name} differs from the nodes: '
            'python -m robot_dynamics_ros.tools.reference prints it')


def test_the_readme_is_short_and_its_links_resolve():
    text = open(README, encoding='utf-8').read()
    assert len(text.splitlines()) <= README_LINES
    links = re.findall(r'\]\(([^)#\s]+)(?:#([^)\s]+))?\)', text)
    assert links
    for path, anchor in links:
        if '://' in path:
            continue
        target = os.path.join(ROOT, path)
        assert os.path.exists(target), path
        if anchor:
            headings = [re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-')
                        for h in re.findall(r'^#+ (.*)$', open(target, encoding='utf-8').read(),
                                            re.M)]
            assert anchor in headings, (path, anchor, headings)


def _tutorial_lines():
    """Return the ``robot-dynamics`` lines of the tutorial's bash blocks."""
    text = open(TUTORIAL, encoding='utf-8').read()
    blocks = re.findall(r'```bash\n(.*?)```', text, re.S)
    return [line for block in blocks for line in block.splitlines()
            if line.startswith('robot-dynamics ')]


# the robot-dynamics commands it runs import nothing of ROS (info, fk, excite, check: numerics
# and a plot): run once in CI, not once per distribution (issue 50; excite is 8 CPU-s)
@pytest.mark.offline
@pytest.mark.any_distro
def test_the_tutorial_commands_run_on_the_ur5(tmp_path):
    from conftest import ROBOTS, erd_root
    arm = os.path.join(erd_root(), ROBOTS['ur5'])
    lines = _tutorial_lines()
    words = [shlex.split(line)[1] for line in lines]
    assert words == ['info', 'fk', 'excite', 'check', 'identify'], words
    bindir = os.path.dirname(sys.executable)
    env = dict(os.environ, ARM=arm, PATH=bindir + os.pathsep + os.environ.get('PATH', ''))
    expect = {'info': 'robot "ur5": 6 movable joints', 'fk': 'position (m): [ 0.487173',
              'excite': '-> excite.yaml', 'check': 'k* = '}
    for line, word in zip(lines, words):
        if word == 'identify':          # needs the bag the tutorial records with ros2 bag
            continue
        r = subprocess.run(['bash', '-c', line], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr[-2000:])
        assert expect[word] in r.stdout + r.stderr, (line, r.stdout[-2000:])
    assert (tmp_path / 'check.png').stat().st_size > 10000


def _version(manifest):
    import xml.etree.ElementTree as ElementTree
    return ElementTree.parse(manifest).find('version').text


@pytest.mark.parametrize('package', ['robot_dynamics_ros', 'robot_dynamics_msgs'])
def test_the_version_is_one_in_package_xml_setup_py_and_the_changelog(package):
    from catkin_pkg.changelog import get_changelog_from_path
    folder = os.path.join(ROOT, package)
    version = _version(os.path.join(folder, 'package.xml'))
    changelog = get_changelog_from_path(os.path.join(folder, 'CHANGELOG.rst'), package)
    assert changelog is not None, 'no CHANGELOG.rst catkin_pkg can read'
    versions = [v for v, _, _ in changelog.foreach_version()]
    assert versions and versions[0] == version, (versions, version)
    setup = os.path.join(folder, 'setup.py')
    if os.path.exists(setup):
        calls = [n for n in ast.walk(ast.parse(open(setup).read())) if isinstance(n, ast.Call)
                 and getattr(n.func, 'id', '') == 'setup']
        given = {k.arg: k.value for k in calls[0].keywords}
        assert ast.literal_eval(given['version']) == version


def test_every_module_opens_with_a_docstring_of_what_it_is_for():
    sources = glob.glob(os.path.join(PACKAGE, 'robot_dynamics_ros', '**', '*.py'),
                        recursive=True)
    sources += glob.glob(os.path.join(ROOT, 'bench', '*.py'))
    sources += glob.glob(os.path.join(PACKAGE, 'launch', '*.py'))
    assert len(sources) > 40
    missing = []
    for path in sources:
        doc = ast.get_docstring(ast.parse(open(path, encoding='utf-8').read()))
        first = (doc or '').strip().splitlines()[0] if doc else ''
        if len(first) < 20 or first.lower().startswith(('copyright', 'licensed')):
            missing.append((os.path.relpath(path, ROOT), first))
    assert not missing, textwrap.shorten(repr(missing), 2000)
