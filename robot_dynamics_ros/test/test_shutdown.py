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
Ctrl-C and SIGTERM end both nodes cleanly and quickly, at any moment, on a loaded machine.

The short version of bench/bench_shutdown.py (100 cycles there): both nodes started and stopped
12 times beside two CPU hogs, with SIGINT or SIGTERM after a random time from 0 s (during the
imports and start-up) to 3 s, while running, paused, in lockstep or answering service calls.
Every stop must end in exit status 0, without a traceback, within 5 s.
"""
import os
import select
import subprocess
import sys
import time

import pytest

pytest.importorskip('rclpy')

from conftest import executable, ROBOTS, erd_root  # noqa: E402
from ros_harness import PACKAGE  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(PACKAGE), 'bench'))
from bench_shutdown import EXIT_WITHIN, run_cycles  # noqa: E402


def test_every_stop_is_clean_and_quick():
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    summary, failures = run_cycles(12, hogs=2, urdf=urdf, seed=7)
    assert not failures, '\n'.join(failures)
    assert summary['stops'] == 24 and summary['max_exit_s'] < EXIT_WITHIN, summary


def test_an_executor_is_not_built_on_a_context_a_signal_shut_down():
    # a signal between rclpy.init and spin: rclpy's Executor.__init__ raises on the dead context
    # and its __del__ then printed "Exception ignored ... no attribute '_sigint_gc'" (CI, once)
    import gc

    import rclpy
    from robot_dynamics_ros.nodes.executors import _executor

    context = rclpy.Context()
    rclpy.init(context=context)
    assert _executor(context) is not None
    context.try_shutdown()
    unraisable = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    try:
        assert _executor(context) is None and _executor(context, threads=2) is None
        gc.collect()
    finally:
        sys.unraisablehook = hook
    assert not unraisable, [u.exc_value for u in unraisable]


def test_a_signal_while_the_executor_is_being_built_says_nothing():
    """
    The signal between the executor's own guard condition and rclpy's signal-handler one.

    The latter's construction then raises before it has a handle, and its __del__ printed
    "Exception ignored ... no attribute '_GuardCondition__gc'" (a fresh-clone CI on Kilted:
    SIGTERM 1.26 s into a feedforward_node's start-up). Here the context is shut down right
    after the executor's first guard condition, as the signal did.
    """
    import gc

    import rclpy
    import rclpy.executors
    from robot_dynamics_ros.nodes.executors import _executor

    context = rclpy.Context()
    rclpy.init(context=context)
    built = rclpy.executors.GuardCondition

    def guard_then_signal(*args, **kwargs):
        guard = built(*args, **kwargs)
        context.try_shutdown()
        return guard
    unraisable = []
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    rclpy.executors.GuardCondition = guard_then_signal
    try:
        assert _executor(context) is None
        gc.collect()
    finally:
        rclpy.executors.GuardCondition = built
        sys.unraisablehook = hook
    assert not unraisable, [u.exc_value for u in unraisable]


@pytest.mark.parametrize('node, override, status, says', [
    ('feedforward_node', 'force.gain:=abc', 1,
     "[feedforward_node] invalid parameter override: Trying to set parameter 'force.gain' to "
     "'abc' of type 'STRING', expecting type 'DOUBLE_ARRAY'"),
    ('simulator_node', 'lockstep:=maybe', 1,
     "[simulator_node] invalid parameter override: Trying to set parameter 'lockstep' to "
     "'maybe' of type 'STRING', expecting type 'BOOL'"),
    ('feedforward_node', 'kp:=', 2,
     "[feedforward_node] the ROS arguments do not parse: Couldn't parse parameter override "
     "rule: '-p kp:='"),
])
def test_a_wrong_override_ends_the_node_with_one_line_naming_it(node, override, status, says):
    """
    ``-p name:=value`` of the wrong type, or one that does not parse: a line, not a traceback.

    rclpy raises as the node declares the parameter (InvalidParameterTypeException) or as it
    parses the arguments (RCLError): both ended in a traceback before, with status 1.
    """
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    done = subprocess.run([executable(node), '--ros-args', '-p', f'urdf_file:={urdf}', '-p',
                           override], capture_output=True, text=True, timeout=60)
    out = done.stdout + done.stderr
    assert done.returncode == status and says in out and 'Traceback' not in out, \
        (done.returncode, out[-2000:])


@pytest.mark.parametrize('node, overrides, name', [
    ('feedforward_node', ['kp_gain:=400.0', 'effort_limits.elbow_joint:=100.0'], 'kp_gain'),
    ('simulator_node', ['time_step:=0.002'], 'time_step'),
])
def test_an_override_naming_no_parameter_is_said_and_the_node_runs(node, overrides, name):
    """
    ``-p kp_gain:=400.0`` (for ``kp``): rclpy drops an override of no declared parameter silently.

    The node says which at start-up, and runs on; feedforward_node's per-joint names
    (``effort_limits.<joint>``, declared once the description comes) are not counted.
    """
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    args = [a for o in overrides for a in ('-p', o)]
    proc = subprocess.Popen([executable(node), '--ros-args', '-p', f'urdf_file:={urdf}', *args],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line, deadline = '', time.monotonic() + 60
        while time.monotonic() < deadline:  # (the warning comes before the first info line)
            if select.select([proc.stdout], [], [], 1.0)[0]:
                line = proc.stdout.readline()
                if not line or 'ignoring parameter overrides' in line or '[INFO]' in line:
                    break
        assert f"ignoring parameter overrides ['{name}']: no parameter of this node" in line, line
        assert proc.poll() is None
    finally:
        proc.terminate()
        proc.wait(timeout=30)
