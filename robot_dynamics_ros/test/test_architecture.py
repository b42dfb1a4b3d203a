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
(and themselves). Nothing outside ``control/`` assigns an attribute of a control object: the
node and the tools change the control layer's state through its methods.
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


# the names under which the nodes and tools hold control objects (the loop, the controller and
# what hangs off it), and the calls that make one (classes imported from control/)
HANDLES = ('ctrl', 'loop', 'controller', 'memory', 'limit_layer', 'observer', 'sensor', 'law')


def _chain_base(node):
    """Return the expression an attribute or subscript chain starts from."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node


def control_writes(path):
    """
    Return [(line, target)]: assignments in ``path`` to an attribute of a control object.

    A control object: an attribute named as one of HANDLES (``self.loop``, ``node.ctrl``), a
    function's parameter of such a name, an instance of a class imported from control/, or a
    name bound to an expression of one of these (``src = ctrl.memory.sensor``; ``c, v = x, y``
    binds c to x) anywhere in the same function. What it assigns through: ``x.attr = ...``,
    ``x.attr[i] = ...``, ``+=``.
    """
    tree = ast.parse(open(path, encoding='utf-8').read(), path)
    made = set()            # classes and modules imported from the control layer
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and 'control' in (node.module or '').split('.'):
            made.update(a.asname or a.name for a in node.names)
    found = []

    def control(expr, names):
        """Whether ``expr`` is a control object: a chain through a handle, or one made."""
        if isinstance(expr, ast.Call):          # a control class's instance (not a method's
            return isinstance(expr.func, ast.Name) and expr.func.id in made    # result)
        while isinstance(expr, (ast.Attribute, ast.Subscript)):
            if isinstance(expr, ast.Attribute) and expr.attr in HANDLES:
                return True
            expr = expr.value
        return isinstance(expr, ast.Name) and (expr.id in names or expr.id in made)

    def targets(stmt):
        if isinstance(stmt, ast.Assign):
            return stmt.targets, stmt.value
        if isinstance(stmt, (ast.AugAssign, ast.AnnAssign)):
            return [stmt.target], stmt.value
        return [], None

    def pairs(stmt):
        """(target, value) of each assigned element: ``a, b = x, y`` pairs a with x."""
        outs, value = targets(stmt)
        for t in outs:
            if isinstance(t, ast.Tuple):
                same = isinstance(value, ast.Tuple) and len(value.elts) == len(t.elts)
                yield from zip(t.elts, value.elts if same else [None] * len(t.elts))
            else:
                yield t, value

    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        names = {a.arg for a in fn.args.args + fn.args.kwonlyargs if a.arg in HANDLES}
        grown = True
        while grown:                        # the names bound to control objects, in any order
            grown = False
            for stmt in ast.walk(fn):
                for e, value in pairs(stmt):
                    if isinstance(e, ast.Name) and e.id not in names and value is not None \
                            and control(value, names):
                        names.add(e.id)
                        grown = True
        for stmt in ast.walk(fn):
            for e, _ in pairs(stmt):
                if not isinstance(e, (ast.Attribute, ast.Subscript)):
                    continue
                base = e.value
                # self.x = ...: the object's own attribute, unless self is a handle
                if isinstance(base, ast.Name) and base.id == 'self' and \
                        isinstance(e, ast.Attribute):
                    continue
                if control(base, names):
                    found.append((stmt.lineno, ast.unparse(e)))
    return sorted(set(found))


def test_only_the_controller_assigns_an_attribute_of_a_control_object():
    # the nodes and tools, and the loop, payload estimation ... in control/: the Controller
    # owns its state (issue 51), and what hangs off it (its limits layer, its task law)
    writes = []
    for layer, path in sources():
        if layer in ('nodes', 'tools') or (layer == 'control' and
                                           os.path.basename(path) != 'controller.py'):
            rel = os.path.relpath(path, SRC)
            writes += [f'{rel}:{line}: {target} = ...' for line, target in control_writes(path)]
    assert not writes, ('assignments to control objects outside controller.py (give the '
                        'control class a method):\n' + '\n'.join(writes))


def test_the_control_writes_checker_sees_handles_aliases_and_instances(tmp_path):
    p = tmp_path / 'x.py'
    p.write_text(
        'from ..control.force import SensorInput\n'
        'def f(self, msg, ctrl):\n'
        '    ctrl.ref.hold = None\n'               # 3: a parameter named as a handle
        '    self.loop.bump = [1, None]\n'         # 4: an attribute named as a handle
        '    src = self.ctrl.memory.sensor\n'
        '    src.bias[:] = 0.0\n'                  # 6: an alias of one
        '    s = SensorInput(1)\n'
        '    s.bias = 2\n'                         # 8: an instance of a control class
        '    self.loop.values += 1\n'              # 9: augmented
        '    msg.header.stamp = 3\n'               # a message: fine
        '    self.ctrl = ctrl\n'                   # the object's own attribute: fine
        '    out = self.out\n'
        '    out.command = 4\n'                    # not a control object: fine
        '    limits = ctrl.limits.copy()\n'
        '    limits[ctrl.cmd] = 5\n'               # a copy: fine
        '    c, v = self.ctrl, self.values\n'
        '    c.hold = 6\n'                         # 17: an alias from a tuple
        '    v.x = 7\n')                           # its other element: fine
    assert [line for line, _ in control_writes(str(p))] == [3, 4, 6, 8, 9, 17]
