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
Both package.xml files as a release into a ROS distribution needs them.

Valid against REP 149 format 3 (the structure package_format3.xsd prescribes, checked here
element by element, since xmllint and ament_xmllint are not installable from PyPI), accepted by
catkin_pkg (what colcon, bloom and rosdep read them with), every rosdep key known to Kilted and
Jazzy, and every module the package imports declared.
"""
import ast
import glob
import os
import re
import sys
import warnings
import xml.etree.ElementTree as ET

import pytest

pytestmark = pytest.mark.offline      # no ROS process (conftest.PART)

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # robot_dynamics_ros/
ROOT = os.path.dirname(PACKAGE)
MANIFESTS = {'robot_dynamics_ros': os.path.join(PACKAGE, 'package.xml'),
             'robot_dynamics_msgs': os.path.join(ROOT, 'robot_dynamics_msgs', 'package.xml')}

DEPENDS = ('build_depend', 'build_export_depend', 'buildtool_depend', 'buildtool_export_depend',
           'exec_depend', 'depend', 'doc_depend', 'test_depend', 'conflict', 'replace')

# The rosdep keys the manifests use, as ros/rosdistro defines them (checked at commit 8468e88,
# 2026-08-22): ROS packages released into kilted/ and jazzy/distribution.yaml (the repository in
# brackets), and system keys of rosdep/python.yaml with their Debian/Ubuntu rule. A new key must
# be checked there and added here (or run `rosdep install --from-paths src --ignore-src
# --simulate` against a real rosdep database).
ROS_PACKAGES = {
    'action_msgs': 'rcl_interfaces', 'control_msgs': 'control_msgs',
    'ament_cmake': 'ament_cmake', 'ament_flake8': 'ament_lint',
    'builtin_interfaces': 'rcl_interfaces',
    # coal (was hpp-fcl; Pinocchio's collision library): added 2026-11-27 for the simulator's
    # mesh contact without network access: its release into jazzy/kilted not checked here
    'coal': 'coal',
    'ament_index_python': 'ament_index', 'xacro': 'xacro', 'ament_pep257': 'ament_lint',
    'diagnostic_msgs': 'common_interfaces',
    'geometry_msgs': 'common_interfaces', 'launch': 'launch', 'launch_pytest': 'launch',
    'launch_testing': 'launch', 'launch_ros': 'launch_ros', 'launch_testing_ros': 'launch_ros',
    'pinocchio': 'pinocchio', 'rcl_interfaces': 'rcl_interfaces', 'rclpy': 'rclpy',
    'robot_state_publisher': 'robot_state_publisher', 'rosgraph_msgs': 'rcl_interfaces',
    'rosidl_default_generators': 'rosidl_defaults', 'rosidl_default_runtime': 'rosidl_defaults',
    'sensor_msgs': 'common_interfaces', 'std_msgs': 'common_interfaces',
    'std_srvs': 'common_interfaces', 'trajectory_msgs': 'common_interfaces',
    'urdfdom_py': 'urdf_parser_py',
}
SYSTEM_KEYS = {'python3-matplotlib': 'python3-matplotlib', 'python3-numba': 'python3-numba',
               'python3-numpy': 'python3-numpy', 'python3-pytest': 'python3-pytest',
               'python3-yaml': 'python3-yaml', 'python3-scipy': 'python3-scipy'}
# keys that earlier manifests used and rosdep cannot resolve
NOT_KEYS = {'python3-urdf-parser-py', 'python3-urdfdom-py', 'urdf_parser_py', 'numba'}

# what an import needs declared (top-level module -> rosdep key)
IMPORT_KEYS = {'numpy': 'python3-numpy', 'numba': 'python3-numba',
               'matplotlib': 'python3-matplotlib', 'urdf_parser_py': 'urdfdom_py',
               'yaml': 'python3-yaml', 'scipy': 'python3-scipy'}
# imported by robot-dynamics identify / excite only, installed with pip (requirements/common.txt):
# whether rosdep has keys for them was not checked against rosdistro (no network here)
PIP_ONLY = {'cvxpy', 'rosbags'}


def elements(path):
    root = ET.parse(path).getroot()
    return root, [(child.tag, child) for child in root if isinstance(child.tag, str)]


@pytest.mark.xmllint
@pytest.mark.linter
@pytest.mark.parametrize('name', sorted(MANIFESTS))
def test_package_xml_is_valid_format_3(name):
    path = MANIFESTS[name]
    text = open(path, encoding='utf-8').read()
    assert text.startswith('<?xml version="1.0"?>')
    assert re.search(r'<\?xml-model href="http://download\.ros\.org/schema/package_format3\.xsd"'
                     r' schematypens="http://www\.w3\.org/2001/XMLSchema"\?>', text)
    root, children = elements(path)
    assert root.tag == 'package' and root.attrib == {'format': '3'}
    tags = [tag for tag, _ in children]
    # the sequence of package_format3.xsd: name, version, description, maintainer+, license+,
    # url*, author*, (any dependency)*, group_depend*, member_of_group*, export?
    order = (['name', 'version', 'description', 'maintainer', 'license', 'url', 'author']
             + ['depends', 'group_depend', 'member_of_group', 'export'])
    rank = [order.index('depends' if t in DEPENDS else t) if (t in order or t in DEPENDS)
            else None for t in tags]
    assert None not in rank, \
        f'elements not in format 3: {[t for t, r in zip(tags, rank) if r is None]}'
    assert rank == sorted(rank), f'elements out of the format 3 order: {tags}'
    for once in ('name', 'version', 'description'):
        assert tags.count(once) == 1, once
    assert tags.count('export') <= 1
    assert 'maintainer' in tags and 'license' in tags
    values = {t: e for t, e in children}
    assert re.fullmatch(r'[a-z](_?[a-z0-9]+)*', values['name'].text) and \
        values['name'].text == name
    assert re.fullmatch(r'(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)',
                        values['version'].text)
    for tag, e in children:
        if tag == 'maintainer':
            assert re.fullmatch(r'[-a-zA-Z0-9_%+]+(\.[-a-zA-Z0-9_%+]+)*@[-a-zA-Z0-9%]+'
                                r'(\.[-a-zA-Z0-9%]+)*\.[a-zA-Z]{2,}', e.get('email', ''))
            assert (e.text or '').strip()
        if tag in DEPENDS:
            assert (e.text or '').strip() and set(e.attrib) <= {
                'version_lt', 'version_lte', 'version_eq', 'version_gte', 'version_gt',
                'condition'}, (tag, e.text, e.attrib)
        if tag == 'license':
            assert e.text == 'Apache-2.0' and set(e.attrib) <= {'file'}
    build_type = root.find('export/build_type')
    assert build_type is not None and build_type.text == (
        'ament_python' if name == 'robot_dynamics_ros' else 'ament_cmake')


@pytest.mark.parametrize('name', sorted(MANIFESTS))
def test_catkin_pkg_reads_the_manifest_without_a_warning(name):
    catkin_pkg = pytest.importorskip('catkin_pkg.package')
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        package = catkin_pkg.parse_package(MANIFESTS[name])
        package.validate()
    assert package.name == name and not caught, [str(w.message) for w in caught]


def test_version_is_the_same_everywhere():
    setup_py = open(os.path.join(PACKAGE, 'setup.py')).read()
    versions = {ET.parse(p).getroot().findtext('version') for p in MANIFESTS.values()}
    assert versions == set(re.findall(r"version='([^']+)'", setup_py)), versions


def test_every_dependency_is_a_rosdep_key_of_kilted_and_jazzy():
    for name, path in MANIFESTS.items():
        _, children = elements(path)
        for tag, e in children:
            if tag not in DEPENDS:
                continue
            key = e.text.strip()
            if key in MANIFESTS:
                continue                # built from the same workspace
            assert key not in NOT_KEYS, f'{name}: {tag} {key} is not a rosdep key'
            assert key in ROS_PACKAGES or key in SYSTEM_KEYS, \
                f'{name}: {tag} {key}: not checked against rosdistro (see ROS_PACKAGES)'


def test_what_the_package_imports_is_declared():
    _, children = elements(MANIFESTS['robot_dynamics_ros'])
    run = {e.text.strip() for tag, e in children if tag in ('exec_depend', 'depend')}
    sources = glob.glob(os.path.join(PACKAGE, 'robot_dynamics_ros', '**', '*.py'),
                        recursive=True) + glob.glob(os.path.join(PACKAGE, 'launch', '*.py'))
    missing = set()
    for path in sources:
        for node in ast.walk(ast.parse(open(path, encoding='utf-8').read(), path)):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0
                     else [])
            for module in names:
                top = module.split('.')[0]
                if top in sys.stdlib_module_names or top == 'robot_dynamics_ros' or \
                        top in PIP_ONLY:
                    continue
                key = IMPORT_KEYS.get(top, top)
                if key not in run:
                    missing.add(f'{key} (import {module} in {os.path.relpath(path, PACKAGE)})')
    assert not missing, sorted(missing)
    # and the launch files' own executables
    assert 'robot_state_publisher' in run


def test_test_dependencies_are_declared():
    _, children = elements(MANIFESTS['robot_dynamics_ros'])
    tests = {e.text.strip() for tag, e in children if tag == 'test_depend'}
    assert {'ament_flake8', 'ament_pep257', 'python3-pytest', 'launch_testing',
            'launch_pytest', 'launch_testing_ros', 'pinocchio'} <= tests, tests
