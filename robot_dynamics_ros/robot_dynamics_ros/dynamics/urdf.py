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
Reading a robot description: what dynamics needs from a URDF, and its ``<ros2_control>`` blocks.

A description as real stacks publish it (xacro output with ``<ros2_control>``, ``<gazebo>``,
``<transmission>`` in the ROS 1 or ROS 2 format, ``<sensor>``, textured materials, ...) carries
much that dynamics does not read and that urdf_parser_py may choke on. ``read_description`` keeps
only ``<link>`` (with its ``<inertial>``) and ``<joint>`` (with parent, child, origin, axis, limit,
dynamics and mimic) before handing the XML to urdf_parser_py, so a malformed element that dynamics
does read still raises a ValueError naming it, and nothing else can.

``load_description`` reads a description file as users have them: a URDF, or a ``.xacro`` file
expanded with the ``xacro`` package (PyPI) as ROS's xacro does it, ``$(find pkg)`` resolved through
the ament index. A description that still holds xacro (``${...}``, ``<xacro:...>``) is refused.
"""
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

JOINT_CHILDREN = ('parent', 'child', 'origin', 'axis', 'limit', 'dynamics', 'mimic',
                  'safety_controller')
XACRO_NS = '{http://www.ros.org/wiki/xacro}'
XACRO_SUFFIX = '.xacro'


@dataclass(frozen=True)
class Ros2Control:
    """What the ``<ros2_control>`` blocks of a description say, in document order."""

    joints: tuple = ()              # every joint named in a block
    effort_joints: tuple = ()       # joints with an ``effort`` command interface
    initial_positions: dict = field(default_factory=dict)   # position state initial_value


def read_description(xml):
    """
    (urdf_parser_py Robot of the dynamics-relevant elements, Ros2Control) of a URDF string.

    ValueError when the XML is malformed or an element dynamics reads is.
    """
    if not isinstance(xml, str) or not xml.strip():
        raise ValueError('the URDF is empty')
    try:
        root = ET.fromstring(xml.encode('utf-8'))
    except ET.ParseError as e:
        raise ValueError(f'malformed URDF: {e}') from None
    if root.tag != 'robot':
        raise ValueError(f'malformed URDF: the root element is <{root.tag}>, not <robot>')
    _refuse_xacro(root)
    ros2_control = _ros2_control(root)
    kept = ET.Element('robot', root.attrib)
    for element in root:
        if element.tag == 'link':
            link = ET.SubElement(kept, 'link', element.attrib)
            link.extend(e for e in element if e.tag == 'inertial')
        elif element.tag == 'joint':
            joint = ET.SubElement(kept, 'joint', element.attrib)
            joint.extend(e for e in element if e.tag in JOINT_CHILDREN)
    return _parse(ET.tostring(kept)), ros2_control


def _parse(xml_bytes):
    try:
        from urdf_parser_py import xml_reflection
        from urdf_parser_py.urdf import URDF
    except ImportError as e:  # pragma: no cover - a dependency of the package
        raise ImportError('robot_dynamics_ros needs urdf_parser_py (pip install urdfdom-py)') \
            from e
    old = xml_reflection.core.on_error          # it prints what it ignores to stderr
    xml_reflection.core.on_error = lambda message: None
    try:
        robot = URDF.from_xml_string(xml_bytes)
    except Exception as e:
        raise ValueError(f'malformed URDF: {e}') from e
    finally:
        xml_reflection.core.on_error = old
    if robot is None:  # pragma: no cover - the root was checked
        raise ValueError('malformed URDF: no <robot> element')
    return robot


def _ros2_control(root):
    joints, effort, initial = [], [], {}
    for block in root.iter('ros2_control'):
        for joint in block.findall('joint'):
            name = joint.get('name')
            if not name or name in joints:
                continue
            joints.append(name)
            if any(c.get('name') == 'effort' for c in joint.findall('command_interface')):
                effort.append(name)
            for state in joint.findall('state_interface'):
                if state.get('name') != 'position':
                    continue
                for param in state.findall('param'):
                    if param.get('name') == 'initial_value':
                        try:
                            initial[name] = float((param.text or '').strip())
                        except ValueError:
                            pass        # xacro left an expression: no initial value
    return Ros2Control(tuple(joints), tuple(effort), initial)


def _refuse_xacro(root):
    """Raise ValueError when the tree still holds xacro: an ``xacro:`` element or ``${...}``."""
    for element in root.iter():
        if isinstance(element.tag, str) and element.tag.startswith(XACRO_NS):
            found = f'the element <xacro:{element.tag[len(XACRO_NS):]}>'
        else:
            texts = [element.text or ''] + list(element.attrib.values())
            found = next((f'"{t.strip()}" in <{element.tag}>' for t in texts if '${' in t), None)
        if found:
            raise ValueError(
                f'the description is xacro, not URDF ({found}): expand it first '
                f'(xacro arm.urdf.xacro > arm.urdf) or pass the .xacro file as the URDF file '
                f'(urdf_file, --urdf), which is expanded with its xacro arguments')


def parse_xacro_args(args):
    """
    Return {name: value} of xacro arguments given as ``name:=value`` strings (or a dict).

    ValueError names an argument that is not of that form.
    """
    if isinstance(args, dict):
        return {str(k): str(v) for k, v in args.items()}
    mappings = {}
    for arg in args or ():
        name, sep, value = str(arg).partition(':=')
        if not sep or not name.strip():
            raise ValueError(f'xacro argument "{arg}" is not of the form name:=value')
        mappings[name.strip()] = value
    return mappings


def load_description(path, xacro_args=()):
    """
    Return the URDF text of a description file: a URDF, or a ``.xacro`` file expanded.

    ``xacro_args``: ``name:=value`` strings (or a dict) for the xacro's ``<xacro:arg>``s, as
    ``xacro file.xacro name:=value`` takes them. ValueError when the file cannot be read or
    expanded (xacro's message), or when arguments are given for a plain URDF.
    """
    mappings = parse_xacro_args(xacro_args)
    if not str(path).endswith(XACRO_SUFFIX):
        if mappings:
            raise ValueError(f'xacro arguments given, but {path} is not a {XACRO_SUFFIX} file')
        try:
            with open(path, encoding='utf-8') as f:
                return f.read()
        except OSError as e:
            raise ValueError(f'cannot read URDF file {path}: {e.strerror}') from e
    if not os.path.isfile(path):
        raise ValueError(f'cannot read xacro file {path}: No such file')
    try:
        import xacro
    except ImportError:
        raise ValueError(f'{path} is a xacro file: expanding it needs the xacro package '
                         f'(pip install xacro, or the ROS package xacro)') from None
    try:
        # xacro prints where an error is to stderr and raises; both are the user's to see
        return xacro.process_file(path, mappings=mappings).toprettyxml(indent='  ')
    except Exception as e:      # xacro raises XacroException, OSError, NameError, ...
        raise ValueError(f'cannot expand xacro file {path}: {type(e).__name__}: {e}') from e
