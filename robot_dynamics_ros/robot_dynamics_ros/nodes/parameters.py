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

"""Parameters of both nodes: declared with descriptors, numbers coerced, and their --help."""
import array
import sys
import textwrap

from rcl_interfaces.msg import ParameterDescriptor, ParameterType
from rclpy.parameter import Parameter


_TYPES = {
    bool: (ParameterType.PARAMETER_BOOL, Parameter.Type.BOOL),
    int: (ParameterType.PARAMETER_INTEGER, Parameter.Type.INTEGER),
    float: (ParameterType.PARAMETER_DOUBLE, Parameter.Type.DOUBLE),
    str: (ParameterType.PARAMETER_STRING, Parameter.Type.STRING),
    'str[]': (ParameterType.PARAMETER_STRING_ARRAY, Parameter.Type.STRING_ARRAY),
    'float[]': (ParameterType.PARAMETER_DOUBLE_ARRAY, Parameter.Type.DOUBLE_ARRAY),
}


def _as_float(value):
    """
    Return value as a DOUBLE (array) parameter holds it, or None when it is not numbers.

    Integers are accepted: YAML and the command line type `400` as INTEGER.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        items = list(value)
    except TypeError:
        return None
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in items):
        return [float(v) for v in items]
    return None


def coerce_numbers(node, params):
    """
    Coerce numbers before parameters are set (a pre-set-parameters callback).

    An INTEGER (array) given for a declared DOUBLE (array) parameter becomes a DOUBLE (array), so
    `ros2 param set ... kp "[400]"` works.
    """
    out = []
    for p in params:
        if node.has_parameter(p.name):
            want = node.describe_parameter(p.name).type
            if (want == ParameterType.PARAMETER_DOUBLE and p.type_ == Parameter.Type.INTEGER) or (
                    want == ParameterType.PARAMETER_DOUBLE_ARRAY
                    and p.type_ == Parameter.Type.INTEGER_ARRAY):
                p = Parameter(p.name, value=_as_float(p.value))
        out.append(p)
    return out


def declare(node, name, kind, default, description, read_only=False, rule=None):
    """
    Declare a typed parameter with a descriptor; returns its value (the override if any).

    An integer override of a float parameter is taken as that float; an empty array default is set
    to a typed empty array, so `ros2 param get/dump` show it. ``rule`` (a
    ``dynamics.values.OneOf`` or ``Number``, what the node checks the value against) is shown
    as the descriptor's additional constraints (``ros2 param describe``).
    """
    ptype, rtype = _TYPES[kind]
    desc = ParameterDescriptor(name=name, type=ptype, description=description,
                               read_only=read_only, dynamic_typing=False,
                               additional_constraints=rule.text if rule is not None else '')
    override = node._parameter_overrides.get(name)
    if override is not None and kind in (float, 'float[]') and override.type_ in (
            Parameter.Type.INTEGER, Parameter.Type.INTEGER_ARRAY):
        node._parameter_overrides[name] = Parameter(name, value=_as_float(override.value))
    if isinstance(default, list) and not default:
        # declared by type (an empty list has none), then set to a typed empty array: an unset
        # parameter makes GetParameters answer nothing for the whole request (ros2 param dump)
        writable = ParameterDescriptor(name=name, type=ptype, description=description)
        value = node.declare_parameter(name, rtype, writable).value
        if value is None:
            node.set_parameters([Parameter(name, rtype, [])])
        node.set_descriptor(name, desc)
        return [] if value is None else list(value)
    return node.declare_parameter(name, default, desc).value


# overrides that name parameters declared later or by rclpy's own options, not by the node
LATER = ('qos_overrides.',)


def say_unknown_overrides(node, executable, later=()):
    """
    Warn of the overrides (``-p``, a params file) that name no parameter of ``node``, if any.

    rclpy takes an override only for a parameter the node declares and drops the others without
    a word: ``-p kp_gain:=400`` for ``kp`` changed nothing, silently. Names under a ``later``
    prefix (parameters declared per joint once the description is known) are not counted.
    ``executable``: the node's, whose --help lists its parameters.
    """
    prefixes = LATER + tuple(later)
    unknown = sorted(name for name in node._parameter_overrides
                     if not name.startswith(prefixes) and not node.has_parameter(name))
    if unknown:
        node.get_logger().warning(f'ignoring parameter overrides {unknown}: no parameter of this '
                                  f'node has that name ({executable} --help lists them)')


def help_requested(args):
    """Return True when the command line (before --ros-args) asks for --help."""
    args = sys.argv[1:] if args is None else list(args)
    if '--ros-args' in args:
        args = args[:args.index('--ros-args')]
    return any(a in ('-h', '--help') for a in args)


KINDS = ('subscribes', 'publishes', 'services', 'actions')


def usage(executable, node_name, summary, parameters, interfaces, notes=(), constraint=None):
    """
    Return the --help text: what the node does, its parameters with defaults, its interfaces.

    ``parameters``: name -> (kind, default, description, read_only), as the node declares them;
    ``interfaces``: (kind, name, type, description) with kind one of KINDS; ``constraint``:
    name -> what a value must be ('' or None: nothing said), shown in brackets. The reference
    docs are rendered from the same (``tools/reference.py``).
    """
    lines = [f'usage: {executable} [--ros-args -p NAME:=VALUE ... | --params-file FILE]', '',
             *textwrap.wrap(summary, 99), '', f'node name: {node_name}', '',
             'parameters (default):']
    for name, (kind, default, text, read_only) in parameters.items():
        must = constraint(name) if constraint is not None else ''
        lines.append(f'  {name} ({kind_name(kind)}{", read-only" if read_only else ""}) = '
                     f'{shown_default(default)}' + (f'  [{must}]' if must else ''))
        lines += textwrap.wrap(text, 99, initial_indent=' ' * 6, subsequent_indent=' ' * 6)
    for kind in KINDS:
        items = [f'{name} ({rtype}{"; " + text if text else ""})'
                 for name, rtype, text in interfaces_of(interfaces, kind)]
        if not items:
            continue
        lines += [''] + textwrap.wrap(f'{kind + ":":<11} ' + ', '.join(items), 99,
                                      subsequent_indent=' ' * 12)
    for text in notes:
        lines += [''] + textwrap.wrap(text, 99)
    return '\n'.join(lines)


def interfaces_of(interfaces, kind):
    """Return (name, type, description) of the ``interfaces`` of one kind, in their order."""
    return [(name, rtype, text) for k, name, rtype, text in interfaces if k == kind]


def kind_name(kind):
    """Return a parameter kind as --help and the docs name it: bool, int, float, str, float[]."""
    return kind if isinstance(kind, str) else kind.__name__


def shown_value(value):
    """Return a set parameter's value as the log shows it: a number array as a list."""
    return list(value) if isinstance(value, array.array) else value


def shown_default(default):
    """Return a parameter's default as --help and the docs show it."""
    return repr(default) if default != '' else "''"
