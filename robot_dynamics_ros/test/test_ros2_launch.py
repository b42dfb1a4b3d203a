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
The launch files under a real `ros2 launch`, as a user starts them.

The params file is the source of truth, mode:= and namespace:= do what they say,
simulation.launch.py runs another arm inside its limits, and Ctrl-C (SIGINT to the process group)
ends every process cleanly.
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
if shutil.which('ros2', path=os.path.dirname(sys.executable)) is None:
    pytest.skip('the ros2 CLI is not installed in this environment (scripts/dev.sh installs it '
                'from $RDR_ROS2_TOOLS, default ../shared/ros2-tools)', allow_module_level=True)

from rcl_interfaces.srv import GetParameters  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics_ros.dynamics import RobotModel  # noqa: E402

from conftest import ROBOTS, erd_root  # noqa: E402


@pytest.fixture(scope='module')
def node():
    rclpy.init()
    n = rclpy.create_node('launch_test_peer')
    yield n
    n.destroy_node()
    rclpy.shutdown()


class Launch:
    """`ros2 launch ARGS` in its own process group; stop() sends SIGINT to the group."""

    def __init__(self, tmp_path, *args):
        self.log_path = tmp_path / f'launch-{time.monotonic_ns()}.log'
        self._log = open(self.log_path, 'w')
        ros2 = shutil.which('ros2', path=os.path.dirname(sys.executable))
        self.proc = subprocess.Popen([ros2, 'launch', 'robot_dynamics_ros', *args],
                                     stdout=self._log, stderr=subprocess.STDOUT,
                                     start_new_session=True)

    def log(self):
        return self.log_path.read_text()

    def stop(self):
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self._log.close()
        return self.log()


def get_param(node, target, name, timeout=30.0):
    """
    Return the string value of a parameter, asked over rclpy.

    Tests here start nodes of one name one after the other: a request may reach a node that is just
    shutting down and stay unanswered, so ask again (with a new client) until the deadline.
    """
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        client = node.create_client(GetParameters, f'{target}/get_parameters')
        try:
            if not client.wait_for_service(timeout_sec=max(0.1, deadline - time.monotonic())):
                break
            future = client.call_async(GetParameters.Request(names=[name]))
            end = min(deadline, time.monotonic() + 5.0)
            while not future.done() and time.monotonic() < end:
                rclpy.spin_once(node, timeout_sec=0.05)
            if future.done() and future.result() is not None and future.result().values:
                return future.result().values[0].string_value
        finally:
            node.destroy_client(client)
    raise AssertionError(f'{target} did not answer get_parameters({name}) in {timeout} s')


MINE = '''/**:
  ros__parameters:
    mode: feedforward
    kp: [50]
'''


@pytest.mark.parametrize('extra, namespace, mode', [
    ([], '', 'feedforward'),                                    # the file decides
    (['mode:=computed_torque'], '', 'computed_torque'),          # given: it overrides
    (['namespace:=left_arm'], '/left_arm', 'feedforward'),
])
def test_feedforward_launch_takes_the_params_file_as_truth(node, tmp_path, extra, namespace,
                                                           mode):
    params = tmp_path / 'mine.yaml'
    params.write_text(MINE)
    launch = Launch(tmp_path, 'feedforward.launch.py', f'params_file:={params}', *extra)
    try:
        target = f'{namespace}/inverse_dynamics_controller'
        assert get_param(node, target, 'mode') == mode, launch.log()
    finally:
        log = launch.stop()
    assert 'process has finished cleanly' in log, log
    assert 'Traceback' not in log and 'exit code' not in log, log


def test_simulation_launch_runs_another_arm_inside_its_limits(node, tmp_path):
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    model = RobotModel.from_urdf_file(urdf)
    states = []
    sub = node.create_subscription(JointState, '/joint_states', states.append, 10)
    launch = Launch(tmp_path, 'simulation.launch.py', f'urdf_file:={urdf}')
    try:
        end = time.monotonic() + 40
        while time.monotonic() < end and 'releasing the brakes' not in launch.log():
            rclpy.spin_once(node, timeout_sec=0.05)
        assert 'releasing the brakes' in launch.log(), launch.log()
        # held by computed torque: the last 100 states within 0.02 rad of the initial pose
        # (zero clamped into the limits). A CPU stall of this 2-core machine can starve both
        # nodes for ~0.2 s and let the arm sag; it must then come back, within 15 s at most.
        lo, hi = model.position_limits[:, 0], model.position_limits[:, 1]
        q0 = np.clip(np.zeros(model.n), lo, hi)

        def held():
            return len(states) > 300 and max(
                np.abs(np.array(m.position) - q0).max() for m in states[-100:]) < 0.02
        end = time.monotonic() + 15.0
        while time.monotonic() < end and not held():
            rclpy.spin_once(node, timeout_sec=0.05)
        log = launch.log()
        q = np.array([m.position for m in states])
        assert held(), (np.abs(q[-100:] - q0).max(axis=0), log)
        assert get_param(node, '/inverse_dynamics_controller', 'mode') == 'computed_torque'

        assert np.all(q >= lo - 1e-9) and np.all(q <= hi + 1e-9)
        assert 'simulation stopped' not in log
    finally:
        node.destroy_subscription(sub)
        log = launch.stop()
    assert log.count('process has finished cleanly') == 2, log
    assert 'Traceback' not in log and 'KeyboardInterrupt' not in log, log


@pytest.mark.parametrize('executable, node_name, module', [
    ('feedforward_node', 'inverse_dynamics_controller', 'feedforward_node'),
    ('simulator_node', 'dynamics_simulator', 'simulator_node')])
def test_ros2_param_dump_shows_every_declared_parameter(tmp_path, executable, node_name, module):
    import importlib

    import yaml

    from robot_dynamics_ros.dynamics import example_urdf
    from ros_harness import NodeProcess
    declared = importlib.import_module(f'robot_dynamics_ros.nodes.{module}').PARAMETERS
    proc = NodeProcess(executable, ['-r', '__ns:=/dump', '-p', f'urdf_file:={example_urdf()}']
                       if executable == 'simulator_node' else ['-r', '__ns:=/dump'],
                       tmp_path / 'dump.log')
    ros2 = shutil.which('ros2', path=os.path.dirname(sys.executable))
    try:
        assert proc.wait_log('[dump.', 20), proc.log()
        out = None
        for _ in range(5):                  # --no-daemon: discovery may take a moment
            r = subprocess.run([ros2, 'param', 'dump', '--no-daemon', f'/dump/{node_name}'],
                               capture_output=True, text=True, timeout=60)
            if r.returncode == 0 and 'ros__parameters' in r.stdout:
                out = yaml.safe_load(r.stdout)
                break
            time.sleep(1)
        assert out, (r.stdout, r.stderr)
        params = out[f'/dump/{node_name}']['ros__parameters']

        def flat(d, prefix=''):
            for k, v in d.items():
                yield from (flat(v, f'{prefix}{k}.') if isinstance(v, dict) else
                            [(f'{prefix}{k}', v)])
        dumped = dict(flat(params))
        missing = sorted(set(declared) - set(dumped))
        assert not missing, (missing, sorted(dumped))
        assert dumped['joints'] == []
        for _ in range(5):                  # the same discovery wait as above
            r = subprocess.run([ros2, 'param', 'get', '--no-daemon', f'/dump/{node_name}',
                                'joints'], capture_output=True, text=True, timeout=60)
            if r.returncode == 0:
                break
            time.sleep(1)
        assert r.returncode == 0 and 'String values are: []' in r.stdout, (r.stdout, r.stderr)
    finally:
        proc.stop()


def test_simulation_launch_mode_argument_overrides_the_yaml_only_when_given(node, tmp_path):
    launch = Launch(tmp_path, 'simulation.launch.py', 'mode:=feedforward')
    try:
        assert get_param(node, '/inverse_dynamics_controller', 'mode') == 'feedforward', \
            launch.log()
    finally:
        log = launch.stop()
    assert log.count('process has finished cleanly') == 2, log
