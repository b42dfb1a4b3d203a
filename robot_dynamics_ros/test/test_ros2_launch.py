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
The launch files under a real `ros2 launch` and the `ros2` CLI, as a user runs them.

`ros2 launch` parses the arguments (the params file is the source of truth, mode:= and
namespace:= do what they say) and Ctrl-C (SIGINT to the process group) ends every process
cleanly; `ros2 param dump` / `get` show every declared parameter. The launch files' behaviour
with several arms is tested under launch_testing (test_simulation_launch.py,
test_feedforward_launch.py).
"""
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import NO_ROS2_CLI

rclpy = pytest.importorskip('rclpy')
if shutil.which('ros2', path=os.path.dirname(sys.executable)) is None:
    pytest.skip(NO_ROS2_CLI, allow_module_level=True)

from rcl_interfaces.srv import GetParameters  # noqa: E402

from conftest import interrupt_group  # noqa: E402


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
        interrupt_group(self.proc, timeout=20)
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
