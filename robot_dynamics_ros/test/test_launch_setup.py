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
The launch files' decisions, without the launch system (nodes.launch_setup).

Every documented argument combination of feedforward.launch.py and simulation.launch.py gives the
nodes, parameters and remappings the README promises; and a node started with exactly those
(``ros_arguments``: what the launch file hands launch_ros) runs, declares every one of those
parameters and reports their values through its parameter service.
"""
import os
import signal
import subprocess
import time

import pytest
import yaml

from robot_dynamics_ros.dynamics import load_description
from robot_dynamics_ros.nodes import launch_setup
from robot_dynamics_ros.nodes.launch_setup import (CONTROLLER, COMMAND_TOPIC, SIMULATOR,
                                                   feedforward_nodes, ros_arguments, share,
                                                   simulation_nodes)

rclpy = pytest.importorskip('rclpy')

from rcl_interfaces.srv import GetParameters, ListParameters  # noqa: E402
from rclpy.parameter import parameter_value_to_python  # noqa: E402

from conftest import executable, interrupt_group  # noqa: E402
from ros_harness import NodeProcess, call_service, spin_once  # noqa: E402

LAUNCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'launch')


def by_name(nodes):
    return {n.name: n for n in nodes}


# ---- the decisions, argument by argument ----------------------------------------------------

def test_feedforward_defaults_take_everything_from_the_params_file():
    [node] = feedforward_nodes()
    assert (node.package, node.executable, node.name, node.namespace) == (
        'robot_dynamics_ros', 'feedforward_node', CONTROLLER, '')
    assert node.parameters == (share('config', 'feedforward.yaml'),)
    assert node.remappings == ((COMMAND_TOPIC, COMMAND_TOPIC),)
    assert node.parameter_values()['mode'] == 'gravity'        # the YAML's


def test_feedforward_mode_overrides_only_when_given(tmp_path):
    params = tmp_path / 'mine.yaml'
    params.write_text(yaml.safe_dump(
        {'/**': {'ros__parameters': {'mode': 'feedforward', 'kp': [50.0]}}}))
    [given] = feedforward_nodes(params_file=str(params), mode='computed_torque')
    assert given.parameters == (str(params), {'mode': 'computed_torque'})
    assert given.parameter_values() == {'mode': 'computed_torque', 'kp': [50.0]}
    [empty] = feedforward_nodes(params_file=str(params), mode='  ')
    assert empty.parameters == (str(params),)
    assert empty.parameter_values()['mode'] == 'feedforward'


def test_feedforward_description_file_only_when_given(xacro_arm):
    [node] = feedforward_nodes(urdf_file=xacro_arm, xacro_args='prefix:=a_ payload_mass:=2')
    assert node.parameter_values()['urdf_file'] == xacro_arm
    assert node.parameter_values()['xacro_args'] == ['prefix:=a_', 'payload_mass:=2']
    assert 'urdf_file' not in feedforward_nodes()[0].parameter_values()
    with pytest.raises(ValueError, match='xacro_args:= given without urdf_file'):
        feedforward_nodes(xacro_args='prefix:=a_')


def test_feedforward_namespace_and_command_topic():
    [node] = feedforward_nodes(namespace='/left_arm/', command_topic='/fcc/commands')
    assert node.namespace == 'left_arm'
    assert node.remappings == ((COMMAND_TOPIC, '/fcc/commands'),)


def test_simulation_defaults_the_2r_arm_under_computed_torque():
    nodes = by_name(simulation_nodes())
    assert sorted(nodes) == [SIMULATOR, CONTROLLER]
    params = share('config', 'simulation.yaml')
    sim, ctrl = nodes[SIMULATOR], nodes[CONTROLLER]
    assert sim.parameters == (params, {'urdf_file': share('urdf', 'planar_2r.urdf')})
    assert ctrl.parameters == (params,)
    assert ctrl.parameter_values()['mode'] == 'computed_torque'
    assert sim.parameter_values()['timestep'] == 0.001
    assert 'initial_positions' not in sim.parameter_values()     # the description's start pose
    assert sim.remappings == ctrl.remappings == ()
    assert sim.namespace == ctrl.namespace == ''


def test_simulation_arguments_reach_the_right_node(xacro_arm):
    nodes = by_name(simulation_nodes(urdf_file=xacro_arm, xacro_args='prefix:=l_ payload_mass:=1',
                                     mode='feedforward', initial_positions='[0.5, -0.3]',
                                     namespace='sim'))
    sim, ctrl = nodes[SIMULATOR], nodes[CONTROLLER]
    assert sim.parameter_values()['urdf_file'] == xacro_arm
    assert sim.parameter_values()['xacro_args'] == ['prefix:=l_', 'payload_mass:=1']
    assert sim.parameter_values()['initial_positions'] == [0.5, -0.3]
    assert 'mode' not in sim.parameter_values()
    assert ctrl.parameter_values()['mode'] == 'feedforward'
    assert sim.namespace == ctrl.namespace == 'sim'
    assert simulation_nodes(initial_positions='0.25')[0].parameter_values()[
        'initial_positions'] == [0.25]


def test_with_state_publisher_gets_the_expanded_description(xacro_arm):
    assert len(simulation_nodes(with_state_publisher='false')) == 2
    nodes = by_name(simulation_nodes(urdf_file=xacro_arm, xacro_args='prefix:=r_',
                                     with_state_publisher='True'))
    rsp = nodes['robot_state_publisher']
    assert (rsp.package, rsp.executable) == ('robot_state_publisher', 'robot_state_publisher')
    description = rsp.parameter_values()['robot_description']
    assert description == load_description(xacro_arm, ['prefix:=r_'])
    assert '<joint name="r_joint1"' in description and 'xacro:' not in description
    # its own publication must not compete with the simulator's on robot_description
    assert rsp.remappings == (('robot_description', 'robot_description_rsp'),)


@pytest.mark.parametrize('arguments, message', [
    ({'mdoe': 'gravity'}, 'unknown launch argument.*mdoe'),
    ({'initial_positions': '[a, b]'}, 'initial_positions.*list of numbers'),
    ({'initial_positions': '[]'}, 'initial_positions.*list of numbers'),
    ({'with_state_publisher': 'maybe'}, 'with_state_publisher.*true or false'),
    ({'xacro_args': 'prefix'}, 'name:=value'),
])
def test_wrong_arguments_are_refused_by_name(arguments, message):
    with pytest.raises(ValueError, match=message):
        simulation_nodes(**arguments)


def test_the_launch_files_only_wrap_these_functions():
    """Every argument is declared from launch_setup, and nodes come only from it."""
    for name, kind in (('feedforward.launch.py', 'feedforward'),
                       ('simulation.launch.py', 'simulation')):
        with open(os.path.join(LAUNCH, name), encoding='utf-8') as f:
            text = f.read()
        assert f'launch_setup.{kind}_arguments()' in text
        assert f'launch_setup.{kind}_nodes(' in text
        assert 'launch_setup.params_files(' in text
        assert 'DeclareLaunchArgument(name, default_value=default, description=text)' in text
        assert text.count('Node(') == 1, name        # one generic Node per NodeSpec
        for argument, _, _ in getattr(launch_setup, f'{kind}_arguments')():
            assert f"'{argument}'" not in text, f'{name} decides about {argument} itself'


# ---- the nodes, started with exactly those parameters --------------------------------------

def _combinations(tmp_path, xacro_arm):
    params = tmp_path / 'mine.yaml'
    # integers for float parameters, a nested key: as users write them
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
        'mode': 'feedforward', 'kp': [50], 'state_timeout': 0.2,
        'observer': {'enabled': False}}}}))
    return {
        'feedforward defaults': feedforward_nodes(),
        'feedforward everything': feedforward_nodes(
            params_file=str(params), mode='computed_torque', namespace='left',
            command_topic='/left_effort_controller/commands', urdf_file=xacro_arm,
            xacro_args='prefix:=left_'),
        'simulation defaults': simulation_nodes(),
        'simulation everything': simulation_nodes(
            urdf_file=xacro_arm, xacro_args='prefix:=l_', mode='feedforward',
            initial_positions='[0.5, -0.3]', namespace='sim'),
    }


def _python(value):
    value = parameter_value_to_python(value)
    return list(value) if isinstance(value, (list, tuple)) or hasattr(value, 'tolist') else value


def _parameters(peer, fqn, names):
    listed = call_service(peer, peer.create_client(ListParameters, f'{fqn}/list_parameters'),
                          ListParameters.Request()).result.names
    values = call_service(peer, peer.create_client(GetParameters, f'{fqn}/get_parameters'),
                          GetParameters.Request(names=list(names))).values
    return set(listed), {n: _python(v) for n, v in zip(names, values)}


def _same(expected, got):
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(
            _same(e, g) for e, g in zip(expected, got))
    if isinstance(expected, (int, float)) and not isinstance(expected, bool):
        return isinstance(got, (int, float)) and float(got) == float(expected)
    return expected == got


def test_nodes_started_with_these_parameters_report_them(ros, tmp_path, xacro_arm):
    peer = rclpy.create_node('launch_setup_check')
    failures = []
    try:
        for label, nodes in _combinations(tmp_path, xacro_arm).items():
            started = [NodeProcess(n.executable, ros_arguments(n, str(tmp_path))[1:],
                                   tmp_path / f'{label}-{n.name}.log', env=os.environ.copy())
                       for n in nodes]
            try:
                for spec, proc in zip(nodes, started):
                    fqn = '/' + '/'.join(p for p in (spec.namespace, spec.name) if p)
                    expected = spec.parameter_values()
                    listed, got = _parameters(peer, fqn, list(expected))
                    undeclared = sorted(set(expected) - listed)
                    wrong = {k: (v, got[k]) for k, v in expected.items()
                             if k in listed and not _same(v, got[k])}
                    if undeclared or wrong or not proc.alive():
                        failures.append(f'{label}, {fqn}: undeclared {undeclared}, wrong '
                                        f'{wrong}, alive {proc.alive()}:\n{proc.log()[-2000:]}')
                _check_topics(peer, label, nodes, started, failures)
            finally:
                for proc in started:
                    proc.stop()
            for spec, proc in zip(nodes, started):
                if proc.proc.returncode != 0 or 'Traceback' in proc.log():
                    failures.append(f'{label}, {spec.name}: exit {proc.proc.returncode}\n'
                                    f'{proc.log()[-2000:]}')
    finally:
        peer.destroy_node()
    assert not failures, '\n\n'.join(failures)


def _check_topics(peer, label, nodes, started, failures):
    """Check that the command topic and the description reach where the arguments put them."""
    specs = by_name(nodes)
    ctrl = specs[CONTROLLER]
    topic = dict(ctrl.remappings).get(COMMAND_TOPIC, COMMAND_TOPIC)
    if not topic.startswith('/'):
        topic = '/' + '/'.join(p for p in (ctrl.namespace, topic) if p)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not any(
            i.node_name == CONTROLLER for i in peer.get_publishers_info_by_topic(topic)):
        spin_once(peer, timeout_sec=0.1)
    if not any(i.node_name == CONTROLLER for i in peer.get_publishers_info_by_topic(topic)):
        failures.append(f'{label}: {CONTROLLER} does not publish on {topic}')
    described = specs.get(SIMULATOR, ctrl if 'urdf_file' in ctrl.parameter_values() else None)
    if described is not None:
        # the description (the simulator's, reaching the controller in the same namespace, or
        # the controller's own file) gave the controller its model: it declared the per-joint
        # parameters of the model's joints
        fqn = '/' + '/'.join(p for p in (ctrl.namespace, CONTROLLER) if p)
        joints = load_description_joints(described)
        names = [f'default_positions.{j}' for j in joints]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed, _ = _parameters(peer, fqn, names)
            if set(names) <= listed:
                break
            time.sleep(0.2)
        else:
            failures.append(f'{label}: the controller has no model of {joints}:\n'
                            + started[1].log()[-2000:])


def load_description_joints(spec):
    from robot_dynamics_ros.dynamics import RobotModel
    values = spec.parameter_values()
    return RobotModel.from_urdf_file(values['urdf_file'], values.get('xacro_args', ())).joint_names


# ---- robot-dynamics launch: the same nodes without the launch system ------------------------

def _launch(tmp_path, *words):
    log_path = tmp_path / 'launch.log'
    with open(log_path, 'w') as log:
        proc = subprocess.Popen([executable('robot-dynamics'), 'launch', *words], stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    return proc, log_path


def test_robot_dynamics_launch_ends_everything_when_a_node_fails(tmp_path):
    """A simulator that cannot start ends the launch (its controller too), with its status."""
    proc, log_path = _launch(tmp_path, 'simulation', f'urdf_file:={tmp_path}/missing.urdf')
    try:
        proc.wait(timeout=60)
    finally:
        interrupt_group(proc)
    out = log_path.read_text()
    assert proc.returncode == 1, out
    assert 'cannot read URDF file' in out and 'simulator_node exited with status 1' in out, out
    assert 'feedforward_node finished with status 0' in out and 'Traceback' not in out, out


def test_robot_dynamics_launch_stops_its_nodes_on_sigint(tmp_path):
    """SIGINT to the launcher alone (not its group) reaches both nodes, which end cleanly."""
    proc, log_path = _launch(tmp_path, 'simulation', 'mode:=gravity', 'namespace:=two')
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and 'releasing the brakes' not in log_path.read_text():
            time.sleep(0.1)
        assert 'releasing the brakes' in log_path.read_text(), log_path.read_text()
        assert '/two/inverse_dynamics_controller' in log_path.read_text()
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    finally:
        interrupt_group(proc)
    out = log_path.read_text()
    assert proc.returncode == 0, out
    assert out.count('finished with status 0') == 2 and 'Traceback' not in out, out
    assert 'mode gravity' in out, out


def test_robot_dynamics_launch_refuses_wrong_arguments(tmp_path):
    for words, message in ((['simulation', 'mode'], 'not a launch argument of the form'),
                           (['simulation', 'mdoe:=x'], 'unknown launch argument'),
                           (['bringup'], 'the launch files are')):
        r = subprocess.run([executable('robot-dynamics'), 'launch', *words], capture_output=True,
                           text=True, timeout=60)
        assert r.returncode == 2 and message in r.stderr, (words, r.stderr)


def test_the_start_pose_text_says_the_simulators_margin():
    """The launch argument's text is written out (launch files do not import numba): checked."""
    from robot_dynamics_ros.nodes.launch_setup import simulation_arguments
    from robot_dynamics_ros.simulation import START_MARGIN
    text = dict((a[0], a[2]) for a in simulation_arguments())['initial_positions']
    assert f'{START_MARGIN:.0%} of the range inside the limits' in text
