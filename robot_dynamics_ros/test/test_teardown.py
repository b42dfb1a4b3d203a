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
A clean-up that hangs with the GIL held still ends the process, with status 0 and a word why.

rclpy's destroy_node hung in rcl_node_fini in CI (a whole run lost to it: the node ended with
status 1 by faulthandler, the Python watchdog thread never ran). The hang is made here the same
way: a C call made with the GIL held (ctypes.PyDLL's sleep), in the node's destroy_node.
"""
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

HANG = 'import ctypes; ctypes.PyDLL(None).sleep({seconds})     # C, the GIL held\n'


def run(script, timeout=60, **kwargs):
    t0 = time.monotonic()
    done = subprocess.run([sys.executable, '-c', textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout, **kwargs)
    return done, time.monotonic() - t0


def test_the_watchdog_ends_a_process_hung_with_the_gil_held():
    done, took = run(
        'from robot_dynamics_ros.nodes.teardown import exit_watchdog\n'
        'watchdog = exit_watchdog(1.0, "the clean-up hung")\n'
        'assert watchdog is not None\n' + HANG.format(seconds=30) + 'print("not reached")\n')
    assert done.returncode == 0, done.stderr
    assert done.stderr.endswith('the clean-up hung\n'), done.stderr
    assert 'not reached' not in done.stdout
    assert took < 25, took          # the hang was 30 s: it did not run out by itself


def test_a_disarmed_watchdog_lets_the_process_end_as_it_would():
    done, _ = run(
        'import sys\n'
        'from robot_dynamics_ros.nodes.teardown import exit_watchdog\n'
        'watchdog = exit_watchdog(0.3, "the clean-up hung")\n'
        'watchdog.disarm()\n' + HANG.format(seconds=1) + 'sys.exit(3)\n')
    assert done.returncode == 3, done.stderr
    assert 'hung' not in done.stderr, done.stderr


NODE = '''
import sys, threading
import rclpy.node
from robot_dynamics_ros.nodes.executors import run_node


class HangingNode(rclpy.node.Node):
    def __init__(self):
        super().__init__('hanging_teardown')
        self.create_timer(0.05, self.tick)

    def tick(self):
        print('spinning', flush=True)

    def destroy_node(self):
        super().destroy_node()
        {hang}

sys.exit(run_node(HangingNode, sys.argv))
'''


def test_a_node_whose_destroy_node_hangs_ends_on_ctrl_c_with_status_0():
    pytest.importorskip('rclpy')
    proc = subprocess.Popen([sys.executable, '-c', NODE.format(hang=HANG.format(seconds=60))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline() == 'spinning\n'       # blocks until the node spins
        os.kill(proc.pid, signal.SIGINT)
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=45)
        took = time.monotonic() - t0
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    # faulthandler's stacks first (what it hung in), then the watchdog's word
    stacks, word = err.find('in destroy_node'), err.find('did not end')
    assert 0 <= stacks < word, err
    assert 'did not end within 2.5 s' in err, err
    assert took < 40, took          # not the 60 s of the hang


STOPPED_IN_CONSTRUCTION = '''
import sys
import rclpy.node
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer
from robot_dynamics_ros.nodes.executors import run_node


class StoppedNode(rclpy.node.Node):
    def __init__(self):
        super().__init__('stopped_in_construction')
        # what rclpy's C signal handler does at once on SIGINT, before this process's Python
        # handler has run: the context down under the constructor, whose next call raises
        # (an action server: ValueError, as feedforward_node's in CI)
        self.context.try_shutdown()
        ActionServer(self, FollowJointTrajectory, 'follow', execute_callback=lambda goal: None)

sys.exit(run_node(StoppedNode, sys.argv))
'''


def test_a_stop_under_the_constructor_ends_with_status_0_without_a_traceback():
    pytest.importorskip('rclpy')
    done = subprocess.run([sys.executable, '-c', STOPPED_IN_CONSTRUCTION], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert 'Traceback' not in done.stderr, done.stderr
