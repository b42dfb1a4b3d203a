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
What the benchmarks share: example-robot-data's URDFs, panda's joints, child nodes, stalls.

``Delivery``: the way in-process closed loops deliver their commands (a delay, stalls).
"""
import collections
import os
import shutil
import signal
import subprocess
import sys
import sysconfig


def erd_urdf(rel):
    """Return the path of example-robot-data's ``robots/<rel>`` (a test and bench dependency)."""
    return os.path.join(sysconfig.get_paths()['purelib'], 'cmeel.prefix', 'share',
                        'example-robot-data', 'robots', rel)


PANDA_URDF = 'panda_description/urdf/panda.urdf'
PANDA = erd_urdf(PANDA_URDF)
PANDA_JOINTS = ([f'panda_joint{i}' for i in range(1, 8)]
                + ['panda_finger_joint1', 'panda_finger_joint2'])


# the stall pattern of the payload tests (test/payload_rig.py; issue #52): on average every 0.5 s
# the loop stalls for a third of 0.15 s to 0.15 s, as a process on a loaded machine; each
# command reaches the arm 3 steps late
STALLS, STALL_DELAY = (0.5, 0.15), 3


class Delivery:
    """
    An in-process loop's commands on their way to the arm: ``delay`` steps late, and stalls.

    ``stalls``: None, or (on average every, longest) s: the loop stalls now and then for a third
    of the longest to the longest; meanwhile the arm acts on the last command that reached it
    (as a ForwardCommandController keeps it), and the loop takes nothing. Without stalls and
    with one step of delay: each state's command applied at the next step.
    """

    def __init__(self, delay=1, stalls=None, seed=0):
        import numpy as np
        self.queue = collections.deque([None] * delay)
        self.stalls, self.rng, self.stalled = stalls, np.random.default_rng(seed), 0

    @classmethod
    def of(cls, stalled):
        """Return the pattern of ``--stalls`` (``stalled`` True), or none."""
        return cls(STALL_DELAY, STALLS) if stalled else cls()

    def applied(self):
        """Return the command the arm applies this step (None: none yet)."""
        return self.queue.popleft()

    def stalls_now(self, dt, applied):
        """Whether the loop is stalled at this step of ``dt`` s (``applied``: this step's)."""
        if self.stalled > 0:
            self.stalled -= 1
            self.queue.append(self.queue[-1] if self.queue else applied)
            return True
        if self.stalls and self.rng.random() < dt / self.stalls[0]:
            self.stalled = int(self.rng.uniform(1 / 3, 1) * self.stalls[1] / dt)
        return False

    def send(self, command):
        """Send the loop's command of this step (None: none)."""
        self.queue.append(command)

    @staticmethod
    def describe():
        return (f'stalls: on average every {STALLS[0]} s, {STALLS[1] / 3:.2f}-{STALLS[1]} s '
                f'each; commands {STALL_DELAY} steps late')


def read_urdf(rel):
    """Return the text of example-robot-data's ``robots/<rel>``."""
    with open(erd_urdf(rel), encoding='utf-8') as f:
        return f.read()


class Log:
    """ControlLoop's log for the in-process benchmarks: keeps the lines."""

    def __init__(self):
        self.lines = []

    def warning(self, key, message, period=0.0):
        self.lines.append(message)

    info = warning

    def error(self, message):
        self.lines.append(message)

    def once(self, key, message, level='warning'):
        self.lines.append(message)


def local_ros(arm):
    """
    Keep DDS on this machine, on a domain of this run's own; return the URDF path ``arm`` names.

    ``arm``: a URDF file, or a path under example-robot-data's robots/.
    """
    local_dds()
    return arm if os.path.isfile(arm) else erd_urdf(arm)


def local_dds():
    """Keep DDS on this machine, on a domain of this run's own (its child processes too)."""
    import random
    os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    os.environ.pop('ROS_LOCALHOST_ONLY', None)      # with it set, Jazzy ignores the range
    os.environ.setdefault('ROS_DOMAIN_ID', str(random.Random(os.getpid()).randint(30, 99)))


def node_exe(name):
    """Return the path of one of the package's console scripts, next to this Python first."""
    return shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)


def call_service(node, client, request, timeout):
    """Call a service from ``node`` (spinning it); the answer, or None after ``timeout`` s."""
    import time

    import rclpy
    if not client.wait_for_service(timeout_sec=timeout):
        return None
    future = client.call_async(request)
    end = time.monotonic() + timeout
    # on the executor the node is in, if any (rclpy.spin_once would take the node from it: the
    # soak's own executor then spun nothing after the first call)
    from robot_dynamics_ros.nodes.executors import executor_of
    executor = executor_of(node)
    while not future.done() and time.monotonic() < end:
        if executor is not None:
            executor.spin_once(timeout_sec=0.005)
        else:
            rclpy.spin_once(node, timeout_sec=0.005)
    return future.result() if future.done() else None


def interrupt(proc, timeout):
    """Stop a child node as Ctrl-C does; kill it if it has not exited within ``timeout`` s."""
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
