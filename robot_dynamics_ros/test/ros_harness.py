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
Drive a node of this package in its own process over real rclpy topics and services.

The environment (conftest.py) keeps DDS on loopback and on a domain private to the session.
"""
import collections.abc
import os
import subprocess
import time
import weakref

import numpy as np
import rclpy
from rclpy.parameter import Parameter
from rclpy.parameter_client import AsyncParameterClient
from rclpy.serialization import deserialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory

# seconds: tests import it from here
from robot_dynamics_ros.nodes.description import DESCRIPTION_QOS  # noqa: F401
from robot_dynamics_ros.nodes.executors import DrainingExecutor, executor_of, seconds  # noqa: F401

from conftest import executable  # noqa: F401 (tests import it from here too)
from realtime_lock import LOCK

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # robot_dynamics_ros/
CONFIG = os.path.join(PACKAGE, 'config')


def ros_list(values):
    """Return numbers as a ROS parameter list on the command line: ``[0.1, -0.2]``."""
    return '[' + ', '.join(repr(float(v)) for v in values) + ']'


_EXECUTORS = weakref.WeakKeyDictionary()     # node -> the DrainingExecutor that spins it


def spin_once(node, timeout_sec=None):
    """
    Spin ``node`` once, on an executor that keeps it and drains its subscriptions.

    rclpy.spin_once adds the node to the global executor and removes it again at every call, and
    takes one message per subscription a wake-up; a test taking 1 kHz streams so spent as much
    CPU as the nodes it tests.
    """
    executor = _EXECUTORS.get(node)
    if executor is None:
        executor = executor_of(node)       # adding the node to another would take it away
        if executor is None:
            executor = DrainingExecutor(context=node.context)
            executor.add_node(node)
        _EXECUTORS[node] = executor
    executor.spin_once(timeout_sec=timeout_sec)


def node_waiter(node):
    """Return ``wait(predicate, duration) -> bool``, spinning ``node`` (spin_once) meanwhile."""
    def wait(predicate, duration):
        end = time.monotonic() + duration
        while not predicate() and time.monotonic() < end:
            spin_once(node, timeout_sec=0.05)
        return predicate()
    return wait


def answered(call, wait, timeout=20.0, again=2.0, what='the request'):
    """
    Return the result of ``call()``'s future, the request sent again every ``again`` s unanswered.

    For requests that may be handled twice (a service call_service makes, parameters set to the
    same values again). ``wait`` is ``wait(predicate, duration) -> bool``, spinning the client's
    node (node_waiter) or waiting for the thread that spins it.

    A service counts as available once the client has matched the server's request reader; a
    request sent before the server has matched the client's response reader can go unanswered
    (CI, once in a suite each: a freshly started node's list_parameters, and get_parameters, no
    answer in 20 s). The requests sent before stay awaited: a server whose executor a loaded
    machine slows may answer each later than ``again`` (a lockstep controller's parameter
    service, CI of 7ad86c2: none of five requests, each dropped after 2 s, answered in 10 s).
    """
    deadline = time.monotonic() + timeout
    futures = []

    def done():
        return any(f.done() for f in futures)
    try:
        while True:
            futures.append(call())
            if wait(done, max(0.0, min(again, deadline - time.monotonic()))) or done():
                return next(f for f in futures if f.done()).result()
            if time.monotonic() >= deadline:
                raise AssertionError(f'{what} did not answer in {timeout} s')
    finally:
        for f in futures:
            if not f.done():
                f.cancel()


def call_service(node, client, request, timeout=20.0):
    """Call a service from ``node``, asking again every 2 s until it answers (see answered)."""
    assert client.wait_for_service(timeout_sec=timeout), f'{client.srv_name} not available'
    return answered(lambda: client.call_async(request), node_waiter(node), timeout,
                    what=client.srv_name)


def set_parameters(client, wait, values, atomically=False, timeout=20.0):
    """
    Set ``values`` on ``client``'s node (an AsyncParameterClient); return the response.

    Keyword names, ``__`` for ``.`` (``collision__thresholds=[8.0]``). Sent again until answered
    (see answered); ``wait`` as there.
    """
    assert client.wait_for_services(timeout_sec=timeout), 'parameter services missing'
    call = client.set_parameters_atomically if atomically else client.set_parameters
    params = [Parameter(k.replace('__', '.'), value=v) for k, v in values.items()]
    return answered(lambda: call(params), wait, timeout)


class Recorded(collections.abc.Sequence):
    """
    The messages of a stream as a list, kept serialized and each read when first indexed.

    For a test's readers of 1 kHz streams, which look at a few of the messages they keep: the
    subscription is created with ``raw=True`` and ``append`` as its callback
    (``bench/bench_readers.py``: serialized, 0.67-0.95 of the reader's CPU). Appends (the
    spinning thread) and reads (the test) may come from two threads.
    """

    def __init__(self, msg_type, node=None, topic=None, depth=1000):
        self.msg_type = msg_type
        self._raw = []
        self._read = {}
        self._node, self._topic, self._depth = node, topic, depth
        self._subscription = None
        self.resume()

    def pause(self):
        """
        Unsubscribe until ``resume``: the messages kept stay, no more are sent here.

        For a reader that needs none of a stream for a while (a call of many seconds at 1 kHz):
        DDS then delivers them neither to this process nor through the publisher's side of it.
        """
        if self._subscription is not None:
            self._node.destroy_subscription(self._subscription)
            self._subscription = None

    def resume(self):
        """Subscribe again (after ``pause``; without a node: nothing to subscribe to)."""
        if self._subscription is None and self._node is not None:
            self._subscription = self._node.create_subscription(
                self.msg_type, self._topic, self.append, self._depth, raw=True)

    def append(self, data):
        self._raw.append(data)

    def __len__(self):
        return len(self._raw)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[k] for k in range(*index.indices(len(self._raw)))]
        n = len(self._raw)
        if index < 0:
            index += n
        if not 0 <= index < n:          # as a list: not the message the other end counts to
            raise IndexError('Recorded index out of range')
        msg = self._read.get(index)
        if msg is None:
            msg = self._read[index] = deserialize_message(self._raw[index], self.msg_type)
        return msg


def record(node, msg_type, topic, depth=1000):
    """Return a Recorded of ``topic``, subscribed on ``node`` (spin it with a DrainingExecutor)."""
    return Recorded(msg_type, node, topic, depth)


# s between two wake-ups of a DrainingExecutor in spin_lean: the messages of 2 ms at a time
LEAN_PAUSE = 0.002


def latest_stamp(states):
    """Return the stamp (s) of the latest of ``states`` (JointState), the arm's time; or -inf."""
    return seconds(states[-1].header.stamp) if len(states) else -np.inf


def wait_in_arm_time(predicate, timeout, arm_time, stall=15.0, poll=0.02):
    """
    Wait until ``predicate()``: ``timeout`` s of wall time, and on as long as the arm is slower.

    ``arm_time()``: the arm's time (``latest_stamp``: simulated in lockstep, -inf before any).
    A simulation in lockstep runs as fast as the machine lets it, slower than the wall's time on
    a loaded one (panda's 1 kHz steps: under 170 a second in a fresh-clone CI, so
    "5 s of the arm's time within 30 s" failed a loop that was only slow). Past the wall's
    ``timeout`` the wait goes on until ``timeout`` s of the arm's time have passed too, unless the
    arm's time stood still for ``stall`` s (a hang). In real time, where both clocks run alike,
    it is a wait of ``timeout`` s.
    """
    wall0, arm0 = time.monotonic(), arm_time()
    last, moved = arm0, wall0
    while not predicate():
        now, t = time.monotonic(), arm_time()
        if t > last:
            last, moved = t, now
        if now - wall0 >= timeout and (not t - arm0 < timeout or now - moved >= stall):
            return predicate()    # (no arm time at the start: t - arm0 is inf or nan: wall only)
        time.sleep(poll)
    return True


def spin_lean(executor, running, timeout_sec=0.05):
    """
    Spin ``executor`` (a DrainingExecutor) while ``running()``, LEAN_PAUSE between wake-ups.

    A test recording two 1 kHz topics with rclpy's executors spent 13 s (SingleThreaded) or 31 s
    (MultiThreaded, 2 threads) of CPU in a 36 s closed loop, as much as both nodes together, on a
    2-core machine where the nodes' loops need it; this way, 5 s. Subscriptions need a depth
    that holds what comes between two wake-ups (1000: a second at 1 kHz).
    """
    while running():
        executor.spin_once(timeout_sec=timeout_sec)
        time.sleep(LEAN_PAUSE)


def spin_executor(executor, duration, until=None):
    """
    Spin ``executor`` for ``duration`` s, or until ``until()``; return whether it came.

    True without ``until``. (One executor that keeps the test's node: rclpy.spin_once adds and
    removes the node at every call.)
    """
    end = time.monotonic() + duration
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)
        if until is not None and until():
            return True
        time.sleep(LEAN_PAUSE)
    return until is None


class NodeProcess:
    """A node started from its console script with --ros-args; its output goes to a log file."""

    def __init__(self, name, ros_args, log_path, env=None):
        self.log_path = str(log_path)
        self._log = open(self.log_path, 'w')
        self.proc = None
        command = [executable(name), '--ros-args', *ros_args]

        def start():
            self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                         env=env)
        if name == 'simulator_node' and 'lockstep:=true' not in ros_args:
            # a plant in real time: no other test session's ROS test beside it (realtime_lock)
            LOCK.start_loop(self, start)
        else:
            start()

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def wait_log(self, text, timeout=10.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            time.sleep(0.05)
        return False

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        LOCK.settle()


class Peer:
    """The test's side: publishes description, joint states and clock; records commands."""

    def __init__(self, name, target='inverse_dynamics_controller',
                 command_topic='effort_controller/commands'):
        self.node = rclpy.create_node(name)
        self.commands = []
        self.torques = []
        self.node.create_subscription(Float64MultiArray, command_topic,
                                      lambda m: self.commands.append(np.array(m.data)), 100)
        self.node.create_subscription(JointState, f'/{target}/torques',
                                      lambda m: self.torques.append(m), 100)
        self.desc_pub = self.node.create_publisher(String, 'robot_description', DESCRIPTION_QOS)
        self.js_pub = self.node.create_publisher(JointState, 'joint_states', 10)
        self.clock_pub = self.node.create_publisher(Clock, '/clock', 10)
        self.traj_pub = self.node.create_publisher(JointTrajectory, f'/{target}/joint_trajectory',
                                                   10)
        self.params = AsyncParameterClient(self.node, target)
        self.state = None          # (names, q, qd) republished while spinning
        self.sim_time = None       # seconds, republished while spinning when set

    def publish_description(self, xml):
        self.desc_pub.publish(String(data=xml))

    def publish_state(self, names, q, qd=()):
        # unstamped: the node then stamps ~/torques with its own (simulated) clock
        msg = JointState(name=list(names), position=[float(x) for x in q],
                         velocity=[float(x) for x in qd])
        self.js_pub.publish(msg)

    def publish_trajectory(self, msg, timeout=10.0):
        """Publish once the target subscribes (a message sent before discovery is lost)."""
        assert self.spin_until(lambda: self.traj_pub.get_subscription_count() > 0, timeout), \
            'nobody subscribes to the trajectory topic'
        self.traj_pub.publish(msg)

    def publish_clock(self, t):
        msg = Clock()
        msg.clock.sec = int(t)
        msg.clock.nanosec = int(round((t - int(t)) * 1e9))
        self.clock_pub.publish(msg)

    def spin(self, duration, period=0.01):
        """Spin for ``duration`` s, republishing the clock and the current state every `period`."""
        deadline = time.monotonic() + duration
        while time.monotonic() < deadline:
            self._tick()
            spin_once(self.node, timeout_sec=period)

    def _tick(self):
        if self.sim_time is not None:
            self.publish_clock(self.sim_time)
        if self.state is not None:
            self.publish_state(*self.state)

    def spin_until(self, predicate, timeout=10.0, period=0.01):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._tick()
            spin_once(self.node, timeout_sec=period)
            if predicate():
                return True
        return False

    def command_close_to(self, expected, timeout=10.0, atol=1e-9, rtol=1e-9):
        """
        Wait until the newest command equals `expected` (within tolerance).

        The newest command (or None) on failure, for the assertion message.
        """
        expected = np.asarray(expected)

        def ok():
            return (self.commands and self.commands[-1].shape == expected.shape
                    and np.allclose(self.commands[-1], expected, atol=atol, rtol=rtol))
        if self.spin_until(ok, timeout):
            return True, self.commands[-1]
        return False, (self.commands[-1] if self.commands else None)

    def set_params(self, timeout=10.0, **values):
        """Set parameters on the target; returns the list of SetParametersResult."""
        return set_parameters(self.params, self.spin_until, values, timeout=timeout).results

    def set_params_atomically(self, timeout=10.0, **values):
        """Set parameters on the target all or none (one SetParametersResult)."""
        return set_parameters(self.params, self.spin_until, values, atomically=True,
                              timeout=timeout).result

    def call(self, client, request, timeout=10.0):
        assert client.wait_for_service(timeout_sec=timeout), 'service not available'
        future = client.call_async(request)
        self.spin_until(future.done, timeout)
        assert future.done(), 'service call timed out'
        return future.result()

    def destroy(self):
        self.node.destroy_node()
