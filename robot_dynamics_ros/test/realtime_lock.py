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
One closed loop in real time on the machine at a time, whichever test session runs it.

CI runs Jazzy's and Kilted's ROS tests at once on two cores. A closed loop in real time beside
the other session's lockstep loop (which runs as fast as the CPU lets it) was starved: the
controller answered about 150 of 500 joint states a second, with commands 20-27 ms apart, and
computed torque at kp 400 / kd 40 held that long is unstable (from 21.3 ms), so the arm
chattered and the test failed for the machine's sake, not the package's (issue 50).

So every test of the ROS part holds this machine-wide lock shared, and a session holds it
exclusively while a loop of its own runs in real time (a simulator_node not in lockstep, or a
test marked ``realtime``): no other session's ROS test runs beside it. The tests marked offline
take no lock: they run at idle CPU priority and only use what the others leave. An exclusive
taker waits at a gate that keeps new shared takers out meanwhile, so it is not starved by the
other session's stream of short tests. Nothing waits while holding the lock, so nothing
deadlocks; the kernel drops a dead session's lock.

RDR_TEST_LOCK: the lock file (default: robot_dynamics_ros-tests.lock in the temporary
directory, shared by every session of this machine), or ``none`` for no lock.
"""
import fcntl
import os
import tempfile
import time
import weakref

PATH = (os.environ.get('RDR_TEST_LOCK')
        or os.path.join(tempfile.gettempdir(), 'robot_dynamics_ros-tests.lock'))


class MachineLock:
    """A session's hold on the lock: none, shared (a ROS test), exclusive (a real-time loop)."""

    def __init__(self, path=PATH):
        self.path = path
        self.fd = self.gate = None
        self.mode = None            # None, 'shared' or 'exclusive': what this session holds
        self.in_test = False        # a test of the ROS part is running
        self.marked = False         # the running test is marked realtime
        self.loops = weakref.WeakSet()   # processes looping in real time (with alive())
        self.waited = 0.0           # seconds spent waiting for the lock (the summary prints it)

    def test_started(self, realtime=False):
        """A test of the ROS part starts (``realtime``: it is marked so)."""
        self.in_test, self.marked = True, realtime
        self.settle()

    def test_finished(self):
        self.in_test = self.marked = False
        self.settle()

    def start_loop(self, process, start):
        """Call ``start()`` holding the lock exclusively, and keep it while ``process`` lives."""
        self._take('exclusive')
        start()
        self.loops.add(process)

    def settle(self):
        """Hold what this session needs now (after a real-time process stopped, say)."""
        # a process left running past its test still counts: its loop still takes CPU
        live = self.marked or any(p.alive() for p in list(self.loops))
        self._take('exclusive' if live else 'shared' if self.in_test else None)

    def _open(self, path):
        # read-only is enough for flock, and lets sessions of other users share the file
        return os.open(path, os.O_RDONLY | os.O_CREAT, 0o666)

    def _take(self, mode):
        if mode == self.mode or self.path == 'none':
            return
        if self.fd is None:
            self.fd, self.gate = self._open(self.path), self._open(self.path + '.gate')
        t0 = time.monotonic()
        if mode is None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
        elif mode == 'shared' and self.mode == 'exclusive':
            fcntl.flock(self.fd, fcntl.LOCK_SH)         # a downgrade waits for nothing
        else:
            # our own shared hold must not keep us out; past the gate, new shared takers wait
            # behind an exclusive one (a shared one passes it at once when nobody waits there)
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            fcntl.flock(self.gate, fcntl.LOCK_EX)
            try:
                if mode == 'exclusive':
                    fcntl.flock(self.fd, fcntl.LOCK_EX)
            finally:
                fcntl.flock(self.gate, fcntl.LOCK_UN)
            if mode == 'shared':
                fcntl.flock(self.fd, fcntl.LOCK_SH)
        self.waited += time.monotonic() - t0
        self.mode = mode


LOCK = MachineLock()
