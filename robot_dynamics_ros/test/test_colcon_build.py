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
The repository in a workspace's src/, built by colcon as a ROS user builds it.

Both packages are found and built, and the installed layout is what `ros2 run` and `ros2 launch`
need.
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from conftest import HANG_GUARD, interrupt_group, NO_ROS2_CLI
from ros_harness import PACKAGE

REPO = os.path.dirname(PACKAGE)
COLCON = shutil.which('colcon', path=os.path.dirname(sys.executable))
if COLCON is None:
    pytest.skip('colcon is not installed in this environment (requirements/test.txt has it; '
                'pip install colcon-common-extensions)', allow_module_level=True)


@pytest.fixture(scope='module')
def workspace(tmp_path_factory):
    """Return a workspace with the repository in its src/, as a user clones it there."""
    ws = tmp_path_factory.mktemp('colcon') / 'ws'
    (ws / 'src').mkdir(parents=True)
    # tracked files only, no venv or build output
    git = subprocess.run(['git', 'ls-files'], cwd=REPO, capture_output=True, text=True)
    if git.returncode == 0:
        for f in git.stdout.split():
            dst = ws / 'src' / 'robot_dynamics_ros' / f
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.join(REPO, f), dst)
    else:                           # not a git checkout (a source tarball): both packages
        skip = shutil.ignore_patterns('build', 'install', 'log', '__pycache__', '*.egg-info')
        for package in ('robot_dynamics_ros', 'robot_dynamics_msgs'):
            shutil.copytree(os.path.join(REPO, package), ws / 'src' / 'robot_dynamics_ros' /
                            package, ignore=skip)
    return ws


def build(ws, *extra):
    """
    ``colcon build`` in ``ws``; return its install/.

    Each build installs from nothing (install/ and robot_dynamics_ros's build/ removed first:
    what one install layout leaves must not pass for the other's). robot_dynamics_msgs's
    build/ stays but for the Python package ament_cmake_python stages there (a copy in one
    layout, a link in the other: cmake cannot turn one into the other): its compiled type
    support is the same with and without --symlink-install (only the install rules differ, and
    cmake runs them again), and compiling it took each build about 35 of its 39 CPU-s (#50).
    """
    for stale in (ws / 'install', ws / 'build' / 'robot_dynamics_ros',
                  ws / 'build' / 'robot_dynamics_msgs' / 'ament_cmake_python'):
        shutil.rmtree(stale, ignore_errors=True)
    venv = os.path.dirname(os.path.dirname(sys.executable))
    env = dict(os.environ, AMENT_PREFIX_PATH=venv, CMAKE_PREFIX_PATH=venv,
               PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ['PATH'])
    # the timeout only catches a hung build (conftest.HANG_GUARD: a build of 42 CPU-s once took
    # 9 min 51 s of wall time for robot_dynamics_msgs alone at idle priority, fresh-clone CI)
    r = subprocess.run([COLCON, 'build', *extra, '--cmake-args', '-DBUILD_TESTING=OFF'],
                       cwd=ws, env=env, capture_output=True, text=True, timeout=HANG_GUARD)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    # two: venv_interfaces/control_msgs (COLCON_IGNORE) must never shadow an installed one
    assert 'Summary: 2 packages finished' in r.stdout, r.stdout
    return ws / 'install'


@pytest.mark.offline
@pytest.mark.parametrize('extra', [[], ['--symlink-install']])
def test_colcon_builds_both_packages_with_the_installed_layout(workspace, extra):
    install = build(workspace, *extra)
    lib = install / 'robot_dynamics_ros' / 'lib' / 'robot_dynamics_ros'
    for exe in ('feedforward_node', 'simulator_node', 'robot-dynamics', 'closed-loop-demo'):
        assert (lib / exe).is_file() and os.access(lib / exe, os.X_OK), exe
    share = install / 'robot_dynamics_ros' / 'share' / 'robot_dynamics_ros'
    for f in ('package.xml', 'launch/feedforward.launch.py', 'launch/simulation.launch.py',
              'config/feedforward.yaml', 'config/simulation.yaml', 'urdf/planar_2r.urdf'):
        assert (share / f).is_file(), f
    index = 'share/ament_index/resource_index/packages'
    assert (install / 'robot_dynamics_ros' / index / 'robot_dynamics_ros').is_file()
    assert (install / 'robot_dynamics_msgs' / index / 'robot_dynamics_msgs').is_file()
    # the interface package generated its Python module
    msgs = list((install / 'robot_dynamics_msgs').glob(
        'lib/python3*/site-packages/robot_dynamics_msgs/srv/_inverse_dynamics.py'))
    assert msgs, 'robot_dynamics_msgs has no generated Python module'
    if not extra:       # a plain install copies the layers; --symlink-install links the source
        site = list((install / 'robot_dynamics_ros').glob('lib/python3*/site-packages'))
        assert site and all((site[0] / 'robot_dynamics_ros' / layer / '__init__.py').is_file()
                            for layer in ('dynamics', 'control', 'simulation', 'nodes', 'tools'))
    else:
        assert (share / 'launch' / 'feedforward.launch.py').is_symlink()
    # the installed executable runs (--help needs no ROS graph)
    r = subprocess.run([str(lib / 'feedforward_node'), '--help'], capture_output=True,
                       text=True, timeout=HANG_GUARD)
    assert r.returncode == 0 and r.stdout.startswith('usage: feedforward_node'), r.stderr


# not offline: it starts the nodes (a build of its own, where the ros2 CLI is installed)
@pytest.mark.skipif(shutil.which('ros2', path=os.path.dirname(sys.executable)) is None,
                    reason=NO_ROS2_CLI)
def test_ros2_launch_runs_the_simulation_from_the_install(workspace, tmp_path):
    """`source install/setup.bash` and `ros2 launch` the simulation from it, then Ctrl-C."""
    install = build(workspace)
    log_path = tmp_path / 'launch.log'
    with open(log_path, 'w') as log:
        proc = subprocess.Popen(
            ['bash', '-c', f'source {install}/setup.bash && '
                           f'exec ros2 launch robot_dynamics_ros simulation.launch.py'],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
            env=dict(os.environ, PATH=os.path.dirname(sys.executable) + os.pathsep +
                     os.environ['PATH']))
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and 'releasing the brakes' not in \
                    log_path.read_text():
                time.sleep(0.1)
            # the nodes run from the workspace's install, not from the venv
            pids = re.findall(r'\[(\w+)-\d\]: process started with pid \[(\d+)\]',
                              log_path.read_text())
            cmdlines = {name: open(f'/proc/{pid}/cmdline').read().replace('\0', ' ')
                        for name, pid in pids}
        finally:
            interrupt_group(proc)
    out = log_path.read_text()
    assert 'releasing the brakes' in out, out
    lib = os.path.join(str(install), 'robot_dynamics_ros', 'lib', 'robot_dynamics_ros')
    assert sorted(cmdlines) == ['feedforward_node', 'simulator_node'], (cmdlines, out)
    assert all(f'{lib}/{name}' in cmd for name, cmd in cmdlines.items()), cmdlines
    assert out.count('process has finished cleanly') == 2 and 'Traceback' not in out, out
