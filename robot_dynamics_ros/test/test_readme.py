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
The README's "Without ROS" section, run line by line as a new user would.

Each command as written (with --no-daemon added to the ros2 verbs that would start a daemon),
the launch in its own process group and stopped with Ctrl-C (SIGINT to the group) at the end.
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

from conftest import interrupt_group  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DAEMON_VERBS = {('topic', 'echo'), ('topic', 'list'), ('param', 'get'), ('param', 'list'),
                ('param', 'dump'), ('node', 'list'), ('node', 'info'), ('service', 'list')}


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


def test_the_without_ros_section_works_line_by_line(tmp_path):
    venv = os.environ.get('RDR_VENV', os.path.join(REPO, '.venv'))
    if os.path.realpath(sys.prefix) != os.path.realpath(venv):
        pytest.skip(f'runs in the venv of scripts/dev.sh ({venv}), not in {sys.prefix}')
    if shutil.which('ros2', path=os.path.dirname(sys.executable)) is None:
        pytest.skip('the ros2 CLI is not installed in this environment (scripts/dev.sh installs '
                    'it from $RDR_ROS2_TOOLS, default ../shared/ros2-tools)')
    lines = section('Without ROS')
    assert lines[0] == 'bash scripts/dev.sh setup' and lines[1].endswith(' &'), lines
    log = open(tmp_path / 'launch.log', 'w')
    results = []
    setup = subprocess.run(shlex.split(lines[0]), cwd=REPO, capture_output=True, text=True,
                           timeout=900)
    assert setup.returncode == 0, setup.stderr[-3000:]
    launch = subprocess.Popen(shlex.split(lines[1][:-2]), cwd=REPO, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    rclpy.init()
    node = rclpy.create_node('readme_reader')
    states = []
    node.create_subscription(JointState, '/joint_states', states.append, 10)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and 'releasing the brakes' not in \
                (tmp_path / 'launch.log').read_text():
            rclpy.spin_once(node, timeout_sec=0.1)
        assert 'releasing the brakes' in (tmp_path / 'launch.log').read_text()
        for line in lines[2:]:
            for _ in range(5):          # --no-daemon: discovery may take a moment
                r = subprocess.run(no_daemon(shlex.split(line)), cwd=REPO, capture_output=True,
                                   text=True, timeout=120)
                if r.returncode == 0:
                    break
                time.sleep(1)
            results.append(r)
            assert r.returncode == 0, (line, r.stdout[-2000:], r.stderr[-2000:])
            if 'topic pub' in line:     # the arm follows the trajectory (2 s)
                end = time.monotonic() + 5.0
                while time.monotonic() < end:
                    rclpy.spin_once(node, timeout_sec=0.05)
        echo, param, pub, service = (r.stdout for r in results)
        assert re.search(r'name:\n- joint1\n- joint2', echo), echo
        assert 'String value is: computed_torque' in param, param
        assert 'publishing #1' in pub, pub
        assert 'success=True' in service, service
        effort = re.search(r'effort=\[([^\]]*)\]', service).group(1)
        from robot_dynamics_ros.dynamics import RobotModel, example_urdf, gravity_torques
        model = RobotModel.from_urdf_file(example_urdf())
        np.testing.assert_allclose([float(x) for x in effort.split(',')],
                                   gravity_torques(model, [0.5, -1.0]), atol=1e-6)
        launch_log = (tmp_path / 'launch.log').read_text()
        assert 'trajectory accepted' in launch_log, launch_log[-3000:]
        q = np.array(states[-1].position)
        assert np.abs(q - [0.5, -1.0]).max() < 0.01, q
    finally:
        node.destroy_node()
        rclpy.shutdown()
        interrupt_group(launch)
        log.close()
    out = (tmp_path / 'launch.log').read_text()
    assert out.count('process has finished cleanly') == 2 and 'Traceback' not in out, out
