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
What a test's reader of a 1 kHz JointState stream costs, deserialized and kept serialized.

A publisher process sends a 7-joint JointState at 1 kHz; this process reads it with a
DrainingExecutor (2 ms between wake-ups, as the tests' rigs spin), once with messages and once
with ``raw=True`` (what ``ros_harness.record`` keeps), and prints the reader's CPU per second of
stream for each and their ratio.
"""
import argparse
import subprocess
import sys
import time

from benchlib import local_dds

PUBLISHER = r'''
import sys, time
import rclpy
from sensor_msgs.msg import JointState
rclpy.init()
node = rclpy.create_node('bench_readers_publisher')
pub = node.create_publisher(JointState, 'bench_readers/joint_states', 1000)
names = [f'joint{i}' for i in range(7)]
t0, k, seconds = time.perf_counter(), 0, float(sys.argv[1])
while time.perf_counter() - t0 < seconds:
    msg = JointState(name=names, position=[0.1] * 7, velocity=[0.2] * 7, effort=[0.3] * 7)
    msg.header.stamp.sec = k
    pub.publish(msg)
    k += 1
    time.sleep(max(0.0, t0 + k * 0.001 - time.perf_counter()))
'''


def read(raw, seconds, warm=3.0):
    """Return (messages, reader CPU-s) over ``seconds`` of a fresh 1 kHz stream."""
    import rclpy
    from sensor_msgs.msg import JointState

    from robot_dynamics_ros.nodes.executors import DrainingExecutor
    pub = subprocess.Popen([sys.executable, '-c', PUBLISHER, str(seconds + warm + 2.0)])
    rclpy.init()
    try:
        node = rclpy.create_node('bench_readers_reader')
        got = []
        node.create_subscription(JointState, 'bench_readers/joint_states', got.append, 1000,
                                 raw=raw)
        executor = DrainingExecutor()
        executor.add_node(node)

        def spin(duration):
            end = time.monotonic() + duration
            while time.monotonic() < end:
                executor.spin_once(timeout_sec=0.05)
                time.sleep(0.002)
        spin(warm)                  # discovery, the first messages
        cpu, n = time.process_time(), len(got)
        spin(seconds)
        return len(got) - n, time.process_time() - cpu
    finally:
        rclpy.shutdown()
        pub.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().split('\n\n')[0])
    ap.add_argument('--seconds', type=float, default=15.0)
    args, _ = ap.parse_known_args()
    local_dds()
    per_second = {}
    for raw in (False, True):
        n, cpu = read(raw, args.seconds)
        what = 'serialized' if raw else 'deserialized'
        per_second[raw] = cpu / args.seconds
        print(f'[report] {what}: {n} messages in {args.seconds:g} s, reader '
              f'{per_second[raw]:.3f} CPU-s per second of stream')
    print(f'[report] serialized / deserialized: {per_second[True] / per_second[False]:.2f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
