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
No phantom external torques: the observer reads zero in free motion with an exact model.

The short version of bench/bench_observer.py: simulator_node and feedforward_node (computed
torque) on the same URDF, ur5 going back and forth fast (+-0.4 rad on every joint in 1 s, three
times). In lockstep, which no load changes: p99 |external torque| within 1 % and the max within 2
% of each joint's peak command (measured 0.33 %, where it had been 131 % in real time at 1 kHz);
then a collision detector with thresholds at 5 % of those peaks raises nothing in 4 s more of the
motion (the benchmark runs 60 s) and detects a 20 N push on the moving tool within 20 ms of
simulated time (measured 2-4 ms).

In real time, what made the phantom torques: the simulator stamped each joint state with the
time it went out, so a late wake-up put 6-13 ms between two states and the catching-up ones came
0.02-0.05 ms apart, and the observer integrated the torques over those. Its states are now
stamped with the time they hold at on the pacing's schedule: a step apart, whatever the load
(or, when it fell over 0.1 s behind, a jump it announces and the observer holds over).
"""
import os
import sys
import time
from types import SimpleNamespace

import numpy as np
import pytest

rclpy = pytest.importorskip('rclpy')

from sensor_msgs.msg import JointState  # noqa: E402

from conftest import ROBOTS, erd_root  # noqa: E402
from ros_harness import NodeProcess, PACKAGE, spin_once  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(PACKAGE), 'bench'))
import bench_observer  # noqa: E402


pytestmark = pytest.mark.usefixtures('ros')      # conftest.ros: rclpy for the module


@pytest.mark.parametrize('arm, rate', [('ur5', 1000.0), ('panda', 500.0)])
def test_free_motion_in_lockstep_reads_no_external_torque(tmp_path, arm, rate):
    res = bench_observer.one_run(arm, rate, 'lockstep', str(tmp_path), collision_seconds=4.0)
    assert 'error' not in res, res
    w = int(np.argmax(res['p99']))
    print(f'{arm} {rate:.0f} Hz lockstep: p99 {100 * res["p99"].max():.2f} %, max '
          f'{100 * res["max"].max():.2f} % of the peak command ({res["joints"][w]}); '
          f'{bench_observer.collision_line(res)}')
    assert res['samples'] > 2000, res['samples']
    assert res['p99'].max() <= 0.01 and res['max'].max() <= 0.02, res
    assert res['run'] > 3.5 and not res['events'], res['events']
    assert res['delay'] is not None and 0 < res['delay'] <= bench_observer.DETECT, res['delay']


def test_the_pacing_anchors_its_two_clocks_at_one_instant():
    """
    simulator_node's anchor pair (ROS time, perf_counter) is read again after a stall between.

    A stall between the two reads put the stamps' schedule off the pacing's, by at least 17 ms:
    a re-pacing after a lag over 0.1 s then jumped the stamps 83 ms (fresh-clone CI beside a
    busy core), where the test below asks 1 ms or over 0.1 s.
    """
    from robot_dynamics_ros.nodes.simulator_node import ANCHOR_SPREAD, ANCHOR_TRIES, SimulatorNode

    class Clock:
        reads = 0

        def get_clock(self):
            return self

        def now(self):
            self.reads += 1
            if self.reads == 1:
                time.sleep(0.02)            # the process stalled mid-read
            return SimpleNamespace(nanoseconds=time.time_ns())
    clock = Clock()
    wall, t = SimulatorNode._anchor(clock, 1.5)
    ros, sim0 = clock.schedule
    offset = (time.time_ns() - ros) * 1e-9 - (time.perf_counter() - wall)
    assert t == sim0 == 1.5
    # the stalled read is read again; beside a busy core the second may be preempted too (a
    # third read: 3 of 1 in a fresh-clone CI of 545ccc9)
    assert 2 <= clock.reads <= ANCHOR_TRIES and abs(offset) < ANCHOR_SPREAD + 1e-4, (
        clock.reads, offset)


def test_in_real_time_states_are_stamped_a_step_apart(tmp_path):
    """At 1 kHz: every interval between stamps is 1 ms, or a jump of over 0.1 s (re-paced)."""
    urdf = os.path.join(erd_root(), ROBOTS['ur5'])
    sim = NodeProcess('simulator_node', ['-r', '__ns:=/stamped', '-p', f'urdf_file:={urdf}',
                                         '-p', 'publish_rate:=1000.0'],
                      tmp_path / 'stamped_sim.log')
    node = rclpy.create_node('stamped_peer', namespace='/stamped')
    states = []
    node.create_subscription(JointState, 'joint_states', states.append, 1000)
    try:
        end = time.monotonic() + 60
        while len(states) < 3000 and time.monotonic() < end:
            spin_once(node, timeout_sec=0.01)
        assert len(states) >= 3000, (len(states), sim.log()[-1500:])
        ns = np.array([m.header.stamp.sec * 10**9 + m.header.stamp.nanosec for m in states])
        gaps = np.diff(ns[-2500:])
        steps = np.count_nonzero(np.abs(gaps - 10**6) <= 1)
        jumps = np.count_nonzero(gaps > 10**8)
        print(f'{steps} intervals of 1 ms, {jumps} jumps over 0.1 s, of {len(gaps)}')
        assert steps + jumps == len(gaps), np.unique(gaps)[:20]
        assert steps >= 0.99 * len(gaps)
    finally:
        node.destroy_node()
        sim.stop()
