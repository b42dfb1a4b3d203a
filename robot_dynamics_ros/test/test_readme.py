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
The README's command sections, run line by line as a new user would.

"What runs without a ROS install": dev.sh's set-up, ``robot-dynamics launch simulation`` in its
own process group (an rclpy program then sees the arm held and asks the controller's service),
the launch arguments listed, Ctrl-C (SIGINT to the group) at the end. "With a real ROS 2 install":
``ros2 launch`` and the ``ros2`` lines (with --no-daemon added to the verbs that would start a
daemon), where the ros2 CLI is installed.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import time

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')
from sensor_msgs.msg import JointState  # noqa: E402

from conftest import NO_ROS2_CLI, interrupt_group  # noqa: E402
from ros_harness import call_service, spin_once  # noqa: E402
from robot_dynamics_ros.dynamics import (RobotModel, example_urdf,  # noqa: E402
                                         gravity_torques)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON_VERBS = {('topic', 'echo'), ('topic', 'list'), ('param', 'get'), ('param', 'list'),
                ('param', 'dump'), ('node', 'list'), ('node', 'info'), ('service', 'list')}
WITHOUT_ROS = 'What runs without a ROS install, and what needs one'
WITH_ROS = 'With a real ROS 2 install'
START = [np.pi / 2, -np.pi]         # the 2R arm's start pose (its <ros2_control> initial values)


def section(title):
    """Return the indented command lines of a README section."""
    text = open(os.path.join(REPO, 'README.md'), encoding='utf-8').read()
    body = text.split(f'## {title}\n', 1)[1].split('\n## ', 1)[0]
    return [line[4:] for line in body.splitlines() if line.startswith('    ')]


def no_daemon(argv):
    if 'ros2' in argv:
        i = argv.index('ros2')
        if tuple(argv[i + 1:i + 3]) in DAEMON_VERBS:
            return argv[:i + 3] + ['--no-daemon'] + argv[i + 3:]
    return argv


def dev_venv():
    """Skip unless this runs in scripts/dev.sh's venv of the distribution under test."""
    distro = os.environ.get('RDR_ROS_DISTRO', 'jazzy')
    venv = os.environ.get('RDR_VENV', os.path.join(REPO, f'.venv-{distro}'))
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        pytest.skip(f'runs in the venv of scripts/dev.sh ({venv}), not in {sys.prefix}')


def wait_for(node, predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and not predicate():
        spin_once(node, timeout_sec=0.05)
    return predicate()


def held_and_answering(node, states):
    """Check that the launched arm is held at its start and the controller's service answers."""
    from robot_dynamics_msgs.srv import InverseDynamics
    assert wait_for(node, lambda: len(states) > 50, 60), 'no joint_states from the launch'
    assert list(states[-1].name) == ['joint1', 'joint2']
    np.testing.assert_allclose(states[-1].position, START, atol=0.01)
    client = node.create_client(InverseDynamics, '/inverse_dynamics_controller/inverse_dynamics')
    request = InverseDynamics.Request(name=['joint1', 'joint2'], position=[0.5, -1.0])
    # The simulator publishes joint_states from its start; the controller can answer before
    # robot_description has reached it ('no robot_description yet'): ask until it has a model.
    deadline = time.monotonic() + 30
    answer = call_service(node, client, request, 30)
    while not answer.success and time.monotonic() < deadline:
        wait_for(node, lambda: False, 0.2)
        answer = call_service(node, client, request, 30)
    assert answer.success, answer.message
    np.testing.assert_allclose(answer.effort, gravity_torques(
        RobotModel.from_urdf_file(example_urdf()), [0.5, -1.0]), atol=1e-9)


def test_the_without_ros_section_works_line_by_line(tmp_path):
    dev_venv()
    lines = section(WITHOUT_ROS)
    assert lines == ['bash scripts/dev.sh setup',
                     'bash scripts/dev.sh run robot-dynamics launch simulation &',
                     'bash scripts/dev.sh run robot-dynamics launch simulation --show-args'], lines
    setup = subprocess.run(shlex.split(lines[0]), cwd=REPO, capture_output=True, text=True,
                           timeout=900)
    assert setup.returncode == 0, setup.stderr[-3000:]
    log_path = tmp_path / 'launch.log'
    with open(log_path, 'w') as log:
        launch = subprocess.Popen(shlex.split(lines[1][:-2]), cwd=REPO, stdout=log,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    rclpy.init()
    node = rclpy.create_node('readme_reader')
    states = []
    node.create_subscription(JointState, '/joint_states', states.append, 10)
    try:
        held_and_answering(node, states)
        shown = subprocess.run(shlex.split(lines[2]), cwd=REPO, capture_output=True, text=True,
                               timeout=120)
        assert shown.returncode == 0, shown.stderr
        for argument in ('urdf_file', 'xacro_args', 'mode', 'initial_positions', 'params_file',
                         'namespace', 'with_state_publisher'):
            assert f'  {argument}: ' in shown.stdout, shown.stdout
    finally:
        node.destroy_node()
        rclpy.shutdown()
        interrupt_group(launch)
    out = log_path.read_text()
    assert launch.returncode == 0, out
    assert out.count('finished with status 0') == 2 and 'Traceback' not in out, out


def test_the_ros2_lines_work_where_ros2_is_installed(tmp_path):
    if shutil.which('ros2', path=os.path.dirname(sys.executable)) is None and \
            shutil.which('ros2') is None:
        pytest.skip(NO_ROS2_CLI)
    lines = section(WITH_ROS)
    launch_line = 'ros2 launch robot_dynamics_ros simulation.launch.py'
    assert any(line.startswith(launch_line) for line in lines), lines
    commands = [line for line in lines if re.match(r'ros2 (topic|param|service) ', line)]
    assert len(commands) == 4, commands
    log_path = tmp_path / 'launch.log'
    with open(log_path, 'w') as log:
        launch = subprocess.Popen(shlex.split(launch_line), stdout=log, stderr=subprocess.STDOUT,
                                  start_new_session=True)
    rclpy.init()
    node = rclpy.create_node('readme_reader')
    states = []
    node.create_subscription(JointState, '/joint_states', states.append, 10)
    results = []
    try:
        held_and_answering(node, states)
        for line in commands:
            for _ in range(5):          # --no-daemon: discovery may take a moment
                r = subprocess.run(no_daemon(shlex.split(line)), capture_output=True,
                                   text=True, timeout=120)
                if r.returncode == 0:
                    break
                time.sleep(1)
            results.append(r)
            assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr[-2000:])
            if 'topic pub' in line:     # the arm follows the trajectory (2 s)
                wait_for(node, lambda: False, 5.0)
        echo, param, pub, service = (r.stdout for r in results)
        assert re.search(r'name:\n- joint1\n- joint2', echo), echo
        assert 'String value is: computed_torque' in param, param
        assert 'publishing #1' in pub, pub
        assert 'success=True' in service, service
        effort = re.search(r'effort=\[([^\]]*)\]', service).group(1)
        np.testing.assert_allclose([float(x) for x in effort.split(',')], gravity_torques(
            RobotModel.from_urdf_file(example_urdf()), [0.5, -1.0]), atol=1e-6)
        assert 'trajectory accepted' in log_path.read_text(), log_path.read_text()[-3000:]
        q = np.array(states[-1].position)
        assert np.abs(q - [0.5, -1.0]).max() < 0.01, q
    finally:
        node.destroy_node()
        rclpy.shutdown()
        interrupt_group(launch)
    out = log_path.read_text()
    assert out.count('process has finished cleanly') == 2 and 'Traceback' not in out, out
