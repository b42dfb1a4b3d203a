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
The reference docs, rendered from the code they describe (Markdown for Sphinx with MyST).

A node's parameters and interfaces come from the declarations the node itself uses
(``PARAMETERS``, ``INTERFACES`` and ``NOTES`` of its module: the same source as its ``--help``
and as ``ros2 param describe``); the command-line programs from their argparse parsers; the launch
files' arguments from ``nodes.launch_setup``; the messages and services from their ``.msg`` and
``.srv`` files. The directives of ``doc/conf.py`` put these into the Sphinx build, and
``test_docs.py`` checks that a running node describes its parameters as these pages do.
"""
import glob
import importlib
import os

from ..nodes import launch_setup
from ..nodes.parameters import KINDS, interfaces_of, kind_name, shown_default

NODES = ('feedforward_node', 'simulator_node')
LAUNCH_FILES = ('simulation', 'feedforward')
HERE = os.path.dirname(os.path.abspath(__file__))


def _cell(text):
    """Return ``text`` fit for a Markdown table cell."""
    return str(text).replace('|', '\\|').replace('\n', ' ')


def _node(executable):
    """Return the module of a node, which holds its declarations."""
    return importlib.import_module(f'robot_dynamics_ros.nodes.{executable}')


def node_markdown(executable):
    """Return the reference of a node: what it does, its parameters and its interfaces."""
    node = _node(executable)
    lines = [node.SUMMARY, '',
             f'Executable `{executable}`, node name `{node.NODE_NAME}`. `{executable} --help` '
             'prints the same list.', '',
             '| parameter | type | default | must be | changes at runtime | description |',
             '| --- | --- | --- | --- | --- | --- |']
    constraint = getattr(node, 'constraint', lambda name: '')
    for name, (kind, default, text, read_only) in node.PARAMETERS.items():
        lines.append(f'| `{name}` | {kind_name(kind)} | `{_cell(shown_default(default))}` | '
                     f'{_cell(constraint(name))} | {"no (read-only)" if read_only else "yes"} '
                     f'| {_cell(text)} |')
    for note in getattr(node, 'NOTES', ()):
        lines += ['', note]
    for kind in KINDS:
        rows = interfaces_of(node.INTERFACES, kind)
        if rows:
            lines += ['', f'**{kind.capitalize()}**', '', '| name | type | description |',
                      '| --- | --- | --- |']
            lines += [f'| `{name}` | `{rtype}` | {_cell(text)} |' for name, rtype, text in rows]
    return '\n'.join(lines) + '\n'


def readme_table(executable):
    """Return the README's table of a node: its topics, services and actions, by name."""
    node = _node(executable)
    rows = {'subscribes': 'in', 'publishes': 'out', 'services': 'services',
            'actions': 'actions'}
    lines = [f'| `{executable}` | node `{node.NODE_NAME}`: {len(node.PARAMETERS)} parameters |',
             '| --- | --- |']
    for kind, label in rows.items():
        items = [f'`{name}` ({rtype.rsplit("/", 1)[1]})'
                 for name, rtype, _ in interfaces_of(node.INTERFACES, kind)]
        if items:
            lines.append(f'| {label} | {", ".join(items)} |')
    return '\n'.join(lines) + '\n'


def _help_block(parser):
    return ['```text', parser.format_help().rstrip(), '```']


def cli_markdown():
    """Return the reference of the command-line programs: each one's ``--help``."""
    import argparse
    from . import cli, demo
    lines = []
    top = cli.parser()
    lines += ['## robot-dynamics', ''] + _help_block(top)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in sub.choices.items():
        lines += ['', f'### robot-dynamics {name}', ''] + _help_block(parser)
    lines += ['', '## closed-loop-demo', ''] + _help_block(demo.parser())
    return '\n'.join(lines) + '\n'


def _shared(path):
    """Return a path into this package's installed share/ as the docs show it."""
    marker = os.path.join('share', 'robot_dynamics_ros', '')
    return path if marker not in path else '<share>/robot_dynamics_ros/' + path.split(marker, 1)[1]


def launch_markdown():
    """Return the launch files' arguments, with their defaults."""
    lines = []
    for kind in LAUNCH_FILES:
        lines += ['', f'## {kind}.launch.py', '', '| argument | default | description |',
                  '| --- | --- | --- |']
        for name, default, text in getattr(launch_setup, f'{kind}_arguments')():
            lines.append(f'| `{name}` | `{_cell(_shared(default))}` | {_cell(text)} |')
    return '\n'.join(lines[1:]) + '\n'


def interface_files():
    """Return the .msg and .srv files of robot_dynamics_msgs (its source, else as installed)."""
    source = os.path.join(HERE, '..', '..', '..', 'robot_dynamics_msgs')
    if not os.path.isdir(source):
        from ament_index_python.packages import get_package_share_directory
        source = get_package_share_directory('robot_dynamics_msgs')
    return sorted(glob.glob(os.path.join(source, 'msg', '*.msg'))) + \
        sorted(glob.glob(os.path.join(source, 'srv', '*.srv')))


def interfaces_markdown():
    """Return every message and service of robot_dynamics_msgs, as its file defines it."""
    lines = []
    for path in interface_files():
        folder = os.path.basename(os.path.dirname(path))
        name = os.path.splitext(os.path.basename(path))[0]
        with open(path, encoding='utf-8') as f:
            text = f.read().rstrip()
        lines += ['', f'## robot_dynamics_msgs/{folder}/{name}', '', '```text', text, '```']
    return '\n'.join(lines[1:]) + '\n'


def main(argv=None):
    """Print the README's node tables (``python -m robot_dynamics_ros.tools.reference``)."""
    print('\n'.join(readme_table(name) for name in NODES), end='')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
